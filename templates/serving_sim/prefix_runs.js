  // ---- prefix_runs.py run(): what the lab's cache-off/on experiment reads of one run -----------------------------
  // trace: simulate()'s; reqs: the run's requests (conv and turn for conversations, else null); sloMs {ttft, tpot}.
  // As vLLM's metrics (metrics.py): TTFT p50 is numpy's median (the mean of the two middle values when even), p99
  // numpy's linear percentile, both in seconds then times 1000; request_goodput counts TTFT and TPOT (0 for one-token
  // answers) at or under their targets over the run's duration (the last finish).
  function prefixRunSummary(trace, reqs, sloMs) {
    const n = trace.arrival_s.length, ttft = new Float64Array(n);
    let duration = -Infinity, good = 0, cached = 0, prompt = 0, hits = 0;
    const saved = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      const t1 = trace.first_token_s[i] - trace.arrival_s[i], t2 = trace.finish_s[i] - trace.arrival_s[i];
      const out = trace.output_tokens[i], tpot = out > 1 ? (t2 - t1) / (out - 1) : 0;
      ttft[i] = t1;
      if (sloMs.ttft / 1000 >= t1 && sloMs.tpot / 1000 >= tpot) good += 1;
      if (trace.finish_s[i] > duration) duration = trace.finish_s[i];
      const c = trace.cached_tokens ? trace.cached_tokens[i] : 0;
      cached += c;
      prompt += trace.prompt_tokens[i];
      hits += c > 0 ? 1 : 0;
      saved[i] = trace.prefill_saved_s ? trace.prefill_saved_s[i] : 0;
    }
    const sorted = Float64Array.from(ttft).sort(), mid = n >> 1;
    const median = n % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
    let late = 0;
    if (reqs.conv) {  // prefix_runs.late_turns: turns sent before the turn they continue had its last token out
      const finish = new Map();
      for (let i = 0; i < n; i++) finish.set(`${reqs.conv[i]}/${reqs.turn[i]}`, trace.finish_s[i]);
      for (let i = 0; i < n; i++) {
        const before = finish.get(`${reqs.conv[i]}/${reqs.turn[i] - 1}`);
        if (before !== undefined && reqs.arrival_s[i] < before) late += 1;
      }
    }
    return {token_hit_rate: cached / prompt, request_hit_rate: hits / n, ttft_p50_ms: median * 1000,
      ttft_p99_ms: percentile(sorted, 99) * 1000, request_goodput: good / duration,
      saved_prefill_ms: npMean(saved) * 1000, late_turns: late, requests: n};
  }
