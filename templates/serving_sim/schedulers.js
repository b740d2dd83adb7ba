  // ---- schedulers.py: an engine's iteration rule, one class per engine by name ----------------------------------
  const GIB = 2 ** 30, UNCAPPED = 2 ** 30;
  function vllmV1Defaults(hbmBytes, gpuName) {
    if (hbmBytes >= 70 * GIB && !String(gpuName || "").toLowerCase().includes("a100")) return [8192, 1024];
    return [2048, 256];
  }
  class Scheduler {  // FCFS continuous batching: decodes every iteration, prompt tokens FCFS up to iterationBudget
    constructor(maxBatch = UNCAPPED, tokenBudget = Infinity, chunkTokens = 512) {
      this.max_batch = maxBatch;
      this.token_budget = tokenBudget;
      this.chunk_tokens = chunkTokens;
      this.class_budget = null;  // [threshold, long tokens]: admission by request class (schedulers.py)
    }
    static configure(model, gpu, reqs, o) {
      return new this(o.max_batch === null || o.max_batch === undefined ? UNCAPPED : o.max_batch, Infinity, o.chunk_tokens);
    }
    iterationBudget() { return Infinity; }
    prefillChunks(prefilling, pfLen, donePrefill, decoding) {  // [request, first token, length] per chunk
      const chunks = [];
      let budget = this.iterationBudget(decoding);
      if (this.class_budget !== null) return this.classChunks(prefilling, pfLen, donePrefill, budget);
      for (const i of prefilling) {
        const length = Math.min(budget, pfLen[i] - donePrefill[i]);
        if (length <= 0) break;
        chunks.push([i, donePrefill[i], length]);
        budget -= length;
        if (budget <= 0) break;
      }
      return chunks;
    }
    classChunks(prefilling, pfLen, donePrefill, budget) {  // long prompts also draw on their class's share
      const [threshold, longTokens] = this.class_budget, chunks = [];
      let longLeft = longTokens;
      for (const i of prefilling) {
        const isLong = pfLen[i] >= threshold;
        const length = isLong ? Math.min(budget, pfLen[i] - donePrefill[i], longLeft) : Math.min(budget, pfLen[i] - donePrefill[i]);
        if (length <= 0) {
          if (isLong && budget > 0) continue;
          break;
        }
        chunks.push([i, donePrefill[i], length]);
        budget -= length;
        if (isLong) longLeft -= length;
        if (budget <= 0) break;
      }
      return chunks;
    }
    static victim(running, admitSeq) {  // the latest admitted (vLLM V1's _schedule_running: running.pop())
      let victim = running[0];
      for (const i of running) if (admitSeq[i] > admitSeq[victim]) victim = i;
      return victim;
    }
  }
  Scheduler.paged_by_default = false;
  Scheduler.decodes_with_prefill = true;
  class Orca extends Scheduler {}
  register("scheduler", "orca", Orca);
  class Sarathi extends Scheduler {
    iterationBudget() { return this.chunk_tokens; }
  }
  register("scheduler", "sarathi", Sarathi);
  class VllmV1 extends Scheduler {
    static configure(model, gpu, reqs, o) {
      const [defTokens, defSeqs] = vllmV1Defaults(gpu.hbm_bytes, gpu.name);
      const budget = o.max_num_batched_tokens || defTokens, maxBatch = o.max_batch || Math.min(defSeqs, budget);
      this.checkBudget(maxBatch, budget);
      return new this(maxBatch, budget, o.chunk_tokens);
    }
    static checkBudget(maxBatch, budget) {
      if (maxBatch > budget) throw new Error(`${this.registeredName}: max_num_seqs (${maxBatch}) must not exceed max_num_batched_tokens (${budget})`);
    }
    iterationBudget(decoding) { return this.token_budget - decoding; }
  }
  VllmV1.paged_by_default = true;
  register("scheduler", "vllm-v1", VllmV1);
  class LlamaCpp extends VllmV1 {  // vLLM V1's rule with -b and -np, both required; contexts reserved whole
    static configure(model, gpu, reqs, o) {
      if (!o.max_batch || !o.max_num_batched_tokens) throw new Error("llama.cpp: give the server's -np as max_batch and its -b as max_num_batched_tokens");
      this.checkBudget(o.max_batch, o.max_num_batched_tokens);
      return new this(o.max_batch, o.max_num_batched_tokens, o.chunk_tokens);
    }
  }
  LlamaCpp.paged_by_default = false;
  register("scheduler", "llama.cpp", LlamaCpp);
  class VllmV0 extends Scheduler {  // prefill-only iterations of whole prompts FCFS within the budget
    static configure(model, gpu, reqs, o) {
      const budget = o.max_num_batched_tokens || model.max_position_embeddings, maxBatch = o.max_batch || 256;
      let longest = 0;
      for (let i = 0; i < reqs.prompt.length; i++) longest = Math.max(longest, reqs.prompt[i] + (o.paged ? reqs.output[i] - 1 : 0));
      if (budget < longest) throw new Error(`vllm-v0: max_num_batched_tokens (${budget}) is shorter than the longest prompt (${longest})`);
      return new this(maxBatch, budget, o.chunk_tokens);
    }
    prefillChunks(prefilling, pfLen, donePrefill) {
      const chunks = [];
      let budget = this.token_budget;
      for (const i of prefilling) {
        const left = pfLen[i] - donePrefill[i];
        if (chunks.length && left > budget) break;
        if (left <= 0) break;
        chunks.push([i, donePrefill[i], left]);
        budget -= left;
        if (budget <= 0) break;
      }
      return chunks;
    }
  }
  VllmV0.paged_by_default = true;
  VllmV0.decodes_with_prefill = false;
  register("scheduler", "vllm-v0", VllmV0);
  class DisaggDecode extends Orca {}  // P/D's decode side: handed-over requests admitted FCFS, KV pulled, decoded
  register("scheduler", "disagg.decode", DisaggDecode);
