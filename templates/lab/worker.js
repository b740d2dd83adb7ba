// ---- the worker's side: the model, the timing loops and the serving loop ------------------------------------------
// The worker's timing jobs (batch scaling, experiment A) on the worker's state `w`
// ({model, post, yieldTask, median}); the page's worker gets this function's source beside labWorker's.
function labTimings(L, w) {
  const prefilled = new Set();
  // m.device "gpu": the GpuModel (gpu.js, set up by the worker's gpu command), whose forward returns a Promise
  const modelFor = (m) => {
    if (m.device !== "gpu") return w.model;
    if (!w.gpu) throw new Error("the GPU model is not set up (the worker's gpu command comes first)");
    return w.gpu;
  };
  function prefill(slot, prompt) {
    if (prefilled.has(slot)) return;
    w.model.forward(prompt, prompt.map(() => slot), prompt.map((_, i) => i), [prompt.length - 1]);
    prefilled.add(slot);
  }
  async function prefillGpu(model, prompt, slots) {  // one slot's prompt, copied to every other slot
    await model.forward(prompt, prompt.map(() => 0), prompt.map((_, i) => i), [prompt.length - 1]);
    await model.copySlot(0, Array.from({length: slots - 1}, (_, i) => i + 1));
  }
  // one decode step of B requests, each with `position` cached positions; on the GPU a size starts only while the
  // run is inside m.budgetMs (the rest are reported as skipped)
  async function batches(m) {
    const model = modelFor(m), gpu = model.async === true, rows = [], skipped = [], start = performance.now();
    if (gpu) await prefillGpu(model, m.prompt, Math.max(...m.sizes));
    for (const B of m.sizes) {
      if (gpu && m.budgetMs && performance.now() - start > m.budgetMs) { skipped.push(B); continue; }
      if (!gpu) for (let s = 0; s < B; s++) prefill(s, m.prompt);
      const ids = Array.from({length: B}, (_, i) => m.prompt[i % m.prompt.length]), slots = ids.map((_, i) => i);
      const pos = ids.map(() => m.prompt.length), wanted = slots.slice(), times = [];
      for (let k = 0; k < 1 + m.samples; k++) {  // a sample: `stepsPerSample` steps back to back (the browser's
        const t0 = performance.now();           // clock is coarse, see config/lab.json), the first a warm-up
        for (let j = 0; j < m.stepsPerSample; j++) {
          const out = model.forward(ids, slots, pos, wanted);
          if (gpu) await out;  // a GPU step ends when its logits are back
        }
        if (k >= 1) times.push((performance.now() - t0) / m.stepsPerSample);
      }
      rows.push({batch: B, ms: w.median(times)});
      w.post({type: "progress", done: rows.length + skipped.length, of: m.sizes.length});
      await w.yieldTask();
    }
    prefilled.clear();
    w.post({type: "batches", rows, skipped, device: gpu ? "gpu" : "cpu"});
  }
  // One generation, timed; past `until` (performance.now() ms) it stops at the next step and resolves with null.
  async function timeGeneration(model, prompt, n, cache, until) {
    let over = false;
    const bounded = {argmax: (l, r) => model.argmax(l, r), forward: (...a) => {
      if (performance.now() > until) { over = true; throw new RangeError("over the budget"); }
      return model.forward(...a);
    }};
    const t0 = performance.now();
    try {
      const out = model.async ? await L.greedyAsync(bounded, prompt, n, {cache, slot: 0}) : L.greedy(bounded, prompt, n, {cache, slot: 0});
      return {ms: performance.now() - t0, out};
    } catch (err) {
      if (over) return null;
      throw err;
    }
  }
  // experiment A: per length a warm-up pair, then alternating pairs within the time budget; a length whose pairs do
  // not fit (or whose warm-up runs past the budget) is skipped
  async function kvCache(m) {
    const model = modelFor(m), start = performance.now(), until = start + m.budgetMs, rows = [], skipped = [];
    for (const n of m.lengths) {
      const a0 = await timeGeneration(model, m.prompt, n, true, until), b0 = a0 && await timeGeneration(model, m.prompt, n, false, until);
      const pairs = b0 ? Math.min(m.pairs, Math.floor((until - performance.now()) / (a0.ms + b0.ms))) : 0;
      if (pairs < m.minPairs) { skipped.push(n); continue; }
      const kv = [], nokv = [];
      for (let r = 0; r < pairs; r++) {
        const a = await timeGeneration(model, m.prompt, n, true, Infinity), b = await timeGeneration(model, m.prompt, n, false, Infinity);
        if (a.out.join() !== b.out.join()) throw new Error(`with and without the cache gave different tokens at ${n}`);
        kv.push(a.ms);
        nokv.push(b.ms);
        w.post({type: "progress", done: performance.now() - start, of: m.budgetMs});
        await w.yieldTask();
      }
      rows.push({newTokens: n, kv, nokv});
    }
    w.post({type: "kv", rows, skipped, seconds: (performance.now() - start) / 1000, device: model.async ? "gpu" : "cpu"});
  }
  // The GPU model beside the CPU one: {available, reason} where the browser offers no adapter; else the adapter's
  // words (a software adapter says so: info.fallback) and how long the model took to set up.
  async function gpu(m) {
    const found = await L.gpuAdapter();
    if (!found.adapter) { w.post({type: "gpu", available: false, reason: found.reason}); return; }
    const t0 = performance.now();
    if (!w.gpu) w.gpu = await L.GpuModel.create({adapter: found.adapter, slots: m.slots, maxContext: m.maxContext, maxTokens: m.maxTokens});
    w.post({type: "gpu", available: true, info: found.info, ms: performance.now() - t0});
  }
  return {batches, kv: kvCache, gpu};
}

