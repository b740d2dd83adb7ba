  // ---- simulation.py: simulate(), the components wired for one run ---------------------------------------------
  const LESSON_PRESETS = {whole: "orca", chunked: "sarathi", disagg: "disagg"};
  const SCHEDULES = ["whole", "chunked", "disagg"], PRESETS = ["orca", "sarathi", "vllm-v1", "vllm-v0", "disagg"];
  const PAGED_PRESETS = PRESETS.filter((p) => p !== "disagg" && lookup("scheduler", p).paged_by_default);
  function engines() {
    const others = Object.keys(REGISTRIES.scheduler).filter((s) => !s.startsWith("disagg."));
    return [...new Set(SCHEDULES.concat(PRESETS, others))];
  }
  // reqs: {arrival_s, prompt_tokens, output_tokens} (arrays, sorted by arrival). opts as simulate()'s keywords:
  // chunk_tokens, max_batch, prefill_gpus, decode_gpus, capacity_bytes, max_num_batched_tokens, first_token,
  // efficiency {flops_fraction, bandwidth_fraction, overhead_s}, paged, memory {block_size,
  // gpu_memory_utilization}, max_concurrency, prefix_caching (reqs then carries segments: per request its prompt's
  // [content id, tokens] runs, and answer_ids, each output's content id; default -(i + 1)), class_budget
  // [threshold, long tokens] (admission by request class; sarathi, vllm-v1, llama.cpp), release_delay_s (with
  // max_concurrency: per request the client's turnaround after the finish that frees its slot, loop.py), step_model
  // (colocated: a StepModel or its fields, stepcost.js; Python's simulate(step_cost=) with a fitted model).
  // simulation.py's _checked_class_budget: simulate()'s class_budget, refused for a schedule without a token budget
  // or outside that budget
  function checkedClassBudget([threshold, longTokens], scheduler, preset, schedule) {
    if (!["sarathi", "vllm-v1", "llama.cpp"].includes(preset)) throw new Error(`class_budget applies to the schedules with a token budget per iteration (sarathi, vllm-v1, llama.cpp), not ${schedule}`);
    const budget = preset === "sarathi" ? scheduler.chunk_tokens : scheduler.token_budget;
    if (!(threshold >= 1 && longTokens >= 1 && longTokens < budget)) throw new Error(`class_budget: the threshold must be at least 1 token and the long prompts' share between 1 and the iteration's budget (${budget}) less one, not ${threshold}, ${longTokens}`);
    return [Math.trunc(threshold), Math.trunc(longTokens)];
  }
  // simulation.py's _prefix_contents (with Requests.contents' check): the requests' segments and answers for
  // prefix caching, refused where it is not modelled
  function prefixContents(reqs, prompt, colocated, paged, preset, schedule) {
    const n = prompt.length;
    if (!colocated) throw new Error("prefix caching is modelled on the colocated schedules, not P/D");
    if (!paged && preset !== "llama.cpp") throw new Error(`prefix caching follows vLLM (paged memory: paged=True) or llama.cpp's slots (schedule llama.cpp), not ${schedule} with reserved contexts`);
    if (!reqs.segments || reqs.segments.length !== n) throw new Error("prefix caching needs requests that carry their prompts' segments");
    const answers = reqs.answer_ids ? Array.from(reqs.answer_ids) : Array.from({length: n}, (_, i) => -(i + 1));
    for (let i = 0; i < n; i++) {
      let total = 0, ok = true;
      for (const seg of reqs.segments[i]) { total += seg[1]; ok = ok && seg[1] >= 1; }
      if (total !== prompt[i] || !ok) throw new Error(`request ${i}: its segments hold ${total} tokens, its prompt ${prompt[i]} (each segment at least 1)`);
    }
    return [reqs.segments, answers];
  }
  function simulate(model, gpu, reqs, schedule, opts = {}) {
    const o = {chunk_tokens: 512, max_batch: null, prefill_gpus: 1, decode_gpus: 1, capacity_bytes: null,
      max_num_batched_tokens: null, first_token: "decode", efficiency: {flops_fraction: 1, bandwidth_fraction: 1, overhead_s: 0},
      paged: null, memory: {block_size: 16, gpu_memory_utilization: 0.9}, max_concurrency: null, prefix_caching: false, class_budget: null,
      release_delay_s: null, step_model: null, ...opts};
    const names = engines();
    if (!names.includes(schedule)) throw new Error(`schedule must be one of ${names.join(", ")}`);
    if (!["decode", "prefill"].includes(o.first_token)) throw new Error("first_token must be one of decode, prefill");
    const preset = LESSON_PRESETS[schedule] || schedule, colocated = preset !== "disagg";
    const rule = lookup("scheduler", colocated ? preset : "disagg.decode");
    const paged = o.paged === null ? rule.paged_by_default : o.paged;
    const arrivalIn = Array.from(reqs.arrival_s), prompt = Array.from(reqs.prompt_tokens), output = Array.from(reqs.output_tokens);
    const n = arrivalIn.length;
    const scheduler = rule.configure(model, gpu, {prompt, output}, {...o, paged});
    if (o.class_budget !== null) scheduler.class_budget = checkedClassBudget(o.class_budget, scheduler, preset, schedule);
    if (o.max_concurrency !== null && (o.max_concurrency < 1 || !colocated)) throw new Error("max_concurrency must be at least 1 and applies to the colocated schedules");
    if (o.release_delay_s !== null && (o.max_concurrency === null || o.release_delay_s.length !== n
        || !Array.from(o.release_delay_s).every((d) => Number.isFinite(d) && d >= 0))) {
      throw new Error("release_delay_s: one finite delay of at least 0 s per request, with max_concurrency");
    }
    if (o.chunk_tokens < 1 || scheduler.max_batch < 1 || o.prefill_gpus < 1 || o.decode_gpus < 1 || scheduler.token_budget < 1) {
      throw new Error("chunk_tokens, max_batch, max_num_batched_tokens and the GPU counts must be at least 1");
    }
    const prefix = o.prefix_caching ? prefixContents(reqs, prompt, colocated, paged, preset, schedule) : null;
    const mem = paged ? o.memory : null;
    let capacity;
    if (o.capacity_bytes !== null) capacity = o.capacity_bytes;
    else if (paged) capacity = o.memory.gpu_memory_utilization * gpu.hbm_bytes - model.weight_bytes_total - model.runtime_reserve_bytes;
    else capacity = gpu.hbm_bytes - model.weight_bytes_total - model.runtime_reserve_bytes;
    if (capacity <= 0) throw new Error(`no memory is left for requests (${(capacity / 1e9).toFixed(1)} GB after the weights and reserve)`);
    if (o.step_model !== null && !colocated) throw new Error("step_cost applies to the colocated schedules and replaces `efficiency`");
    const step = stepCostFor(model, gpu, o.efficiency, o.step_model);
    const nan = () => new Float64Array(n).fill(NaN), neg = () => new Float64Array(n).fill(-1);
    const out = {admitted_s: nan(), first_token_s: nan(), finish_s: nan(), dec_first: neg(), dec_last: neg(),
      seg_start: neg(), own_prefill_s: new Float64Array(n), transfer_end_s: nan(), join_s: nan(),
      preemptions: new Float64Array(n), preempt_pre_s: new Float64Array(n), preempt_dec_s: new Float64Array(n),
      send_s: Float64Array.from(arrivalIn), cached_tokens: new Float64Array(n), pieces: {}};
    let gpuOf, runs, peak, heldPeakBytes = 0, ready, arrival = arrivalIn;
    if (colocated) {
      const loop = new GpuLoop(step, scheduler, kvManager(model, capacity, mem, prefix, scheduler.max_batch), o.max_concurrency,
        o.release_delay_s);
      runs = [loop.run(arrivalIn, prompt, output, out, null)];
      arrival = Array.from(out.send_s);
      gpuOf = new Float64Array(n);
      peak = loop.peak;
      ready = out.admitted_s;
    } else {
      [gpuOf, runs, peak, heldPeakBytes, ready] = runDisagg(model, step, arrivalIn, prompt, output, out,
        {...o, capacity, memory: mem, max_batch: scheduler.max_batch});
    }
    const workTo = Float64Array.from(out.dec_last);
    for (let i = 0; i < n; i++) if (out.dec_last[i] < out.dec_first[i]) { out.dec_first[i] = -1; out.dec_last[i] = -1; }
    const parts = breakdown(arrival, ready, out, workTo, gpuOf, runs, !colocated);
    let cached = null, saved = null;
    if (prefix !== null) {
      cached = out.cached_tokens;
      saved = new Float64Array(n);
      for (let i = 0; i < n; i++) {
        const p = prompt[i], c = cached[i];
        if (c) saved[i] = step.cost.seconds(0, 0.0, [[0, p]]) - step.cost.seconds(0, 0.0, [[c, p - c]]);
      }
    }
    return {arrival_s: arrival, prompt_tokens: prompt, output_tokens: output, admitted_s: out.admitted_s,
      first_token_s: out.first_token_s, finish_s: out.finish_s, preemptions: out.preemptions, breakdown: parts,
      peak_reserved_bytes: peak, capacity_bytes: capacity, prefill_held_peak_bytes: heldPeakBytes,
      cached_tokens: cached, prefill_saved_s: saved};
  }
