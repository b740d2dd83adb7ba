
  // ---- techniques.py: the earlier lessons' techniques as changes to one step (the frontier's switches) ----
  const TECH = DATA.techniques;  // null when the build had no config/techniques.json
  function stepModel(t) {
    const linear = K.linear_weight_params;
    const wb = t.weight_bytes == null ? K.weight_bytes : t.weight_bytes;
    const kvb = t.kv_bytes == null ? K.kv_cache_bytes : t.kv_bytes;
    const fast = !!t.fp8_compute && K.peak_fp8_flops != null;
    const routed = EXPERTS ? K.routed_expert_params : 0;  // a mixture of experts' routed experts (techniques.py)
    const activeLinear = EXPERTS ? linear - routed + K.num_experts_per_tok * K.moe_expert_params : linear;
    // a request's fixed-size memory: the DeltaNet state in its own format, the window layers' KV in the cache's
    const recurrent = WINDOW ? K.recurrent_state_bytes_per_request : K.state_bytes_per_request;
    const windowKv = WINDOW ? WINDOW * kvb : 0;
    const m = {t, linear, state: recurrent + windowKv, decodeState: 2 * recurrent + windowKv,
      attention: K.attention_flops_per_token_position,
      weightsRead: (K.params_read_per_step - linear) * K.weight_bytes + (linear - routed) * wb,
      weightsTotal: (K.total_params - linear) * K.weight_bytes + (linear - routed) * wb,
      kv: K.kv_elements_per_token * kvb, fastFlops: fast ? 2 * activeLinear : 0,
      peakFast: fast ? K.peak_fp8_flops : K.peak_bf16_flops, peak: K.peak_bf16_flops,
      bandwidth: K.hbm_bandwidth_bytes_per_s, expertBytes: 0};
    if (EXPERTS) {  // a weight format never widens experts the model ships narrower
      const ewb = Math.min(wb, K.expert_weight_bytes);
      m.weightsTotal += routed * ewb;
      m.expertBytes = K.moe_expert_params * ewb;
    }
    m.slowFlops = 2 * ACTIVE_PARAMS - m.fastFlops;
    m.free = K.hbm_bytes - m.weightsTotal - K.runtime_reserve_bytes;
    return m;
  }
  // TechniqueCost.weights_for: the routed experts a step's tokens touch besides what every step reads
  const techWeights = (m, tokens) => (EXPERTS ? m.weightsRead + expertsTouched(tokens) * m.expertBytes : m.weightsRead);
  function techStep(m, b, c, tokens = 1) {
    const n = b * tokens, bytes = techWeights(m, n) + b * (c * m.kv + m.decodeState);
    const compute = n * m.fastFlops / m.peakFast + (n * m.slowFlops + n * c * m.attention) / m.peak;
    return Math.max(bytes / m.bandwidth, compute);
  }
  function techPrefill(m, p) {
    const bytes = techWeights(m, p) + p * m.kv + m.state;
    const compute = p * m.fastFlops / m.peakFast + (p * m.slowFlops + p * p / 2 * m.attention) / m.peak;
    return Math.max(bytes / m.bandwidth, compute);
  }
  function tokensPerVerification(m) {  // (1 - a^(k+1)) / (1 - a), the power by repeated products as in Python
    const k = m.t.draft_tokens, alpha = m.t.acceptance;
    if (alpha >= 1) return k + 1;
    let power = 1;
    for (let i = 0; i < k + 1; i++) power *= alpha;
    return (1 - power) / (1 - alpha);
  }
  function techTpot(m, b, c) {
    const k = m.t.draft_tokens || 0;
    if (k === 0) return techStep(m, b, c);
    const draft = m.t.draft_cost * techStep(m, b, c);
    return (techStep(m, b, c, k + 1) + k * draft) / tokensPerVerification(m);
  }
  const techTtft = (m, p) => techPrefill(m, p) * (1 + ((m.t.draft_tokens || 0) > 0 ? m.t.draft_cost : 0));
  const techMaxBatch = (m, c) => Math.max(0, Math.floor(m.free / (Math.max(c, m.t.reserve_tokens || 0) * m.kv + m.state)));
  function techMaxBatchUnderSlo(m, c, sloS) {
    let lo = 0, hi = techMaxBatch(m, c);
    while (lo < hi) {
      const mid = Math.floor((lo + hi + 1) / 2);
      if (techTpot(m, mid, c) <= sloS) lo = mid; else hi = mid - 1;
    }
    return lo;
  }
  // Each technique's settings in this state: the speculation at the sliders' draft length and acceptance.
  function techniqueSettings(s) {
    const out = {};
    for (const tid of TECH.order) {
      out[tid] = tid === "speculative" ? {...TECH.settings[tid], draft_tokens: s.draft_tokens, acceptance: s.acceptance}
        : TECH.settings[tid];
    }
    return out;
  }
  function techniqueReadouts(t, c, p, sloMs) {
    const m = stepModel(t), cap = techMaxBatch(m, c), nb = techMaxBatchUnderSlo(m, c, sloMs / 1e3);
    const atSlo = nb ? techTpot(m, nb, c) : 0, atCap = cap ? techTpot(m, cap, c) : 0;
    return {ttft_s: techTtft(m, p), tpot_b1_ms: techTpot(m, 1, c) * 1e3, max_batch: cap, slo_batch: nb,
      slo_throughput_tok_s: nb ? nb / atSlo : 0, slo_per_user_tok_s: nb ? 1 / atSlo : 0,
      cap_throughput_tok_s: cap ? cap / atCap : 0};
  }
  function techniqueTable(s) {  // readouts technique.<id>.<name> and .<name>_vs_base (NaN: no ratio to a zero)
    const out = {};
    if (!TECH || s.draft_tokens === undefined) return out;
    const settings = techniqueSettings(s);
    const base = techniqueReadouts(settings.baseline, s.context_tokens, s.prompt_tokens, s.tpot_slo_ms);
    for (const tid of TECH.order) {
      const r = tid === "baseline" ? base : techniqueReadouts(settings[tid], s.context_tokens, s.prompt_tokens, s.tpot_slo_ms);
      for (const name of TECH.readouts) {
        out[`technique.${tid}.${name}`] = r[name];
        if (tid !== "baseline") out[`technique.${tid}.${name}_vs_base`] = base[name] ? r[name] / base[name] : NaN;
      }
    }
    return out;
  }
  function techniqueFrontierRows(s) {  // the chosen technique's (TPOT, throughput) at every batch memory holds
    if (!TECH || !s.technique || s.technique === "baseline") return [];
    const m = stepModel(techniqueSettings(s)[s.technique]), cap = techMaxBatch(m, s.context_tokens), rows = [];
    for (let b = 1; b <= cap; b++) {
      const tpot = techTpot(m, b, s.context_tokens);
      rows.push({batch: b, step_ms: tpot * 1e3, throughput_tok_s: b / tpot, label: TECH.labels[s.technique],
        is_cap: b === cap});
    }
    return rows;
  }
