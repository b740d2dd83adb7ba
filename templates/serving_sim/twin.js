// The serving simulator in the browser: the twin of scripts/serving/engine/ (one file here per module there, the
// same names: registry, stepcost, schedulers, prefix, kv, iteration_time, loop, disagg, breakdown, simulation), with
// roofline.py's IterationCost, prefill_seconds and transfer_seconds in stepcost.js, and in summary.js
// workload.arrival_times and the cell summary of scripts/serving/aggregate.py (quantize_ms) and sweep.tail_breakdown;
// workload.js builds the prefix workloads from their draws (scripts/serving/workloads/workload.py) and prefix_runs.js
// reads a run as scripts/serving/experiments/prefix_runs.py does. Same operations in the same order, so its times equal the Python engine's to the last bits or nearly (tests/test_sim_parity.py holds
// every request's first-token and finish times to 1e-9 relative on generated configurations, in Chromium).
// Pure: no DOM. The build (scripts/page/render.py sim_script) joins the files named below into this one function,
// site/serving-sim.js; the page loads it as a script (window.C13Sim) and builds its Web Worker from the function's
// source (a Blob), so it runs from file:// too; Node can require() it.
"use strict";
function c13ServingSim() {
  // @include numpy.js registry.js stepcost.js schedulers.js prefix.js kv.js iteration_time.js loop.js disagg.js breakdown.js simulation.js summary.js workload.js prefix_runs.js

  return {PARTS, LESSON_PRESETS, REGISTRIES, simulate, engines, iterationCost, StepModel, arrivalTimes, cellSummary, percentile, quantize,
    pairwiseSum, rint, vllmV1Defaults, systemPromptRequests, conversationRequests, prefixRunSummary, TokenPrefixCache};
}
if (typeof self !== "undefined") self.C13Sim = c13ServingSim();
if (typeof module !== "undefined") module.exports = c13ServingSim();
