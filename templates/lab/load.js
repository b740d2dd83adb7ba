// ---- experiment B: a server under load on this device ------------------------------------------------------------
function poissonArrivals(next, n, rate) {  // seconds from the start: exponential gaps at `rate`; next: L.mulberry32
  let t = 0;
  return Array.from({length: n}, () => { t += -Math.log((next() + 1) / 4294967297) / rate; return t; });  // u in (0, 1)
}
// Serve `plan` ([{at: s from the start, prompt: token count, output}], by arrival) on the worker: send each request
// at its time, timestamp each token as its step's message arrives, stop when every request finished or after
// budgetMs. Every time is on one clock shared with the worker (performance.timeOrigin + now(), ms): per request its
// planned and actual send, when the worker saw it (and whether its engine was waiting for work) and its tokens; per step its shape, start, the time since the
// previous step's start when the two ran back to back (cycle; else null) and when the page received it.
const PROGRESS_MS = 100;  // the progress line is written at most this often: a line per step (1000 a second on a
// laptop) kept the page's thread busy laying it out, and on two cores that thread and the worker's share them
// A plan entry's `system` tokens (the prefix comparison's shared system prompt) come first in its prompt; with
// prefixBlock > 0 the engine caches prefixes in blocks of that many tokens and each request records its hit.
function serveRequests(P, plan, budgetMs, seed, onProgress, prefixBlock = 0, device = "cpu") {
  const clock = () => performance.timeOrigin + performance.now(), E = P.settings.engine;
  const reqs = plan.map((p, id) => ({id, planned: 0, send: null, seen: null, idle: false, times: [], output: p.output,
    input: (p.system || 0) + p.prompt, cached: null}));
  return new Promise((resolve) => {
    const t0 = clock(), timers = [], steps = [];
    let finished = 0, shownAt = -Infinity;
    const end = (stopped) => {
      timers.forEach(clearTimeout);
      P.worker().postMessage({cmd: "stop"});
      P.listen(null);
      resolve({t0, stopped, requests: reqs, steps, last: steps.length ? steps[steps.length - 1].recv : t0});
    };
    P.listen((m) => {
      if (m.type !== "step") return;
      const recv = clock();
      for (const [id, at, idle] of m.seen) { reqs[id].seen = at; reqs[id].idle = idle; }
      for (const [id, hit] of m.hits) reqs[id].cached = hit;
      for (const [id, , isDone] of m.events) { reqs[id].times.push(recv); if (isDone) finished += 1; }
      steps.push({shape: m.shape, start: m.start, cycle: m.cycle, afterIdle: m.afterIdle, ms: m.ms, recv});
      if (recv - shownAt >= PROGRESS_MS || finished === reqs.length) { shownAt = recv; onProgress(finished, reqs.length); }
      if (finished === reqs.length) end(false);
    });
    P.worker().postMessage({cmd: "serve", maxNumSeqs: E.max_num_seqs, maxBatchedTokens: E.max_num_batched_tokens, prefixBlock, device});
    const systems = new Map();  // the shared system prompt's ids, drawn once per length
    const system = (n) => { if (!systems.has(n)) systems.set(n, n ? P.seededIds(seed * 1000 - 1, n) : []); return systems.get(n); };
    plan.forEach((p, id) => {
      const r = reqs[id];
      r.planned = t0 + p.at * 1000;
      timers.push(setTimeout(() => {
        r.send = clock();
        P.worker().postMessage({cmd: "request", request: {id, prompt: [...system(p.system || 0), ...P.seededIds(seed * 1000 + id, p.prompt)], outputLen: p.output}});
      }, p.at * 1000));
    });
    timers.push(setTimeout(() => end(true), budgetMs));
  });
}
// One run of experiment B's settings: its Poisson arrivals (seed load.seed), the finished requests in seconds from
// the run's start as runMetrics reads them.
const runSize = (o, load) => Math.min(o.count, Math.max(1, Math.floor(o.rate * load.arrival_s)));
function loadPlan(P, o) {
  const L = P.settings.load, n = runSize(o, L);
  return poissonArrivals(P.L.mulberry32(L.seed), n, o.rate).map((at) => ({at, prompt: o.prompt, output: o.output,
    system: o.system || 0}));
}
async function serveRun(P, o, onProgress) {
  const L = P.settings.load, plan = loadPlan(P, o);
  const run = await serveRequests(P, plan, L.budget_s * 1000, L.seed, onProgress, o.prefix === "on" ? L.prefix_block_size : 0,
    o.device || "cpu");
  const done = run.requests.filter((r) => r.times.length === o.output), rel = (t) => (t - run.t0) / 1000;
  return {n: plan.length, asked: o.count, stopped: run.stopped, duration: rel(run.last), raw: run,
    requests: done.map((r) => ({send: rel(r.send), times: r.times.map(rel), input: r.input, output: o.output, cached: r.cached}))};
}
// The prefix cache's work in a run: the prompt tokens found cached over all prompt tokens (vLLM's hit rate counts
// both in tokens) and the tokens whose prefill it saved; null when the cache was off.
function prefixFigures(requests) {
  if (!requests.length || requests.some((r) => r.cached === null)) return null;
  const saved = requests.reduce((a, r) => a + r.cached, 0), asked = requests.reduce((a, r) => a + r.input, 0);
  return {hitRate: saved / asked, saved, asked};
}
function loadOptions(box) {
  const v = (name) => Number(box.querySelector(`[name="${name}"]`).value);
  return {rate: v("lab_rate"), count: v("lab_requests"), prompt: v("lab_prompt"), output: v("lab_output"),
    slo: {ttft: v("lab_ttft_slo"), tpot: v("lab_tpot_slo")}};
}
function showRun(P, box, o, run, metrics, guess) {
  for (const name of ["ttft", "tpot", "itl", "e2el"]) {
    const tr = box.querySelector(`tr[data-metric="${name}"]`);
    for (const stat of ["mean", "p50", "p90", "p99"]) {
      const key = stat === "mean" ? `mean_${name}_ms` : `${stat}_${name}_ms`;
      P.$(`.${stat}`, tr).textContent = run.requests.length ? P.fmt(metrics[key], 1) : "—";
    }
  }
  const tr = document.createElement("tr"), cells = [
    P.fmt(o.rate, 0) + (o.device === "gpu" ? "(GPU)" : ""), `${run.requests.length}/${run.n}`, P.fmt(metrics.request_throughput, 2),
    P.fmt(metrics.output_throughput, 0), P.fmt(metrics.p50_ttft_ms, 0), guess === undefined ? "—" : P.fmt(guess, 0),
    P.fmt(metrics.p99_ttft_ms, 0),
    P.fmt(metrics.median_tpot_ms, 1), P.fmt(metrics.p99_tpot_ms, 1), `${P.fmt(100 * metrics.slo_attainment, 0)}%`,
    P.fmt(metrics.request_goodput, 2), o.prefix === undefined ? "—" : (o.prefix === "on" ? `${P.fmt(100 * prefixFigures(run.requests).hitRate, 0)}%` : "关")];
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
  async function one(o, guess) {  // guess: the student's TTFT p99 for this run (the sweep's rates have none)
    const status = P.$(".status", box);
    status.textContent = `请求率 ${o.rate} req/s:发送中…`;
    const run = await serveRun(P, o, (done, n) => { status.textContent = `请求率 ${o.rate} req/s:已完成 ${done} / ${n} 个请求`; });
    const metrics = P.L.runMetrics(run.requests, run.duration, o.slo);
    box.lastRun = {requests: run.requests, duration: run.duration, slo: o.slo, metrics, guess};  // for a reader's console
    showRun(P, box, o, run, metrics, guess);
    const notes = [];
    if (run.n < run.asked) notes.push(`为了在约 ${P.settings.load.arrival_s} 秒内发完,只发了 ${run.n} 个(不是 ${run.asked} 个)`);
    if (run.stopped) notes.push(`到了 ${P.settings.load.budget_s} 秒的上限就停了,只统计完成的 ${run.requests.length} 个`);
    const guessed = guess === undefined ? "" : `你猜 TTFT p99 约 ${P.fmt(guess, 0)} ms,实测 ${P.fmt(metrics.p99_ttft_ms, 0)} ms。`;
    status.textContent = `请求率 ${o.rate} req/s 完成${notes.length ? `(${notes.join(";")})` : ""}。${guessed}`;
    box.dataset.done = String(Number(box.dataset.done || 0) + 1);
    return {metrics, run};
  }
  // experiment B's device switch (shown where the browser offers a WebGPU adapter): the same engine and rule, the
  // model's forward on the GPU; experiment C and the prefix pair stay on the CPU
  async function device() {
    const pick = P.$('select[name="lab_device"]', box), gpu = pick && !pick.closest("[hidden]") && pick.value === "gpu";
    if (!gpu) return "cpu";
    P.$(".status", box).textContent = "正在 GPU 上建模型…";
    const g = await P.startGpu();
    if (!g.available) throw new Error(gpuNote({adapter: null, reason: g.reason}));
    return "gpu";
  }
  const [runBtn, sweepBtn, pairBtn] = box.querySelectorAll("button");
  runBtn.addEventListener("click", () => P.exclusive(box, async () => one({...loadOptions(box), device: await device()},
    P.guesses(box).ttft_p99)));
  sweepBtn.addEventListener("click", () => P.exclusive(box, async () => {
    const on = await device();
    for (const rate of P.settings.load.sweep_rates) await one({...loadOptions(box), rate, device: on});
  }));
  pairBtn.addEventListener("click", () => P.exclusive(box, async () => {  // the same requests, cache off then on
    const o = {...loadOptions(box), system: Number(P.$('select[name="lab_system"]', box).value)};
    const off = await one({...o, prefix: "off"}), on = await one({...o, prefix: "on"}), f = prefixFigures(on.run.requests);
    const ms = (m, k) => P.fmt(m.metrics[k], 0);
    P.$(".status", box).textContent = `前缀缓存关 → 开(共享系统提示 ${o.system} token,请求率 ${o.rate} req/s):TTFT p50 ${ms(off, "p50_ttft_ms")} → ${ms(on, "p50_ttft_ms")} ms,`
      + `p99 ${ms(off, "p99_ttft_ms")} → ${ms(on, "p99_ttft_ms")} ms;${f ? `命中 ${P.fmt(100 * f.hitRate, 1)}% 的 prompt token,省下 ${f.saved} 个 token 的 prefill(共 ${f.asked} 个)。` : "没有请求完成。"}`;
    box.lastPrefix = {off: off.metrics, on: on.metrics, figures: f};
    box.dataset.done = String(Number(box.dataset.done || 0) + 1);
  }));
}

