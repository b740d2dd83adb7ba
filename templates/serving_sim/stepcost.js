  // ---- stepcost.py: how long one iteration takes (roofline.py IterationCost on the anchor as achieved) ----------
  // model: weight_bytes_read_per_step, params_read_per_step, kv_bytes_per_token, state_bytes_per_request,
  // attention_flops_per_token_position, weight_bytes_total, runtime_reserve_bytes, pd_link_bytes_per_s,
  // max_position_embeddings (a mixture of experts: active_params_per_token, num_experts, expert_keep, expert_bytes,
  // twin.expert_constants); gpu: hbm_bytes, hbm_bandwidth_bytes_per_s, peak_bf16_flops, name.
  function iterationCost(m, bandwidth, peakFlops) {
    // a decode step reads and writes the DeltaNet state, reads the window layers' KV once (twin.window_constants)
    const window = m.window_kv_bytes || 0, kv = m.kv_bytes_per_token, weights = m.weight_bytes_read_per_step;
    const state = window ? m.recurrent_state_bytes_per_request : m.state_bytes_per_request;
    const experts = m.num_experts || 0, keep = m.expert_keep, expertBytes = m.expert_bytes;
    const dense = 2 * (experts ? m.active_params_per_token : m.params_read_per_step);
    const attention = m.attention_flops_per_token_position;
    // IterationCost.weights_for: the experts a step's tokens touch, E (1 - (1 - k/E)^tokens) per MoE layer
    const weightsFor = (tokens) => experts ? weights + experts * (1.0 - keep ** tokens) * expertBytes : weights;
    const bytes = (dec, dcs, pkv, passes, ptokens) => weightsFor(dec + ptokens) + (dcs + pkv) * kv +
      (2 * dec + passes) * state + (dec + passes) * window;
    const flops = (dec, dcs, ptokens, pairs) => dense * (dec + ptokens) + (dcs + pairs) * attention;
    return {
      seconds(dec, dcs, chunks) {  // chunks: [[start, length], ...], one per request
        let kvTokens = 0, pairs = 0, tokens = 0, passes = 0;
        if (chunks) {
          for (const [start, length] of chunks) {
            kvTokens = kvTokens + (start + length);
            pairs = pairs + (length * start + length * length / 2);
            tokens = tokens + length;
            passes += start === 0 ? 1 : 2;  // roofline.state_passes
          }
        }
        return Math.max(bytes(dec, dcs, kvTokens, passes, tokens) / bandwidth,
          flops(dec, dcs, tokens, pairs) / peakFlops);
      },
      decode(dec, dcs) {
        return Math.max(bytes(dec, dcs, 0, 0, 0) / bandwidth, flops(dec, dcs, 0, 0) / peakFlops);
      },
      // IterationCost.decode_run: `steps` pure-decode iterations of `dec` requests whose contexts sum to csum and
      // grow by one token each: each duration (+ overhead) into durs, their running sum (numpy's cumsum) into cums
      decodeRun(dec, csum, steps, overhead, durs, cums) {
        let acc = 0;
        for (let s = 0; s < steps; s++) {
          durs[s] = this.decode(dec, csum + s * dec) + overhead;
          acc += durs[s];
          cums[s] = acc;
        }
      },
      prefill(prompt) {  // roofline.prefill_seconds
        const b = weightsFor(prompt) + prompt * kv + (state + window);  // state_bytes_per_request: both parts
        const f = dense * prompt + prompt * prompt / 2 * attention;
        return Math.max(b / bandwidth, f / peakFlops);
      },
    };
  }
  const bytesPerRequest = (m, context) => context * m.kv_bytes_per_token + m.state_bytes_per_request;

  // The step-cost models: the roofline bound, and the roofline at achieved shares of the peaks plus an overhead per
  // iteration (`measured`, a real engine's fitted steps, is the Python side's alone: the page has no measured engine).
  class Roofline {
    constructor(model, gpu) {
      this.model = model;
      this.cost = iterationCost(model, gpu.hbm_bandwidth_bytes_per_s, gpu.peak_bf16_flops);
      this.overhead_s = 0;
    }
  }
  register("step_cost", "roofline", Roofline);
  class Derated {
    constructor(model, gpu, eff) {
      this.model = model;
      this.cost = iterationCost(model, gpu.hbm_bandwidth_bytes_per_s * eff.bandwidth_fraction,
        gpu.peak_bf16_flops * eff.flops_fraction);
      this.overhead_s = eff.overhead_s;
    }
  }
  register("step_cost", "derated", Derated);
  function stepCostFor(model, gpu, eff) {
    const bound = eff.flops_fraction === 1 && eff.bandwidth_fraction === 1 && eff.overhead_s === 0;
    return bound ? new Roofline(model, gpu) : new Derated(model, gpu, eff);
  }
