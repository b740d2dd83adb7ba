// ---- the lab's experiments, wired from the one list in config/lab.json `experiments` (id, its box, its settings
// group, its worker commands, its run seconds): each id names its wiring here, called with the page, its box and
// every experiment's box by id (experiment C and D read experiment B's settings and last run). Adding one: its box
// in templates/lab.html.j2, its entry in config/lab.json, its function in a part of templates/lab/ and here.
const WIRING = {
  batch: (P, box) => batchExperiment(P, box),
  kv: (P, box) => kvExperiment(P, box),
  load: (P, box) => loadExperiment(P, box),
  predict: (P, box, boxes) => { if (P.S) predictExperiment(P, box, boxes.load); },
  tools: (P, box, boxes) => toolsExperiment(P, box, boxes.load),
  waits: (P, box, boxes) => waitsExperiment(P, box, boxes.predict),
};
(function start() {
  if (typeof document === "undefined") return;  // Node (tests) loads this file for its pure parts
  const doc = document;
  if (!doc.getElementById("on-your-device") || typeof c13LabModel !== "function") return;
  const M = c13LabModel(), L = Object.assign(M, c13LabMetrics(M), c13LabTools(M), c13LabReaders(), c13LabGpu(M));
  const P = labPage(L, doc), boxes = {};
  P.L = L;
  P.S = typeof c13ServingSim === "function" ? c13ServingSim() : null;
  for (const e of P.settings.experiments) boxes[e.id] = doc.getElementById(e.element);
  for (const e of P.settings.experiments) WIRING[e.id](P, boxes[e.id], boxes);
  gpuDetect(P, doc);
})();
if (typeof module !== "undefined") {
  module.exports = {labWorker, labTimings, poissonArrivals, bootstrapMedian, fitStepModel, fitRoofline, predictRun,
    calibrationPlans, stepRows, linkTimes, nonNegativeFit, checkRows, wakeFactor, prefixFigures, labWaits, waitFigures, predictWaits, waitsStepModel, gpuGrowth, gpuNote, gpuBatchWords, gpuKvWords, GPU_WORDS, WIRING};
}
