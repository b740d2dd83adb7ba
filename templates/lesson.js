// C13-L5 lesson page: slider math in the browser, every constant read from precomputed.json.
// Each function mirrors one in scripts/model/roofline.py, scripts/model/timeline.py or scripts/model/readouts.py;
// the browser tests hold them to the Python within 1e-6 relative.
"use strict";
function lesson(loadScript, files) {
  const DATA = window.C13_DATA;  // lesson-data.js, loaded by the loader at the end of this file
  const K = {...DATA.constants};  // the GPU switch overwrites the hardware constants in place
  const GPUS = Object.fromEntries((DATA.gpus || []).map((g) => [g.id, g]));
  const DEFAULT_GPU = (DATA.gpus || []).find((g) => g.default);
  // + the measured records only the lab shows (lab-data.js, lab page only) + the pages' own counts
  const PROV = Object.assign({}, DATA.provenance, window.C13_LAB_PROV || {}, window.C13_PAGE_PROV || {});

  // ---- roofline.py -------------------------------------------------------------------------
  const stepSeconds = (bytes, flops) => Math.max(bytes / K.hbm_bandwidth_bytes_per_s, flops / K.peak_bf16_flops);
  const decodeStepBytes = (b, c) => K.weight_bytes_read_per_step + b * (c * K.kv_bytes_per_token + 2 * K.state_bytes_per_request);
  const decodeStepFlops = (b, c) => 2 * K.params_read_per_step * b + b * c * K.attention_flops_per_token_position;
  const decodeStepSeconds = (b, c) => stepSeconds(decodeStepBytes(b, c), decodeStepFlops(b, c));
  const bytesPerRequest = (c) => c * K.kv_bytes_per_token + K.state_bytes_per_request;
  const maxBatchByMemory = (c) => Math.max(0, Math.floor(K.free_bytes_for_requests / bytesPerRequest(c)));
  function maxBatchUnderSlo(c, sloS) {
    const cap = maxBatchByMemory(c);
    const byBytes = (sloS * K.hbm_bandwidth_bytes_per_s - K.weight_bytes_read_per_step) /
      (c * K.kv_bytes_per_token + 2 * K.state_bytes_per_request);
    const byFlops = sloS * K.peak_bf16_flops / (2 * K.params_read_per_step + c * K.attention_flops_per_token_position);
    return Math.max(0, Math.min(cap, Math.floor(Math.min(byBytes, byFlops))));
  }
  const prefillFlops = (p) => 2 * K.params_read_per_step * p + p * p / 2 * K.attention_flops_per_token_position;
  const prefillBytes = (p) => K.weight_bytes_read_per_step + p * K.kv_bytes_per_token + K.state_bytes_per_request;
  const prefillSeconds = (p) => stepSeconds(prefillBytes(p), prefillFlops(p));
  function mixedStepSeconds(n, c, chunk, start) {
    // a prompt's first chunk only writes the recurrent state (it starts at zero); a later one reads and writes it
    const bytes = decodeStepBytes(n, c) + (start + chunk) * K.kv_bytes_per_token +
      (start === 0 ? 1 : 2) * K.state_bytes_per_request;
    const pairs = chunk * start + chunk * chunk / 2;
    const flops = decodeStepFlops(n, c) + 2 * K.params_read_per_step * chunk + pairs * K.attention_flops_per_token_position;
    return stepSeconds(bytes, flops);
  }
  const transferSeconds = (p) => bytesPerRequest(p) / K.pd_link_bytes_per_s;

  // ---- techniques.py: the earlier lessons' techniques as changes to one step (the frontier's switches) ----
  const TECH = DATA.techniques;  // null when the build had no config/techniques.json
  function stepModel(t) {
    const linear = K.linear_weight_params;
    const wb = t.weight_bytes == null ? K.weight_bytes : t.weight_bytes;
    const kvb = t.kv_bytes == null ? K.kv_cache_bytes : t.kv_bytes;
    const fast = !!t.fp8_compute && K.peak_fp8_flops != null;
    const m = {t, linear, state: K.state_bytes_per_request, attention: K.attention_flops_per_token_position,
      weightsRead: (K.params_read_per_step - linear) * K.weight_bytes + linear * wb,
      weightsTotal: (K.total_params - linear) * K.weight_bytes + linear * wb,
      kv: K.kv_elements_per_token * kvb, fastFlops: fast ? 2 * linear : 0,
      peakFast: fast ? K.peak_fp8_flops : K.peak_bf16_flops, peak: K.peak_bf16_flops,
      bandwidth: K.hbm_bandwidth_bytes_per_s};
    m.slowFlops = 2 * K.params_read_per_step - m.fastFlops;
    m.free = K.hbm_bytes - m.weightsTotal - K.runtime_reserve_bytes;
    return m;
  }
  function techStep(m, b, c, tokens = 1) {
    const bytes = m.weightsRead + b * (c * m.kv + 2 * m.state), n = b * tokens;
    const compute = n * m.fastFlops / m.peakFast + (n * m.slowFlops + n * c * m.attention) / m.peak;
    return Math.max(bytes / m.bandwidth, compute);
  }
  function techPrefill(m, p) {
    const bytes = m.weightsRead + p * m.kv + m.state;
    const compute = p * m.fastFlops / m.peakFast + (p * m.slowFlops + p * p / 2 * m.attention) / m.peak;
    return Math.max(bytes / m.bandwidth, compute);
  }
  function tokensPerVerification(m) {  // (1 - a^(k+1)) / (1 - a), the power by repeated products as in Python
    const k = m.t.draft_tokens, alpha = m.t.acceptance;
    if (alpha >= 1) return k + 1;
    let power = 1;
    for (let i = 0; i < k + 1; i++) power *= alpha;
    return (1 - power) / (1 - alpha);
  }
  function techTpot(m, b, c) {
    const k = m.t.draft_tokens || 0;
    if (k === 0) return techStep(m, b, c);
    const draft = m.t.draft_cost * techStep(m, b, c);
    return (techStep(m, b, c, k + 1) + k * draft) / tokensPerVerification(m);
  }
  const techTtft = (m, p) => techPrefill(m, p) * (1 + ((m.t.draft_tokens || 0) > 0 ? m.t.draft_cost : 0));
  const techMaxBatch = (m, c) => Math.max(0, Math.floor(m.free / (Math.max(c, m.t.reserve_tokens || 0) * m.kv + m.state)));
  function techMaxBatchUnderSlo(m, c, sloS) {
    let lo = 0, hi = techMaxBatch(m, c);
    while (lo < hi) {
      const mid = Math.floor((lo + hi + 1) / 2);
      if (techTpot(m, mid, c) <= sloS) lo = mid; else hi = mid - 1;
    }
    return lo;
  }
  // Each technique's settings in this state: the speculation at the sliders' draft length and acceptance.
  function techniqueSettings(s) {
    const out = {};
    for (const tid of TECH.order) {
      out[tid] = tid === "speculative" ? {...TECH.settings[tid], draft_tokens: s.draft_tokens, acceptance: s.acceptance}
        : TECH.settings[tid];
    }
    return out;
  }
  function techniqueReadouts(t, c, p, sloMs) {
    const m = stepModel(t), cap = techMaxBatch(m, c), nb = techMaxBatchUnderSlo(m, c, sloMs / 1e3);
    const atSlo = nb ? techTpot(m, nb, c) : 0, atCap = cap ? techTpot(m, cap, c) : 0;
    return {ttft_s: techTtft(m, p), tpot_b1_ms: techTpot(m, 1, c) * 1e3, max_batch: cap, slo_batch: nb,
      slo_throughput_tok_s: nb ? nb / atSlo : 0, slo_per_user_tok_s: nb ? 1 / atSlo : 0,
      cap_throughput_tok_s: cap ? cap / atCap : 0};
  }
  function techniqueTable(s) {  // readouts technique.<id>.<name> and .<name>_vs_base (NaN: no ratio to a zero)
    const out = {};
    if (!TECH || s.draft_tokens === undefined) return out;
    const settings = techniqueSettings(s);
    const base = techniqueReadouts(settings.baseline, s.context_tokens, s.prompt_tokens, s.tpot_slo_ms);
    for (const tid of TECH.order) {
      const r = tid === "baseline" ? base : techniqueReadouts(settings[tid], s.context_tokens, s.prompt_tokens, s.tpot_slo_ms);
      for (const name of TECH.readouts) {
        out[`technique.${tid}.${name}`] = r[name];
        if (tid !== "baseline") out[`technique.${tid}.${name}_vs_base`] = base[name] ? r[name] / base[name] : NaN;
      }
    }
    return out;
  }
  function techniqueFrontierRows(s) {  // the chosen technique's (TPOT, throughput) at every batch memory holds
    if (!TECH || !s.technique || s.technique === "baseline") return [];
    const m = stepModel(techniqueSettings(s)[s.technique]), cap = techMaxBatch(m, s.context_tokens), rows = [];
    for (let b = 1; b <= cap; b++) {
      const tpot = techTpot(m, b, s.context_tokens);
      rows.push({batch: b, step_ms: tpot * 1e3, throughput_tok_s: b / tpot, label: TECH.labels[s.technique],
        is_cap: b === cap});
    }
    return rows;
  }

  // ---- timeline.py -------------------------------------------------------------------------
  const runningDecoders = (c) => Math.max(0, maxBatchByMemory(c) - 1);
  // cached: the newcomer's first `cached` prompt tokens are in a prefix cache (timeline.py's docstring)
  function chunkedSteps(n, c, p, chunk, cached = 0) {
    const size = Math.max(1, Math.min(chunk, p - cached));
    const steps = [];
    for (let start = cached; start < p; start += size) steps.push(mixedStepSeconds(n, c, Math.min(chunk, p - start), start));
    return steps;
  }
  const wholeSteps = (n, c, p, cached = 0) => [mixedStepSeconds(n, c, p - cached, cached)];
  const sum = (xs) => xs.reduce((s, x) => s + x, 0);
  const uncachedPrefill = (p, cached = 0) => (cached <= 0 ? prefillSeconds(p) : mixedStepSeconds(0, 0, p - cached, cached));
  const disaggTtft = (p, cached = 0) => uncachedPrefill(p, cached) + transferSeconds(p);
  const cachedPrefix = (p, newTokens) => Math.max(0, p - newTokens);
  // what a prompt adds to its cached prefix: config/cited.json cited.kimi.new_tokens
  const PREFIX_NEW_TOKENS = DATA.provenance["cited.kimi.new_tokens"].value;
  const cachedOf = (s) => (s.show && s.show.prefix_cached ? cachedPrefix(s.prompt_tokens, PREFIX_NEW_TOKENS) : 0);
  function withNewcomerSeconds(n, c, p) {
    const bytes = decodeStepBytes(n, c) + decodeStepBytes(1, p) - K.weight_bytes_read_per_step;
    return stepSeconds(bytes, decodeStepFlops(n, c) + decodeStepFlops(1, p));
  }
  const labelsOf = (group) => Object.fromEntries(Object.entries(DATA.names[group]).map(([id, v]) => [id, v.label]));
  const LANE_LABELS = labelsOf("lanes"), KIND_LABELS = labelsOf("step_kinds");  // scripts/common/names.json
  function lanes(c, p, chunk, cached = 0, tail = 6) {
    const n = runningDecoders(c), plain = decodeStepSeconds(n, c), after = withNewcomerSeconds(n, c, p);
    const bars = [];
    const push = (lane, kind, s, e) => bars.push({lane, lane_label: LANE_LABELS[lane], kind,
      kind_label: KIND_LABELS[kind], start_s: s, end_s: e, duration_ms: (e - s) * 1e3});
    const run = (lane, steps, kind) => {
      let t = 0;
      for (const d of steps) { push(lane, kind, t, t + d); t += d; }
      for (let i = 0; i < tail; i++) { push(lane, "decode", t, t + after); t += after; }
    };
    run("whole", wholeSteps(n, c, p, cached), "prefill");
    run("chunked", chunkedSteps(n, c, p, chunk, cached), "chunk");
    const ttft = disaggTtft(p, cached);
    let t = 0;
    const count = plain > 0 ? Math.ceil(ttft / plain) : 0;
    for (let i = 0; i < count; i++) { push("disagg", "decode", t, t + plain); t += plain; }
    for (let i = 0; i < tail; i++) { push("disagg", "decode", t, t + after); t += after; }
    const pre = uncachedPrefill(p, cached);
    push("disagg_prefill", "prefill", 0, pre);
    push("disagg_prefill", "transfer", pre, ttft);
    return bars;
  }

  // ---- readouts.py -------------------------------------------------------------------------
  function readouts(s) {
    const c = s.context_tokens, p = s.prompt_tokens, k = s.chunk_tokens;
    const cap = maxBatchByMemory(c);
    const b = Math.max(0, Math.min(Math.trunc(s.batch), cap));
    const nb = maxBatchUnderSlo(c, s.tpot_slo_ms / 1e3);
    const n = runningDecoders(c), cached = cachedOf(s);
    const chunked = chunkedSteps(n, c, p, k, cached);
    const hit = sum(wholeSteps(n, c, p, cachedPrefix(p, PREFIX_NEW_TOKENS))), miss = sum(wholeSteps(n, c, p));
    return {
      max_batch_mem: cap,
      max_batch_slo: nb,
      throughput_at_slo_tok_s: nb ? nb / decodeStepSeconds(nb, c) : 0,
      per_user_tok_s_at_slo: nb ? 1 / decodeStepSeconds(nb, c) : 0,
      effective_batch: b,
      step_ms_at_batch: b ? decodeStepSeconds(b, c) * 1e3 : 0,
      throughput_at_batch_tok_s: b ? b / decodeStepSeconds(b, c) : 0,
      per_user_tok_s_at_batch: b ? 1 / decodeStepSeconds(b, c) : 0,
      running_users: n,
      whole_prefill_stall_s: Math.max(...wholeSteps(n, c, p, cached)),
      whole_ttft_s: sum(wholeSteps(n, c, p, cached)),
      chunked_max_step_ms: Math.max(...chunked) * 1e3,
      chunked_ttft_s: sum(chunked),
      disagg_max_step_ms: decodeStepSeconds(n, c) * 1e3,
      disagg_ttft_s: disaggTtft(p, cached),
      prefix_cached_tokens: cachedPrefix(p, PREFIX_NEW_TOKENS),
      prefix_hit_ttft_s: hit,
      prefix_miss_ttft_s: miss,
      prefix_saved_serves: hit > 0 ? Math.floor((miss - hit) / hit) : 0,
      transfer_ms: transferSeconds(p) * 1e3,
      prefill_tflop: prefillFlops(p) / 1e12,
      prefill_gb: prefillBytes(p) / 1e9,
      prefill_s: prefillSeconds(p),
      decode_gb_at_batch: decodeStepBytes(b, c) / 1e9,
      decode_gflop_at_batch: decodeStepFlops(b, c) / 1e9,
      kv_mb_per_request: bytesPerRequest(c) / 1e6,
      kv_gb_at_batch: b * bytesPerRequest(c) / 1e9,
    };
  }

  // ---- count_tokens.py: token/s -> characters/s at the Chinese paragraph's chars per token ---
  function tokenReadouts(s) {
    const T = DATA.tokens, out = {};
    if (!T || s.tok_s === undefined) return out;
    for (const row of T.rows) {  // row.chars counts code points, as Python's len() does
      if (row.passage_id === T.chars_passage) out[`chars_per_s.${row.tokenizer_id}`] = s.tok_s * row.chars / row.tokens;
    }
    return out;
  }

  // ---- serving/load_page.py: the under-load experiment, simulated here (serving-sim.js) ------------------
  // Every cell (workload, schedule, rate, and the engine settings: GPU, step times, chunk budget, P/D split) is
  // simulated in a Web Worker by serving-sim.js, the twin of scripts/serving/engine/, from the workloads'
  // requests and the constants in serving-data.js. At the build's settings its requests equal serving.json's
  // per_request exactly (tests/test_sim_parity.py), so the opening numbers are the build's records.
  const SCHEDULES = Object.keys(DATA.names.schedules), SCHEDULE_LABELS = labelsOf("schedules");
  // numpy.percentile, method 'linear', on sorted values: serving-sim.js's (the experiment runs only once it loaded)
  const percentile = (sorted, q) => window.C13Sim.percentile(sorted, q);
  const TAIL_PARTS = Object.keys(DATA.names.tail_parts);  // scripts/common/names.json
  const STEP_TIMES = ["bound", "realistic"];
  // The experiment runs once both its data and the simulator have loaded (serving-data.js may arrive first).
  const twin = () => window.C13_SERVING && window.C13Sim && window.c13ServingSim && window.C13_SERVING.twin;
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
    !chartsQueued;
  function settle() {
    if (updating || !simSettled()) return;  // an update in progress may still queue work: it settles at its end
    const waiters = settleWaiters;
    settleWaiters = [];
    waiters.forEach((f) => f());
  }
  // ---- prefix_runs.py: the lab's cache-off/on experiment, simulated here (serving-sim.js, prefix-data.js) -------
  // At the table's rates the lab shows prefix.json's records; at any rate its worker builds the workload's requests
  // from their draws (workload.js, as workload.py does) and runs the engine twice, cache off and on, reading each run
  // as prefix_runs.run does (prefix_runs.js). tests/test_prefix_lab.py holds the two equal at the table's rates.
  const PREFIX_BOX = document.getElementById("prefix-try");
  const PREFIX_LAB = !!PREFIX_BOX && !!files.prefix;
  const PREFIX_METRICS = ["token_hit_rate", "ttft_p50_ms", "ttft_p99_ms", "request_goodput", "saved_prefill_ms", "late_turns"];
  const prefixRuns = new Map();  // "workload/rate/cache" -> a run's summary, or {error}
  let prefixWorker = null, prefixLocal = null, prefixJob = null, prefixQueue = [], prefixLoading = null, prefixOpening = null;
  const prefixData = () => window.C13_PREFIX && window.C13Sim;
  const prefixBusy = () => !!prefixJob || prefixQueue.length > 0 || (!!prefixLoading && !prefixData());
  function prefixWorkerMain(S, scope) {  // the worker's body (main-thread fallback: the same)
    let P = null;
    const build = {system_prompt: S.systemPromptRequests, multi_turn: S.conversationRequests};
    const handle = (msg) => {
      if (msg.init) { P = msg.init; return null; }
      try {
        if (!build[msg.workload]) throw new Error(`no workload ${msg.workload}`);
        const reqs = build[msg.workload](P.draws[msg.workload], msg.rate);
        const trace = S.simulate(P.model, P.gpu, reqs, P.schedule, {efficiency: P.efficiency, prefix_caching: msg.cache === "on"});
        return {key: msg.key, run: S.prefixRunSummary(trace, reqs, P.slo_ms)};
      } catch (err) { return {key: msg.key, error: String(err.message || err)}; }
    };
    if (scope) scope.onmessage = (e) => { const r = handle(e.data); if (r) scope.postMessage(r); };
    return handle;
  }
  function prefixLoad() {
    if (!PREFIX_LAB || prefixLoading) return prefixLoading;
    prefixLoading = (window.c13ServingSim ? Promise.resolve() : (files.serving ? servingData() : loadScript(files.sim)))
      .then(() => (window.C13_PREFIX ? null : loadScript(files.prefix))).then(() => {
        try {
          prefixWorker = new Worker(workerUrl(prefixWorkerMain));
          prefixWorker.onmessage = (e) => prefixDone(e.data);
          prefixWorker.onerror = (e) => { e.preventDefault(); prefixWorker = null; if (prefixJob) { prefixQueue.unshift(prefixJob); prefixJob = null; } prefixPump(); };
          prefixWorker.postMessage({init: window.C13_PREFIX});
        } catch (err) {
          prefixWorker = null;
        }
        queueUpdate();
      });
    return prefixLoading;
  }
  function prefixPump() {
    if (prefixJob || !prefixQueue.length) { settle(); return; }
    prefixJob = prefixQueue.shift();
    if (prefixWorker) { prefixWorker.postMessage(prefixJob); return; }
    if (!prefixLocal) { prefixLocal = prefixWorkerMain(window.C13Sim, null); prefixLocal({init: window.C13_PREFIX}); }
    const job = prefixJob;
    setTimeout(() => prefixDone(prefixLocal(job)), 0);
  }
  function prefixDone(msg) {
    if (!msg || !prefixJob || msg.key !== prefixJob.key) return;
    prefixRuns.set(msg.key, msg.error ? {error: msg.error} : msg.run);
    prefixJob = null;
    queueUpdate();
    prefixPump();
  }
  function prefixReadouts(s) {  // the lab's readouts for the state (null: being simulated; NaN: the run failed)
    if (!PREFIX_LAB) return {};
    if (!prefixOpening) prefixOpening = `${s.prefix_workload}/${s.prefix_rate}`;
    const out = {}, atOpening = `${s.prefix_workload}/${s.prefix_rate}` === prefixOpening;
    const jobs = ["off", "on"].map((cache) => ({key: `${s.prefix_workload}/${s.prefix_rate}/${cache}`, workload: s.prefix_workload,
      rate: s.prefix_rate, cache}));
    if (!prefixData()) {  // before its data arrives, the page's own numbers hold only for the state they were built for
      if (!atOpening) { prefixLoad(); for (const j of jobs) for (const m of PREFIX_METRICS) out[`prefix.${j.cache}.${m}`] = null; }
      return out;
    }
    const wanted = jobs.filter((j) => !prefixRuns.has(j.key));
    if (wanted.length) { prefixQueue = wanted; prefixPump(); }  // older wishes are dropped
    for (const j of jobs) {
      const run = prefixRuns.get(j.key);
      for (const m of PREFIX_METRICS) {
        out[`prefix.${j.cache}.${m}`] = !run ? null : run.error ? NaN : m === "token_hit_rate" ? run[m] * 100 : run[m];
      }
    }
    return out;
  }
  function prefixProvenance(s) {  // at the table's rates a readout is its record; elsewhere it is this browser's run
    if (!PREFIX_LAB) return;
    const rates = window.C13_PREFIX ? window.C13_PREFIX.rates : null, g = String(s.prefix_rate);
    const atTable = rates ? rates.includes(s.prefix_rate) : `${s.prefix_workload}/${s.prefix_rate}` === prefixOpening;
    PREFIX_BOX.querySelectorAll("[data-prefix-record]").forEach((el) => {
      if (atTable) el.dataset.prov = `prefix.${s.prefix_workload}.r${g}.${el.dataset.prefixRecord}`;
      else delete el.dataset.prov;
    });
    PREFIX_BOX.querySelectorAll("[data-when-prefix-workload]").forEach((el) => { el.hidden = el.dataset.whenPrefixWorkload !== s.prefix_workload; });
  }
  function cellFor(s, workload, schedule, rate, need, errors) {  // a simulated cell, or null (requested / refused)
    const job = simJob(s, workload, schedule, rate), c = simCells.get(job.key);
    if (!c) need.push(job);
    if (c && c.error && errors) errors.push(`${SCHEDULE_LABELS[schedule]}:${c.error}`);
    return c && !c.error ? c : null;
  }
  const sum2 = (xs) => { let t = 0; for (const x of xs) t += x; return t; };
  function goodCount(cell, ttftSlo, tpotSlo) {
    const k = `${ttftSlo}|${tpotSlo}`, unit = twin().quantum_ms;
    if (cell.attained[k] === undefined) {
      let good = 0;
      for (let i = 0; i < cell.ttft.length; i++) {
        if (cell.ttft[i] * unit <= ttftSlo && cell.tpot[i] * unit <= tpotSlo) good++;
      }
      cell.attained[k] = good;
    }
    return cell.attained[k];
  }
  // DistServe goodput per GPU: sweep.goodput_search, the kit's one search (the swept rates up to the first whose
  // attainment misses the target, then bisection_steps halvings, each a simulated cell at the probed rate). The
  // probes are simulated as they are reached: null until the last one has arrived.
  function goodputSearch(s, sch, curve, need, bounded) {
    const T = twin(), rates = T.settings.rates_per_gpu, target = s.attainment_target;
    let lo = 0, hi = null;
    for (let i = 0; i < rates.length; i++) {
      if (curve[i] === null) return null;
      if (curve[i] < target) { hi = rates[i]; break; }
      lo = rates[i];
    }
    if (hi === null) { bounded.add(sch); return lo; }  // never missed: a lower bound (the sweep's heaviest rate)
    for (let k = 0; k < T.settings.bisection_steps; k++) {
      const mid = (lo + hi) / 2, c = cellFor(s, s.workload, sch, mid, need);
      if (!c) return null;
      const n = c.ttft.length, att = n ? goodCount(c, s.ttft_slo_ms, s.load_tpot_slo_ms) / n : 0;
      if (att >= target) lo = mid; else hi = mid;
    }
    return lo;
  }
  const LOAD_METRICS = ["mean_ttft_ms", "p50_ttft_ms", "p90_ttft_ms", "p99_ttft_ms", "mean_tpot_ms", "p50_tpot_ms",
    "p90_tpot_ms", "p99_tpot_ms", "attainment", "request_goodput", "goodput_rate", "goodput_gain",
    ...TAIL_PARTS.map((p) => `tail_${p}_ms`), "tail_e2el_ms"];
  // Every readout of the experiment: a number, or null while its cells are being simulated (or when the
  // simulation refused the settings: `_errors`). The cells it lacks are requested, the current rate's first.
  function loadReadouts(s) {
    const T = twin(), out = {};
    if (!T || s.request_rate === undefined) return out;
    const need = [], curves = {}, errors = [], bounded = new Set();
    const now = {};
    for (const sch of SCHEDULES) now[sch] = cellFor(s, s.workload, sch, s.request_rate, need, errors);
    for (const sch of SCHEDULES) {
      curves[sch] = T.settings.rates_per_gpu.map((r) => {
        const c = cellFor(s, s.workload, sch, r, need), n = c ? c.ttft.length : 0;
        return c ? (n ? goodCount(c, s.ttft_slo_ms, s.load_tpot_slo_ms) / n : 0) : null;
      });
      const c = now[sch];
      for (const m of LOAD_METRICS) out[`${m}.${sch}`] = null;
      if (c) {
        const n = c.ttft.length, good = goodCount(c, s.ttft_slo_ms, s.load_tpot_slo_ms);
        Object.assign(out, {
          [`mean_ttft_ms.${sch}`]: n ? sum2(c.ttftMs) / n : 0,
          [`p50_ttft_ms.${sch}`]: percentile(c.ttftMs, 50), [`p90_ttft_ms.${sch}`]: percentile(c.ttftMs, 90),
          [`p99_ttft_ms.${sch}`]: percentile(c.ttftMs, 99),
          [`mean_tpot_ms.${sch}`]: c.tpotMs.length ? sum2(c.tpotMs) / c.tpotMs.length : 0,
          [`p50_tpot_ms.${sch}`]: percentile(c.tpotMs, 50), [`p90_tpot_ms.${sch}`]: percentile(c.tpotMs, 90),
          [`p99_tpot_ms.${sch}`]: percentile(c.tpotMs, 99),
          [`attainment.${sch}`]: n ? good / n : 0,
          [`request_goodput.${sch}`]: c.duration > 0 ? good / c.duration : 0,
        });
        let e2el = 0;
        for (const part of TAIL_PARTS) { out[`tail_${part}_ms.${sch}`] = c.tail_ms[part]; e2el += c.tail_ms[part]; }
        out[`tail_e2el_ms.${sch}`] = e2el;
      }
      out[`goodput_rate.${sch}`] = goodputSearch(s, sch, curves[sch], need, bounded);
    }
    for (const sch of SCHEDULES) {
      const base = out["goodput_rate.whole"], mine = out[`goodput_rate.${sch}`];
      out[`goodput_gain.${sch}`] = base === null || mine === null ? null : base > 0 ? mine / base : 0;
    }
    simRequest(need);
    out._curves = curves;
    // What the charts and notes read besides the numbers (kept out of the readouts themselves)
    Object.defineProperties(out, {_now: {value: now}, _errors: {value: errors}, _complete: {value: need.length === 0},
      _bounded: {value: bounded}});
    return out;
  }
  const shownSchedules = (s) => SCHEDULES.filter((sch) => s.show[sch]);
  // The rows each under-load chart draws; each builder is called only when its chart's requests changed.
  function attainRows(s, r) {
    const T = twin(), attain = [], goodput = [];
    for (const sch of shownSchedules(s)) {
      const label = SCHEDULE_LABELS[sch];
      T.settings.rates_per_gpu.forEach((rate, i) => {
        if (r._curves[sch][i] !== null) attain.push({schedule: label, rate, attainment: r._curves[sch][i]});
      });
      if (r[`goodput_rate.${sch}`] > 0) goodput.push({schedule: label, goodput_rate: r[`goodput_rate.${sch}`], target: s.attainment_target});
    }
    return {load_attain: attain, load_goodput: goodput};
  }
  function distRows(s, metric, r) {
    const curve = [], stats = [];
    for (const sch of shownSchedules(s)) {
      const label = SCHEDULE_LABELS[sch], c = r._now[sch];
      if (!c) continue;
      const sorted = metric === "ttft" ? c.ttftMs : c.tpotMs;
      for (let k = 0; k <= 100; k++) curve.push({schedule: label, ms: percentile(sorted, k), share: k / 100});
      const mean = sorted.length ? sum2(sorted) / sorted.length : 0;
      let below = 0;
      while (below < sorted.length && sorted[below] <= mean) below++;
      stats.push({schedule: label, stat: "平均", ms: mean, share: sorted.length ? below / sorted.length : 0});
      for (const q of [50, 90, 99]) stats.push({schedule: label, stat: `p${q}`, ms: percentile(sorted, q), share: q / 100});
    }
    return {[`load_${metric}_curve`]: curve, [`load_${metric}_stats`]: stats};
  }
  const insideLabel = (p, s) => (p.ttft_ms <= s.ttft_slo_ms && p.tpot_ms <= s.load_tpot_slo_ms ? "都达标" : "未达标");
  function scatterRows(s, r) {  // one schedule's requests at the chosen rate, and the frame around them
    const unit = twin().quantum_ms, c = r._now[s.scatter], points = [];
    for (let i = 0; c && i < c.ttft.length; i++) {
      if (c.tpot[i] <= 0) continue;  // a one-token answer has no TPOT (and no place on a log axis)
      const p = {i, ttft_ms: c.ttft[i] * unit, tpot_ms: c.tpot[i] * unit, inside: ""};  // i: the request's index
      p.inside = insideLabel(p, s);
      points.push(p);
    }
    return {load_points: points, ...scatterFrame(r)};
  }
  function scatterFrame(r) {  // the axes' domains and the SLO box, which starts at their corner
    const dom = scatterDomains(r);
    return {load_box: dom ? [{x1: dom.scatter_x[0], y1: dom.scatter_y[0]}] : [], domains: dom};
  }
  // A rate or schedule move keeps the workload, so the scatter's points are the same requests (field i): their
  // numbers change in place through three predicate modifications, not a new object and three changes per point
  // (the garbage of 2,000 points per move set the slider's slowest frames). False when the points are other requests.
  function scatterPointsInPlace(v, s, r) {
    const c = r._now[s.scatter], old = v.data("load_points");
    if (!c || !old.length) return false;
    let n = 0;
    for (let k = 0; k < c.tpot.length; k++) if (c.tpot[k] > 0) n++;
    if (n !== old.length || old.some((t) => !(c.tpot[t.i] > 0))) return false;
    const unit = twin().quantum_ms, every = () => true, at = {ttft_ms: 0, tpot_ms: 0};  // one scratch point
    const inside = (t) => { at.ttft_ms = c.ttft[t.i] * unit; at.tpot_ms = c.tpot[t.i] * unit; return insideLabel(at, s); };
    v.change("load_points", window.vega.changeset().modify(every, "ttft_ms", (t) => c.ttft[t.i] * unit)
      .modify(every, "tpot_ms", (t) => c.tpot[t.i] * unit).modify(every, "inside", inside));
    return true;
  }
  function scatterDomains(r) {  // one pair of axes per cell set (all schedules at one rate): the cloud fills the
    const cells = SCHEDULES.map((sch) => r._now[sch]).filter(Boolean);  // plot, a schedule switch keeps the axes,
    if (!cells.length) return null;  // and the default SLO box's corner is on them (a box beyond them is clipped)
    const S = window.C13_SERVING, unit = twin().quantum_ms, o = S.opening;
    let x0 = o.ttft_slo_ms, x1 = o.ttft_slo_ms, y0 = o.load_tpot_slo_ms, y1 = o.load_tpot_slo_ms;
    for (const c of cells) {
      for (let i = 0; i < c.ttft.length; i++) {
        if (c.tpot[i] <= 0) continue;
        const x = c.ttft[i] * unit, y = c.tpot[i] * unit;
        if (x < x0) x0 = x;
        if (x > x1) x1 = x;
        if (y < y0) y0 = y;
        if (y > y1) y1 = y;
      }
    }
    return x1 > 0 && x0 > 0 ? {scatter_x: [x0 / 1.5, x1 * 1.5], scatter_y: [y0 / 1.2, y1 * 1.2]} : null;
  }

  function frontierRows(c, sloMs) {
    const cap = maxBatchByMemory(c), rows = [];
    for (let b = 1; b <= cap; b++) {
      const step = decodeStepSeconds(b, c);
      rows.push({batch: b, step_ms: step * 1e3, throughput_tok_s: b / step,
        slo_status: step * 1e3 <= sloMs ? "达标" : "超标", is_cap: b === cap});
    }
    return rows;
  }

  // ---- display.py --------------------------------------------------------------------------
  const DECIMALS = {int: 0, f1: 1, f2: 2, f3: 3};
  const FORMATTERS = {};  // one Intl.NumberFormat per format: toLocaleString builds a new one on every call
  function formatNumber(v, fmt) {
    const d = DECIMALS[fmt];
    const scale = Math.pow(10, d);
    const r = Math.floor(v * scale + 0.5) / scale;
    FORMATTERS[fmt] = FORMATTERS[fmt] || new Intl.NumberFormat("en-US", {minimumFractionDigits: d, maximumFractionDigits: d});
    return FORMATTERS[fmt].format(r);
  }

  window.lessonMath = {readouts, tokenReadouts, loadReadouts, frontierRows, lanes, formatNumber, maxBatchByMemory,
    techniqueTable, techniqueFrontierRows,
    decodeStepSeconds, percentile, onBuildSettings, engineOf, simJob, simCell: (key) => simCells.get(key)};
  window.lessonViews = {};

  // ---- sliders -----------------------------------------------------------------------------
  const state = {};
  const sliders = document.querySelectorAll("input[data-param]");
  const listed = (el) => (el.dataset.values ? JSON.parse(el.dataset.values) : null);
  function fromSlider(el) {
    if (el.dataset.values) return listed(el)[Number(el.value)];
    return el.dataset.scale === "log2" ? Math.pow(2, Number(el.value)) : Number(el.value);
  }
  function toSlider(el, v) {
    if (el.dataset.values) {  // the listed value nearest to v
      const vs = listed(el);
      return vs.reduce((best, x, i) => (Math.abs(x - v) < Math.abs(vs[best] - v) ? i : best), 0);
    }
    return el.dataset.scale === "log2" ? Math.log2(v) : v;
  }
  sliders.forEach((el) => { state[el.dataset.param] = fromSlider(el); });
  document.querySelectorAll("input[data-choice]:checked, select[data-choice]").forEach((el) => {
    state[el.dataset.choice] = el.value;
  });
  state.show = {};
  document.querySelectorAll("input[data-show]").forEach((el) => { state.show[el.dataset.show] = el.checked; });
  // The batch the reader chose: a longer context caps the slider at what fits, and a shorter one gives their batch
  // back (it was left at the cap: step ③ at 32K, then back to 4K, stayed at 10 requests).
  let batchWish = state.batch;

  function setText(el, text) { if (el.textContent !== text) el.textContent = text; }

  let pending = null, attainDrawnAt = 0, attainTimer = 0;
  const CURVE_REDRAW_MS = 150;  // while cells arrive: often enough to watch the curves grow, rarely enough to stay light
  const drawn = {};  // the inputs each view was last drawn with
  function updateNow() {
    if (state.gpu && GPUS[state.gpu]) Object.assign(K, GPUS[state.gpu].constants);
    const onDefault = !DEFAULT_GPU || state.gpu === DEFAULT_GPU.id, gpu = GPUS[state.gpu];
    // Words that name the GPU, and numbers that are the GPU's own, follow the switch (their records too)
    document.querySelectorAll("[data-gpu-label]").forEach((el) => {
      if (el.dataset.defaultLabel === undefined) el.dataset.defaultLabel = el.textContent;
      setText(el, onDefault || !gpu ? el.dataset.defaultLabel : gpu.label);
    });
    document.querySelectorAll("[data-gpu-field]").forEach((el) => {
      if (el.dataset.defaultProv === undefined) el.dataset.defaultProv = el.dataset.prov;
      const rid = onDefault || !gpu ? el.dataset.defaultProv : `gpu.${gpu.id}.${el.dataset.gpuField}`;
      if (PROV[rid]) { el.dataset.prov = rid; setText(el, PROV[rid].display); }
    });
    document.querySelectorAll("[data-gpu-row]").forEach((row) => row.classList.toggle("chosen", row.dataset.gpuRow === state.gpu));
    const batchEl = document.querySelector('input[data-param="batch"]');
    const cap = maxBatchByMemory(state.context_tokens);
    if (batchEl) {
      batchEl.max = String(Math.max(1, cap));
      const batch = Math.min(batchWish, Math.max(1, cap));
      if (state.batch !== batch) { state.batch = batch; batchEl.value = String(batch); }
    }
    for (const el of sliders) {  // a value can be shown in several places (beside its slider and in the prose)
      for (const out of document.querySelectorAll(`[data-slider-value="${el.dataset.param}"]`)) {
        setText(out, formatNumber(state[el.dataset.param], out.dataset.format || "int"));
      }
      el.setAttribute("aria-valuetext", String(state[el.dataset.param]));
    }
    const load = loadReadouts(state), r = {...readouts(state), ...tokenReadouts(state), ...techniqueTable(state), ...load,
      ...prefixReadouts(state)};
    for (const el of document.querySelectorAll("[data-readout]")) {
      const v = r[el.dataset.readout];
      if (v === undefined) continue;  // the under-load readouts before serving-data.js has arrived
      if (v === null) {  // its cells are being simulated (or the settings cannot run: see the note)
        delete el.dataset.value;
        setText(el, load._errors && load._errors.length && load._complete ? "—" : "…");
        continue;
      }
      el.dataset.value = String(v);
      setText(el, Number.isNaN(v) ? "—" : formatNumber(v, el.dataset.format || "int"));  // NaN: no ratio to a zero
    }
    prefixProvenance(state);
    if (twin()) {  // the experiment's words that depend on its engine settings
      const live = !onBuildSettings(state), step = engineOf(state).step_time;
      document.querySelectorAll("[data-when-sim-live]").forEach((el) => { el.hidden = !live; });
      document.querySelectorAll("[data-step-words]").forEach((el) => { el.hidden = el.dataset.stepWords !== step; });
      document.querySelectorAll("[data-when-sim-error]").forEach((el) => {
        el.hidden = !(load._errors && load._errors.length);
        const why = el.querySelector("[data-sim-error]");
        if (why) setText(why, (load._errors || []).join(";"));
      });
    }
    document.querySelectorAll("[data-when-nothing-fits]").forEach((el) => { el.hidden = cap > 0; });
    document.querySelectorAll("[data-when-slo-unmet]").forEach((el) => { el.hidden = r.max_batch_slo > 0 || cap === 0; });
    const zeroGoodput = twin() && shownSchedules(state).some((sch) => r[`goodput_rate.${sch}`] === 0);
    document.querySelectorAll("[data-when-zero-goodput]").forEach((el) => { el.hidden = !zeroGoodput; });
    const boundedShown = twin() && load._bounded ? shownSchedules(state).filter((sch) => load._bounded.has(sch)) : [];
    document.querySelectorAll("[data-when-goodput-bounded]").forEach((el) => {
      el.hidden = !boundedShown.length;
      const who = el.querySelector("[data-bounded-schedules]");
      if (who) setText(who, boundedShown.map((sch) => SCHEDULE_LABELS[sch]).join("、"));
    });
    const pdCell = state.show.disagg && load._now && load._now.disagg;
    document.querySelectorAll("[data-when-prefill-over]").forEach((el) => { el.hidden = !(pdCell && pdCell.prefill_over); });
    document.dispatchEvent(new CustomEvent("lesson:update", {detail: {state: {...state}, readouts: r}}));
    document.querySelectorAll("[data-technique-row]").forEach((row) => {
      row.classList.toggle("chosen", row.dataset.techniqueRow === state.technique);
    });
    document.querySelectorAll("[data-schedule-row]").forEach((row) => { row.hidden = !state.show[row.dataset.scheduleRow]; });
    // A chart that fails is a console error (the tests read them), never a promise that waits forever
    pending = chartsAfterPaint(r, load).then(() => undefined, (err) => { console.error(err); });
    return pending;
  }
  // Readouts first: the charts re-run once the moves pause (CHART_IDLE_MS without another; during a drag at most
  // CHART_MAX_WAIT_MS apart), with the latest state. Re-run on every move, a target slider's charts (the scatter's
  // 2,000 points re-coloured, the attainment curves) held the next move's readouts back a frame or two
  // (scripts/bench/page_latency.py times a drag from each input event to the frame that shows its readouts).
  const CHART_IDLE_MS = 30, CHART_MAX_WAIT_MS = 150;
  var chartsQueued = null;  // (var: simSettled, defined above, reads it)
  let chartArgs = null, chartsAsked = 0, chartsTimer = 0, chartsDone = null;
  function chartsAfterPaint(r, load) {
    chartArgs = [r, load];
    const now = performance.now();
    if (!chartsQueued) {
      chartsAsked = now;
      chartsQueued = new Promise((resolve, reject) => { chartsDone = [resolve, reject]; });
    }
    clearTimeout(chartsTimer);
    chartsTimer = setTimeout(() => {
      const [resolve, reject] = chartsDone;
      chartsQueued = null;
      try { resolve(redrawCharts(...chartArgs)); } catch (err) { reject(err); }
    }, Math.max(0, Math.min(CHART_IDLE_MS, chartsAsked + CHART_MAX_WAIT_MS - now)));
    return chartsQueued;
  }
  function redrawCharts(r, load) {
    const views = window.lessonViews;
    const jobs = [];
    // Re-run a view only when one of its inputs moved: each Vega run costs a few ms.
    const key = (names) => names.map((n) => state[n]).join("|");
    const frontierKey = key(["gpu", "context_tokens", "tpot_slo_ms"]) + "|" + r.effective_batch;
    const techniqueKey = key(["gpu", "context_tokens", "technique", "draft_tokens", "acceptance"]);
    if (views.frontier && (frontierKey !== drawn.frontier || techniqueKey !== drawn.frontier_technique)) {
      const v = views.frontier;
      if (frontierKey !== drawn.frontier) {
        v.signal("batch", r.effective_batch).signal("context_tokens", state.context_tokens)
          .signal("tpot_slo_ms", state.tpot_slo_ms).data("frontier", frontierRows(state.context_tokens, state.tpot_slo_ms));
      }
      if (techniqueKey !== drawn.frontier_technique) v.data("frontier_technique", techniqueFrontierRows(state));
      drawn.frontier = frontierKey;
      drawn.frontier_technique = techniqueKey;
      jobs.push(v.runAsync());
    }
    const timelineKey = key(["gpu", "context_tokens", "prompt_tokens", "chunk_tokens"]) + "|" + cachedOf(state);
    if (views.timeline && timelineKey !== drawn.timeline) {
      drawn.timeline = timelineKey;
      const v = views.timeline;
      v.signal("prompt_tokens", state.prompt_tokens).signal("chunk_tokens", state.chunk_tokens)
        .data("timeline", lanes(state.context_tokens, state.prompt_tokens, state.chunk_tokens, cachedOf(state)));
      jobs.push(v.runAsync());
    }
    if (r._curves) {
      // Each view re-runs only when its own inputs moved; data is rebuilt only when the requests it shows
      // changed (an SLO move only sets signals on the scatter and the distributions).
      // The cells a chart shows are named by the engine settings and by which of them have arrived from the
      // simulator (a chart redraws as they come in: readouts first, then the attainment curves).
      const shownKey = shownSchedules(state).join(",") + "|" + JSON.stringify(engineOf(state));
      const nowKey = SCHEDULES.map((sch) => (load._now[sch] ? 1 : 0)).join("");
      const curveKey = SCHEDULES.map((sch) => r._curves[sch].filter((v) => v !== null).length).join(",");
      const needs = {
        load_attain: [key(["workload", "ttft_slo_ms", "load_tpot_slo_ms", "attainment_target", "request_rate"]) + "|" +
          shownKey + curveKey, key(["workload", "ttft_slo_ms", "load_tpot_slo_ms", "attainment_target"]) + "|" + shownKey + curveKey,
          () => attainRows(state, load), ["attainment_target", "request_rate"]],
        load_ttft: [key(["workload", "request_rate", "ttft_slo_ms"]) + "|" + shownKey + nowKey,
          key(["workload", "request_rate"]) + "|" + shownKey + nowKey, () => distRows(state, "ttft", load), ["ttft_slo_ms"]],
        load_tpot: [key(["workload", "request_rate", "load_tpot_slo_ms"]) + "|" + shownKey + nowKey,
          key(["workload", "request_rate"]) + "|" + shownKey + nowKey, () => distRows(state, "tpot", load), ["load_tpot_slo_ms"]],
        load_scatter: [key(["workload", "request_rate", "scatter", "ttft_slo_ms", "load_tpot_slo_ms"]) + "|" + shownKey + nowKey,
          key(["workload", "request_rate", "scatter"]) + "|" + shownKey + nowKey, () => scatterRows(state, load), ["ttft_slo_ms", "load_tpot_slo_ms"]],
      };
      // While the worker is still answering, the readouts come first: the charts wait for the current rate's cells,
      // and the attainment curves are redrawn at most every CURVE_REDRAW_MS as their cells arrive (and once complete).
      const nowReady = SCHEDULES.every((sch) => load._now[sch] || !state.show[sch]);
      const curvesDone = load._complete || SCHEDULES.every((sch) => !state.show[sch] || r._curves[sch].every((v) => v !== null));
      for (const [id, [viewKey, dataKey, rows, signals]] of Object.entries(needs)) {
        const v = views[id];
        if (!v || drawn[id] === viewKey) continue;
        if (!nowReady && drawn[id] !== undefined) continue;
        if (id === "load_attain" && !curvesDone && drawn[id] !== undefined && performance.now() - attainDrawnAt < CURVE_REDRAW_MS) {
          if (!attainTimer) attainTimer = setTimeout(() => { attainTimer = 0; queueUpdate(); }, CURVE_REDRAW_MS);
          continue;
        }
        if (id === "load_attain") attainDrawnAt = performance.now();
        drawn[id] = viewKey;
        for (const name of signals) v.signal(name, state[name]);
        if (drawn[`${id}:data`] !== dataKey) {
          drawn[`${id}:data`] = dataKey;
          const series = new Set();  // what sets the layout: the schedules the rows draw (the legend's entries)
          const pointsInPlace = id === "load_scatter" && scatterPointsInPlace(v, state, load);
          for (const [name, values] of Object.entries(pointsInPlace ? scatterFrame(load) : rows())) {
            if (name !== "domains") {
              replaceInPlace(v, name, values);
              for (const row of values) if (row.schedule !== undefined) series.add(row.schedule);
            } else if (values) {  // the scatter's log axes: their decades set the tick labels, hence the layout
              for (const [sig, dom] of Object.entries(values)) {
                v.signal(sig, dom);
                series.add(`${sig}:${dom.map((x) => Math.floor(Math.log10(x))).join("-")}`);
              }
            }
          }
          // Other series change the legend's size, other decades the axes': lay the chart out again (else part is
          // cut off). Only then: a layout pass costs as much as the redraw itself, and a rate move keeps both.
          const legend = [...series].sort().join(",");
          if (drawn[`${id}:legend`] !== legend) {
            drawn[`${id}:legend`] = legend;
            v.resize();
          }
        } else if (id === "load_scatter") {  // an SLO move: re-colour only the points that changed side
          const cs = window.vega.changeset();
          for (const t of v.data("load_points")) {
            const side = insideLabel(t, state);
            if (t.inside !== side) cs.modify(t, "inside", side);
          }
          v.change("load_points", cs);
        }
        jobs.push(v.runAsync());
      }
    }
    return Promise.all(jobs);
  }
  // New rows for a view: its existing tuples take the new values (Vega re-encodes them) rather than all being
  // removed and new ones made (the scatter's 2,000 points of a new cell: a rate move's redraw costs a third less).
  // Only numbers and a point's colour (`inside`) change in place: a tuple that would change series (a schedule, a
  // statistic) is a new tuple, as Vega's grouping expects.
  function replaceInPlace(v, name, rows) {
    const old = v.data(name), cs = window.vega.changeset(), keep = Math.min(old.length, rows.length);
    for (let i = 0; i < keep; i++) {
      for (const field of Object.keys(rows[i])) {
        const before = old[i][field], after = rows[i][field];
        if (before === after) continue;
        if (typeof after !== "number" && field !== "inside") { v.data(name, rows); return; }
        cs.modify(old[i], field, after);
      }
    }
    if (old.length > keep) cs.remove(old.slice(keep));
    if (rows.length > keep) cs.insert(rows.slice(keep));
    v.change(name, cs);
  }
  function update() {  // whatever happens inside, the waiters for a settled page are told again afterwards
    updating = true;
    try {
      return updateNow();
    } finally {
      updating = false;
      Promise.resolve(pending).then(settle);
    }
  }

  // A table wider than its box scrolls sideways; say so where it starts (re-checked when the window changes)
  function markScrolling() {
    document.querySelectorAll(".table-wrap").forEach((el) => {
      el.classList.toggle("scrolls", el.scrollWidth > el.clientWidth + 1);
    });
  }
  window.addEventListener("resize", markScrolling);
  window.lessonMarkScrolling = markScrolling;
  window.lessonSet = function (values) {
    for (const [name, v] of Object.entries(values)) {
      if (name === "gpu") {
        document.querySelectorAll('select[data-choice="gpu"]').forEach((el) => { el.value = v; });
      } else if (name === "pd_split") {
        document.querySelectorAll('select[data-choice="pd_split"]').forEach((el) => { el.value = v; });
      } else if (["workload", "scatter", "step_time", "technique", "prefix_workload"].includes(name)) {
        document.querySelectorAll(`input[data-choice="${name}"]`).forEach((el) => { el.checked = el.value === v; });
      } else if (name === "show") {
        Object.assign(state.show, v);
        document.querySelectorAll("input[data-show]").forEach((el) => { el.checked = !!state.show[el.dataset.show]; });
        continue;
      }
      state[name] = v;
      if (name === "batch") batchWish = v;
      const el = document.querySelector(`input[data-param="${name}"]`);
      if (el) el.value = String(toSlider(el, v));
    }
    return update().then(() => window.lessonPending());  // settled: the cells this state needs simulated too
  };
  window.lessonState = () => ({...state});
  window.lessonSimForget = () => simCells.clear();  // for the benchmark's cold runs (scripts/bench/page_latency.py)
  // Drawn: the last update's readouts written and its charts re-run (cells still simulating come later).
  window.lessonDrawn = () => pending || Promise.resolve();
  // Settled: the charts drawn and every cell the state needs simulated (and shown).
  // (For tests and benchmarks: a page that never settles fails after a minute, with what it was still doing.)
  window.lessonPending = () => new Promise((resolve, reject) => {
    const stuck = setTimeout(() => reject(new Error(`not settled after 60 s: ${inflight.size} cells simulating, ` +
      `${simQueue.length} queued, update queued ${updateQueued}, chart timer ${!!attainTimer}`)), 60000);
    const check = () => (pending || Promise.resolve()).then(() => {
      if (simSettled()) { clearTimeout(stuck); resolve(); } else settleWaiters.push(check);
    });
    check();
  });
  sliders.forEach((el) => el.addEventListener("input", () => {
    state[el.dataset.param] = fromSlider(el);
    if (el.dataset.param === "batch") batchWish = state.batch;
    update();
  }));
  document.querySelectorAll("input[data-choice], select[data-choice]").forEach((el) => el.addEventListener("change", () => {
    if (el.tagName === "SELECT" || el.checked) { state[el.dataset.choice] = el.value; update(); }
  }));
  document.querySelectorAll("input[data-show]").forEach((el) => el.addEventListener("change", () => {
    state.show[el.dataset.show] = el.checked; update();
  }));

  // ---- provenance pop-over -----------------------------------------------------------------
  // Every number opens its record from the keyboard too (set here rather than in 600 attributes of the HTML).
  document.querySelectorAll("[data-prov]").forEach((el) => { if (el.tabIndex < 0) el.tabIndex = 0; });
  const pop = document.getElementById("prov-pop");
  const RECORD_KINDS = labelsOf("record_kinds"), PRESET_LABELS = labelsOf("presets");  // scripts/common/names.json
  const UNIT_WORDS = DATA.names.units || {};
  const ASSUMPTIONS_ZH = DATA.names.assumptions || {};
  const unitWord = (u) => (u ? (UNIT_WORDS[u] || u) : "");
  // What a student reads first (what the number is, which kind, where it comes from, in one or two lines); the
  // record's machinery (id, formula, arguments, script) goes behind a "技术细节" toggle.
  function describe(rec, shown) {
    const value = `${rec.display} ${unitWord(rec.unit)}`.trim();
    const main = [[rec.label || rec.id, ""], ["类别", RECORD_KINDS[rec.kind] || rec.kind]];
    if (shown != null && shown !== rec.display) {
      const now = `${shown} ${unitWord(rec.unit)}`.trim();
      main.push(["当前", `${now}(按你现在的设置在浏览器里算出)`], ["默认设置下", value]);
    } else {
      main.push(["数值", value]);
    }
    const detail = [["编号", rec.id]];
    if (rec.kind === "derived") {
      main.push(["怎么来的", `由脚本 ${rec.script} 按公式算出`]);
      detail.push(["公式", rec.formula + (rec.key ? ` → ${rec.key}` : "")], ["参数", JSON.stringify(rec.args)],
        ["输入", (rec.inputs || []).join(", ")]);
    } else if (rec.kind === "cited") {
      main.push(["出处", rec.work], ["提出方自报", rec.self_reported ? "是" : "否"]);
      detail.push(["版本", rec.version || ""], ["位置", rec.locator]);
    } else if (rec.kind === "measured") {
      main.push(["机器", rec.machine], ["日期", rec.date], ["重复次数", String(rec.runs)], ["离散", rec.spread]);
      detail.push(["文件", rec.file]);
    } else if (rec.kind === "simulated") {
      const workloads = (window.C13_SERVING || {}).workloads || {};
      main.push(["负载", workloads[rec.workload] || rec.workload], ["调度", SCHEDULE_LABELS[rec.schedule] || PRESET_LABELS[rec.schedule] || rec.schedule]);
      if (rec.rate_per_gpu != null) main.push(["每卡请求率", `${rec.rate_per_gpu} req/s`]);
      const iv = rec.interval;
      if (iv && iv.low != null) {  // the same number over the sweep's seeds (scripts/serving/uncertainty.py)
        const f = (v) => formatNumber(v, rec.format), off = shown != null && shown !== rec.display;
        main.push([`${iv.replications} 个种子重跑`, `均值 ${f(iv.mean)},${Math.round(iv.confidence * 100)}% 区间 ` +
          `${f(iv.low)}–${f(iv.high)} ${unitWord(rec.unit)}${off ? "(默认设置下)" : ""}`.trim()]);
        detail.push(["各种子的值", iv.values.map(f).join(", ")], ["各种子", iv.seeds.join(", ")]);
      }
      detail.push(["请求数", String(rec.requests)], ["种子", String(rec.seed)], ["脚本", rec.script]);
      if (rec.formula) detail.push(["公式", rec.formula], ["参数", JSON.stringify(rec.args)]);
    } else if (rec.kind === "assumed") {  // the config's sentence in Chinese (scripts/common/names.json assumptions)
      const zh = ASSUMPTIONS_ZH[rec.assumption];
      main.push(["依据", zh || rec.assumption]);
      if (zh) detail.push(["配置文件原文", rec.assumption]);
    } else if (rec.kind === "calibrated") {  // a prediction from a model fitted to a separate measurement
      main.push(["怎么来的", rec.fit], ["用到的数据", "校准记录和各次运行的结果文件(文件名见技术细节)"]);
      detail.push(["数据文件", (rec.data || []).join(", ")], ["脚本", rec.script], ["参数", JSON.stringify(rec.args)]);
    }
    return {main, detail};
  }
  // A readout of the under-load experiment away from the build's settings: the inputs and engine settings the
  // browser simulated it with (serving-sim.js, the twin of scripts/serving/engine/).
  function simulatedHere(schedule) {
    const e = engineOf(state), T = twin(), S = window.C13_SERVING;
    const settings = [`${GPUS[e.gpu].label}`, e.step_time === "bound" ? "屋顶线上界" : "现实步时"];
    if (schedule === "chunked") settings.push(`分块预算 ${formatNumber(e.chunk, "int")} token`);
    if (schedule === "disagg") settings.push(`prefill : decode = ${e.split}`);

    return [["怎么来的", "你的浏览器刚刚模拟的(serving-sim.js,与构建用的 Python 模拟器逐请求一致)"],
      ["模拟设置", `${settings.join("、")};「${S.workloads[state.workload]}」负载,每卡 ` +
        `${formatNumber(state.request_rate, "f1")} req/s,${formatNumber(T.settings.requests, "int")} 个请求(种子 ` +
        `${T.traces[state.workload].seed})`]];
  }
  function rowOf(k, v) {
    const row = document.createElement("div");
    const key = document.createElement("b");
    key.textContent = k;
    row.append(key, document.createTextNode(v ? ` ${v}` : ""));
    return row;
  }
  function showProv(el) {
    const id = el.dataset.prov;
    const rec = PROV[id];
    if (!pop || !rec) return;
    pop.replaceChildren();
    const {main, detail} = describe(rec, el.textContent.trim() || null);
    if (el.dataset.readout && el.closest("#exp-load") && twin() && !onBuildSettings(state)) {
      main.splice(3, 0, ...simulatedHere(el.dataset.readout.split(".").pop()));  // what this browser simulated
    }
    for (const [k, v] of main) pop.append(rowOf(k, v));
    const more = document.createElement("details");
    const summary = document.createElement("summary");
    summary.textContent = "技术细节";
    more.append(summary, ...detail.map(([k, v]) => rowOf(k, v)));
    pop.append(more);
    const link = document.createElement("a");
    link.href = `provenance.html#${encodeURIComponent(id)}`;
    link.textContent = "在出处表中查看 →";
    pop.append(link);
    const box = el.getBoundingClientRect(), width = Math.min(340, document.documentElement.clientWidth - 16);
    pop.style.maxWidth = `${width}px`;
    pop.style.top = `${window.scrollY + box.bottom + 6}px`;
    pop.style.left = `${Math.max(window.scrollX + 8, Math.min(window.scrollX + box.left,
      window.scrollX + document.documentElement.clientWidth - width - 8))}px`;
    pop.hidden = false;
    pop.dataset.for = id;
  }
  document.addEventListener("click", (ev) => {
    const el = ev.target.closest("[data-prov]");
    if (el) { showProv(el); ev.stopPropagation(); } else if (pop && !ev.target.closest("#prov-pop")) pop.hidden = true;
  });
  document.addEventListener("keydown", (ev) => {
    const el = ev.target.closest && ev.target.closest("[data-prov]");
    if (el && (ev.key === "Enter" || ev.key === " ")) { ev.preventDefault(); showProv(el); }
    if (ev.key === "Escape" && pop) pop.hidden = true;
  });
  if (location.hash) {
    const target = document.querySelector(`[data-prov="${CSS.escape(decodeURIComponent(location.hash.slice(1)))}"]`);
    if (target) { target.classList.add("prov-target"); target.scrollIntoView({block: "center"}); }
  }

  // ---- clickable teaching widgets (request path, formula terms, three-step design) ---------
  document.querySelectorAll("[data-explain]").forEach((btn) => {
    btn.addEventListener("click", () => {
      const group = btn.dataset.group;
      document.querySelectorAll(`[data-group="${group}"]`).forEach((b) => b.setAttribute("aria-pressed", String(b === btn)));
      document.querySelectorAll(`[data-panel-group="${group}"]`).forEach((p) => { p.hidden = p.dataset.panel !== btn.dataset.explain; });
    });
  });

  // ---- charts ------------------------------------------------------------------------------
  // The specs arrive compiled to Vega. A chart is drawn when its box comes near the screen: a phone never spends
  // time on charts its reader has not reached.
  const specs = window.C13_SPECS || {};
  const initial = {  // each chart starts with its data in place, so Vega never lays out an empty dataset
    frontier: () => ({frontier: frontierRows(state.context_tokens, state.tpot_slo_ms),
      frontier_technique: techniqueFrontierRows(state)}),
    timeline: () => ({timeline: lanes(state.context_tokens, state.prompt_tokens, state.chunk_tokens, cachedOf(state))}),
  };
  Object.assign(initial, {  // each under-load chart builds only its own rows
    load_attain: () => attainRows(state, loadReadouts(state)),
    load_ttft: () => distRows(state, "ttft", loadReadouts(state)),
    load_tpot: () => distRows(state, "tpot", loadReadouts(state)),
    load_scatter: () => scatterRows(state, loadReadouts(state)),
  });
  let servingRequested = null;  // serving-data.js and the simulator load only when their section comes near
  const servingData = () => (servingRequested = servingRequested ||
    (twin() ? Promise.resolve() : Promise.all([loadScript(files.serving), loadScript(files.sim)])).then(() => {
      Object.assign(PROV, window.C13_SERVING_PROV || {});
      for (const k of Object.keys(drawn)) drawn[k] = undefined;
      requestAnimationFrame(() => requestAnimationFrame(markScrolling));  // after the readouts fill the table
    }));
  const drawing = {}, waiting = {};
  function draw(id) {
    if (drawing[id]) return drawing[id];
    const el = document.getElementById(`chart-${id}`);
    if (!el || !window.vega) return Promise.resolve();
    if (id.startsWith("load_") && !twin()) {
      drawing[id] = servingData().then(() => { drawing[id] = undefined; return draw(id); });
      return drawing[id];
    }
    const spec = specs[id];
    const values = initial[id] ? initial[id]() : {};
    for (const d of spec.data || []) if (values[d.name]) d.values = values[d.name];
    el.classList.add("vega-embed");  // the class vega-embed gives its charts: the page's tests and CSS know it
    // The renderer is the spec's (scripts/page/charts.py): canvas for the charts whose marks a slider moves.
    const view = new window.vega.View(window.vega.parse(spec), {renderer: (spec.usermeta || {}).renderer || "svg",
      container: el, hover: id !== "load_scatter"});  // the scatter has no hover marks: skip the hover pass
    if (id === "load_scatter") for (const [name, value] of Object.entries(values.domains || {})) view.signal(name, value);
    drawing[id] = view.runAsync().then(() => { window.lessonViews[id] = view; drawn[id] = undefined; return update(); })
      .then(() => waiting[id] && waiting[id]());
    return drawing[id];
  }
  const ids = Object.keys(specs).filter((id) => document.getElementById(`chart-${id}`));
  if ("IntersectionObserver" in window) {
    const near = new IntersectionObserver((entries) => {
      for (const e of entries) if (e.isIntersecting) { near.unobserve(e.target); draw(e.target.id.slice(6)); }
    }, {rootMargin: "600px 0px"});
    ids.forEach((id) => near.observe(document.getElementById(`chart-${id}`)));
  } else {
    ids.forEach(draw);
  }
  // Ready when every chart has been drawn: charts are drawn as they come near the screen (the browser tests
  // scroll the page to each, as a reader does).
  window.lessonReady = Promise.all(ids.map((id) => new Promise((resolve) => { waiting[id] = resolve; })))
    .then(update).then(() => { markScrolling(); document.body.dataset.ready = "1"; });
  window.lessonDraw = draw;
  if (files.page === "lab" && files.serving) servingData();  // the lab's numbers open serving.json's records too
  if (PREFIX_LAB) {  // the cache experiment's data and worker load when its box comes near the screen
    if ("IntersectionObserver" in window) {
      const near = new IntersectionObserver((entries) => {
        if (entries.some((e) => e.isIntersecting)) { near.disconnect(); prefixLoad(); }
      }, {rootMargin: "600px 0px"});
      near.observe(PREFIX_BOX);
    } else {
      prefixLoad();
    }
  }
  update();
  markScrolling();
}

// ---- loader: the text paints first; the data and the Vega runtime load after the first frame -----------
(function () {
  const me = document.currentScript;
  const load = (src) => new Promise((resolve, reject) => {
    const el = document.createElement("script");
    el.src = src;
    el.async = false;  // run in the order given: the data, then the runtime
    el.onload = resolve;
    el.onerror = () => reject(new Error(`${src} did not load`));
    document.head.append(el);
  });
  const afterFirstFrame = new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));
  const scripts = [me.dataset.data, ...(me.dataset.lab ? [me.dataset.lab] : []), me.dataset.runtime];
  afterFirstFrame.then(() => Promise.all(scripts.map(load)))
    .then(() => lesson(load, {serving: me.dataset.serving, sim: me.dataset.sim, page: me.dataset.page, prefix: me.dataset.prefix}))
    .catch((err) => { document.body.dataset.ready = "error"; console.error(err); });
})();
