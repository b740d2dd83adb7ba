  // ---- prefix.py: the prefix caches' data structures (vLLM V1's block pool with APC; llama.cpp's slots) -----------
  // A prompt is a list of segments [content id, tokens]. Same operations in the same order as prefix.py, so the
  // free queue, the evictions and the chosen slots are the Python's.
  function promptTokens(segments) { let n = 0; for (const s of segments) n += s[1]; return n; }
  function commonPrefix(a, b) {  // tokens two prompts share from their start
    let shared = 0;
    for (let k = 0; k < Math.min(a.length, b.length); k++) {
      if (a[k][0] !== b[k][0]) break;
      shared += Math.min(a[k][1], b[k][1]);
      if (a[k][1] !== b[k][1]) break;
    }
    return shared;
  }
  function blockContents(segments, blockSize) {  // each full block's pieces "content:first:end", joined
    const out = [];
    let pieces = [], filled = 0;
    for (const [content, n] of segments) {
      let start = 0;
      while (start < n) {
        const take = Math.min(blockSize - filled, n - start);
        pieces.push(`${content}:${start}:${start + take}`);
        start += take; filled += take;
        if (filled === blockSize) { out.push(pieces.join(",")); pieces = []; filled = 0; }
      }
    }
    return out;
  }
  class BlockHashes {  // chained block identities, interned: equal ids mean equal prefixes
    constructor() { this.ids = new Map(); }
    chain(segments, blockSize) {
      let parent = -1;
      const out = [];
      for (const content of blockContents(segments, blockSize)) {
        const key = `${parent}|${content}`;
        let id = this.ids.get(key);
        if (id === undefined) { id = this.ids.size; this.ids.set(key, id); }
        parent = id;
        out.push(id);
      }
      return out;
    }
  }
  // The free queue, head first, as prefix.py's OrderedDict: a doubly linked list over block ids (slot numBlocks is
  // the sentinel), so taking a block out, appending and moving to the head cost O(1) as there.
  class FreeQueue {
    constructor(n) {
      this.end = n;
      this.next = new Int32Array(n + 1);
      this.prev = new Int32Array(n + 1);
      this.in = new Uint8Array(n);
      this.size = 0;
      this.next[n] = n; this.prev[n] = n;
    }
    _link(id, before) { const after = this.prev[before]; this.next[after] = id; this.prev[id] = after; this.next[id] = before; this.prev[before] = id; this.in[id] = 1; this.size += 1; }
    append(id) { this._link(id, this.end); }
    prepend(id) { this._link(id, this.next[this.end]); }
    delete(id) {
      if (!this.in[id]) return;
      this.next[this.prev[id]] = this.next[id]; this.prev[this.next[id]] = this.prev[id];
      this.in[id] = 0; this.size -= 1;
    }
    head() { return this.next[this.end]; }
    *keys() { for (let id = this.next[this.end]; id !== this.end; id = this.next[id]) yield id; }
  }
  class VllmPrefixPool {
    constructor(numBlocks, blockSize) {
      if (numBlocks < 1 || blockSize < 1) throw new Error("a block pool needs at least one block of at least one token");
      this.block_size = blockSize;
      this.blocks = [];
      for (let i = 0; i < numBlocks; i++) this.blocks.push({id: i, ref_cnt: 0, hash: null});
      this.free_queue = new FreeQueue(numBlocks);
      for (let i = 0; i < numBlocks; i++) this.free_queue.append(i);
      this.cached = new Map();  // block hash -> the block holding it
    }
    numFree() { return this.free_queue.size; }
    lookup(hashes, prompt) {
      const hit = [], most = Math.max(0, Math.floor((prompt - 1) / this.block_size));
      for (let k = 0; k < Math.min(most, hashes.length); k++) {
        const block = this.cached.get(hashes[k]);
        if (block === undefined) break;
        hit.push(block);
      }
      return hit;
    }
    touch(blocks) {
      for (const b of blocks) {
        if (b.ref_cnt === 0) this.free_queue.delete(b.id);
        b.ref_cnt += 1;
      }
    }
    allocate(n) {
      if (n > this.free_queue.size) return null;
      const out = [];
      for (let k = 0; k < n; k++) {
        const bid = this.free_queue.head();
        this.free_queue.delete(bid);
        const block = this.blocks[bid];
        if (block.hash !== null) {  // evicted: its prefix can no longer be hit
          if (this.cached.get(block.hash) === block) this.cached.delete(block.hash);
          block.hash = null;
        }
        block.ref_cnt = 1;
        out.push(block);
      }
      return out;
    }
    cache(block, hash) {
      block.hash = hash;
      if (!this.cached.has(hash)) this.cached.set(hash, block);
    }
    free(blocks) {  // last block first; the uncached to the head together in that order, the cached to the tail
      const first = [], last = [];
      for (let k = blocks.length - 1; k >= 0; k--) {
        const b = blocks[k];
        b.ref_cnt -= 1;
        if (b.ref_cnt === 0) (b.hash === null ? first : last).push(b);
      }
      for (let k = first.length - 1; k >= 0; k--) this.free_queue.prepend(first[k].id);
      for (const b of last) this.free_queue.append(b.id);
    }
  }
  // prefix.py TokenPrefixCache: vLLM V1's APC for an engine holding real token ids (the lab's Engine; serve_tiny.py)
  class TokenPrefixCache {
    constructor(numBlocks, blockSize = 16) {
      this.block_size = blockSize;
      this.pool = new VllmPrefixPool(numBlocks, blockSize);
      this.hashes = new BlockHashes();
    }
    chain(tokens) { return this.hashes.chain(tokens.map((t) => [t, 1]), this.block_size); }
    admit(prompt) {  // [the hit blocks, touched; the tokens they hold]
      const hit = this.pool.lookup(this.chain(prompt), prompt.length);
      this.pool.touch(hit);
      return [hit.slice(), hit.length * this.block_size];
    }
    grow(blocks, tokens, computed) {  // [[block, first position]] of the blocks this step filled, now cached
      const bs = this.block_size, need = Math.ceil(computed / bs) - blocks.length;
      if (need > 0) {
        const fresh = this.pool.allocate(need);
        if (fresh === null) throw new Error(`prefix cache: ${need} more blocks wanted, ${this.pool.numFree()} free (the pool must hold every running request's context)`);
        blocks.push(...fresh);
      }
      const full = Math.floor(computed / bs);
      let first = 0;
      while (first < full && blocks[first].hash !== null) first++;
      if (first === full) return [];
      const hashes = this.chain(tokens.slice(0, full * bs)), out = [];
      for (let k = first; k < full; k++) { this.pool.cache(blocks[k], hashes[k]); out.push([blocks[k], k * bs]); }
      return out;
    }
    release(blocks) { this.pool.free(blocks); }
  }
  class LlamaSlots {
    constructor(nSlots, similarity = 0.1) {
      if (nSlots < 1) throw new Error("llama.cpp needs at least one slot (-np)");
      this.slots = [];
      for (let i = 0; i < nSlots; i++) this.slots.push({id: i, tokens: [], last_used: -1.0, busy: false});
      this.similarity = similarity;
    }
    choose(prompt) {  // the idle slot of best prompt similarity above the threshold, else the least recently used
      const n = promptTokens(prompt);
      let best = null, bestSim = 0.0;
      if (this.similarity !== 0.0) {
        for (const s of this.slots) {
          if (s.busy || !s.tokens.length) continue;
          const sim = commonPrefix(s.tokens, prompt) / n;
          if (sim > bestSim && sim > this.similarity) { best = s; bestSim = sim; }
        }
      }
      if (best === null) {
        let last = -1.0;
        for (const s of this.slots) {
          if (s.busy) continue;
          if (best === null || s.last_used <= last) { best = s; last = s.last_used; }
        }
      }
      return best;
    }
    start(slot, prompt) {  // the prompt tokens the slot reuses, less one when all of it is cached
      const n = promptTokens(prompt);
      let reused = commonPrefix(slot.tokens, prompt);
      if (reused === n && n > 0) reused -= 1;
      slot.tokens = prompt.slice();
      slot.busy = true;
      return reused;
    }
    finish(slot, now, generated = []) {
      slot.tokens = slot.tokens.concat(generated);
      slot.busy = false;
      slot.last_used = now;
    }
  }
