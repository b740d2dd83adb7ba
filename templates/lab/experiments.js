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
if (typeof module !== "undefined") module.exports = {labWorker, labTimings, poissonArrivals, bootstrapMedian, fitStepModel, fitRoofline, predictRun,
  calibrationPlans, stepRows, linkTimes, nonNegativeFit, checkRows};
