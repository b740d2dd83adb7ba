// The lab page's experiments on the student's own device: the course's tiny model (lab-model.js) runs in a Web
// Worker built from this page's own code (a Blob, so file:// works); the page asks it to time decode steps
// (batch scaling), to generate with and without the KV cache (experiment A) and to serve requests with vLLM V1's
// rule while a Poisson client here sends them and timestamps every token as it arrives (experiment B). Every number
// it writes is measured on this device and says so; the committed figures beside them carry their records.
"use strict";

// ---- the worker's side: the model, the timing loops and the serving loop ------------------------------------------
// The worker's timing jobs (batch scaling, the calibration's prefills, experiment A) on the worker's state `w`
// ({model, post, yieldTask, median}); the page's worker gets this function's source beside labWorker's.
function labTimings(L, w) {
  const prefilled = new Set();
  function prefill(slot, prompt) {
    if (prefilled.has(slot)) return;
    w.model.forward(prompt, prompt.map(() => slot), prompt.map((_, i) => i), [prompt.length - 1]);
    prefilled.add(slot);
  }
  async function batches(m) {  // one decode step of B requests, each with `position` cached positions
    const rows = [];
    for (const B of m.sizes) {
      for (let s = 0; s < B; s++) prefill(s, m.prompt);
      const ids = Array.from({length: B}, (_, i) => m.prompt[i]), slots = ids.map((_, i) => i);
      const pos = ids.map(() => m.prompt.length), wanted = slots.slice(), times = [];
      for (let k = 0; k < 1 + m.samples; k++) {  // a sample: `stepsPerSample` steps back to back (the browser's
        const t0 = performance.now();           // clock is coarse, see config/lab.json), the first a warm-up
        for (let j = 0; j < m.stepsPerSample; j++) w.model.forward(ids, slots, pos, wanted);
        if (k >= 1) times.push((performance.now() - t0) / m.stepsPerSample);
      }
      rows.push({batch: B, ms: w.median(times)});
      w.post({type: "progress", done: rows.length, of: m.sizes.length});
      await w.yieldTask();
    }
    prefilled.clear();
    w.post({type: "batches", rows});
  }
  async function prefills(m) {  // a fresh request's prompt of T tokens in one step (the calibration's other half)
    const rows = [];
    for (const T of m.lengths) {
      const ids = m.prompt.slice(0, T), slots = ids.map(() => 0), pos = ids.map((_, i) => i), times = [];
      for (let k = 0; k < 3 + m.samples; k++) {  // three warm-ups: a new length takes new code paths
        const t0 = performance.now();
        w.model.forward(ids, slots, pos, [T - 1]);
        if (k >= 3) times.push(performance.now() - t0);
      }
      rows.push({tokens: T, ms: w.median(times)});
      await w.yieldTask();
    }
    w.post({type: "prefills", rows});
  }
  function timeGeneration(prompt, n, cache) {
    const t0 = performance.now();
    const out = L.greedy(w.model, prompt, n, {cache, slot: 0});
    return {ms: performance.now() - t0, out};
  }
  async function kvCache(m) {  // experiment A: alternating pairs per length, within the time budget
    const start = performance.now(), rows = [], skipped = [];
    for (const n of m.lengths) {
      const warm = timeGeneration(m.prompt, n, true).ms + timeGeneration(m.prompt, n, false).ms;
      const left = m.budgetMs - (performance.now() - start);
      const pairs = Math.min(m.pairs, Math.floor(left / warm));
      if (pairs < m.minPairs) { skipped.push(n); continue; }
      const kv = [], nokv = [];
      for (let r = 0; r < pairs; r++) {
        const a = timeGeneration(m.prompt, n, true), b = timeGeneration(m.prompt, n, false);
        if (a.out.join() !== b.out.join()) throw new Error(`with and without the cache gave different tokens at ${n}`);
        kv.push(a.ms);
        nokv.push(b.ms);
        w.post({type: "progress", done: performance.now() - start, of: m.budgetMs});
        await w.yieldTask();
      }
      rows.push({newTokens: n, kv, nokv});
    }
    w.post({type: "kv", rows, skipped, seconds: (performance.now() - start) / 1000});
  }
  return {batches, prefills, kv: kvCache};
}

