  // ---- disagg.py: P prefill GPUs, D decode GPUs ----------------------------------------------------------------
  class PrefillPool {  // one prompt at a time per prefill GPU, FCFS, on the least busy
    constructor(step, gpus, capacity) { this.step = step; this.gpus = gpus; this.capacity = capacity; }
    serve(arrival, prompt) {
      const n = arrival.length, start = new Float64Array(n), end = new Float64Array(n), where = new Float64Array(n);
      const freeAt = new Float64Array(this.gpus), model = this.step.model;
      for (let i = 0; i < n; i++) {
        if (bytesPerRequest(model, prompt[i]) > this.capacity) throw new Error(`a ${prompt[i]}-token prompt does not fit on a prefill GPU`);
        let gi = 0;
        for (let k = 1; k < this.gpus; k++) if (freeAt[k] < freeAt[gi]) gi = k;
        start[i] = Math.max(arrival[i], freeAt[gi]);
        end[i] = freeAt[gi] = start[i] + this.step.cost.prefill(prompt[i]) + this.step.overhead_s;
        where[i] = gi;
      }
      return [start, end, where];
    }
  }
  register("scheduler", "disagg.prefill", PrefillPool);

  function heldPeak(model, prompt, start, release, where) {  // the most KV one prefill GPU holds at once
    let peak = 0;
    const gpus = [...new Set(where)].sort((a, b) => a - b);
    for (const g of gpus) {
      const ev = [];
      for (let i = 0; i < prompt.length; i++) {
        if (where[i] !== g) continue;
        const size = bytesPerRequest(model, prompt[i]);
        ev.push([start[i], size], [release[i], -size]);
      }
      ev.sort((x, y) => x[0] - y[0] || x[1] - y[1]);  // numpy.lexsort((delta, times)); ties keep no order
      let acc = 0, best = 0;
      for (const [, d] of ev) { acc += d; if (acc > best) best = acc; }
      peak = Math.max(peak, best);
    }
    return peak;
  }

  // Both sides, filling `out`: [each request's decode GPU, the decode GPUs' runs, their peak, the held peak, starts]
  function runDisagg(model, step, arrival, prompt, output, out, o) {
    const n = arrival.length, P = o.prefill_gpus, D = o.decode_gpus;
    const gpuOf = new Float64Array(n);
    for (let i = 0; i < n; i++) gpuOf[i] = i % D;  // vLLM's P/D proxy deals requests round-robin
    const [pfStart, pfEnd, pfGpu] = new PrefillPool(step, P, o.capacity).serve(arrival, prompt);
    const decodeTokens = output.map((x) => (o.first_token === "decode" ? x : x - 1));
    if (o.first_token === "prefill") out.first_token_s.set(pfEnd);
    const runs = [];
    let peak = 0;
    for (let gd = 0; gd < D; gd++) {
      const ids = [];
      for (let i = gd; i < n; i += D) if (decodeTokens[i] > 0) ids.push(i);  // request i decodes on GPU i mod D
      ids.sort((x, y) => pfEnd[x] - pfEnd[y] || x - y);  // numpy's stable argsort
      const sub = {pieces: {}};
      for (const [key, v] of Object.entries(out)) if (key !== "pieces") sub[key] = Float64Array.from(ids, (i) => v[i]);
      const handoff = {transfer_s: ids.map((i) => bytesPerRequest(model, prompt[i]) / model.pd_link_bytes_per_s),
        decode_tokens: ids.map((i) => decodeTokens[i])};
      const loop = new GpuLoop(step, new DisaggDecode(o.max_batch, Infinity, o.chunk_tokens), kvManager(model, o.capacity, o.memory), null);
      const r = loop.run(ids.map((i) => pfEnd[i]), ids.map((i) => prompt[i]), ids.map((i) => output[i]), sub, handoff);
      runs.push(r);
      for (const [key, v] of Object.entries(sub)) {
        if (key === "pieces") { for (const [j, p] of Object.entries(v)) out.pieces[ids[+j]] = p; } else if (key !== "own_prefill_s") ids.forEach((i, j) => { out[key][i] = v[j]; });
      }
      peak = Math.max(peak, r.peak);
    }
    for (let i = 0; i < n; i++) {
      out.own_prefill_s[i] = pfEnd[i] - pfStart[i];
      if (decodeTokens[i] === 0) { out.finish_s[i] = pfEnd[i]; out.admitted_s[i] = pfEnd[i]; }
    }
    const held = heldPeak(model, prompt, pfStart, Array.from({length: n}, (_, i) => (decodeTokens[i] === 0 ? pfEnd[i] : out.transfer_end_s[i])), pfGpu);
    return [gpuOf, runs, peak, held, pfStart];
  }
