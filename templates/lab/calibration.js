// ---- experiment C's calibration: this device's steps, timed as the served engine takes them ----------------------
// The calibration serves its own requests through the same worker loop, messages and client as experiment B (their
// arrivals and lengths are never the predicted run's: a held-out check), and keeps every step the engine ran back
// to back: its shape (decoders, their contexts, its prompt chunks) and its time from its start to the next step's
// start, so the worker's messages, the page's client work and the timers a served step pays are in it.
//   burst:   max_num_seqs requests at once, prompts cycling through burst_prompts, the k-th asking k x
//            burst_output_step tokens: prompt chunks alone and beside decodes, then decode-only steps at every batch
//            size from the largest down to 1 as the requests end one by one;
//   lone:    lone_requests requests one after another (lone_gap_s apart), lengths drawn as below: the steps of a
//            quiet server, one or two requests decoding, where a light load spends most of its steps;
//   poisson: poisson_requests at poisson_rate req/s, lengths drawn from the load experiment's choices: the mixed
//            steps of a loaded server.
function calibrationPlans(L, C, E, load) {
  const burst = Array.from({length: E.max_num_seqs}, (_, k) => ({at: 0, prompt: C.burst_prompts[k % C.burst_prompts.length],
    output: C.burst_output_step * (k + 1)}));
  const next = L.mulberry32(C.seed), draw = (choices) => choices[next() % choices.length];
  const lone = Array.from({length: C.lone_requests}, (_, k) => ({at: k * C.lone_gap_s, prompt: draw(load.prompt_tokens),
    output: draw(load.output_tokens)}));
  const poisson = poissonArrivals(L.mulberry32(C.seed + 1), C.poisson_requests, C.poisson_rate).map((at) => ({at,
    prompt: draw(load.prompt_tokens), output: draw(load.output_tokens)}));
  return [burst, lone, poisson];
}
// A served run's steps as calibration rows: each step whose next one started right after it (cycle: the next
// start less its own), its shape, its seconds and whether the engine had been waiting for work just before it.
function stepRows(steps) {
  const rows = [];
  for (let k = 1; k < steps.length; k++) {
    if (steps[k].cycle === null) continue;
    const s = steps[k - 1].shape;
    rows.push({decoders: s.decoders, contextSum: s.contextSum, chunks: s.chunks, seconds: steps[k].cycle / 1000,
      afterIdle: steps[k - 1].afterIdle === true});
  }
  return rows;
}
// The page's clock against the engine's, from the same runs (ms): the timer's lateness (send - planned), the
// request's way to the worker (seen - send, for the requests that found the engine waiting: one that came during
// a step waits for its end, which the simulator already prices) and the tokens' way back (a step's message
// received - the next step's start, where the simulator ends the step). Medians; 0 where nothing was seen.
function linkTimes(L, runs) {
  const late = [], inbound = [], outbound = [];
  for (const run of runs) {
    for (const r of run.requests) { if (r.send !== null) late.push(r.send - r.planned); if (r.seen !== null && r.idle) inbound.push(r.seen - r.send); }
    for (let k = 1; k < run.steps.length; k++) if (run.steps[k].cycle !== null) outbound.push(run.steps[k - 1].recv - run.steps[k].start);
  }
  const med = (v) => (v.length ? L.median(v) : 0);
  return {send_late_ms: med(late), inbound_ms: med(inbound), outbound_ms: med(outbound)};
}

