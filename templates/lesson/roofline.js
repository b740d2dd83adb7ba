
  // ---- roofline.py -------------------------------------------------------------------------
  const stepSeconds = (bytes, flops) => Math.max(bytes / K.hbm_bandwidth_bytes_per_s, flops / K.peak_bf16_flops);
  const decodeStepBytes = (b, c) => K.weight_bytes_read_per_step + b * (c * K.kv_bytes_per_token + 2 * K.state_bytes_per_request);
  const decodeStepFlops = (b, c) => 2 * K.params_read_per_step * b + b * c * K.attention_flops_per_token_position;
  const decodeStepSeconds = (b, c) => stepSeconds(decodeStepBytes(b, c), decodeStepFlops(b, c));
  const bytesPerRequest = (c) => c * K.kv_bytes_per_token + K.state_bytes_per_request;
  const maxBatchByMemory = (c) => Math.max(0, Math.floor(K.free_bytes_for_requests / bytesPerRequest(c)));
  function maxBatchUnderSlo(c, sloS) {
    const cap = maxBatchByMemory(c);
    const byBytes = (sloS * K.hbm_bandwidth_bytes_per_s - K.weight_bytes_read_per_step) /
      (c * K.kv_bytes_per_token + 2 * K.state_bytes_per_request);
    const byFlops = sloS * K.peak_bf16_flops / (2 * K.params_read_per_step + c * K.attention_flops_per_token_position);
    return Math.max(0, Math.min(cap, Math.floor(Math.min(byBytes, byFlops))));
  }
  const prefillFlops = (p) => 2 * K.params_read_per_step * p + p * p / 2 * K.attention_flops_per_token_position;
  const prefillBytes = (p) => K.weight_bytes_read_per_step + p * K.kv_bytes_per_token + K.state_bytes_per_request;
  const prefillSeconds = (p) => stepSeconds(prefillBytes(p), prefillFlops(p));
  function mixedStepSeconds(n, c, chunk, start) {
    // a prompt's first chunk only writes the recurrent state (it starts at zero); a later one reads and writes it
    const bytes = decodeStepBytes(n, c) + (start + chunk) * K.kv_bytes_per_token +
      (start === 0 ? 1 : 2) * K.state_bytes_per_request;
    const pairs = chunk * start + chunk * chunk / 2;
    const flops = decodeStepFlops(n, c) + 2 * K.params_read_per_step * chunk + pairs * K.attention_flops_per_token_position;
    return stepSeconds(bytes, flops);
  }
  const transferSeconds = (p) => bytesPerRequest(p) / K.pd_link_bytes_per_s;
