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

  // ---- scripts/realengine/analyses/stepmodel.py StepModel, the part a device's calibration fits (the lab,
  // templates/lab/calibration.js fitStepModel; P/D is refused with it, so it needs no prefill): seconds = D(decoders) + sum over prompt chunks (a + b x length + c x (length x start +
  // length^2 / 2)) + attention x (decoders' contexts); D piecewise linear through its knots (running requests,
  // from 1, increasing; seconds non-decreasing), linear past the last, D(0) = 0. The cached-context and ubatch
  // terms are the real engine's (Python's alone): a model that sets them is refused here. Same operations in the
  // same order as the Python, so the two agree to the last bits or nearly (tests/test_lab_steps.py).
  class StepModel {
    constructor(d) {
      const k = d.decode_batch, v = d.decode_seconds;
      const bad = k.length < 2 || k.length !== v.length || k[0] !== 1 || v[0] <= 0
        || k.some((x, i) => i > 0 && x <= k[i - 1]) || v.some((x, i) => i > 0 && x < v[i - 1]);
      if (bad) throw new Error("step model: D needs at least two knots from 1, increasing, with positive non-decreasing seconds");
      const costs = ["prompt_chunk_s", "prompt_token_s", "prompt_pair_s", "attention_s_per_token", "request_overhead_s"];
      if (!costs.every((c) => Number.isFinite(d[c]) && d[c] >= 0)) throw new Error("step model: the prompt, attention and overhead costs must be >= 0");
      if (d.prompt_context_s || d.prompt_context_pair_s || (d.ubatch_seconds && d.ubatch_seconds.length)) {
        throw new Error("step model: the cached-context and ubatch terms are the real engine's; the page's twin has neither");
      }
      Object.assign(this, {knots: Float64Array.from(k), knotSeconds: Float64Array.from(v), a: d.prompt_chunk_s,
        b: d.prompt_token_s, c: d.prompt_pair_s, attention: d.attention_s_per_token,
        request_overhead_s: d.request_overhead_s});
    }
    D(m) {  // StepModel.decode: numpy.interp inside the knots, the last segment's slope past them
      const k = this.knots, v = this.knotSeconds, last = k.length - 1;
      if (m <= 0) return 0;
      if (m > k[last]) return v[last] + (m - k[last]) * ((v[last] - v[last - 1]) / (k[last] - k[last - 1]));
      if (m <= k[0]) return v[0];
      let j = 1;
      while (k[j] < m) j++;
      if (m === k[j]) return v[j];
      const slope = (v[j] - v[j - 1]) / (k[j] - k[j - 1]);
      return slope * (m - k[j - 1]) + v[j - 1];  // numpy.interp's formula
    }
    chunk(start, length) { return this.a + this.b * length + this.c * (length * start + length * length / 2); }
    seconds(dec, dcs, chunks) {  // chunks: [[start, length], ...]
      let t = this.D(dec);
      if (chunks) { let s = 0; for (const [start, length] of chunks) s += this.chunk(start, length); t += s; }
      return t + this.attention * dcs;
    }
    decode(dec, dcs) { return this.D(dec) + this.attention * dcs; }
    decodeRun(dec, csum, steps, overhead, durs, cums) {  // as iterationCost's: durations and their running sum
      const base = this.D(dec);
      let acc = 0;
      for (let s = 0; s < steps; s++) {
        durs[s] = base + this.attention * (csum + s * dec) + overhead;
        acc += durs[s];
        cums[s] = acc;
      }
    }
  }

  // The step-cost models: the roofline bound, the roofline at achieved shares of the peaks plus an overhead per
  // iteration, and a device's measured steps (`measured`: a StepModel, whose fit already holds the overhead).
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
  class Measured {
    constructor(model, stepModel) {
      this.model = model;
      this.cost = stepModel instanceof StepModel ? stepModel : new StepModel(stepModel);
      this.overhead_s = 0;
    }
  }
  register("step_cost", "measured", Measured);
  function stepCostFor(model, gpu, eff, stepModel = null) {  // stepcost.step_cost_for
    if (stepModel !== null) return new Measured(model, stepModel);
    const bound = eff.flops_fraction === 1 && eff.bandwidth_fraction === 1 && eff.overhead_s === 0;
    return bound ? new Roofline(model, gpu) : new Derated(model, gpu, eff);
  }
