  // ---- roofline.py -------------------------------------------------------------------------
  const stepSeconds = (bytes, flops) => Math.max(bytes / K.hbm_bandwidth_bytes_per_s, flops / K.peak_bf16_flops);
  const computeBound = (bytes, flops) => flops / K.peak_bf16_flops > bytes / K.hbm_bandwidth_bytes_per_s;
  // a mixture of experts (K.num_experts; absent for a dense model) reads the experts its step's tokens touch,
  // E (1 - (1 - k/E)^tokens) per MoE layer (roofline.weight_bytes_read = IterationCost.weights_for), and each token
  // multiplies by its active parameters only
  const EXPERTS = K.num_experts || 0;
  const EXPERT_KEEP = EXPERTS ? 1.0 - K.num_experts_per_tok / EXPERTS : 1;  // the chance a token skips an expert
  const EXPERT_BYTES = EXPERTS ? K.moe_expert_params * K.expert_weight_bytes : 0;  // one expert, every MoE layer
  // sizes.expected_experts_touched: the distinct experts `tokens` tokens read per MoE layer
  const expertsTouched = (tokens) => (EXPERTS && tokens > 0 ? EXPERTS * (1.0 - EXPERT_KEEP ** tokens) : 0);
  const weightBytesRead = (tokens) => (EXPERTS ?
    K.weight_bytes_read_per_step + expertsTouched(tokens) * EXPERT_BYTES : K.weight_bytes_read_per_step);
  const ACTIVE_PARAMS = EXPERTS ? K.active_params_per_token : K.params_read_per_step;
  // sizes.decode_state_bytes: a decode step reads and writes the DeltaNet state, reads a window's KV once
  const WINDOW = K.window_kv_elements_per_request || 0;  // absent without sliding-window layers
  const DECODE_STATE = WINDOW ? K.decode_state_bytes : 2 * K.state_bytes_per_request;
  const decodeStepBytes = (b, c) => weightBytesRead(b) + b * (c * K.kv_bytes_per_token + DECODE_STATE);
  const decodeStepFlops = (b, c) => 2 * ACTIVE_PARAMS * b + b * c * K.attention_flops_per_token_position;
  const decodeStepSeconds = (b, c) => stepSeconds(decodeStepBytes(b, c), decodeStepFlops(b, c));
  const bytesPerRequest = (c) => c * K.kv_bytes_per_token + K.state_bytes_per_request;
  const maxBatchByMemory = (c) => Math.max(0, Math.floor(K.free_bytes_for_requests / bytesPerRequest(c)));
  function maxBatchUnderSlo(c, sloS) {
    const cap = maxBatchByMemory(c);
    if (EXPERTS) return largestBatchWithin(c, sloS, cap);
    const byBytes = (sloS * K.hbm_bandwidth_bytes_per_s - K.weight_bytes_read_per_step) /
      (c * K.kv_bytes_per_token + DECODE_STATE);
    const byFlops = sloS * K.peak_bf16_flops / (2 * K.params_read_per_step + c * K.attention_flops_per_token_position);
    return Math.max(0, Math.min(cap, Math.floor(Math.min(byBytes, byFlops))));
  }
  function largestBatchWithin(c, sloS, cap) {  // roofline._largest_batch_within: the step only lengthens with b
    if (cap < 1 || decodeStepSeconds(1, c) > sloS) return 0;
    let lo = 1, hi = cap;
    while (lo < hi) {
      const mid = Math.floor((lo + hi + 1) / 2);
      if (decodeStepSeconds(mid, c) <= sloS) lo = mid; else hi = mid - 1;
    }
    return lo;
  }
  const prefillFlops = (p) => 2 * ACTIVE_PARAMS * p + p * p / 2 * K.attention_flops_per_token_position;
  const prefillBytes = (p) => weightBytesRead(p) + p * K.kv_bytes_per_token + K.state_bytes_per_request;
  const prefillSeconds = (p) => stepSeconds(prefillBytes(p), prefillFlops(p));
  function mixedStepSeconds(n, c, chunk, start) {
    // a prompt's first chunk only writes the recurrent state (it starts at zero); a later one reads and writes it
    let bytes = decodeStepBytes(n, c) + (start + chunk) * K.kv_bytes_per_token +
      (start === 0 ? 1 : 2) * K.state_bytes_per_request;
    if (EXPERTS) bytes += weightBytesRead(n + chunk) - weightBytesRead(n);  // the chunk's tokens touch more experts
    const pairs = chunk * start + chunk * chunk / 2;
    const flops = decodeStepFlops(n, c) + 2 * ACTIVE_PARAMS * chunk + pairs * K.attention_flops_per_token_position;
    return stepSeconds(bytes, flops);
  }
  const transferSeconds = (p) => bytesPerRequest(p) / K.pd_link_bytes_per_s;
