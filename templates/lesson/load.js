
  // ---- serving/experiments/load_page.py: the under-load experiment, simulated here (serving-sim.js) ------------------
  // Every cell (workload, schedule, rate, and the engine settings: GPU, step times, chunk budget, P/D split) is
  // simulated in a Web Worker by serving-sim.js, the twin of scripts/serving/engine/, from the workloads'
  // requests and the constants in serving-data.js. At the build's settings its requests equal serving.json's
  // per_request exactly (tests/test_sim_parity.py), so the opening numbers are the build's records.
  const SCHEDULES = Object.keys(DATA.names.schedules), SCHEDULE_LABELS = labelsOf("schedules");
  // numpy.percentile, method 'linear', on sorted values: serving-sim.js's (the experiment runs only once it loaded)
  const percentile = (sorted, q) => window.C13Sim.percentile(sorted, q);
  const TAIL_PARTS = Object.keys(DATA.names.tail_parts);  // scripts/common/names.json
  const CHART_VALUES = DATA.names.chart_values;  // the categories the charts colour (names.json chart_values)
  const STEP_TIMES = ["bound", "realistic"];
  // The experiment runs once both its data and the simulator have loaded (serving-data.js may arrive first).
  let twinInputs = null;  // the twin's inputs once both have loaded, its draws unpacked
  const twin = () => twinInputs || (window.C13_SERVING && window.C13Sim && window.c13ServingSim
    && (twinInputs = unpacked(window.C13_SERVING.twin)));
  // Each workload's arrival draws arrive packed (load_page.packed_draws: float64, little-endian, base64): unpacked
  // into a Float64Array holding the same doubles.
  function unpacked(T) {
    for (const tr of Object.values(T.traces)) {
      const view = new DataView(Uint8Array.from(atob(tr.gamma.float64_base64), (c) => c.charCodeAt(0)).buffer);
      tr.gamma = Float64Array.from({length: view.byteLength / 8}, (_, i) => view.getFloat64(8 * i, true));
    }
    return T;
  }
  // The engine settings a cell depends on: the GPU and step times for every schedule, the chunk budget for
  // chunked prefill, the split for P/D; unset, the build's (engineDefaults: the records' state).
  function engineOf(s) {
    const T = twin().settings;
    return {gpu: s.gpu && GPUS[s.gpu] ? s.gpu : DEFAULT_GPU.id, step_time: STEP_TIMES.includes(s.step_time) ? s.step_time : "bound",
      chunk: s.load_chunk_tokens || T.chunk_tokens, split: s.pd_split || `${T.prefill_gpus}:${T.decode_gpus}`};
  }
  const engineDefaults = () => engineOf({});
  function onBuildSettings(s) {  // the state whose numbers are the build's records (the sweep's rates included)
    const e = engineOf(s), d = engineDefaults();
    return e.gpu === d.gpu && e.step_time === d.step_time && e.chunk === d.chunk && e.split === d.split &&
      twin().settings.rates_per_gpu.includes(s.request_rate);
  }
  function simJob(s, workload, schedule, rate) {
    const e = engineOf(s);
    const extra = schedule === "chunked" ? `c${e.chunk}` : schedule === "disagg" ? `s${e.split}` : "";
    return {key: `${e.gpu}|${e.step_time}|${extra}|${workload}/${schedule}/${rate}`, workload, schedule, rate,
      gpu: e.gpu, step_time: e.step_time, chunk: e.chunk, split: e.split};
  }
  const simCells = new Map();  // job key -> decoded cell (or {error})
  let simQueue = [], updateQueued = false, updating = false;
  let settleWaiters = [];
  function decodeCell(c) {
    const unit = twin().quantum_ms;
    const ttftMs = Array.from(c.ttft, (v) => v * unit).sort((x, y) => x - y);
    const tpotMs = Array.from(c.tpot).filter((v) => v > 0).map((v) => v * unit).sort((x, y) => x - y);
    return {ttft: c.ttft, tpot: c.tpot, ttftMs, tpotMs, duration: c.duration_s, tail_ms: c.tail_ms,
      prefill_over: c.prefill_over, attained: {}};
  }
  // The worker's body: it receives the twin's inputs once, then one job at a time (main-thread fallback: the same).
  function simWorkerMain(S, scope) {
    let T = null;
    const run = (job) => {
      const [pf, dc] = job.split.split(":").map(Number), gpus = job.schedule === "disagg" ? pf + dc : 1;
      const tr = T.traces[job.workload], g = T.gpus[job.gpu];
      const reqs = {arrival_s: S.arrivalTimes(tr.gamma, job.rate * gpus, T.settings.burstiness),
        prompt_tokens: tr.prompt_tokens, output_tokens: tr.output_tokens};
      const trace = S.simulate(T.model, g, reqs, job.schedule, {chunk_tokens: job.chunk, prefill_gpus: pf,
        decode_gpus: dc, first_token: T.settings.first_token, efficiency: T.efficiency[job.step_time],
        memory: {block_size: T.settings.block_size, gpu_memory_utilization: T.settings.gpu_memory_utilization}});
      return S.cellSummary(trace, T.quantum_ms, T.tail_parts);
    };
    const handle = (msg) => {
      if (msg.init) {  // warm the compiler on a slice of the first workload, so the reader's first cell is fast
        T = msg.init;
        const w = Object.keys(T.traces)[0], tr = T.traces[w];
        const slice = {...T, traces: {[w]: {...tr, gamma: tr.gamma.slice(0, 300), prompt_tokens: tr.prompt_tokens.slice(0, 300),
          output_tokens: tr.output_tokens.slice(0, 300)}}};
        const real = T;
        T = slice;
        for (const schedule of T.schedules) {
          try { run({...T.warm, workload: w, schedule, rate: T.settings.rates_per_gpu[0]}); } catch (err) { /* warm-up only */ }
        }
        T = real;
        return null;
      }
      try { return {key: msg.key, cell: run(msg)}; } catch (err) { return {key: msg.key, error: String(err.message || err)}; }
    };
    if (scope) scope.onmessage = (e) => { const r = handle(e.data); if (r) scope.postMessage(r); };
    return handle;
  }
  // A worker's script: serving-sim.js's code and `main(S, self)`, as a Blob URL (so it runs from file:// too).
  const workerUrl = (main) => URL.createObjectURL(new Blob([
    `"use strict";\nconst S = (${window.c13ServingSim.toString()})();\n(${main.toString()})(S, self);\n`], {type: "text/javascript"}));
  // A small pool of workers (two to three: a cold setting needs the three schedules' cells at the current rate
  // first, and they run side by side); without workers, the main thread, one cell per task.
  let simInit = null, simLocal = null, simStarted = false;
  const workers = [], inflight = new Map();  // job key -> the worker running it
  function simStart() {
    simStarted = true;
    const T = twin();
    simInit = {...T, tail_parts: TAIL_PARTS, schedules: SCHEDULES, warm: engineDefaults(), gpus: Object.fromEntries((DATA.gpus || []).map((g) =>
      [g.id, {name: g.label, hbm_bytes: g.constants.hbm_bytes, hbm_bandwidth_bytes_per_s: g.constants.hbm_bandwidth_bytes_per_s,
        peak_bf16_flops: g.constants.peak_bf16_flops}]))};
    const count = Math.min(3, Math.max(2, (navigator.hardwareConcurrency || 2) - 1));
    try {  // workers made from this page's own code (a Blob): they run from file:// too
      const url = workerUrl(simWorkerMain);
      for (let k = 0; k < count; k++) {
        const w = {worker: new Worker(url), job: null};
        w.worker.onmessage = (e) => simDone(w, e.data);
        w.worker.onerror = (e) => { e.preventDefault(); simLost(w); };
        w.worker.postMessage({init: simInit});
        workers.push(w);
      }
    } catch (err) {
      workers.length = 0;
    }
    if (!workers.length) workers.push({local: true, job: null});
  }
  function simLost(w) {  // a worker that failed: its job goes back to the queue; the last one lost, the main thread
    workers.splice(workers.indexOf(w), 1);
    if (w.job) { inflight.delete(w.job.key); simQueue.unshift(w.job); }
    if (!workers.length) workers.push({local: true, job: null});
    simPump();
  }
  function localHandle() {
    if (!simLocal) { simLocal = simWorkerMain(window.C13Sim, null); simLocal({init: simInit}); }
    return simLocal;
  }
  function simPump() {
    for (const w of workers) {
      if (w.job) continue;
      while (simQueue.length && (simCells.has(simQueue[0].key) || inflight.has(simQueue[0].key))) simQueue.shift();
      if (!simQueue.length) break;
      const job = simQueue.shift();
      w.job = job;
      inflight.set(job.key, w);
      if (w.local) setTimeout(() => simDone(w, localHandle()(job)), 0);
      else w.worker.postMessage(job);
    }
    settle();
  }
  function simDone(w, msg) {
    if (!msg || !w.job || msg.key !== w.job.key) return;
    simCells.set(msg.key, msg.error ? {error: msg.error} : decodeCell(msg.cell));
    inflight.delete(msg.key);
    w.job = null;
    queueUpdate();
    simPump();
  }
  function simRequest(jobs) {  // the cells the state needs, most urgent first; older wishes are dropped
    if (!twin()) return;
    if (!simStarted) simStart();
    const seen = new Set();
    simQueue = jobs.filter((j) => !simCells.has(j.key) && !inflight.has(j.key) && !seen.has(j.key) && seen.add(j.key));
    simPump();
  }
  function queueUpdate() {
    if (updateQueued) return;
    updateQueued = true;
    requestAnimationFrame(() => { updateQueued = false; update(); });
  }
  const simSettled = () => !inflight.size && !simQueue.length && !updateQueued && !attainTimer && !prefixBusy() &&
    !chartsQueued && !heldTimer;
  // While a slider is dragged, only the current rate's cells are simulated; the swept rates' and the goodput
  // search's wait until the moves pause (DRAG_PAUSE_MS without another): simulated beside a drag, the workers
  // (two on a two-core machine) took the cores the drag's frames needed (scripts/bench/page_latency.py).
  const DRAG_PAUSE_MS = 120;
  let lastSliderInput = -Infinity, heldTimer = 0;
  function simRequestNow(jobs, urgent) {
    const wait = lastSliderInput + DRAG_PAUSE_MS - performance.now();
    if (wait <= 0 || jobs.length <= urgent) { simRequest(jobs); return; }
    simRequest(jobs.slice(0, urgent));
    clearTimeout(heldTimer);
    heldTimer = setTimeout(() => { heldTimer = 0; queueUpdate(); }, wait);
  }
  function settle() {
    if (updating || !simSettled()) return;  // an update in progress may still queue work: it settles at its end
    const waiters = settleWaiters;
    settleWaiters = [];
    waiters.forEach((f) => f());
  }
