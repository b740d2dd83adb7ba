
  // ---- timeline.py -------------------------------------------------------------------------
  const runningDecoders = (c) => Math.max(0, maxBatchByMemory(c) - 1);
  // cached: the newcomer's first `cached` prompt tokens are in a prefix cache (timeline.py's docstring)
  function chunkedSteps(n, c, p, chunk, cached = 0) {
    const size = Math.max(1, Math.min(chunk, p - cached));
    const steps = [];
    for (let start = cached; start < p; start += size) steps.push(mixedStepSeconds(n, c, Math.min(chunk, p - start), start));
    return steps;
  }
  const wholeSteps = (n, c, p, cached = 0) => [mixedStepSeconds(n, c, p - cached, cached)];
  const sum = (xs) => xs.reduce((s, x) => s + x, 0);
  const uncachedPrefill = (p, cached = 0) => (cached <= 0 ? prefillSeconds(p) : mixedStepSeconds(0, 0, p - cached, cached));
  const disaggTtft = (p, cached = 0) => uncachedPrefill(p, cached) + transferSeconds(p);
  const cachedPrefix = (p, newTokens) => Math.max(0, p - newTokens);
  // what a prompt adds to its cached prefix: config/cited.json cited.kimi.new_tokens
  const PREFIX_NEW_TOKENS = DATA.provenance["cited.kimi.new_tokens"].value;
  const cachedOf = (s) => (s.show && s.show.prefix_cached ? cachedPrefix(s.prompt_tokens, PREFIX_NEW_TOKENS) : 0);
  function withNewcomerSeconds(n, c, p) {
    let bytes = decodeStepBytes(n, c) + decodeStepBytes(1, p) - K.weight_bytes_read_per_step;
    if (EXPERTS) bytes += weightBytesRead(n + 1) - weightBytesRead(n) - weightBytesRead(1) + K.weight_bytes_read_per_step;
    return stepSeconds(bytes, decodeStepFlops(n, c) + decodeStepFlops(1, p));
  }
  const labelsOf = (group) => Object.fromEntries(Object.entries(DATA.names[group]).map(([id, v]) => [id, v.label]));
  const LANE_LABELS = labelsOf("lanes"), KIND_LABELS = labelsOf("step_kinds");  // scripts/common/names.json
  function lanes(c, p, chunk, cached = 0, tail = 6) {
    const n = runningDecoders(c), plain = decodeStepSeconds(n, c), after = withNewcomerSeconds(n, c, p);
    const bars = [];
    const push = (lane, kind, s, e) => bars.push({lane, lane_label: LANE_LABELS[lane], kind,
      kind_label: KIND_LABELS[kind], start_s: s, end_s: e, duration_ms: (e - s) * 1e3});
    const run = (lane, steps, kind) => {
      let t = 0;
      for (const d of steps) { push(lane, kind, t, t + d); t += d; }
      for (let i = 0; i < tail; i++) { push(lane, "decode", t, t + after); t += after; }
    };
    run("whole", wholeSteps(n, c, p, cached), "prefill");
    run("chunked", chunkedSteps(n, c, p, chunk, cached), "chunk");
    const ttft = disaggTtft(p, cached);
    let t = 0;
    const count = plain > 0 ? Math.ceil(ttft / plain) : 0;
    for (let i = 0; i < count; i++) { push("disagg", "decode", t, t + plain); t += plain; }
    for (let i = 0; i < tail; i++) { push("disagg", "decode", t, t + after); t += after; }
    const pre = uncachedPrefill(p, cached);
    push("disagg_prefill", "prefill", 0, pre);
    push("disagg_prefill", "transfer", pre, ttft);
    return bars;
  }
