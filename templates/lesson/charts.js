
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
