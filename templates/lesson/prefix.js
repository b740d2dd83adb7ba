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
    const urgent = need.length;  // the current rate's cells: asked for at once, even during a drag
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
    simRequestNow(need, urgent);
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
      stats.push({schedule: label, stat: CHART_VALUES.mean, ms: mean, share: sorted.length ? below / sorted.length : 0});
      for (const q of [50, 90, 99]) stats.push({schedule: label, stat: `p${q}`, ms: percentile(sorted, q), share: q / 100});
    }
    return {[`load_${metric}_curve`]: curve, [`load_${metric}_stats`]: stats};
  }
  const insideLabel = (p, s) => (p.ttft_ms <= s.ttft_slo_ms && p.tpot_ms <= s.load_tpot_slo_ms ? CHART_VALUES.both_met : CHART_VALUES.not_both);
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

  // a mixture of experts' knee (precomputed.py _experts: the batch whose step reads the knee's share of the experts)
  const EXPERT_KNEE = K.expert_knee_batch || 0;
  function frontierRows(c, sloMs) {
    const cap = maxBatchByMemory(c), rows = [];
    for (let b = 1; b <= cap; b++) {
      const step = decodeStepSeconds(b, c);
      rows.push({batch: b, step_ms: step * 1e3, throughput_tok_s: b / step,
        slo_status: step * 1e3 <= sloMs ? CHART_VALUES.slo_met : CHART_VALUES.slo_missed, is_cap: b === cap, is_knee: b === EXPERT_KNEE});
    }
    return rows;
  }