function labWorker(L, scope) {
  let model = null, engine = null, wake = null;
  const post = (m) => scope.postMessage(m);
  const channel = new MessageChannel();
  let resume = null;
  channel.port1.onmessage = () => { const r = resume; resume = null; if (r) r(); };
  const yieldTask = () => new Promise((r) => { resume = r; channel.port2.postMessage(0); });
  const w = {model: null, post, yieldTask, median: L.median}, timings = labTimings(L, w);

  function init(m) {
    const t0 = performance.now();
    model = w.model = new L.TinyModel({slots: m.slots, maxContext: m.maxContext, maxTokens: m.maxTokens});
    post({type: "ready", params: L.paramCount(), ms: performance.now() - t0});
  }
  async function serve(m) {  // the engine's loop: step while there is work, wait for a request when there is none
    engine = new L.Engine(model, {maxNumSeqs: m.maxNumSeqs, maxBatchedTokens: m.maxBatchedTokens});
    const serving = engine;
    while (engine === serving) {
      if (!engine.busy()) { await new Promise((r) => { wake = r; }); continue; }
      const t0 = performance.now(), step = engine.step();
      post({type: "step", events: step.events, tokens: step.tokens, requests: step.requests,
        ms: performance.now() - t0});
      await yieldTask();
    }
  }
  const handlers = {
    init, ...timings, serve,
    request(m) { engine.add(m.request); if (wake) { const w = wake; wake = null; w(); } },
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
}

// ---- the page's side ------------------------------------------------------------------------------------------------
function labPage(L, doc) {
  const settings = JSON.parse(doc.getElementById("on-your-device").dataset.labSettings);
  const $ = (sel, root = doc) => root.querySelector(sel);
  const fmt = (x, digits) => (Number.isFinite(x) ? x.toLocaleString("en-US", {minimumFractionDigits: digits,
    maximumFractionDigits: digits}) : "—");
  let worker = null, ready = null, listener = null, busy = false;

  function startWorker() {
    if (ready) return ready;
    const src = `${c13LabModel.toString()}\n${labTimings.toString()}\n(${labWorker.toString()})(c13LabModel(), self);\n`;
    worker = new Worker(URL.createObjectURL(new Blob([src], {type: "text/javascript"})));
    worker.onmessage = (e) => { if (listener) listener(e.data); };
    const e = settings.engine;
    ready = ask({cmd: "init", slots: e.max_num_seqs, maxContext: e.max_context, maxTokens: e.max_num_batched_tokens},
      "ready").then((m) => {
      $("#device-params").textContent = fmt(m.params, 0);
      $("#device-init").textContent = fmt(m.ms, 0);
      return m;
    });
    return ready;
  }
  // Send one command; resolve with the message of type `until`; `onMessage` sees every other message.
  function ask(message, until, onMessage = null) {
    return new Promise((resolve, reject) => {
      listener = (m) => {
        if (m.type === "error") { listener = null; reject(new Error(m.message)); } else if (m.type === until) { listener = null; resolve(m); } else if (onMessage) onMessage(m);
      };
      worker.postMessage(message);
    });
  }
  function seededIds(seed, n) {  // token ids from the lab's generator (mulberry32, as the weights)
    const next = L.mulberry32(seed);
    return Array.from({length: n}, () => next() % L.SHAPE.vocab);
  }
  // Run one experiment at a time: its button disabled and its status line saying what happens.
  async function exclusive(box, work) {
    if (busy) { $(".status", box).textContent = "另一个实验正在运行,等它结束再点。"; return; }
    busy = true;
    box.querySelectorAll("button").forEach((b) => { b.disabled = true; });
    try {
      $(".status", box).textContent = "正在生成模型权重(在页面里按种子生成,不下载)…";
      await startWorker();
      await work();
    } catch (err) {
      $(".status", box).textContent = `出错了:${err.message}`;
    } finally {
      busy = false;
      box.querySelectorAll("button").forEach((b) => { b.disabled = false; });
    }
  }
  return {settings, $, fmt, ask, seededIds, exclusive, startWorker, worker: () => worker,
    listen: (f) => { listener = f; }};
}

// ---- batch scaling: one decode step at B = 1 ... 16 -------------------------------------------------------------------
function batchExperiment(P, box) {
  const b = P.settings.batch;
  box.querySelector("button").addEventListener("click", () => P.exclusive(box, async () => {
    P.$(".status", box).textContent = "正在计时…";
    const prompt = P.seededIds(1, b.position);
    const m = await P.ask({cmd: "batches", sizes: b.sizes, prompt, samples: b.samples, stepsPerSample: b.steps_per_sample}, "batches",
      (p) => { P.$(".status", box).textContent = `正在计时:${p.done} / ${p.of}`; });
    const base = m.rows[0].batch / m.rows[0].ms;
    for (const r of m.rows) {
      const tr = box.querySelector(`tr[data-batch="${r.batch}"]`), tput = r.batch / r.ms * 1000;
      P.$(".ms", tr).textContent = P.fmt(r.ms, 2);
      P.$(".tput", tr).textContent = P.fmt(tput, 0);
      P.$(".gain", tr).textContent = `${P.fmt(tput / 1000 / base, 1)}×`;
    }
    const last = m.rows[m.rows.length - 1], gain = (last.batch / last.ms) / base;
    P.$(".status", box).textContent = gain >= 1.5
      ? `完成。在你的设备上,batch ${last.batch} 每秒吐出的 token 是 batch 1 的 ${P.fmt(gain, 1)} 倍:一步读一遍权重,服务的请求越多,摊到每个 token 上越少。`
      : `完成。在你的设备上 batch ${last.batch} 只有 batch 1 的 ${P.fmt(gain, 1)} 倍:这台设备算得慢、读内存相对快,一步的时间主要花在算上,加请求就是加计算,摊不薄。`;
    box.dataset.done = "1";
  }));
}

// ---- experiment A: the KV cache on this device -------------------------------------------------------------------
// The percentile-bootstrap interval of the median; `next` is a mulberry32 generator (L.mulberry32).
function bootstrapMedian(L, values, next, pct, resamples = 2000) {
  const meds = new Float64Array(resamples);
  for (let k = 0; k < resamples; k++) meds[k] = L.median(values.map(() => values[Math.floor(next() / 4294967296 * values.length)]));
  meds.sort();
  const tail = (100 - pct) / 200;
  return [meds[Math.floor(tail * resamples)], meds[Math.ceil((1 - tail) * resamples) - 1]];
}
function kvExperiment(P, box) {
  const k = P.settings.kv;
  box.querySelector("button").addEventListener("click", () => P.exclusive(box, async () => {
    const bar = P.$("progress", box);
    bar.hidden = false;
    P.$(".status", box).textContent = "正在交替计时:有 cache 一次、无 cache 一次…";
    const m = await P.ask({cmd: "kv", prompt: P.seededIds(2, k.prompt_tokens), lengths: k.new_tokens, pairs: k.pairs,
      minPairs: k.min_pairs, budgetMs: k.budget_s * 1000}, "kv", (p) => { bar.value = Math.min(1, p.done / p.of); });
    bar.hidden = true;
    const med = P.L.median;
    for (const r of m.rows) {
      const tr = box.querySelector(`tr[data-new-tokens="${r.newTokens}"]`), ratios = r.kv.map((x, i) => r.nokv[i] / x);
      const [lo, hi] = bootstrapMedian(P.L, ratios, P.L.mulberry32(r.newTokens), k.interval_pct);
      P.$(".kv", tr).textContent = P.fmt(med(r.kv), 0);
      P.$(".nokv", tr).textContent = P.fmt(med(r.nokv), 0);
      P.$(".ratio", tr).textContent = `${P.fmt(med(ratios), 1)}×`;
      P.$(".interval", tr).textContent = `${P.fmt(lo, 1)}–${P.fmt(hi, 1)}×(${r.kv.length} 对)`;
    }
    for (const n of m.skipped) P.$(`tr[data-new-tokens="${n}"] .kv`, box).textContent = "设备太慢,跳过";
    P.$(".status", box).textContent = `完成,用了 ${P.fmt(m.seconds, 1)} 秒。` +
      (m.skipped.length ? `时间上限内放不下 ${m.skipped.join("、")} 个新 token 的至少 3 对,这一档跳过了。` : "");
    box.dataset.done = "1";
  }));
}

// ---- experiment B: a server under load on this device ------------------------------------------------------------
function poissonArrivals(next, n, rate) {  // seconds from the start: exponential gaps at `rate`; next: L.mulberry32
  let t = 0;
  return Array.from({length: n}, () => { t += -Math.log((next() + 1) / 4294967297) / rate; return t; });  // u in (0, 1)
}
// One run: send `n` requests at their arrival times, timestamp each token as its step's message arrives, stop when
// every request finished or the budget ran out. Times in seconds from the run's start.
const runSize = (o, load) => Math.min(o.count, Math.max(1, Math.floor(o.rate * load.arrival_s)));
function serveRun(P, o, onProgress) {
  const L = P.settings.load, E = P.settings.engine, n = runSize(o, L);
  const arrivals = poissonArrivals(P.L.mulberry32(L.seed), n, o.rate), reqs = arrivals.map((at, id) => ({id, at, send: null, times: []}));
  return new Promise((resolve) => {
    const t0 = performance.now(), timers = [];
    let finished = 0, last = t0;
    const end = (stopped) => {
      timers.forEach(clearTimeout);
      P.worker().postMessage({cmd: "stop"});
      P.listen(null);
      const done = reqs.filter((r) => r.times.length === o.output);
      resolve({n, asked: o.count, stopped, duration: (last - t0) / 1000, requests: done.map((r) => ({
        send: (r.send - t0) / 1000, times: r.times.map((t) => (t - t0) / 1000), input: o.prompt, output: o.output}))});
    };
    P.listen((m) => {
      if (m.type !== "step") return;
      const now = performance.now();
      for (const [id, , isDone] of m.events) { reqs[id].times.push(now); if (isDone) finished += 1; }
      last = now;
      onProgress(finished, n);
      if (finished === n) end(false);
    });
    P.worker().postMessage({cmd: "serve", maxNumSeqs: E.max_num_seqs, maxBatchedTokens: E.max_num_batched_tokens});
    for (const r of reqs) {
      timers.push(setTimeout(() => {
        r.send = performance.now();
        P.worker().postMessage({cmd: "request", request: {id: r.id, prompt: P.seededIds(L.seed * 1000 + r.id, o.prompt), outputLen: o.output}});
      }, r.at * 1000));
    }
    timers.push(setTimeout(() => end(true), L.budget_s * 1000));
  });
}
function loadOptions(box) {
  const v = (name) => Number(box.querySelector(`[name="${name}"]`).value);
  return {rate: v("lab_rate"), count: v("lab_requests"), prompt: v("lab_prompt"), output: v("lab_output"),
    slo: {ttft: v("lab_ttft_slo"), tpot: v("lab_tpot_slo")}};
}
function showRun(P, box, o, run, metrics) {
  for (const name of ["ttft", "tpot", "itl", "e2el"]) {
    const tr = box.querySelector(`tr[data-metric="${name}"]`);
    for (const stat of ["mean", "p50", "p90", "p99"]) {
      const key = stat === "mean" ? `mean_${name}_ms` : `${stat}_${name}_ms`;
      P.$(`.${stat}`, tr).textContent = run.requests.length ? P.fmt(metrics[key], 1) : "—";
    }
  }
  const tr = document.createElement("tr"), cells = [
    P.fmt(o.rate, 0), `${run.requests.length}/${run.n}`, P.fmt(metrics.request_throughput, 2),
    P.fmt(metrics.output_throughput, 0), P.fmt(metrics.p50_ttft_ms, 0), P.fmt(metrics.p99_ttft_ms, 0),
    P.fmt(metrics.median_tpot_ms, 1), P.fmt(metrics.p99_tpot_ms, 1), `${P.fmt(100 * metrics.slo_attainment, 0)}%`,
    P.fmt(metrics.request_goodput, 2)];
  for (const c of cells) { const td = document.createElement("td"); td.className = "r"; td.textContent = c; tr.appendChild(td); }
  P.$(".runs tbody", box).appendChild(tr);
  P.$(".runs", box).hidden = false;
  scatter(P.$(".scatter", box), run, metrics, o.slo);
  const ttft = run.requests.map((r) => (r.times[0] - r.send) * 1000);
  const tpot = run.requests.filter((r) => r.output > 1).map((r) => (r.times[r.times.length - 1] - r.times[0]) * 1000 / (r.output - 1));
  cdfChart(P.$(".cdf-ttft", box), ttft, o.slo.ttft, "TTFT 的累积分布");
  cdfChart(P.$(".cdf-tpot", box), tpot, o.slo.tpot, "TPOT 的累积分布");
}
function scatter(svg, run, metrics, slo) {  // TTFT (x) against TPOT (y) per request, the two targets as lines
  const W = 320, H = 200, pad = 34, pts = run.requests.map((r) => {
    const ttft = (r.times[0] - r.send) * 1000, e2el = (r.times[r.times.length - 1] - r.send) * 1000;
    return [ttft, r.output > 1 ? (e2el - ttft) / (r.output - 1) : 0];
  });
  const xMax = Math.max(slo.ttft * 1.2, ...pts.map((p) => p[0])), yMax = Math.max(slo.tpot * 1.2, ...pts.map((p) => p[1]));
  const X = (x) => pad + (W - pad - 6) * x / xMax, Y = (y) => H - pad + -(H - pad - 6) * y / yMax;
  const ok = (p) => p[0] <= slo.ttft && p[1] <= slo.tpot;
  svg.innerHTML = `<line x1="${pad}" y1="${H - pad}" x2="${W - 6}" y2="${H - pad}" stroke="#888"/>` +
    `<line x1="${pad}" y1="6" x2="${pad}" y2="${H - pad}" stroke="#888"/>` +
    `<line x1="${X(slo.ttft)}" y1="6" x2="${X(slo.ttft)}" y2="${H - pad}" stroke="#e45756" stroke-dasharray="4 3"/>` +
    `<line x1="${pad}" y1="${Y(slo.tpot)}" x2="${W - 6}" y2="${Y(slo.tpot)}" stroke="#e45756" stroke-dasharray="4 3"/>` +
    pts.map((p) => `<circle cx="${X(p[0]).toFixed(1)}" cy="${Y(p[1]).toFixed(1)}" r="3" fill="${ok(p) ? "#4c78a8" : "#f58518"}" fill-opacity="0.7"/>`).join("") +
    `<text x="${W - 6}" y="${H - pad + 14}" text-anchor="end" font-size="11">TTFT(ms,右端 ${Math.round(xMax)})</text>` +
    `<text x="${pad + 4}" y="14" font-size="11">TPOT(ms,顶端 ${yMax.toFixed(1)})</text>`;
  svg.hidden = false;
}
// The share of requests at or below each value (an empirical CDF), the target as a dashed line: the lesson's
// distribution charts, drawn here for the reader's own run.
function cdfChart(svg, values, target, label) {
  const W = 320, H = 150, pad = 34, v = Float64Array.from(values).sort(), n = v.length;
  const xMax = Math.max(target * 1.2, v[n - 1] || 0), X = (x) => pad + (W - pad - 6) * x / xMax;
  const Y = (q) => H - 24 - (H - 44) * q;  // the top 20 px hold the title
  let path = `M${X(0).toFixed(1)},${Y(0).toFixed(1)}`;
  v.forEach((x, i) => { path += ` L${X(x).toFixed(1)},${Y(i / n).toFixed(1)} L${X(x).toFixed(1)},${Y((i + 1) / n).toFixed(1)}`; });
  const met = v.filter((x) => x <= target).length / Math.max(n, 1);
  svg.innerHTML = `<line x1="${pad}" y1="${Y(0)}" x2="${W - 6}" y2="${Y(0)}" stroke="#888"/>` +
    `<line x1="${pad}" y1="${Y(1)}" x2="${pad}" y2="${Y(0)}" stroke="#888"/>` +
    `<line x1="${X(target)}" y1="${Y(1)}" x2="${X(target)}" y2="${Y(0)}" stroke="#e45756" stroke-dasharray="4 3"/>` +
    `<path d="${path}" fill="none" stroke="#4c78a8" stroke-width="1.6"/>` +
    `<text x="${pad + 4}" y="12" font-size="11">${label}:目标以内 ${Math.round(100 * met)}% 的请求</text>` +
    `<text x="${W - 6}" y="${H - 8}" text-anchor="end" font-size="11">ms(右端 ${xMax.toFixed(xMax < 10 ? 1 : 0)})</text>`;
  svg.hidden = false;
}
function loadExperiment(P, box) {
  async function one(o) {
    const status = P.$(".status", box);
    status.textContent = `请求率 ${o.rate} req/s:发送中…`;
    const run = await serveRun(P, o, (done, n) => { status.textContent = `请求率 ${o.rate} req/s:已完成 ${done} / ${n} 个请求`; });
    const metrics = P.L.runMetrics(run.requests, run.duration, o.slo);
    box.lastRun = {requests: run.requests, duration: run.duration, slo: o.slo, metrics};  // for a reader's console
    showRun(P, box, o, run, metrics);
    const notes = [];
    if (run.n < run.asked) notes.push(`为了在约 ${P.settings.load.arrival_s} 秒内发完,只发了 ${run.n} 个(不是 ${run.asked} 个)`);
    if (run.stopped) notes.push(`到了 ${P.settings.load.budget_s} 秒的上限就停了,只统计完成的 ${run.requests.length} 个`);
    status.textContent = `请求率 ${o.rate} req/s 完成${notes.length ? `(${notes.join(";")})` : ""}。`;
    box.dataset.done = String(Number(box.dataset.done || 0) + 1);
    return metrics;
  }
  const [runBtn, sweepBtn] = box.querySelectorAll("button");
  runBtn.addEventListener("click", () => P.exclusive(box, () => one(loadOptions(box))));
  sweepBtn.addEventListener("click", () => P.exclusive(box, async () => {
    for (const rate of P.settings.load.sweep_rates) await one({...loadOptions(box), rate});
  }));
}

// ---- experiment C: calibrate on this device, predict the next run with the page's simulator, then measure it -----
// The step model is the roofline the lesson teaches, with this device's own "bandwidth", "peak" and per-step
// overhead fitted to the timed steps (least squares on log time over a grid): a step costs
// overhead + max(bytes / bandwidth, flops / peak), bytes and flops from the model's shape (scripts/page/lab.py).
function fitStepModel(S, model, decodeRows, prefillRows, position, C) {  // C: config/lab.json calibration
  const [nBw, nPeak, nOverhead] = C.fit_grid_points;
  const points = [...decodeRows.map((r) => [r.batch, r.batch * (position + 1), null, r.ms / 1000]),
    ...prefillRows.map((r) => [0, 0, [[0, r.tokens]], r.ms / 1000])];
  const grid = (lo, hi, n) => Array.from({length: n}, (_, i) => lo * (hi / lo) ** (i / (n - 1)));
  let best = null;
  for (const bw of grid(...C.fit_bandwidth_bytes_per_s, nBw)) {
    for (const peak of grid(...C.fit_flops_per_s, nPeak)) {
      const cost = S.iterationCost(model, bw, peak);
      const base = points.map(([dec, dcs, chunks]) => cost.seconds(dec, dcs, chunks));
      for (const overhead of grid(...C.fit_overhead_s, nOverhead)) {
        let err = 0;
        base.forEach((b, i) => { const d = Math.log(b + overhead) - Math.log(points[i][3]); err += d * d; });
        if (!best || err < best.err) best = {err, bw, peak, overhead};
      }
    }
  }
  return best;
}
// The next run as the simulator sees it: the same arrivals and lengths, vLLM V1's rule with this engine's limits,
// contexts reserved whole (no paging), the fitted steps.
function predictRun(S, model, fit, arrivals, o, engine) {
  const n = arrivals.length, gpu = {name: "this device", hbm_bytes: 2 ** 50, hbm_bandwidth_bytes_per_s: fit.bw,
    peak_bf16_flops: fit.peak};
  const trace = S.simulate(model, gpu, {arrival_s: arrivals, prompt_tokens: new Array(n).fill(o.prompt),
    output_tokens: new Array(n).fill(o.output)}, "vllm-v1", {max_batch: engine.max_num_seqs,
    max_num_batched_tokens: engine.max_num_batched_tokens, paged: false, capacity_bytes: 2 ** 50,
    efficiency: {flops_fraction: 1, bandwidth_fraction: 1, overhead_s: fit.overhead}});
  return Array.from({length: n}, (_, i) => ({send: trace.arrival_s[i], input: o.prompt, output: o.output,
    times: [trace.first_token_s[i], trace.finish_s[i]]}));
}

function predictExperiment(P, box, loadBox) {
  const C = P.settings.calibration, shown = (sel, text) => { P.$(sel, box).textContent = text; };
  const cell = (metric, col, text) => { P.$(`tr[data-metric="${metric}"] .${col}`, box).textContent = text; };
  const pick = {ttft_p50: ["p50_ttft_ms", 0], ttft_p99: ["p99_ttft_ms", 0], tpot_mean: ["mean_tpot_ms", 2],
    attainment: ["slo_attainment", 0]};
  const value = (m, metric) => (metric === "attainment" ? 100 * m.slo_attainment : m[pick[metric][0]]);
  box.querySelector("button").addEventListener("click", () => P.exclusive(box, async () => {
    const o = loadOptions(loadBox), prompt = P.seededIds(1, Math.max(...C.prefill_tokens));
    shown(".status", "校准:给 decode 步和 prefill 计时…");
    const dec = await P.ask({cmd: "batches", sizes: P.settings.batch.sizes, prompt: prompt.slice(0, C.position),
      samples: C.samples, stepsPerSample: P.settings.batch.steps_per_sample}, "batches");
    const pre = await P.ask({cmd: "prefills", lengths: C.prefill_tokens, prompt, samples: C.samples}, "prefills");
    const fit = fitStepModel(P.S, P.settings.sim_model, dec.rows, pre.rows, C.position, C);
    shown(".fit", `本机拟合:等效带宽 ${P.fmt(fit.bw / 1e9, 1)} GB/s,等效算力 ${P.fmt(fit.peak / 1e9, 1)} GFLOP/s,每步开销 ${P.fmt(fit.overhead * 1000, 2)} ms`);
    const n = runSize(o, P.settings.load), arrivals = poissonArrivals(P.L.mulberry32(P.settings.load.seed), n, o.rate);
    const predicted = P.L.runMetrics(predictRun(P.S, P.settings.sim_model, fit, arrivals, o, P.settings.engine),
      arrivals[n - 1], o.slo);
    for (const metric of Object.keys(pick)) {
      cell(metric, "pred", P.fmt(value(predicted, metric), pick[metric][1]));
      cell(metric, "meas", "…");
      cell(metric, "err", "");
    }
    shown(".status", `预测写好了(请求率 ${o.rate} req/s,${n} 个请求)。现在实测同一组请求…`);
    const run = await serveRun(P, o, (done, total) => shown(".status", `实测中:已完成 ${done} / ${total} 个请求`));
    const measured = P.L.runMetrics(run.requests, run.duration, o.slo);
    for (const metric of Object.keys(pick)) {
      const p = value(predicted, metric), m = value(measured, metric);
      cell(metric, "meas", P.fmt(m, pick[metric][1]));
      cell(metric, "err", metric === "attainment" ? `${P.fmt(p - m, 0)} 个百分点` : `${P.fmt(100 * (p - m) / m, 0)}%`);
    }
    box.lastCheck = {fit, predicted, measured};
    shown(".status", run.stopped ? `实测到了时间上限,只统计完成的 ${run.requests.length} 个请求。` : "完成:先预测、后实测,误差在最后一列。");
    box.dataset.done = String(Number(box.dataset.done || 0) + 1);
  }));
}

// ---- experiment D: the same run under four tools' definitions ------------------------------------------------------
const TOOL_ROWS = [["ttft_p50", 1000, 1], ["tpot_mean", 1000, 2], ["itl_mean", 1000, 2], ["output_throughput", 1, 0],
  ["request_throughput", 1, 2], ["tpot_attainment", 100, 0]];  // [metric, scale to what the row shows, digits]
function showTools(P, box, metrics, source) {
  for (const [metric, scale, digits] of TOOL_ROWS) {
    const base = metrics.vllm[metric];
    for (const tool of ["vllm", "guidellm", "aiperf", "llmperf"]) {
      const v = metrics[tool][metric], cell = P.$(`tr[data-metric="${metric}"] .${tool}`, box);
      if (v === null || v === undefined) { cell.textContent = "—"; cell.classList.remove("differs"); continue; }
      const off = base ? (v - base) / base : 0, far = tool !== "vllm" && Math.abs(off) > 0.01;
      cell.textContent = P.fmt(v * scale, digits) + (far ? `(${off > 0 ? "+" : ""}${P.fmt(100 * off, 0)}%)` : "");
      cell.classList.toggle("differs", far);
    }
  }
  P.$(".source", box).textContent = source;
  box.dataset.done = String(Number(box.dataset.done || 0) + 1);
}
function toolsExperiment(P, box, loadBox) {
  const slo = () => loadOptions(loadBox).slo.tpot;
  box.querySelector("button").addEventListener("click", () => {
    const last = loadBox.lastRun;
    if (!last) { P.$(".status", box).textContent = "还没有实验 B 的运行:先在上面跑一次。"; return; }
    const reqs = last.requests.map((r) => ({send: r.send, ttft: r.times[0] - r.send, e2el: r.times[r.times.length - 1] - r.send,
      gaps: r.times.slice(1).map((t, k) => t - r.times[k]), output: r.output}));
    showTools(P, box, P.L.toolMetrics(reqs, {start: 0, end: last.duration}, slo()), `实验 B 的上一次运行(${reqs.length} 个请求,在你的设备上测得)`);
    P.$(".status", box).textContent = "完成。括号里是和 vLLM 的口径差多少。";
  });
  box.querySelector('input[type="file"]').addEventListener("change", (e) => {
    const file = e.target.files[0];
    if (!file) return;
    file.text().then((text) => {
      try {
        const {reqs, run} = P.L.readVllmResult(text);
        showTools(P, box, P.L.toolMetrics(reqs, run, slo()), `文件 ${file.name}(${reqs.length} 个成功的请求)`);
        P.$(".status", box).textContent = "完成。文件里没有发送时刻,AIPerf 的时长(从第一个请求发出算起)算不出来。";
      } catch (err) {
        P.$(".status", box).textContent = `读不了 ${file.name}:${err.message}`;
      }
    });
  });
}

(function start() {
  if (typeof document === "undefined") return;  // Node (tests) loads this file for labWorker only
  const doc = document, box = (id) => doc.getElementById(id);
  if (!box("on-your-device") || typeof c13LabModel !== "function") return;
  const L = c13LabModel(), P = labPage(L, doc);
  P.L = L;
  batchExperiment(P, box("exp-batch"));
  kvExperiment(P, box("exp-kv"));
  loadExperiment(P, box("exp-load"));
  P.S = typeof c13ServingSim === "function" ? c13ServingSim() : null;
  if (P.S) predictExperiment(P, box("exp-predict"), box("exp-load"));
  toolsExperiment(P, box("exp-tools"), box("exp-load"));
})();
if (typeof module !== "undefined") module.exports = {labWorker, labTimings, poissonArrivals, bootstrapMedian, fitStepModel, predictRun};
