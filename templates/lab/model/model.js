// The lab's model and engine, in the student's browser: the course's tiny GPT (scripts/bench/tinygpt.py, the same
// shape and the same weights: scripts/bench/seeded_weights.py documents the generator both sides run), a KV cache
// per request slot, and a continuous-batching engine that follows vLLM V1's scheduling rule. Pure: no DOM. The
// build (scripts/page/lab.py) puts the compiled kernel (templates/lab/model/kernel.wat) where KERNEL_BASE64 stands and
// writes site/lab-model.js; the page builds its Web Worker from this function's source (a Blob: file:// works) and
// Node can require() it (tests/test_lab_model.py).
"use strict";
function c13LabModel() {
  const KERNEL_BASE64 = "@KERNEL_BASE64@";
  const KERNEL_FUSED_BASE64 = "@KERNEL_FUSED_BASE64@";  // the same source with fused multiply-adds (lab.py fused_kernel)
  // the shape, the seed and the weight spec (name, dims, offset, scale) as scripts/bench/seeded_weights.py states them
  const MODEL = __MODEL__;
  const SHAPE = MODEL.shape, SEED = MODEL.seed;

  // ---- seeded_weights.py: mulberry32, one stream over the parameters in spec order --------------------------------
  const weightSpec = () => MODEL.spec;
  // The generator itself: draw n is seed + n * 0x6D2B79F5 hashed (seeded_weights.mulberry32); next() -> uint32. The
  // page's token ids, arrivals and bootstrap draws come from it too, each stream from its own seed.
  function mulberry32(seed) {
    let a = seed >>> 0;
    return () => {
      a = (a + 0x6D2B79F5) >>> 0;
      let t = Math.imul(a ^ (a >>> 15), a | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return (t ^ (t >>> 14)) >>> 0;
    };
  }
  function generatedWeights(s = SHAPE, seed = SEED) {  // name -> Float32Array in PyTorch's (out x in) layout
    const next = mulberry32(seed), params = {};
    for (const [name, dims, offset, scale] of weightSpec()) {
      const n = dims.reduce((x, y) => x * y, 1), values = new Float32Array(n);
      for (let k = 0; k < n; k++) values[k] = offset + (((next() >>> 8) - 8388608) / 8388608) * scale;  // rounded on store
      params[name] = values;
    }
    return params;
  }
  function paramCount(s = SHAPE) {
    return weightSpec().reduce((acc, [, dims]) => acc + dims.reduce((x, y) => x * y, 1), 0);
  }

  // ---- the kernel: y = x W + b in WebAssembly SIMD; every tensor the kernel touches lives in its memory --------
  function decodeBase64(text) {
    if (typeof atob === "function") return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
    return Uint8Array.from(Buffer.from(text, "base64"));
  }
  class Arena {  // bump allocation of float32 tensors in the kernel's memory
    constructor(instance, floats) {
      this.mem = instance.exports.memory;
      const pages = Math.ceil((floats * 4 + 65536) / 65536);
      this.mem.grow(pages);
      this.top = 64;
      this.linear = instance.exports.linear;
      this.exports = instance.exports;
    }
    alloc(n) {
      const at = this.top;
      this.top += Math.ceil(n * 4 / 16) * 16;
      return {at, view: new Float32Array(this.mem.buffer, at, n)};
    }
  }
  // The kernel's build: "fma" (relaxed SIMD) where the engine validates it (Chrome 114+, Firefox; Safari refuses the
  // module), else "simd"; a global C13_KERNEL ("simd" or "fma") forces one (the page passes it to its workers).
  function kernelBuild() {
    const forced = typeof globalThis !== "undefined" && globalThis.C13_KERNEL;
    if (forced === "simd" || forced === "fma") return forced;
    return WebAssembly.validate(decodeBase64(KERNEL_FUSED_BASE64)) ? "fma" : "simd";
  }
  function kernelInstance(build = kernelBuild()) {
    const module = new WebAssembly.Module(decodeBase64(build === "fma" ? KERNEL_FUSED_BASE64 : KERNEL_BASE64));
    return new WebAssembly.Instance(module, {});
  }
  // nn.Linear's weight (nOut x nIn) as the kernel reads it: panels of eight outputs, each nIn x 8 (kernel.wat linear)
  function packed(w, nOut, nIn) {
    const t = new Float32Array(nOut * nIn);
    for (let p = 0; p < nOut / 8; p++) {
      for (let k = 0; k < nIn; k++) for (let j = 0; j < 8; j++) t[(p * nIn + k) * 8 + j] = w[(p * 8 + j) * nIn + k];
    }
    return t;
  }
  function transposed(w, rows, cols) {  // (rows x cols) -> (cols x rows)
    const t = new Float32Array(rows * cols);
    for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) t[c * rows + r] = w[r * cols + c];
    return t;
  }
  // RoPE's tables for positions 0 .. n-1 in torch's float32 steps (tinygpt.rope): inv = 1 / base^(2j/dh),
  // angle = pos * inv, cos and sin, each rounded; (n x dh/2) each, the CPU and GPU models' one source
  function ropeTables(dh, n, base) {
    const half = dh / 2, f32 = Math.fround, cos = new Float32Array(n * half), sin = new Float32Array(n * half);
    for (let j = 0; j < half; j++) {
      const inv = f32(1 / f32(base ** f32(2 * j / dh)));
      for (let p = 0; p < n; p++) {
        const ang = f32(p * inv);
        cos[p * half + j] = Math.cos(ang);
        sin[p * half + j] = Math.sin(ang);
      }
    }
    return {cos, sin};
  }
  function layerNorm(src, dst, rows, d, g, b) {  // nn.LayerNorm: biased variance, eps 1e-5
    for (let r = 0; r < rows; r++) {
      const o = r * d;
      let mean = 0, v = 0;
      for (let i = 0; i < d; i++) mean += src[o + i];
      mean /= d;
      for (let i = 0; i < d; i++) { const c = src[o + i] - mean; v += c * c; }
      const inv = 1 / Math.sqrt(v / d + 1e-5);
      for (let i = 0; i < d; i++) dst[o + i] = (src[o + i] - mean) * inv * g[i] + b[i];
    }
  }

  // ---- tinygpt.py's forward over a flat list of tokens (vLLM's layout): each token has its request's slot and its
  // position; attention reads that slot's KV cache up to the token's own position (causal inside a chunk too) ----
  class TinyModel {
    constructor({slots = 16, maxContext = 256, maxTokens = 512, shape = SHAPE, seed = SEED, kernel = kernelBuild()} = {}) {
      const s = shape, d = s.d_model, f = s.d_ff, v = s.vocab, w = generatedWeights(s, seed);
      Object.assign(this, {s, slots, maxContext, maxTokens, dh: d / s.n_head, kernel});
      const linearFloats = s.n_layer * (4 * d * d + 3 * d + 2 * d * f + f + d) + d * v + v;
      const cacheFloats = 2 * slots * s.n_layer * maxContext * d;  // K and V of every slot, whole context reserved
      this.arena = new Arena(kernelInstance(kernel),
        linearFloats + cacheFloats + maxTokens * (6 * d + f) + slots * (d + v) + s.n_head * maxContext + 4096);
      const put = (values) => { const t = this.arena.alloc(values.length); t.view.set(values); return t; };
      const lin = (name, nOut, nIn) => ({w: put(packed(w[name + ".weight"], nOut, nIn)), b: put(w[name + ".bias"]),
        nIn, nOut});
      this.emb = w["emb.weight"];
      this.layers = [];
      for (let i = 0; i < s.n_layer; i++) {
        const b = `blocks.${i}.`;
        this.layers.push({ln1: [w[b + "ln1.weight"], w[b + "ln1.bias"]], ln2: [w[b + "ln2.weight"], w[b + "ln2.bias"]],
          qkv: lin(b + "qkv", 3 * d, d), proj: lin(b + "proj", d, d), fc: lin(b + "fc", f, d), out: lin(b + "out", d, f)});
      }
      this.lnF = [w["ln_f.weight"], w["ln_f.bias"]];
      this.head = {w: put(packed(this.emb, v, d)), b: this.arena.alloc(v), nIn: d, nOut: v};  // tied, no bias
      const buf = (n) => this.arena.alloc(n);
      Object.assign(this, {x: buf(maxTokens * d), h: buf(maxTokens * d), qkv: buf(maxTokens * 3 * d),
        ff: buf(maxTokens * f), tmp: buf(maxTokens * d), last: buf(slots * d), logits: buf(slots * v),
      });
      const perSlot = s.n_layer * maxContext * d;
      this.kv = Array.from({length: slots}, () => ({k: buf(perSlot), v: buf(perSlot)}));
      this.scores = buf(s.n_head * maxContext);  // attention's scratch: every head's scores of one token
      ({cos: this.cos, sin: this.sin} = ropeTables(this.dh, maxContext, s.rope_base));
    }
    linear(src, L, dst, rows) { this.arena.linear(src.at, L.w.at, L.b.at, dst.at, rows, L.nIn, L.nOut); }
    slotCache(slot) { return this.kv[slot]; }
    // A slot's n positions of K and V from `start`, layer by layer ([K0, V0, K1, V1, ...], each n x d): what a
    // prefill device hands a decode device (experiment "who waits", P/D) and a prefix-cache block's store;
    // importKV writes such a block into a slot at `start`.
    exportKV(slot, n, start = 0) {
      const d = this.s.d_model, c = this.kv[slot], out = new Float32Array(2 * this.s.n_layer * n * d);
      for (let l = 0; l < this.s.n_layer; l++) {
        const at = (l * this.maxContext + start) * d;
        out.set(c.k.view.subarray(at, at + n * d), 2 * l * n * d);
        out.set(c.v.view.subarray(at, at + n * d), (2 * l + 1) * n * d);
      }
      return out;
    }
    importKV(slot, n, block, start = 0) {
      const d = this.s.d_model, c = this.kv[slot];
      if (start + n > this.maxContext || block.length !== 2 * this.s.n_layer * n * d) throw new Error(`a KV block of ${block.length} floats is not ${n} positions`);
      for (let l = 0; l < this.s.n_layer; l++) {
        const at = (l * this.maxContext + start) * d;
        c.k.view.set(block.subarray(2 * l * n * d, (2 * l + 1) * n * d), at);
        c.v.view.set(block.subarray((2 * l + 1) * n * d, (2 * l + 2) * n * d), at);
      }
    }
    rotate(a, o, p) {  // RoPE on the pairs (2j, 2j+1) of each head of the vector at a[o ..]
      const half = this.dh / 2, c = this.cos, sn = this.sin;
      for (let hh = 0; hh < this.s.n_head; hh++) {
        const base = o + hh * this.dh;
        for (let j = 0; j < half; j++) {
          const x1 = a[base + 2 * j], x2 = a[base + 2 * j + 1], cj = c[p * half + j], sj = sn[p * half + j];
          a[base + 2 * j] = x1 * cj - x2 * sj;
          a[base + 2 * j + 1] = x1 * sj + x2 * cj;
        }
      }
    }
    attend(layer, slots, pos, T) {  // q, k, v from this.qkv; K/V into each slot's cache, then attention into this.h
      const d = this.s.d_model, q = this.qkv.view, lo = layer * this.maxContext * d;
      for (let t = 0; t < T; t++) {
        this.rotate(q, t * 3 * d, pos[t]);
        this.rotate(q, t * 3 * d + d, pos[t]);
        const c = this.slotCache(slots[t]), at = lo + pos[t] * d;
        c.k.view.set(q.subarray(t * 3 * d + d, t * 3 * d + 2 * d), at);
        c.v.view.set(q.subarray(t * 3 * d + 2 * d, t * 3 * d + 3 * d), at);
      }
      for (let t = 0; t < T; t++) this.attendOne(lo, this.slotCache(slots[t]), pos[t], t);
    }
    attendOne(lo, c, p, t) {  // the kernel's `attend`: every head's scores, softmax and weighted sum for one token
      const d = this.s.d_model, col = lo * 4;
      this.arena.exports.attend(this.qkv.at + t * 3 * d * 4, c.k.at + col, c.v.at + col, p + 1, d * 4, this.scores.at,
        this.h.at + t * d * 4, this.dh, this.s.n_head, 1 / Math.sqrt(this.dh));
    }
    addInto(dst, src, n) { const a = dst.view, b = src.view; for (let i = 0; i < n; i++) a[i] += b[i]; }
    block(layer, slots, pos, T) {
      const d = this.s.d_model, f = this.s.d_ff, L = this.layers[layer];
      layerNorm(this.x.view, this.h.view, T, d, L.ln1[0], L.ln1[1]);
      this.linear(this.h, L.qkv, this.qkv, T);
      this.attend(layer, slots, pos, T);
      this.linear(this.h, L.proj, this.tmp, T);
      this.addInto(this.x, this.tmp, T * d);
      layerNorm(this.x.view, this.h.view, T, d, L.ln2[0], L.ln2[1]);
      this.linear(this.h, L.fc, this.ff, T);
      this.arena.exports.gelu(this.ff.at, T * f);
      this.linear(this.ff, L.out, this.tmp, T);
      this.addInto(this.x, this.tmp, T * d);
    }
    // One forward step over T tokens: ids, their slots and positions; returns the logits (a view, rows x vocab) of
    // the tokens listed in `wanted` (indices into the step), in that order.
    forward(ids, slots, pos, wanted) {
      const T = ids.length, d = this.s.d_model, x = this.x.view;
      if (T > this.maxTokens) throw new Error(`a step of ${T} tokens; the model holds ${this.maxTokens}`);
      for (let t = 0; t < T; t++) {
        if (pos[t] >= this.maxContext) throw new Error(`position ${pos[t]} is past the context (${this.maxContext})`);
        x.set(this.emb.subarray(ids[t] * d, ids[t] * d + d), t * d);
      }
      for (let layer = 0; layer < this.s.n_layer; layer++) this.block(layer, slots, pos, T);
      const last = this.last.view;
      wanted.forEach((t, r) => last.set(x.subarray(t * d, t * d + d), r * d));
      layerNorm(last, last, wanted.length, d, this.lnF[0], this.lnF[1]);
      this.linear(this.last, this.head, this.logits, wanted.length);
      return this.logits.view.subarray(0, wanted.length * this.s.vocab);
    }
    argmax(logits, row) { return argmaxRow(logits, row, this.s.vocab); }
  }
  // Greedy generation on one slot with the cache (the prompt in one step, then one token a step), or without it
  // (the whole sequence again every step, as tinygpt.generate(kv_cache=False)); `keep` collects each step's logits.
  // The plan is one generator: it yields each step's [tokens, positions] and takes the step's next token back;
  // greedy drives it with TinyModel's forward, greedyAsync with one that returns a Promise (gpu.js GpuModel).
  function* greedyPlan(prompt, steps, cache) {
    const ids = Array.from(prompt), out = [];
    let feed = ids.slice(), start = 0;
    for (let k = 0; k < steps; k++) {
      const next = yield [feed, Array.from({length: feed.length}, (_, i) => start + i)];
      out.push(next);
      ids.push(next);
      if (cache) { start = ids.length - 1; feed = [next]; } else feed = ids.slice();
    }
    return out;
  }
  function greedy(model, prompt, steps, {cache = true, slot = 0, keep = null} = {}) {
    const plan = greedyPlan(prompt, steps, cache);
    let r = plan.next();
    while (!r.done) {
      const [feed, pos] = r.value, logits = model.forward(feed, new Array(feed.length).fill(slot), pos, [feed.length - 1]);
      if (keep) keep.push(Float32Array.from(logits));
      r = plan.next(model.argmax(logits, 0));
    }
    return r.value;
  }
  async function greedyAsync(model, prompt, steps, {cache = true, slot = 0, keep = null} = {}) {
    const plan = greedyPlan(prompt, steps, cache);
    let r = plan.next();
    while (!r.done) {
      const [feed, pos] = r.value, logits = await model.forward(feed, new Array(feed.length).fill(slot), pos, [feed.length - 1]);
      if (keep) keep.push(Float32Array.from(logits));
      r = plan.next(model.argmax(logits, 0));
    }
    return r.value;
  }
  function argmaxRow(logits, row, v) {  // the first largest of a row (torch's argmax)
    const o = row * v;
    let best = 0;
    for (let i = 1; i < v; i++) if (logits[o + i] > logits[o + best]) best = i;
    return best;
  }

  // ---- the engine: continuous batching with vLLM V1's rule, taken from the serving simulator's twin (`sim`:
  // c13ServingSim(), its schedulers.js VllmV1.prefillChunks, the twin of scripts/serving/engine/schedulers.py; the one
  // home of the rule): every step gives each running decode its last token, then prompt tokens first come first
  // served within the shared token budget (max_num_batched_tokens), the last prompt chunked; waiting requests are
  // admitted first come first served while the budget lasts and fewer than max_num_seqs run (vLLM 0.11's
  // Scheduler.schedule). A request reserves a slot (its whole context) when admitted; there is no preemption. Greedy
  // sampling; a request ends after its output length.
  class Engine {
    // prefixCache: a TokenPrefixCache (serving_sim/prefix.js, vLLM V1's APC) or null; its blocks' KV kept in `store`
    constructor(model, {maxNumSeqs = 8, maxBatchedTokens = 256, prefixCache = null, sim = null} = {}) {
      if (maxNumSeqs > model.slots) throw new Error(`max_num_seqs ${maxNumSeqs} > the model's ${model.slots} slots`);
      if (maxBatchedTokens > model.maxTokens) throw new Error(`max_num_batched_tokens ${maxBatchedTokens} > ${model.maxTokens}`);
      const V1 = sim && sim.REGISTRIES.scheduler["vllm-v1"];
      if (!V1) throw new Error("Engine: give the serving simulator (c13ServingSim()) as `sim`: its vllm-v1 rule schedules the steps");
      Object.assign(this, {model, maxNumSeqs, maxBatchedTokens, prefixCache, rule: new V1(maxNumSeqs, maxBatchedTokens),
        store: new Map(), hits: [], waiting: [], running: [], admitted: [], free: Array.from({length: maxNumSeqs}, (_, i) => maxNumSeqs - 1 - i)});
    }
    add(req) {  // {id, prompt: token ids, outputLen}
      if (req.prompt.length + req.outputLen > this.model.maxContext) {
        throw new Error(`request ${req.id}: ${req.prompt.length} + ${req.outputLen} tokens exceed the context (${this.model.maxContext})`);
      }
      this.waiting.push({...req, tokens: Array.from(req.prompt), computed: 0, out: 0, slot: -1, blocks: [], cached: 0});
    }
    busy() { return this.running.length + this.waiting.length > 0; }
    // A request whose prompt was prefilled elsewhere (P/D: the KV already in `slot`, from takeSlot): it joins the
    // running set as a decoder with its first token, so no step of this engine holds its prompt.
    takeSlot() {
      if (this.running.length >= this.maxNumSeqs || !this.free.length) throw new Error("no free slot for a prefilled request");
      return this.free.pop();
    }
    inject(req, slot, first) {
      const r = {...req, tokens: [...req.prompt, first], computed: req.prompt.length, out: 1, slot};
      this.running.push(r);
      this.admitted.push(r.id);
    }
    schedule() {  // [request, tokens this step] in the step's order: the decodes, then the rule's prompt chunks
      const running = this.running, decodes = running.filter((r) => r.out > 0), decoding = decodes.length;  // admitting adds none
      while (this.waiting.length && running.length < this.maxNumSeqs && this.budgetLeft(decoding) > 0) {
        const r = this.waiting.shift();
        r.slot = this.free.pop();
        if (this.prefixCache) this.reuse(r);
        running.push(r);
        this.admitted.push(r.id);
      }
      return decodes.map((r) => [r, 1]).concat(this.chunks(decoding).map(([k, , n]) => [running[k], n]));
    }
    chunks(decoding) {  // the rule's [index in running, first token, length] of each prompt chunk
      const running = this.running, prefilling = [];
      running.forEach((r, k) => { if (!r.out) prefilling.push(k); });
      return this.rule.prefillChunks(prefilling, running.map((r) => r.tokens.length), running.map((r) => r.computed), decoding);
    }
    budgetLeft(decoding) {
      return this.rule.iterationBudget(decoding) - this.chunks(decoding).reduce((sum, [, , n]) => sum + n, 0);
    }
    reuse(r) {  // the prompt's cached blocks: their KV copied into the slot, their tokens computed
      const [blocks, hit] = this.prefixCache.admit(r.prompt), bs = this.prefixCache.block_size;
      blocks.forEach((b, k) => this.model.importKV(r.slot, bs, this.store.get(b.id), k * bs));
      Object.assign(r, {blocks, computed: hit, cached: hit});
      this.hits.push([r.id, hit]);
    }
    // One step: schedule, run the model on every scheduled token at once, sample where a request reached its end.
    // Returns [[id, new token, finished]], the step's token count and its shape as the simulator prices a step
    // (stepcost.js): its decoders (requests past their prompt, one token each), the positions those tokens attend
    // (their contexts, the new token's own included: the twin's loop.py counts the same) and its prompt chunks
    // [[start, length]] in the step's order.
    step() {
      const b = this.begin();
      return this.finish(b, b.ids.length ? this.model.forward(b.ids, b.slots, b.pos, b.wanted) : null);
    }
    async stepAsync() {  // the same step on a model whose forward returns a Promise (gpu.js GpuModel)
      const b = this.begin();
      return this.finish(b, b.ids.length ? await this.model.forward(b.ids, b.slots, b.pos, b.wanted) : null);
    }
    begin() {  // the step's schedule and its tokens, laid out for the model's forward
      this.hits = [];  // [id, prompt tokens found in the prefix cache] of the requests admitted this step
      const plan = this.schedule(), ids = [], slots = [], pos = [], wanted = [], ends = [];
      const shape = {decoders: 0, contextSum: 0, chunks: []};
      for (const [r, n] of plan) {
        if (r.computed >= r.prompt.length) { shape.decoders += 1; shape.contextSum += r.computed + 1; } else shape.chunks.push([r.computed, n]);
        for (let k = 0; k < n; k++) { ids.push(r.tokens[r.computed + k]); slots.push(r.slot); pos.push(r.computed + k); }
        r.computed += n;
        if (r.computed === r.tokens.length) { wanted.push(ids.length - 1); ends.push(r); }
      }
      return {plan, ids, slots, pos, wanted, ends, shape};
    }
    finish({plan, ids, ends, shape}, logits) {  // the prefix cache's new blocks, then a token for every request at its end
      const events = [], pc = this.prefixCache;
      if (pc) {
        for (const [r] of plan) {
          for (const [b, at] of pc.grow(r.blocks, r.tokens, r.computed)) this.store.set(b.id, this.model.exportKV(r.slot, pc.block_size, at));
        }
      }
      ends.forEach((r, row) => {
        const token = this.model.argmax(logits, row);
        r.tokens.push(token);
        r.out += 1;
        const done = r.out >= r.outputLen;
        if (done) { this.running.splice(this.running.indexOf(r), 1); this.free.push(r.slot); if (pc) pc.release(r.blocks); }
        events.push([r.id, token, done]);
      });
      return {events, tokens: ids.length, requests: plan.length, shape, hits: this.hits};
    }
  }

  // ---- numpy's helpers: rint, pairwise sum, mean, percentile (linear interpolation) ------------------------------
  // @NUMPY_HELPERS@ (templates/serving_sim/numpy.js, the twin's own, put here by scripts/page/lab.py: one percentile)

  return {TinyModel, Engine, npPercentile: percentile, greedy, greedyAsync, argmaxRow, SHAPE, SEED, weightSpec, generatedWeights, paramCount, Arena, kernelInstance, kernelBuild, transposed, ropeTables, layerNorm, mulberry32,
    decodeBase64};
}
if (typeof self !== "undefined") self.C13Lab = c13LabModel();
if (typeof module !== "undefined") module.exports = c13LabModel();
