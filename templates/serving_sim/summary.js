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

  // ---- numpy helpers: rint (half to even), pairwise sum (np.add.reduce), percentile ('linear') --------------
  function rint(x) {
    const f = Math.floor(x), d = x - f;
    if (d < 0.5) return f;
    if (d > 0.5) return f + 1;
    return f % 2 === 0 ? f : f + 1;
  }
  function pairwiseSum(a, lo, n) {  // numpy's pairwise_sum (PW_BLOCKSIZE 128, eight accumulators)
    if (n < 8) { let s = -0; for (let i = 0; i < n; i++) s += a[lo + i]; return s; }
    if (n <= 128) {
      const r = [a[lo], a[lo + 1], a[lo + 2], a[lo + 3], a[lo + 4], a[lo + 5], a[lo + 6], a[lo + 7]];
      let i;
      for (i = 8; i < n - (n % 8); i += 8) for (let k = 0; k < 8; k++) r[k] += a[lo + i + k];
      let res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
      for (; i < n; i++) res += a[lo + i];
      return res;
    }
    let n2 = Math.floor(n / 2);
    n2 -= n2 % 8;
    return pairwiseSum(a, lo, n2) + pairwiseSum(a, lo + n2, n - n2);
  }
  const npMean = (a) => pairwiseSum(a, 0, a.length) / a.length;
  function percentile(sorted, q) {
    const n = sorted.length;
    if (n === 0) return 0;
    const pos = (n - 1) * q / 100, lo = Math.floor(pos), hi = Math.min(lo + 1, n - 1), t = pos - lo;
    const a = sorted[lo], b = sorted[hi];
    return t >= 0.5 ? b - (b - a) * (1 - t) : a + (b - a) * t;
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