// ---- the measured step model (stepcost.js StepModel) fitted to the rows; pure ---------------------------------------
// attention: the within-batch-size least-squares slope of decode-only steps' seconds on their contexts, over the
// batch sizes up to attention_max_batch (kept >= 0): there the lone phase moves one request's context from its
// prompt to its end with nothing else changing, while at larger batches the contexts rise with the load itself;
// D(m): the interquartile mean (the middle half's mean: robust to a stretched step, and it averages away the
// worker clock's 0.1 ms grain that a median keeps), less attention, of the decode-only steps with m decoders, at
// every m with at least min_samples of them (1 among them), made non-decreasing; a, b, c: a least-squares fit, each kept >= 0 (the best
// of every subset of the three, solved exactly), of what the steps with prompt work took beyond D and attention,
// then again without the rows further than outlier_mads median absolute deviations from it (a timer or a garbage
// collection that stretched one step). All of it over the steps that ran right after another: a step that woke the
// engine from a wait is priced apart (wakeFactor).
function fitStepModel(L, S, allRows, C, overheadS) {
  const rows = allRows.filter((r) => !r.afterIdle), decodes = rows.filter((r) => !r.chunks.length && r.decoders > 0), groups = new Map();
  for (const r of decodes) { if (!groups.has(r.decoders)) groups.set(r.decoders, []); groups.get(r.decoders).push(r); }
  let sxy = 0, sxx = 0;
  for (const [m, g] of groups) {
    if (m > C.attention_max_batch) continue;
    const mx = g.reduce((a, r) => a + r.contextSum, 0) / g.length, my = g.reduce((a, r) => a + r.seconds, 0) / g.length;
    for (const r of g) { sxy += (r.contextSum - mx) * (r.seconds - my); sxx += (r.contextSum - mx) ** 2; }
  }
  const attention = sxx > 0 ? Math.max(0, sxy / sxx) : 0, knots = [], knotSeconds = [];
  for (const m of [...groups.keys()].sort((a, b) => a - b)) {
    const g = groups.get(m);
    if (g.length < C.min_samples) continue;
    knots.push(m);
    knotSeconds.push(Math.max(knotSeconds.length ? knotSeconds[knotSeconds.length - 1] : 0,
      interquartileMean(g.map((r) => r.seconds - attention * r.contextSum))));
  }
  if (knots[0] !== 1 || knots.length < 2) {
    throw new Error(`校准里单独 decode 的步不够:需要 batch 1 和至少另一个 batch 各 ${C.min_samples} 步,得到 batch ${knots.join("、") || "无"}`);
  }
  const model = {decode_batch: knots, decode_seconds: knotSeconds, prompt_chunk_s: 0, prompt_token_s: 0, prompt_pair_s: 0,
    attention_s_per_token: attention, request_overhead_s: overheadS};
  const prompts = rows.filter((r) => r.chunks.length), target = promptTarget(new S.StepModel(model));
  let abc = fitPromptTerms(target, prompts);
  const residual = (r) => target(r) - promptFeatures(r).reduce((a, x, i) => a + x * abc[i], 0);
  if (prompts.length > 3) {
    const res = prompts.map(residual), mid = L.median(res), mad = L.median(res.map((x) => Math.abs(x - mid)));
    const kept = prompts.filter((r, i) => Math.abs(res[i] - mid) <= C.outlier_mads * mad);
    if (kept.length >= 3) abc = fitPromptTerms(target, kept);
  }
  [model.prompt_chunk_s, model.prompt_token_s, model.prompt_pair_s] = abc;
  return model;
}
// A step's prompt work as the step model prices it: per chunk a, b per token, c per (token x start + token^2 / 2);
// the target, what the step took beyond D(decoders) and attention (sm: the S.StepModel of the decode side); the
// least-squares fit of a, b, c, each kept >= 0 (nonNegativeFit). Experiment E's refit on its probe uses the same.
const promptFeatures = (r) => [r.chunks.length, r.chunks.reduce((a, [, n]) => a + n, 0),
  r.chunks.reduce((a, [s, n]) => a + (n * s + n * n / 2), 0)];
