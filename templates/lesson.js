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
  // @include roofline.js techniques.js timeline.js readouts.js tokens.js load.js prefix.js display.js controls.js provenance.js widgets.js charts.js
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
