// ---- the course's tiny GPT on the student's GPU, through WebGPU ------------------------------------------------------
// The same seeded weights and forward as the WebAssembly model (model.js TinyModel), its kernels in
// templates/lab/model/gpu.wgsl (the build puts that source where GPU_WGSL stands). The browser compiles them: nothing
// is downloaded. A GpuModel has TinyModel's forward(ids, slots, pos, wanted), but it returns a Promise of the wanted
// rows' logits: a step ends when its logits are back on the CPU, which is what a serving step needs before it can
// sample. The build appends this file to lab-model.js; the page's worker gets its source beside c13LabModel's.
// Pure of the DOM; the adapter comes from `navigator.gpu` (a page or a worker).
function c13LabGpu(L) {
  const WGSL = "@GPU_WGSL@";
  const ROWS_WANTED = 1, ADD = 2, GELU = 4, GATHER = 8;  // gpu.wgsl's flags
  const LANES = 64, ROWS = 4;                             // gpu.wgsl's workgroup shapes

  // What the browser offers: {adapter, info} or {adapter: null, reason}. A software adapter (SwiftShader, or any the
  // browser marks isFallbackAdapter) is reported as such: the page never presents it as the student's GPU.
  async function gpuAdapter(gpu = (typeof navigator !== "undefined" ? navigator.gpu : undefined)) {
    if (!gpu) return {adapter: null, reason: "no-webgpu"};
    let adapter = null;
    try { adapter = await gpu.requestAdapter({powerPreference: "high-performance"}); } catch (err) { adapter = null; }
    if (!adapter) return {adapter: null, reason: "no-adapter"};
    const i = adapter.info || {};
    const fallback = Boolean(i.isFallbackAdapter || adapter.isFallbackAdapter || i.architecture === "swiftshader");
    return {adapter, info: {vendor: i.vendor || "", architecture: i.architecture || "", description: i.description || "",
      fallback}};
  }

  // The weights in one buffer: the embedding (vocab x d, for the lookup), each layer's norms, matrices transposed to
  // (in x out) and biases, the last norm, the tied head transposed (d x vocab) and a zero bias for it.
  function packedWeights(s) {
    const w = L.generatedWeights(s), parts = [], at = {};
    let top = 0;
    const put = (key, values) => { at[key] = top; parts.push(values); top += values.length; };
    const d = s.d_model, f = s.d_ff;
    put("emb", w["emb.weight"]);
    for (let i = 0; i < s.n_layer; i++) {
      const b = `blocks.${i}.`;
      put(b + "ln1", Float32Array.of(...w[b + "ln1.weight"], ...w[b + "ln1.bias"]));
      for (const [name, nOut, nIn] of [["qkv", 3 * d, d], ["proj", d, d], ["fc", f, d], ["out", d, f]]) {
        put(b + name, L.transposed(w[b + name + ".weight"], nOut, nIn));
        put(b + name + ".bias", w[b + name + ".bias"]);
      }
      put(b + "ln2", Float32Array.of(...w[b + "ln2.weight"], ...w[b + "ln2.bias"]));
    }
    put("ln_f", Float32Array.of(...w["ln_f.weight"], ...w["ln_f.bias"]));
    put("head", L.transposed(w["emb.weight"], s.vocab, d));
    put("head.bias", new Float32Array(s.vocab));
    const all = new Float32Array(top);
    let o = 0;
    for (const p of parts) { all.set(p, o); o += p.length; }
    return {all, at};
  }

  class GpuModel {
    // GpuModel.create({adapter, slots, maxContext, maxTokens}): the device, the weights, the caches and the pipelines.
    static async create({adapter, slots = 16, maxContext = 256, maxTokens = 512, shape = L.SHAPE} = {}) {
      const s = shape, d = s.d_model, cache = slots * s.n_layer * maxContext * d * 4;
      if (d % LANES || s.d_ff % LANES || d / s.n_head !== LANES) throw new Error(`gpu.wgsl needs d_model and d_ff in 64s and heads of 64, not ${d}/${s.n_head}`);
      const need = Math.max(cache, maxTokens * s.d_ff * 4, slots * s.vocab * 4);
      if (need > adapter.limits.maxStorageBufferBindingSize || need > adapter.limits.maxBufferSize) {
        throw new Error(`the GPU's buffers hold ${adapter.limits.maxStorageBufferBindingSize} bytes; ${slots} slots need ${need}`);
      }
      const device = await adapter.requestDevice({requiredLimits: {maxStorageBufferBindingSize: need, maxBufferSize: need}});
      const m = new GpuModel(device, s, slots, maxContext, maxTokens);
      await m.build();
      return m;
    }
    constructor(device, s, slots, maxContext, maxTokens) {
      Object.assign(this, {device, s, slots, maxContext, maxTokens, async: true, pending: Promise.resolve()});
    }
    buffer(bytes, usage, data = null) {  // `data` (a typed array) sets its size and its contents
      const size = data ? data.byteLength : bytes, b = this.device.createBuffer({size: Math.ceil(Math.max(size, 16) / 16) * 16, usage});
      if (data) this.device.queue.writeBuffer(b, 0, data);
      return b;
    }
    async build() {
      const s = this.s, d = s.d_model, U = GPUBufferUsage, SB = U.STORAGE | U.COPY_DST | U.COPY_SRC;
      const {all, at} = packedWeights(s);
      this.W = this.buffer(all.byteLength, SB, all);
      this.x = this.buffer(this.maxTokens * d * 4, SB);
      this.h = this.buffer(this.maxTokens * d * 4, SB);
      this.qkv = this.buffer(this.maxTokens * 3 * d * 4, SB);
      this.ff = this.buffer(this.maxTokens * s.d_ff * 4, SB);
      this.last = this.buffer(this.slots * d * 4, SB);
      this.logits = this.buffer(this.slots * s.vocab * 4, SB);
      this.readback = this.buffer(this.slots * s.vocab * 4, U.MAP_READ | U.COPY_DST);
      this.tok = this.buffer(4 * this.maxTokens * 4, SB);
      this.stepInfo = this.buffer(16, U.UNIFORM | U.COPY_DST);
      const cacheBytes = this.slots * s.n_layer * this.maxContext * d * 4;
      this.kc = this.buffer(cacheBytes, SB);
      this.vc = this.buffer(cacheBytes, SB);
      const {cos, sin} = L.ropeTables(d / s.n_head, this.maxContext, s.rope_base), rope = new Float32Array(2 * cos.length);
      rope.set(cos);
      rope.set(sin, cos.length);  // gpu.wgsl reads cos then sin
      this.rope = this.buffer(0, SB, rope);
      const prelude = `const D: u32 = ${d}u; const DH: u32 = ${d / s.n_head}u; const HALF: u32 = ${d / s.n_head / 2}u; ` +
        `const NLAYER: u32 = ${s.n_layer}u; const MAXCTX: u32 = ${this.maxContext}u;\n`;
      const module = this.device.createShaderModule({code: prelude + WGSL});
      const names = ["embed", "layernorm", "linear", "rope_kv", "attention"];
      const pipes = await Promise.all(names.map((entryPoint) => this.device.createComputePipelineAsync({layout: "auto",
        compute: {module, entryPoint}})));
      this.pipes = Object.fromEntries(names.map((n, k) => [n, pipes[k]]));
      this.plan = this.stepPlan(at);
    }
    // One dispatch: its pipeline, its bind group (the buffers its entry point reads, by binding) and its grid as a
    // function of the step's token count T and wanted rows R.
    dispatch(entry, params, buffers, grid) {
      const p = this.buffer(32, GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST, Uint32Array.from(params));
      const entries = [[0, this.stepInfo], [1, p], ...Object.entries(buffers)].map(([k, b]) => ({binding: Number(k),
        resource: {buffer: b}}));
      return {pipe: this.pipes[entry], group: this.device.createBindGroup({layout: this.pipes[entry].getBindGroupLayout(0), entries}), grid};
    }
    stepPlan(at) {  // every dispatch of a step in order (gpu.wgsl's header)
      const s = this.s, d = s.d_model, f = s.d_ff, plan = [];
      const lanes = (n) => Math.ceil(n / LANES), rows = (n) => Math.ceil(n / ROWS);
      const norm = (off, src, dst, flags = 0) => this.dispatch("layernorm", [0, 0, off, 0, flags, 0],
        {2: this.W, 3: src, 4: dst, 5: this.tok}, (T, R) => [flags & ROWS_WANTED ? R : T]);
      const linear = (key, nIn, nOut, src, dst, flags = 0) => this.dispatch("linear", [nIn, nOut, at[key], at[key + ".bias"], flags, 0],
        {2: this.W, 3: src, 4: dst}, (T, R) => [lanes(nOut), rows(flags & ROWS_WANTED ? R : T)]);
      plan.push(this.dispatch("embed", [0, 0, at.emb, 0, 0, 0], {2: this.W, 4: this.x, 5: this.tok}, (T) => [lanes(T * d)]));
      for (let i = 0; i < s.n_layer; i++) {
        const b = `blocks.${i}.`;
        plan.push(norm(at[b + "ln1"], this.x, this.h), linear(b + "qkv", d, 3 * d, this.h, this.qkv),
          this.dispatch("rope_kv", [0, 0, 0, 0, 0, i], {4: this.qkv, 5: this.tok, 6: this.kc, 7: this.vc, 8: this.rope},
            (T) => [lanes(T * d / 2)]),
          this.dispatch("attention", [0, 0, 0, 0, 0, i], {3: this.qkv, 4: this.h, 5: this.tok, 6: this.kc, 7: this.vc},
            (T) => [T, s.n_head]),
          linear(b + "proj", d, d, this.h, this.x, ADD), norm(at[b + "ln2"], this.x, this.h),
          linear(b + "fc", d, f, this.h, this.ff, GELU), linear(b + "out", f, d, this.ff, this.x, ADD));
      }
      plan.push(norm(at.ln_f, this.x, this.last, ROWS_WANTED | GATHER),
        linear("head", d, s.vocab, this.last, this.logits, ROWS_WANTED));
      return plan;
    }
    // One forward step over T tokens (TinyModel.forward's arguments): resolves with the wanted rows' logits
    // (a Float32Array of rows x vocab, the caller's to keep). Steps run one after another.
    forward(ids, slots, pos, wanted) {
      const run = this.pending.then(() => this.run(ids, slots, pos, wanted));
      this.pending = run.catch(() => {});
      return run;
    }
    async run(ids, slots, pos, wanted) {
      const T = ids.length, R = wanted.length, v = this.s.vocab, MT = this.maxTokens;
      if (T > MT || R > this.slots) throw new Error(`a step of ${T} tokens and ${R} wanted rows; the model holds ${MT} and ${this.slots}`);
      for (let t = 0; t < T; t++) {
        if (pos[t] >= this.maxContext) throw new Error(`position ${pos[t]} is past the context (${this.maxContext})`);
        if (slots[t] >= this.slots) throw new Error(`slot ${slots[t]} is past the model's ${this.slots}`);
      }
      const tok = new Uint32Array(4 * MT);
      tok.set(ids, 0);
      tok.set(slots, MT);
      tok.set(pos, 2 * MT);
      tok.set(wanted, 3 * MT);
      const q = this.device.queue;
      q.writeBuffer(this.tok, 0, tok);
      q.writeBuffer(this.stepInfo, 0, Uint32Array.of(T, R, MT, 0));
      const enc = this.device.createCommandEncoder(), pass = enc.beginComputePass();
      for (const {pipe, group, grid} of this.plan) {
        pass.setPipeline(pipe);
        pass.setBindGroup(0, group);
        pass.dispatchWorkgroups(...grid(T, R));
      }
      pass.end();
      enc.copyBufferToBuffer(this.logits, 0, this.readback, 0, R * v * 4);
      q.submit([enc.finish()]);
      await this.readback.mapAsync(GPUMapMode.READ, 0, R * v * 4);
      const out = new Float32Array(this.readback.getMappedRange(0, R * v * 4).slice(0));
      this.readback.unmap();
      return out;
    }
    // Copy one slot's cache to others (the batch experiment prefills one slot and gives every request its copy),
    // through a scratch buffer: WebGPU copies between two buffers only.
    async copySlot(from, to) {
      const n = this.s.n_layer * this.maxContext * this.s.d_model * 4, enc = this.device.createCommandEncoder();
      const U = GPUBufferUsage, scratch = [this.buffer(n, U.COPY_SRC | U.COPY_DST), this.buffer(n, U.COPY_SRC | U.COPY_DST)];
      [this.kc, this.vc].forEach((c, k) => enc.copyBufferToBuffer(c, from * n, scratch[k], 0, n));
      for (const slot of to) [this.kc, this.vc].forEach((c, k) => enc.copyBufferToBuffer(scratch[k], 0, c, slot * n, n));
      this.device.queue.submit([enc.finish()]);
      await this.device.queue.onSubmittedWorkDone();
      scratch.forEach((b) => b.destroy());
    }
    argmax(logits, row) { return L.argmaxRow(logits, row, this.s.vocab); }
    destroy() { this.device.destroy(); }
  }
  return {gpuAdapter, GpuModel, packedWeights};
}
if (typeof self !== "undefined" && self.C13Lab) Object.assign(self.C13Lab, c13LabGpu(self.C13Lab));
if (typeof module !== "undefined") Object.assign(module.exports, c13LabGpu(module.exports));
