  // ---- numpy's helpers, one home for both bundles: the twin's (twin.js @include) and the lab model's
  // (scripts/page/lab.py puts this file where model.js says NUMPY_HELPERS) -------------------------------------------
  // rint (half to even), pairwise sum (np.add.reduce), mean, percentile ('linear': numpy's _lerp)
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
