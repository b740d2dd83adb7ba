
  // ---- readouts.py -------------------------------------------------------------------------
  function readouts(s) {
    const c = s.context_tokens, p = s.prompt_tokens, k = s.chunk_tokens;
    const cap = maxBatchByMemory(c);
    const b = Math.max(0, Math.min(Math.trunc(s.batch), cap));
    const nb = maxBatchUnderSlo(c, s.tpot_slo_ms / 1e3);
    const n = runningDecoders(c), cached = cachedOf(s);
    const chunked = chunkedSteps(n, c, p, k, cached);
    const hit = sum(wholeSteps(n, c, p, cachedPrefix(p, PREFIX_NEW_TOKENS))), miss = sum(wholeSteps(n, c, p));
    // a mixture of experts: the experts a step at this batch reads per MoE layer (sizes.expected_experts_touched)
    const moe = EXPERTS ? {experts_read_at_batch: expertsTouched(b)} : {};
    return {...moe,
      max_batch_mem: cap,
      max_batch_slo: nb,
      throughput_at_slo_tok_s: nb ? nb / decodeStepSeconds(nb, c) : 0,
      per_user_tok_s_at_slo: nb ? 1 / decodeStepSeconds(nb, c) : 0,
      effective_batch: b,
      step_ms_at_batch: b ? decodeStepSeconds(b, c) * 1e3 : 0,
      throughput_at_batch_tok_s: b ? b / decodeStepSeconds(b, c) : 0,
      per_user_tok_s_at_batch: b ? 1 / decodeStepSeconds(b, c) : 0,
      running_users: n,
      whole_prefill_stall_s: Math.max(...wholeSteps(n, c, p, cached)),
      whole_ttft_s: sum(wholeSteps(n, c, p, cached)),
      chunked_max_step_ms: Math.max(...chunked) * 1e3,
      chunked_ttft_s: sum(chunked),
      disagg_max_step_ms: decodeStepSeconds(n, c) * 1e3,
      disagg_ttft_s: disaggTtft(p, cached),
      prefix_cached_tokens: cachedPrefix(p, PREFIX_NEW_TOKENS),
      prefix_hit_ttft_s: hit,
      prefix_miss_ttft_s: miss,
      prefix_saved_serves: hit > 0 ? Math.floor((miss - hit) / hit) : 0,
      transfer_ms: transferSeconds(p) * 1e3,
      prefill_tflop: prefillFlops(p) / 1e12,
      prefill_gb: prefillBytes(p) / 1e9,
      prefill_s: prefillSeconds(p),
      decode_gb_at_batch: decodeStepBytes(b, c) / 1e9,
      decode_gflop_at_batch: decodeStepFlops(b, c) / 1e9,
      decode_compute_bound_at_batch: computeBound(decodeStepBytes(b, c), decodeStepFlops(b, c)) ? 1 : 0,
      prefill_compute_bound: computeBound(prefillBytes(p), prefillFlops(p)) ? 1 : 0,
      kv_mb_per_request: bytesPerRequest(c) / 1e6,
      kv_gb_at_batch: b * bytesPerRequest(c) / 1e9,
    };
  }