const promptTarget = (sm) => (r) => r.seconds - sm.D(r.decoders) - sm.attention * r.contextSum;
const fitPromptTerms = (target, rows) => nonNegativeFit(rows.map(promptFeatures), rows.map(target));
function interquartileMean(values) {  // the mean of the sorted values from index floor(n/4) to n - 1 - floor(n/4)
  const v = Float64Array.from(values).sort(), cut = Math.floor(v.length / 4);
  let s = 0;
  for (let i = cut; i < v.length - cut; i++) s += v[i];
  return s / (v.length - 2 * cut);
}
// How much longer a step that woke the engine from a wait takes than the same step run right after another: the
// median, over the calibration's steps that came after a wait, of their seconds over the fitted model's price (1
// when there were none or it came out below 1). On this machine the prompt steps of a 4 req/s run that woke the
// engine took 1.0-1.4 times their back-to-back price (median about 1.1).
function wakeFactor(L, S, rows, stepModel) {
  const m = new S.StepModel(stepModel), ratios = rows.filter((r) => r.afterIdle)
    .map((r) => r.seconds / m.seconds(r.decoders, r.contextSum, r.chunks));
  return ratios.length ? Math.max(1, L.median(ratios)) : 1;
}
// Least squares with every coefficient >= 0: the best of the unconstrained fits over each subset of the columns
// whose coefficients all come out >= 0 (the empty subset, all zero, always qualifies). Three columns: 8 subsets.
function nonNegativeFit(X, y) {
  const p = X.length ? X[0].length : 3;
  let best = {sse: y.reduce((a, v) => a + v * v, 0), beta: new Array(p).fill(0)};
  for (let mask = 1; mask < (1 << p); mask++) {
    const cols = [...Array(p).keys()].filter((j) => mask & (1 << j));
    const A = cols.map((i) => cols.map((j) => X.reduce((a, row) => a + row[i] * row[j], 0)));
    const b = cols.map((i) => X.reduce((a, row, r) => a + row[i] * y[r], 0)), sol = solve(A, b);
    if (!sol || sol.some((x) => x < 0)) continue;
    const beta = new Array(p).fill(0);
    cols.forEach((j, q) => { beta[j] = sol[q]; });
    const sse = X.reduce((a, row, r) => a + (y[r] - row.reduce((s, x, j) => s + x * beta[j], 0)) ** 2, 0);
    if (sse < best.sse) best = {sse, beta};
  }
  return best.beta;
}
function solve(A, b) {  // Gaussian elimination with partial pivoting; null when singular
  const n = b.length, M = A.map((row, i) => [...row, b[i]]);
  for (let c = 0; c < n; c++) {
    let piv = c;
    for (let r = c + 1; r < n; r++) if (Math.abs(M[r][c]) > Math.abs(M[piv][c])) piv = r;
    if (!(Math.abs(M[piv][c]) > 1e-300)) return null;
    [M[c], M[piv]] = [M[piv], M[c]];
    for (let r = c + 1; r < n; r++) {
      const f = M[r][c] / M[c][c];
      for (let k = c; k <= n; k++) M[r][k] -= f * M[c][k];
    }
  }
  const x = new Array(n).fill(0);
  for (let r = n - 1; r >= 0; r--) {
    let s = M[r][n];
    for (let k = r + 1; k < n; k++) s -= M[r][k] * x[k];
    x[r] = s / M[r][r];
  }
  return x;
}

// ---- the roofline beside it, as a reading aid: the lesson's max(bytes / bandwidth, flops / peak) + overhead with
// this device's "bandwidth", "peak" and per-step overhead fitted to the same rows (least squares on log time over a
// grid; every k-th row, at most 64), bytes and flops from the model's shape (scripts/page/lab.py sim_model) -----
function fitRoofline(S, model, allRows, C) {
  const [nBw, nPeak, nOverhead] = C.fit_grid_points, every = Math.ceil(allRows.length / 64);
  const rows = allRows.filter((_, i) => i % every === 0);  // at most 64, spread over the run
  const grid = (lo, hi, n) => Array.from({length: n}, (_, i) => lo * (hi / lo) ** (i / (n - 1)));
  let best = null;
  for (const bw of grid(...C.fit_bandwidth_bytes_per_s, nBw)) {
    for (const peak of grid(...C.fit_flops_per_s, nPeak)) {
      const cost = S.iterationCost(model, bw, peak);
      const base = rows.map((r) => cost.seconds(r.decoders, r.contextSum, r.chunks));
      for (const overhead of grid(...C.fit_overhead_s, nOverhead)) {
        let err = 0;
        base.forEach((b, i) => { const d = Math.log(b + overhead) - Math.log(rows[i].seconds); err += d * d; });
        if (!best || err < best.err) best = {err, bw, peak, overhead};
      }
    }
  }
  return best;
}
