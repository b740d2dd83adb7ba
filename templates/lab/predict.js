// ---- experiment C: calibrate on this device, predict the next run with the lesson's simulator, then measure it ----
// The next run as the simulator sees it: the same planned arrivals and lengths, vLLM V1's rule with this engine's
// limits (the lab's Engine takes the same decisions: tests/test_lab_steps.py), contexts reserved whole (no paging),
// every step priced by the measured step model. The page's clock against the engine's (linkTimes): the engine sees
// a request late_ms + inbound_ms after its planned time, and the page receives a step's tokens outbound_ms after the
// simulator ends it. A request that finds the engine with nothing to do (every earlier one finished) wakes it: its
// prompt step takes wake_factor times its price (calibration.js wakeFactor), which the simulator sees as the request
// arriving that much later (the engine is idle until then either way); which requests find it idle is read off the
// simulation, and the simulation run again until that set stops changing (at most maxPasses times). Times in
// seconds from the run's start, as serveRun returns them.
function predictRun(S, model, stepModel, link, plan, engine, maxPasses = 4) {
  const n = plan.length, sent = plan.map((p) => p.at + link.send_late_ms / 1000), sm = new S.StepModel(stepModel);
  const seen = sent.map((t) => t + link.inbound_ms / 1000), factor = link.wake_factor || 1;
  const wake = plan.map((p) => (factor - 1) * sm.seconds(0, 0, [[0, Math.min(p.prompt, engine.max_num_batched_tokens)]]));
  const gpu = {name: "this device", hbm_bytes: 2 ** 50, hbm_bandwidth_bytes_per_s: 1, peak_bf16_flops: 1};
  let woke = new Array(n).fill(false), trace = null;
  for (let pass = 0; pass < maxPasses; pass++) {
    trace = S.simulate(model, gpu, {arrival_s: seen.map((t, i) => t + (woke[i] ? wake[i] : 0)),
      prompt_tokens: plan.map((p) => p.prompt), output_tokens: plan.map((p) => p.output)}, "vllm-v1",
    {max_batch: engine.max_num_seqs, max_num_batched_tokens: engine.max_num_batched_tokens, paged: false,
      capacity_bytes: 2 ** 50, step_model: stepModel});
    let busyUntil = -Infinity;
    const next = seen.map((t, i) => {
      const idle = factor > 1 && busyUntil <= t;
      busyUntil = Math.max(busyUntil, trace.finish_s[i]);
      return idle;
    });
    if (next.every((x, i) => x === woke[i])) break;
    woke = next;
  }
  const back = link.outbound_ms / 1000;
  return Array.from({length: n}, (_, i) => ({send: sent[i], input: plan[i].prompt, output: plan[i].output,
    times: [trace.first_token_s[i] + back, trace.finish_s[i] + back]}));
}
// Calibrate: serve the calibration plans (calibrationPlans) one after another within the calibration's bound, fit
// the step model and the roofline on their steps. The burst is served warmup_runs times first and its steps thrown
// away: a fresh page runs the kernel's baseline code until V8 has compiled its optimised tier, and its first steps
// were up to a fifth slower than the same steps a few seconds later.
async function calibrate(P, onProgress) {
  const C = P.settings.calibration, start = performance.now(), runs = [];
  const plans = calibrationPlans(P.L, C, P.settings.engine, P.settings.load).filter((plan) => plan.length);
  const left = () => Math.max(C.budget_s * 1000 - (performance.now() - start), 1);
  for (let k = 0; k < C.warmup_runs; k++) {
    await serveRequests(P, plans[0], left(), C.seed, (done, n) => onProgress(-1, plans.length, done, n));
  }
  for (const plan of plans) {
    runs.push(await serveRequests(P, plan, left(), C.seed, (done, n) => onProgress(runs.length, plans.length, done, n)));
  }
  const rows = runs.flatMap((r) => stepRows(r.steps)), link = linkTimes(P.L, runs);
  const overhead = (link.inbound_ms + link.outbound_ms) / 1000, stepModel = fitStepModel(P.L, P.S, rows, C, overhead);
  link.wake_factor = wakeFactor(P.L, P.S, rows, stepModel);
  return {rows, link, stepModel, roofline: fitRoofline(P.S, P.settings.sim_model, rows, C),
    stopped: runs.some((r) => r.stopped)};
}

