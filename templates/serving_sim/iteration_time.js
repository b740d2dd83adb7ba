  // ---- iteration_time.py: how long the loop's iterations take ------------------------------------------------
  // A run of pure-decode iterations priced in one pass: at most `steps` from `t` (the step cost's decodeRun fills
  // durs and cums: t + cums[s] is iteration s's end), stopping at the first one that would start at or after
  // `event` (numpy.searchsorted(starts, event, "left"), starts = [t, ends[:-1]]). Returns how many ran.
  function pricedRun(cost, nd, csum, steps, overhead, t, event, durs, cums) {
    cost.decodeRun(nd, csum, steps, overhead, durs, cums);
    if (event < Infinity) {
      let before = t < event ? 1 : 0;
      if (before) while (before < steps && t + cums[before - 1] < event) before++;
      steps = Math.max(1, Math.min(steps, before));
    }
    return steps;
  }
  // One iteration with prompt work (chunks: [request, start, length]) and `decoders` riding with it: [its duration,
  // the decoders' time alone (null without decoders)], both with the step's overhead.
  function pricedIteration(cost, overhead, decoders, ctxSum, chunks) {
    const d = cost.seconds(decoders, ctxSum, chunks.map((c) => [c[1], c[2]])) + overhead;
    return [d, decoders ? cost.decode(decoders, ctxSum) + overhead : null];
  }
