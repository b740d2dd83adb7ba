  // ---- kv.py: KV managers (reserved contexts; vLLM's paged blocks, which preempt; a prefix cache's hook) ---------
  function tooBig(biggest, capacity) {
    if (biggest > capacity) throw new Error(`a request needs ${(biggest / 1e9).toFixed(1)} GB, more than the ${(capacity / 1e9).toFixed(1)} GB free for requests on one GPU`);
  }
  class KVManager {
    constructor(model, capacity) { this.model = model; this.capacity = capacity; }
    prefixHit() { return 0; }  // (i, tokens): prompt tokens of a newly admitted request already held (a prefix cache's hits)
    computed() {}  // (i, done): request i's prompt (or recompute) has its first `done` tokens' KV
    dropped() {}  // (i, computed, t): request i left the GPU (finished or preempted) holding the KV of its first `computed` tokens
  }
  KVManager.prototype.preempts = false;
  class ReservedKV extends KVManager {  // each request's full context reserved at admission, freed at its finish
    start(prompt, output) {
      const n = prompt.length;
      this.need = new Float64Array(n);
      let biggest = 0;
      for (let i = 0; i < n; i++) {
        this.need[i] = bytesPerRequest(this.model, prompt[i] + output[i]);
        if (this.need[i] > biggest) biggest = this.need[i];
      }
      tooBig(biggest, this.capacity);
      this.reserved = 0;
    }
    inUse() { return this.reserved; }
    fits(i) { return this.reserved + this.need[i] <= this.capacity; }  // (i, tokens, used), as contracts.py
    admit(i) { this.reserved += this.need[i]; }
    release(i) { this.reserved -= this.need[i]; }
    join() {}
    leave() {}
  }
  register("kv", "reserved", ReservedKV);
  // Paged blocks allocated as tokens arrive; the decode batch's blocks counted per residue of its context base
  // modulo the block size, as kv.py does (whole numbers: exact in any order).
  class PagedKV extends KVManager {
    constructor(model, capacity, memory) { super(model, capacity); this.memory = memory; }
    start(prompt, output) {
      const bs = this.memory.block_size;
      this.bs = bs;
      this.block_bytes = bs * this.model.kv_bytes_per_token;
      this.state = this.model.state_bytes_per_request;
      let longest = -Infinity;
      for (let i = 0; i < prompt.length; i++) longest = Math.max(longest, prompt[i] + output[i]);
      tooBig(prompt.length ? Math.ceil(longest / bs) * this.block_bytes + this.state : 0, this.capacity);
      this.q_sum = 0;
      this.residues = new Float64Array(bs);
      this.live = new Set();
      this.booked = new Float64Array(prompt.length);  // the blocks of the prompt a request prefills (or pulls), until it joins
      this.prompt_blocks = 0;
      this.admitted = 0;
    }
    inUse(nIters) { return this.after(nIters); }
    fits(i, tokens, used) { return used + Math.ceil(tokens / this.bs) * this.block_bytes + this.state <= this.capacity; }
    admit(i, tokens) {
      const blocks = Math.ceil(tokens / this.bs);
      this.booked[i] = blocks;
      this.prompt_blocks += blocks;
      this.admitted += 1;
    }
    unbook(i) { this.prompt_blocks -= this.booked[i]; this.booked[i] = 0; }
    release(i) { this.unbook(i); this.admitted -= 1; }
    count(base, sign) {
      const q = Math.floor(base / this.bs), r = base - q * this.bs;
      this.q_sum += sign * q;
      this.residues[r] += sign;
      if (this.residues[r] === 0) this.live.delete(r);
      else if (sign > 0) this.live.add(r);
    }
    join(i, base) { this.unbook(i); this.count(base, 1); }
    leave(i, base) { this.count(base, -1); }
    after(nIters) {  // blocks every admitted request holds when the decode-iteration count is nIters, as bytes
      const bs = this.bs, shift = nIters + bs - 1;
      let blocks = this.q_sum + this.prompt_blocks;
      for (const r of this.live) blocks += this.residues[r] * Math.floor((r + shift) / bs);
      return blocks * this.block_bytes + this.state * this.admitted;
    }
    stepsThatFit(nIters, k) {  // of the k pure-decode iterations from nIters, how many run before the first that does not fit
      if (this.after(nIters + k - 1) <= this.capacity) return k;
      let lo = 0, hi = k - 1;
      while (hi - lo > 1) {
        const mid = Math.floor((lo + hi) / 2);
        if (this.after(nIters + mid) <= this.capacity) lo = mid; else hi = mid;
      }
      return lo + 1;
    }
  }
  PagedKV.prototype.preempts = true;
  register("kv", "paged", PagedKV);
  // With a prefix cache (kv.py's docstring): request i's tokens as segments, its prompt's then its output's.
  function contentsUpto(segments, answerIds, i, tokens) {
    const out = [];
    let left = tokens;
    for (const [content, n] of segments[i]) {
      if (left <= 0) break;
      out.push([content, Math.min(n, left)]);
      left -= n;
    }
    if (left > 0) out.push([answerIds[i], left]);
    return out;
  }
  class PrefixPagedKV extends PagedKV {  // paged, with vLLM V1's automatic prefix caching
    constructor(model, capacity, memory, segments, answerIds) {
      super(model, capacity, memory);
      this.segments = segments; this.answer_ids = answerIds;
    }
    start(prompt, output) {
      super.start(prompt, output);
      const n = prompt.length;
      this.pool = new VllmPrefixPool(Math.max(1, Math.floor(this.capacity / this.block_bytes)), this.bs);
      this.hashes = new BlockHashes();
      this.held = new Array(n).fill(null); this.chain = new Array(n).fill(null); this.n_cached = new Array(n).fill(0);
    }
    take(n) { return n > 0 ? this.pool.allocate(Math.min(n, this.pool.numFree())) : []; }
    prefixHit(i, tokens) {
      const chain = this.hashes.chain(contentsUpto(this.segments, this.answer_ids, i, tokens), this.bs);
      const hit = this.pool.lookup(chain, tokens);
      this.pool.touch(hit);
      this.held[i] = hit.concat(this.take(Math.ceil(tokens / this.bs) - hit.length));
      this.chain[i] = chain; this.n_cached[i] = hit.length;
      return hit.length * this.bs;
    }
    computed(i, done) { this.cacheUpto(i, this.chain[i], Math.floor(done / this.bs)); }
    cacheUpto(i, chain, full) {
      const blocks = this.held[i], upto = Math.min(full, blocks.length, chain.length);
      for (let k = this.n_cached[i]; k < upto; k++) this.pool.cache(blocks[k], chain[k]);
      this.n_cached[i] = Math.max(this.n_cached[i], upto);
    }
    dropped(i, computed) {  // (i, computed, t)
      const blocks = this.held[i];
      for (const b of this.take(Math.ceil(computed / this.bs) - blocks.length)) blocks.push(b);
      this.cacheUpto(i, this.hashes.chain(contentsUpto(this.segments, this.answer_ids, i, computed), this.bs),
        Math.floor(computed / this.bs));
      this.pool.free(blocks);
      this.held[i] = null; this.n_cached[i] = 0;
    }
  }
  register("kv", "paged+apc", PrefixPagedKV);
  class SlotsKV extends ReservedKV {  // reserved, with llama.cpp server's slots
    constructor(model, capacity, segments, answerIds, nSlots, similarity) {
      super(model, capacity);
      this.segments = segments; this.answer_ids = answerIds; this.n_slots = nSlots; this.similarity = similarity;
    }
    start(prompt, output) {
      super.start(prompt, output);
      this.prompt = prompt;
      this.slots = new LlamaSlots(this.n_slots, this.similarity);
      this.slot_of = new Array(prompt.length).fill(null);
    }
    prefixHit(i) {
      const prompt = contentsUpto(this.segments, this.answer_ids, i, this.prompt[i]);
      const slot = this.slots.choose(prompt);
      this.slot_of[i] = slot;
      return this.slots.start(slot, prompt);
    }
    dropped(i, computed, t) {
      const generated = computed > this.prompt[i] ? [[this.answer_ids[i], computed - this.prompt[i]]] : [];
      this.slots.finish(this.slot_of[i], t, generated);
      this.slot_of[i] = null;
    }
  }
  register("kv", "reserved+slots", SlotsKV);
  const SLOT_SIMILARITY = 0.1;  // llama-server --slot-prompt-similarity default
  function kvManager(model, capacity, memory, prefix = null, nSlots = 0) {
    if (prefix === null) return memory ? new PagedKV(model, capacity, memory) : new ReservedKV(model, capacity);
    if (!memory) return new SlotsKV(model, capacity, prefix[0], prefix[1], nSlots, SLOT_SIMILARITY);
    return new PrefixPagedKV(model, capacity, memory, prefix[0], prefix[1]);
  }
