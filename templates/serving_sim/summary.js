  // ---- what the page reads of a run: workload.arrival_times, numpy's helpers, the cell summary ---------------
  // numpy's Generator.gamma(shape, scale) is scale x standard_gamma(shape): the same draws times the same scale.
  function arrivalTimes(draws, rate, burstiness = 1) {
    const n = draws.length, scale = 1.0 / (rate * burstiness), times = new Array(n);
    let acc = 0;
    for (let i = 0; i < n; i++) { acc += draws[i] * scale; times[i] = acc; }
    if (n && times[n - 1] > 0) {
      const factor = (n / rate) / times[n - 1];
      for (let i = 0; i < n; i++) times[i] *= factor;
    }
    return times;
  }

  // aggregate.quantize_ms: whole units of quantumMs, rounded up, after rounding to 1e-6 units (numpy's round).
  const quantize = (seconds, quantumMs) => Math.ceil(rint(seconds * 1000 / quantumMs * 1e6) / 1e6);

  // What the page's under-load experiment reads of one run: TTFT and TPOT (vLLM's all_tpots) per request in
  // whole units of quantumMs, the duration, and sweep.tail_breakdown's tail means (ms, rounded as serving.json's).
  function cellSummary(trace, quantumMs, tailParts) {
    const n = trace.arrival_s.length, ttft = new Array(n), tpot = new Array(n), e2el = new Float64Array(n);
    let duration = -Infinity;
    for (let i = 0; i < n; i++) {
      const t1 = trace.first_token_s[i] - trace.arrival_s[i], t2 = trace.finish_s[i] - trace.arrival_s[i];
      e2el[i] = t2;
      ttft[i] = quantize(t1, quantumMs);
      const out = trace.output_tokens[i];
      tpot[i] = quantize(out > 1 ? (t2 - t1) / (out - 1) : 0, quantumMs);
      if (trace.finish_s[i] > duration) duration = trace.finish_s[i];
    }
    const cut = percentile(Float64Array.from(e2el).sort(), 99), tail = [];
    for (let i = 0; i < n; i++) if (e2el[i] >= cut) tail.push(i);
    const tailMs = {};
    for (const part of tailParts) {
      const v = Float64Array.from(tail, (i) => trace.breakdown[`${part}_s`][i]);
      tailMs[part] = roundHalfEven(npMean(v) * 1000, 1);
    }
    return {ttft, tpot, duration_s: duration, tail_ms: tailMs, prefill_over: trace.prefill_held_peak_bytes > trace.capacity_bytes};
  }
  function roundHalfEven(x, digits) {  // Python's round(x, digits): the exact value, ties to even
    const s = 10 ** digits, y = x * s;
    if (Number.isInteger(y * 2) && !Number.isInteger(y) && y / s === x) return rint(y) / s;  // an exact tie
    return Number(x.toFixed(digits));  // toFixed rounds the exact binary value (ties are handled above)
  }