function labWorker(L, scope, S = null) {  // S: the serving simulator (the engine's rule, its TokenPrefixCache)
  let model = null, engine = null, wake = null;
  const post = (m) => scope.postMessage(m);
  const channel = new MessageChannel();
  let resume = null;
  channel.port1.onmessage = () => { const r = resume; resume = null; if (r) r(); };
  const yieldTask = () => new Promise((r) => { resume = r; channel.port2.postMessage(0); });
  const w = {model: null, gpu: null, sim: S, post, yieldTask, median: L.median, transfer: (m, list) => scope.postMessage(m, list)};
  const timings = labTimings(L, w), waits = labWaits(L, w);

  function init(m) {
    const t0 = performance.now();
    model = w.model = new L.TinyModel({slots: m.slots, maxContext: m.maxContext, maxTokens: m.maxTokens});
    post({type: "ready", params: L.paramCount(), ms: performance.now() - t0, kernel: model.kernel});
  }
  // The engine's loop: step while there is work, wait for a request when there is none. Each step's message
  // carries its shape, its start on the clock the page shares (performance.timeOrigin + now(), ms), the time since
  // the previous step's start when the two ran back to back (null after a wait) and when the worker saw each
  // request that came in since the last step, and whether it was waiting for one: the calibration prices steps
  // and the messages' way with them (calibration.js).
  const clock = () => performance.timeOrigin + performance.now();
  let seen = [];
  async function serve(m) {
    seen = [];
    if (m.prefixBlock && !S) throw new Error("prefix caching needs the simulator's script (serving-sim.js) on the page");
    const onGpu = m.device === "gpu", model = onGpu ? w.gpu : w.model;
    if (onGpu && !model) throw new Error("the GPU model is not set up (the worker's gpu command comes first)");
    if (onGpu && m.prefixBlock) throw new Error("前缀缓存对照只在 CPU 上跑:GPU 上的模型不导出、导入 KV 块");
    // the cache's pool: the slots' memory in blocks (a running request always finds its blocks; the rest caches)
    const pool = m.prefixBlock ? new S.TokenPrefixCache(m.maxNumSeqs * Math.ceil(model.maxContext / m.prefixBlock), m.prefixBlock) : null;
    engine = new L.Engine(model, {maxNumSeqs: m.maxNumSeqs, maxBatchedTokens: m.maxBatchedTokens, prefixCache: pool, sim: S});
    const serving = engine;
    let last = null;
    while (engine === serving) {
      if (!engine.busy()) { last = null; await new Promise((r) => { wake = r; }); continue; }
      const t0 = clock(), step = onGpu ? await engine.stepAsync() : engine.step();
      post({type: "step", events: step.events, tokens: step.tokens, requests: step.requests, hits: step.hits, ms: clock() - t0,
        shape: step.shape, start: t0, cycle: last === null ? null : t0 - last, afterIdle: last === null, seen});
      seen = [];
      last = t0;
      await yieldTask();
    }
  }
  const handlers = {
    init, ...timings, ...waits, serve,
    request(m) {  // seen: when, and whether the engine was waiting (else the message waited for a step to end)
      engine.add(m.request);
      seen.push([m.request.id, clock(), wake !== null]);
      if (wake) { const w = wake; wake = null; w(); }
    },
    stop() { engine = null; if (wake) { const w = wake; wake = null; w(); } },
  };
  scope.onmessage = (e) => {
    try {
      const result = handlers[e.data.cmd](e.data);
      if (result && result.catch) result.catch((err) => post({type: "error", message: String(err.message || err)}));
    } catch (err) {
      post({type: "error", message: String(err.message || err)});
    }
  };
  return Object.keys(handlers);  // the commands it answers (config/lab.json experiments name theirs)
}

