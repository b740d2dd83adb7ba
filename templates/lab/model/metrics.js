// ---- metrics as `vllm bench serve` computes them (scripts/serving/measures/metrics.py, its twin): numpy's mean, std
// (population), median and percentiles (linear interpolation: model.js's npPercentile, templates/serving_sim/numpy.js),
// in ms; goodput counts requests meeting every SLO. The build appends this file to lab-model.js; it adds runMetrics and
// median to the model's exports. Pure: no DOM.
function c13LabMetrics(L) {
  const percentile = L.npPercentile;
  const median = (values) => percentile(Float64Array.from(values).sort(), 50);  // numpy's median
  function stats(name, values, percentiles) {
    const v = values.length ? Float64Array.from(values) : Float64Array.of(0), n = v.length;
    let sum = 0;
    for (const x of v) sum += x;
    const mean = sum / n;
    let sq = 0;
    for (const x of v) sq += (x - mean) * (x - mean);
    const sorted = Float64Array.from(v).sort(), out = {};
    out[`mean_${name}_ms`] = mean * 1000;
    out[`median_${name}_ms`] = percentile(sorted, 50) * 1000;
    out[`std_${name}_ms`] = Math.sqrt(sq / n) * 1000;
    for (const p of percentiles) out[`p${Number.isInteger(p) ? p : p}_${name}_ms`] = percentile(sorted, p) * 1000;
    return out;
  }
  // One run's metrics from its requests: {send, times: [token arrival s...], input, output} each; duration from the
  // run's start to the last token; slo {ttft, tpot, e2el} in ms (any subset).
  function runMetrics(requests, durationS, slo = {}, percentiles = [50, 90, 99]) {
    const ttft = [], e2el = [], tpots = [], itl = [], allTpots = [];
    let inTok = 0, outTok = 0, good = 0;
    for (const r of requests) {
      const t1 = r.times[0] - r.send, t2 = r.times[r.times.length - 1] - r.send, n = r.output;
      ttft.push(t1);
      e2el.push(t2);
      const tpot = n > 1 ? (t2 - t1) / (n - 1) : 0;
      allTpots.push(tpot);
      if (n > 1) tpots.push(tpot);
      for (let k = 1; k < r.times.length; k++) itl.push(r.times[k] - r.times[k - 1]);
      inTok += r.input;
      outTok += n;
      const meets = (slo.ttft === undefined || slo.ttft / 1000 >= t1) && (slo.tpot === undefined || slo.tpot / 1000 >= tpot)
        && (slo.e2el === undefined || slo.e2el / 1000 >= t2);
      if (meets) good += 1;
    }
    const completed = requests.length, any = Object.keys(slo).length > 0;
    return {duration: durationS, completed, total_input_tokens: inTok, total_output_tokens: outTok,
      request_throughput: completed / durationS, output_throughput: outTok / durationS,
      total_token_throughput: (inTok + outTok) / durationS,
      request_goodput: any ? good / durationS : null, slo_attainment: any ? (completed ? good / completed : 0) : null,
      ...stats("ttft", ttft, percentiles), ...stats("tpot", tpots, percentiles), ...stats("itl", itl, percentiles),
      ...stats("e2el", e2el, percentiles)};
  }
  return {runMetrics, median};
}
if (typeof self !== "undefined" && self.C13Lab) Object.assign(self.C13Lab, c13LabMetrics(self.C13Lab));
if (typeof module !== "undefined") Object.assign(module.exports, c13LabMetrics(module.exports));
