
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

  // Writes only what changed: an unchanged text, attribute or hidden flag written again still costs the browser a
  // style pass over the page (a drag across a target slider moves about 200 readouts, scripts/bench/page_latency.py)
  function setText(el, text) { if (el.textContent !== text) el.textContent = text; }
  function setAttr(el, name, value) { if (el.getAttribute(name) !== value) el.setAttribute(name, value); }
  function setHidden(el, hidden) { if (el.hidden !== hidden) el.hidden = hidden; }
  // The page's elements by selector, found once: no script adds an element these selectors match after load
  const nodeLists = new Map();
  function nodes(selector) {
    if (!nodeLists.has(selector)) nodeLists.set(selector, [...document.querySelectorAll(selector)]);
    return nodeLists.get(selector);
  }

  let pending = null, attainDrawnAt = 0, attainTimer = 0;
  const CURVE_REDRAW_MS = 150;  // while cells arrive: often enough to watch the curves grow, rarely enough to stay light
  const drawn = {};  // the inputs each view was last drawn with
  function updateNow() {
    if (state.gpu && GPUS[state.gpu]) Object.assign(K, GPUS[state.gpu].constants);
    const onDefault = !DEFAULT_GPU || state.gpu === DEFAULT_GPU.id, gpu = GPUS[state.gpu];
    // Words that name the GPU, and numbers that are the GPU's own, follow the switch (their records too)
    nodes("[data-gpu-label]").forEach((el) => {
      if (el.dataset.defaultLabel === undefined) el.dataset.defaultLabel = el.textContent;
      setText(el, onDefault || !gpu ? el.dataset.defaultLabel : gpu.name);  // the full name, as the default's
    });
    nodes("[data-gpu-field]").forEach((el) => {
      if (el.dataset.defaultProv === undefined) el.dataset.defaultProv = el.dataset.prov;
      const rid = onDefault || !gpu ? el.dataset.defaultProv : `gpu.${gpu.id}.${el.dataset.gpuField}`;
      if (PROV[rid]) { if (el.dataset.prov !== rid) el.dataset.prov = rid; setText(el, PROV[rid].display); }
    });
    nodes("[data-gpu-row]").forEach((row) => row.classList.toggle("chosen", row.dataset.gpuRow === state.gpu));
    const batchEl = document.querySelector('input[data-param="batch"]');
    const cap = maxBatchByMemory(state.context_tokens);
    if (batchEl) {
      batchEl.max = String(Math.max(1, cap));
      const batch = Math.min(batchWish, Math.max(1, cap));
      if (state.batch !== batch) { state.batch = batch; batchEl.value = String(batch); }
    }
    for (const el of sliders) {  // a value can be shown in several places (beside its slider and in the prose)
      for (const out of nodes(`[data-slider-value="${el.dataset.param}"]`)) {
        setText(out, formatNumber(state[el.dataset.param], out.dataset.format || "int"));
      }
      setAttr(el, "aria-valuetext", String(state[el.dataset.param]));
    }
    const load = loadReadouts(state), r = {...readouts(state), ...tokenReadouts(state), ...techniqueTable(state), ...load,
      ...prefixReadouts(state)};
    for (const el of nodes("[data-readout]")) {
      const v = r[el.dataset.readout];
      if (v === undefined) continue;  // the under-load readouts before serving-data.js has arrived
      if (v === null) {  // its cells are being simulated (or the settings cannot run: see the note)
        if (el.dataset.value !== undefined) delete el.dataset.value;
        setText(el, load._errors && load._errors.length && load._complete ? "—" : "…");
        continue;
      }
      if (el.dataset.value !== String(v)) el.dataset.value = String(v);
      setText(el, Number.isNaN(v) ? "—" : formatNumber(v, el.dataset.format || "int"));  // NaN: no ratio to a zero
    }
    prefixProvenance(state);
    if (twin()) {  // the experiment's words that depend on its engine settings
      const live = !onBuildSettings(state), step = engineOf(state).step_time;
      nodes("[data-when-sim-live]").forEach((el) => { setHidden(el, !live); });
      nodes("[data-step-words]").forEach((el) => { setHidden(el, el.dataset.stepWords !== step); });
      nodes("[data-when-sim-error]").forEach((el) => {
        setHidden(el, !(load._errors && load._errors.length));
        const why = el.querySelector("[data-sim-error]");
        if (why) setText(why, (load._errors || []).join(";"));
      });
    }
    nodes("[data-bound-of]").forEach((el) => { setHidden(el, String(r[el.dataset.boundOf]) !== el.dataset.boundIs); });
    nodes("[data-when-positive]").forEach((el) => { setHidden(el, !(r[el.dataset.whenPositive] > 0)); });
    nodes("[data-unless-positive]").forEach((el) => { setHidden(el, r[el.dataset.unlessPositive] > 0); });
    nodes("[data-when-nothing-fits]").forEach((el) => { setHidden(el, cap > 0); });
    nodes("[data-when-slo-unmet]").forEach((el) => { setHidden(el, r.max_batch_slo > 0 || cap === 0); });
    const zeroGoodput = twin() && shownSchedules(state).some((sch) => r[`goodput_rate.${sch}`] === 0);
    nodes("[data-when-zero-goodput]").forEach((el) => { setHidden(el, !zeroGoodput); });
    const boundedShown = twin() && load._bounded ? shownSchedules(state).filter((sch) => load._bounded.has(sch)) : [];
    nodes("[data-when-goodput-bounded]").forEach((el) => {
      setHidden(el, !boundedShown.length);
      const who = el.querySelector("[data-bounded-schedules]");
      if (who) setText(who, boundedShown.map((sch) => SCHEDULE_LABELS[sch]).join("、"));
    });
    const pdCell = state.show.disagg && load._now && load._now.disagg;
    nodes("[data-when-prefill-over]").forEach((el) => { setHidden(el, !(pdCell && pdCell.prefill_over)); });
    document.dispatchEvent(new CustomEvent("lesson:update", {detail: {state: {...state}, readouts: r}}));
    nodes("[data-technique-row]").forEach((row) => {
      row.classList.toggle("chosen", row.dataset.techniqueRow === state.technique);
    });
    nodes("[data-schedule-row]").forEach((row) => { setHidden(row, !state.show[row.dataset.scheduleRow]); });
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
      const v = views.frontier, curve = frontierKey !== drawn.frontier, technique = techniqueKey !== drawn.frontier_technique;
      drawn.frontier = frontierKey;
      drawn.frontier_technique = techniqueKey;
      jobs.push(() => {
        if (curve) {
          v.signal("batch", r.effective_batch).signal("context_tokens", state.context_tokens)
            .signal("tpot_slo_ms", state.tpot_slo_ms).data("frontier", frontierRows(state.context_tokens, state.tpot_slo_ms));
        }
        if (technique) v.data("frontier_technique", techniqueFrontierRows(state));
        return v.runAsync();
      });
    }
    const timelineKey = key(["gpu", "context_tokens", "prompt_tokens", "chunk_tokens"]) + "|" + cachedOf(state);
    if (views.timeline && timelineKey !== drawn.timeline) {
      drawn.timeline = timelineKey;
      const v = views.timeline;
      jobs.push(() => v.signal("prompt_tokens", state.prompt_tokens).signal("chunk_tokens", state.chunk_tokens)
        .data("timeline", lanes(state.context_tokens, state.prompt_tokens, state.chunk_tokens, cachedOf(state))).runAsync());
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
        jobs.push(() => {
          for (const name of signals) v.signal(name, state[name]);
          refreshViewData(id, v, dataKey, rows, load);
          return v.runAsync();
        });
      }
    }
    return inTurn(jobs);
  }
  // The views re-run one per task: an input event that arrives meanwhile waits for one view's run, not for all of
  // them (a drag across the TTFT target re-runs several; scripts/bench/page_latency.py times it). Each job reads the
  // state when it runs; a later move's redraw follows with its own keys.
  async function inTurn(jobs) {
    for (let i = 0; i < jobs.length; i++) {
      if (i) await new Promise((resolve) => setTimeout(resolve, 0));
      await jobs[i]();
    }
  }
  // A view's data for the current state: new rows when the requests it shows changed (laid out again only when its
  // series or decades did), else, for the scatter, only the points an SLO move put on the other side re-coloured.
  function refreshViewData(id, v, dataKey, rows, load) {
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
    lastSliderInput = performance.now();
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