const CHECKED = {ttft_p50: ["p50_ttft_ms", 0], ttft_p99: ["p99_ttft_ms", 0], tpot_mean: ["mean_tpot_ms", 2],
  attainment: ["slo_attainment", 0]};  // [runMetrics' key, digits shown]
const checkedValue = (m, metric) => (metric === "attainment" ? 100 * m.slo_attainment : m[CHECKED[metric][0]]);
// The rows of the check: per metric the guess (or null), the prediction, the median of the measured runs, their
// smallest and largest, and whether the prediction lies within them (null with one run).
function checkRows(L, predicted, measuredRuns, guesses) {
  const rows = {};
  for (const metric of Object.keys(CHECKED)) {
    const values = measuredRuns.map((m) => checkedValue(m, metric)), p = checkedValue(predicted, metric);
    const min = Math.min(...values), max = Math.max(...values);
    rows[metric] = {guess: guesses[metric] ?? null, predicted: p, measured: L.median(values), min, max,
      runs: values.length, inside: values.length > 1 ? p >= min && p <= max : null};
  }
  return rows;
}
function showCheck(P, box, rows) {
  const cell = (metric, col, text) => { P.$(`tr[data-metric="${metric}"] .${col}`, box).textContent = text; };
  for (const [metric, r] of Object.entries(rows)) {
    const digits = CHECKED[metric][1], err = metric === "attainment" ? `${P.fmt(r.predicted - r.measured, 0)} 点`
      : `${P.fmt(100 * (r.predicted - r.measured) / r.measured, 0)}%`;
    cell(metric, "meas", P.fmt(r.measured, digits));
    cell(metric, "spread", r.runs > 1 ? `${P.fmt(r.min, digits)}–${P.fmt(r.max, digits)}` : "只测了一次");
    cell(metric, "err", err);
    cell(metric, "inside", r.inside === null ? "" : r.inside ? "在波动内" : "超出波动");
  }
}
// Measure the run up to `repeats` times: another run starts only if one more of the longest so far still ends
// within measure_budget_s of the first run's start (each run is bounded by load.budget_s too).
async function measureRuns(P, o, C, shown) {
  const runs = [], start = performance.now();
  let longest = 0;
  while (runs.length < C.repeats && (!runs.length || performance.now() - start + longest <= C.measure_budget_s * 1000)) {
    const t = performance.now(), k = runs.length + 1;
    const run = await serveRun(P, o, (done, total) => shown(".status", `实测第 ${k} 次:已完成 ${done} / ${total} 个请求`));
    longest = Math.max(longest, performance.now() - t);
    runs.push(run);
  }
  return runs;
}
// What the cores the browser reports do to the measurement, said beside the reading (the page, the engine's worker
// and the browser's own threads share them).
function coresNote(P, box) {
  const n = navigator.hardwareConcurrency || 0, note = box.parentElement.querySelector(".cores-note");
  if (!note) return;
  note.textContent = n && n <= 2
    ? `你的浏览器报告 ${n} 个逻辑核心:页面、引擎的 Worker 和浏览器自己的线程要轮流用它们,这些都算进了校准量到的一步里,所以实测的一步比单独计时的慢。`
    : `你的浏览器报告 ${n || "未知数目的"} 个逻辑核心:页面和引擎的 Worker 大多能各占一个,校准量到的一步里主要是消息和计时器的开销。`;
}
// The fitted step in words: a decode step of 1 and of max_num_seqs requests at the run's mean context `ctx`, a
// prompt chunk of this run's prompt alone (`sm`: the fitted StepModel); the roofline's three numbers beside it.
function fitSentence(P, cal, o, sm, ctx) {
  const most = P.settings.engine.max_num_seqs, ms = (x) => P.fmt(x * 1000, 2), r = cal.roofline;
  return `本机实测的一步(${cal.rows.length} 步拟合,上下文约 ${P.fmt(ctx, 0)} 个 token 时):1 个请求 decode ${ms(sm.decode(1, ctx))} ms,` +
    `${most} 个 ${ms(sm.decode(most, most * ctx))} ms;单独一段 ${o.prompt} token 的 prompt ${ms(sm.seconds(0, 0, [[0, o.prompt]]))} ms。` +
    `屋顶线读法:等效带宽 ${P.fmt(r.bw / 1e9, 1)} GB/s,等效算力 ${P.fmt(r.peak / 1e9, 1)} GFLOP/s,每步开销 ${ms(r.overhead)} ms。`;
}
// The measured table and the roofline beside it: a decode step of each batch size at the run's mean context, as
// the fitted step model `sm` prices it and as the fitted roofline does.
function showSteps(P, box, cal, sm, ctx) {
  const r = cal.roofline, roof = P.S.iterationCost(P.settings.sim_model, r.bw, r.peak);
  for (const tr of box.querySelectorAll(".steps-table tr[data-batch]")) {
    const b = Number(tr.dataset.batch);
    P.$(".measured", tr).textContent = P.fmt(1000 * sm.decode(b, b * ctx), 2);
    P.$(".roofline", tr).textContent = P.fmt(1000 * (roof.decode(b, b * ctx) + r.overhead), 2);
  }
  P.$(".steps-table", box).hidden = false;
}
function predictExperiment(P, box, loadBox) {
  const C = P.settings.calibration, shown = (sel, text) => { P.$(sel, box).textContent = text; };
  coresNote(P, box);
  box.querySelector("button.run-predict").addEventListener("click", () => P.exclusive(box, async () => {
    const o = loadOptions(loadBox), guesses = P.guesses(box);
    const cal = await calibrate(P, (phase, phases, done, n) => shown(".status", phase < 0
      ? `热身(这一段不计):已完成 ${done} / ${n} 个请求` : `校准第 ${phase + 1} 段(共 ${phases} 段):已完成 ${done} / ${n} 个请求`));
    const sm = new P.S.StepModel(cal.stepModel), ctx = o.prompt + o.output / 2;  // the run's mean context
    shown(".fit", fitSentence(P, cal, o, sm, ctx));
    showSteps(P, box, cal, sm, ctx);
    const plan = loadPlan(P, o), duration = plan[plan.length - 1].at;
    const predicted = P.L.runMetrics(predictRun(P.S, P.settings.sim_model, cal.stepModel, cal.link, plan, P.settings.engine), duration, o.slo);
    for (const metric of Object.keys(CHECKED)) {
      P.$(`tr[data-metric="${metric}"] .pred`, box).textContent = P.fmt(checkedValue(predicted, metric), CHECKED[metric][1]);
      for (const col of ["meas", "err"]) P.$(`tr[data-metric="${metric}"] .${col}`, box).textContent = "…";
      for (const col of ["spread", "inside"]) P.$(`tr[data-metric="${metric}"] .${col}`, box).textContent = "";
    }
    shown(".status", `预测写好了(请求率 ${o.rate} req/s,${plan.length} 个请求)。现在实测同一组请求…`);
    const runs = await measureRuns(P, o, C, shown), measured = runs.map((r) => P.L.runMetrics(r.requests, r.duration, o.slo));
    const rows = checkRows(P.L, predicted, measured, guesses);
    showCheck(P, box, rows);
    box.lastCheck = {stepModel: cal.stepModel, roofline: cal.roofline, link: cal.link, calibrationRows: cal.rows,  // for a
      predicted, measured, rows, runs: runs.map((r) => r.raw)};  // reader's console: the runs' requests and steps as served
    const stopped = runs.filter((r) => r.stopped).length;
    shown(".status", `完成:校准 ${cal.rows.length} 步,实测 ${runs.length} 次。` + (stopped ? `其中 ${stopped} 次到了时间上限,只统计完成的请求。` : "") +
      (runs.length > 1 ? "「实测」是几次的中位数,下面的小字是几次的范围;误差下面的小字说预测落在这个范围之内还是之外(达标率的误差以百分点计)。" : "只来得及实测一次,看不出波动。"));
    box.dataset.done = String(Number(box.dataset.done || 0) + 1);
  }));
}
