// The serving simulator in the browser: a line-by-line twin of scripts/serving/engine.py (simulate, _Gpu.run,
// _prefill_gpus, _held_peak, _breakdown), scripts/model/roofline.py (IterationCost, prefill_seconds,
// transfer_seconds, derated), scripts/serving/workload.py (arrival_times) and the cell summary of
// scripts/serving/aggregate.py (quantize_ms) and sweep.tail_breakdown. Same operations in the same order, so
// its times equal the Python engine's to the last bits or nearly (tests/test_sim_parity.py holds every request's
// first-token and finish times to 1e-9 relative on generated configurations, in Chromium).
// Pure: no DOM. The page loads it as a script (window.C13Sim) and builds its Web Worker from this function's
// source (a Blob), so it runs from file:// too; Node can require() it.
"use strict";
function c13ServingSim() {
  const PARTS = ["queueing_s", "prefill_s", "interference_s", "transfer_s", "decode_s", "preemption_s"];
  const LESSON_PRESETS = {whole: "orca", chunked: "sarathi", disagg: "disagg"};
  const SCHEDULES = ["whole", "chunked", "disagg"], PRESETS = ["orca", "sarathi", "vllm-v1", "vllm-v0", "disagg"];
  const PAGED_PRESETS = ["vllm-v1", "vllm-v0"];
  const GIB = 2 ** 30;

  // ---- roofline.py: one iteration's cost on the anchor as achieved ------------------------------------------
  // model: weight_bytes_read_per_step, params_read_per_step, kv_bytes_per_token, state_bytes_per_request,
  // attention_flops_per_token_position, weight_bytes_total, runtime_reserve_bytes, pd_link_bytes_per_s,
  // max_position_embeddings; gpu: hbm_bytes, hbm_bandwidth_bytes_per_s, peak_bf16_flops, name.
  function iterationCost(m, bandwidth, peakFlops) {
    const weights = m.weight_bytes_read_per_step, kv = m.kv_bytes_per_token, state = m.state_bytes_per_request;
    const dense = 2 * m.params_read_per_step, attention = m.attention_flops_per_token_position;
    const bytes = (dec, dcs, pkv, passes) => weights + (dcs + pkv) * kv + (2 * dec + passes) * state;
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
        return Math.max(bytes(dec, dcs, kvTokens, passes) / bandwidth, flops(dec, dcs, tokens, pairs) / peakFlops);
      },
      decode(dec, dcs) {
        return Math.max(bytes(dec, dcs, 0, 0) / bandwidth, flops(dec, dcs, 0, 0) / peakFlops);
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
        const b = weights + prompt * kv + state;
        const f = dense * prompt + prompt * prompt / 2 * attention;
        return Math.max(b / bandwidth, f / peakFlops);
      },
    };
  }
  const bytesPerRequest = (m, context) => context * m.kv_bytes_per_token + m.state_bytes_per_request;

  function vllmV1Defaults(hbmBytes, gpuName) {
    if (hbmBytes >= 70 * GIB && !String(gpuName || "").toLowerCase().includes("a100")) return [8192, 1024];
    return [2048, 256];
  }

  // A FIFO with push, shift and unshift in O(1) amortised (Python's deque, as engine.py uses it).
  function Deque() {
    let items = [], head = 0;
    return {
      get length() { return items.length - head; },
      at(k) { return items[head + k]; },
      push(x) { items.push(x); },
      shift() {
        const x = items[head++];
        if (head > 1024 && head * 2 > items.length) { items = items.slice(head); head = 0; }
        return x;
      },
      unshift(x) { if (head > 0) items[--head] = x; else items.unshift(x); },
    };
  }

  // ---- engine._Gpu.run ----------------------------------------------------------------------------------
  function runGpu(g, arrival, prompt, output, out, handoff) {
    const n = arrival.length, mem = g.memory, m = g.model;
    const kv = m.kv_bytes_per_token, state = m.state_bytes_per_request, cost = g.cost;
    let need, biggest, blockBytes = 0;
    const blocks = (tokens) => Math.ceil(tokens / mem.block_size);
    if (!mem) {
      need = new Float64Array(n);
      biggest = 0;
      for (let i = 0; i < n; i++) {
        need[i] = bytesPerRequest(m, prompt[i] + output[i]);
        if (need[i] > biggest) biggest = need[i];
      }
    } else {
      blockBytes = mem.block_size * kv;
      need = new Float64Array(n);
      let longest = -Infinity;
      for (let i = 0; i < n; i++) longest = Math.max(longest, prompt[i] + output[i]);
      biggest = n ? blocks(longest) * blockBytes + state : 0;
    }
    if (biggest > g.capacity) {
      throw new Error(`a request needs ${(biggest / 1e9).toFixed(1)} GB, more than the ${(g.capacity / 1e9).toFixed(1)} GB free for requests on one GPU`);
    }
    const queue = Deque(), prefilling = [], transfers = Deque();
    let linkFree = 0;
    const donePrefill = new Float64Array(n), pfLen = Float64Array.from(prompt), admitSeq = new Float64Array(n);
    const resume = new Uint8Array(n), firstPending = new Uint8Array(n), preemptedAt = new Float64Array(n).fill(NaN);
    // The decode batch. Every decode-carrying iteration adds a token to every running request, so contexts and
    // tokens left are kept relative to nIters (the count of those iterations): context = ctxBase + nIters,
    // left = endAt - nIters. Contexts are whole numbers, so their sum is exact in any order, as numpy's is.
    let decIds = [], ctxBase = [], endAt = [], ctxBaseSum = 0, minEnd = Infinity, minDirty = false, pendingFirst = 0;
    let reserved = 0, peak = 0, admitted = 0, t = 0, nxt = 0, finished = 0, seq = 0, slotFreeAt = 0;
    const overhead = g.overhead, pdDecode = !!handoff, prefillOnly = g.schedule === "vllm-v0";
    const startBudget = g.schedule === "chunked" ? g.chunk : g.schedule === "vllm-v0" ? g.budget : Infinity;
    // Each decode-carrying iteration's duration without its prefill work, as a running sum (what _breakdown's
    // cumsum gives): the iteration ends themselves are not kept (the page needs no inter-token gaps).
    let aloneCum = new Float64Array(1024), nAlone = 0, cums = new Float64Array(1024), durs = new Float64Array(1024);
    function pushAlone(d) {
      if (nAlone + 1 >= aloneCum.length) { const grown = new Float64Array(2 * aloneCum.length); grown.set(aloneCum); aloneCum = grown; }
      aloneCum[nAlone + 1] = aloneCum[nAlone] + d;
      nAlone += 1;
    }
    let nIters = 0;

    function finish(ids, when, lastIter) {
      if (nxt - finished >= g.cap) slotFreeAt = when;
      for (const i of ids) {
        out.finish_s[i] = when;
        out.dec_last[i] = lastIter;
        reserved -= need[i];
      }
      admitted -= ids.length;
      finished += ids.length;
    }
    const joining = [[], [], []];
    function startDecoding(i, context, tokens) {
      out.dec_first[i] = out.seg_start[i] = nIters;
      if (Number.isNaN(out.join_s[i])) out.join_s[i] = t;
      joining[0].push(i);
      joining[1].push(context);
      joining[2].push(tokens);
    }
    function joinBatch() {
      for (let k = 0; k < joining[0].length; k++) {
        const base = joining[1][k] - nIters, end = joining[2][k] + nIters;
        decIds.push(joining[0][k]);
        ctxBase.push(base);
        endAt.push(end);
        ctxBaseSum += base;
        if (end < minEnd) minEnd = end;
      }
      for (const part of joining) part.length = 0;
    }
    function removeAt(k) {
      ctxBaseSum -= ctxBase[k];
      decIds.splice(k, 1);
      ctxBase.splice(k, 1);
      endAt.splice(k, 1);
      minDirty = true;
    }
    function leftMin() {  // the fewest tokens any running request has left
      if (minDirty) { minEnd = Infinity; for (const e of endAt) if (e < minEnd) minEnd = e; minDirty = false; }
      return minEnd - nIters;
    }
    function pagedBytes(extra) {
      let b = 0;
      for (let k = 0; k < ctxBase.length; k++) b += blocks(ctxBase[k] + nIters + extra);
      for (const i of prefilling) b += blocks(pfLen[i]);
      for (let k = 0; k < transfers.length; k++) b += blocks(prompt[transfers.at(k)[1]]);
      return b * blockBytes + state * admitted;
    }
    function piecesOf(i) { return (out.pieces[i] = out.pieces[i] || []); }
    function preempt(i) {
      out.preemptions[i] += 1;
      preemptedAt[i] = t;
      const p = prefilling.indexOf(i);
      if (p >= 0) {
        prefilling.splice(p, 1);
        donePrefill[i] = 0;
      } else {
        const k = decIds.indexOf(i), left = endAt[k] - nIters, generated = output[i] - left;
        if (firstPending[i]) {
          firstPending[i] = 0;
          pendingFirst -= 1;
          pfLen[i] = prompt[i];
        } else {
          if (nIters - 1 >= out.seg_start[i]) piecesOf(i).push(["seg", out.dec_first[i], out.seg_start[i], nIters - 1]);
          resume[i] = 1;
          pfLen[i] = prompt[i] + generated;
        }
        donePrefill[i] = 0;
        removeAt(k);
      }
      admitted -= 1;
      queue.unshift(i);
    }
    function headFits(i, used) {
      if (admitted >= g.maxBatch) return false;
      if (!mem) return reserved + need[i] <= g.capacity;
      return used + blocks(pfLen[i]) * blockBytes + state <= g.capacity;
    }
    function emitFirst(when) {
      if (!pendingFirst) return;
      for (const i of decIds) {
        if (firstPending[i]) {
          out.first_token_s[i] = when;
          out.dec_first[i] += 1;
          firstPending[i] = 0;
          pendingFirst -= 1;
        }
      }
    }
    const sumCtx = () => ctxBaseSum + decIds.length * nIters;

    while (finished < n) {
      while (nxt < n && arrival[nxt] <= t && nxt - finished < g.cap) {
        out.send_s[nxt] = Math.max(arrival[nxt], slotFreeAt);
        queue.push(nxt);
        nxt += 1;
      }
      let used = 0, preempted = false;
      if (mem) {
        used = pagedBytes(0);
        while (used > g.capacity) {
          const running = decIds.concat(prefilling);
          if (!running.length) throw new Error("the KV blocks of requests waiting for their transfer exceed the pool");
          let victim = running[0];
          for (const i of running) if (admitSeq[i] > admitSeq[victim]) victim = i;
          preempt(victim);
          preempted = true;
          used = pagedBytes(0);
        }
      }
      while (!preempted && queue.length && headFits(queue.at(0), used)) {
        const i = queue.shift();
        reserved += need[i];
        admitted += 1;
        seq += 1;
        admitSeq[i] = seq;
        if (Number.isNaN(out.admitted_s[i])) out.admitted_s[i] = t;
        if (!Number.isNaN(preemptedAt[i])) {
          if (resume[i]) out.preempt_dec_s[i] += t - preemptedAt[i];
          else out.preempt_pre_s[i] += t - preemptedAt[i];
          preemptedAt[i] = NaN;
          prefilling.push(i);
        } else if (handoff) {
          linkFree = Math.max(linkFree, t) + handoff.transfer_s[i];
          out.transfer_end_s[i] = linkFree;
          transfers.push([linkFree, i]);
        } else {
          prefilling.push(i);
        }
        if (mem) used = pagedBytes(0);
      }
      while (transfers.length && transfers.at(0)[0] <= t) {
        const i = transfers.shift()[1], tokens = handoff.decode_tokens[i];
        firstPending[i] = tokens === output[i] ? 1 : 0;
        pendingFirst += firstPending[i];
        startDecoding(i, prompt[i] + output[i] - tokens, tokens);
      }
      joinBatch();
      peak = Math.max(peak, mem ? pagedBytes(0) : reserved);
      if (!prefilling.length && !decIds.length) {
        if (preempted) continue;
        const upcoming = transfers.length ? [transfers.at(0)[0]] : [];
        if (nxt < n) upcoming.push(arrival[nxt]);
        if (upcoming.length) t = Math.max(t, Math.min(...upcoming));
        continue;
      }
      if (!prefilling.length) {  // a run of pure-decode iterations, up to the next event
        const k = leftMin();
        let steps = k, event = Infinity;
        if (!queue.length && nxt < n && headFits(nxt, used) && nxt - finished < g.cap) event = arrival[nxt];
        if (transfers.length) event = Math.min(event, transfers.at(0)[0]);
        if (mem && pagedBytes(k - 1) > g.capacity) {
          let lo = 0, hi = k - 1;
          while (hi - lo > 1) {
            const mid = Math.floor((lo + hi) / 2);
            if (pagedBytes(mid) <= g.capacity) lo = mid; else hi = mid;
          }
          steps = lo + 1;
        }
        const nd = decIds.length, csum = sumCtx();
        if (event < Infinity) {
          const first = cost.decode(nd, csum) + overhead;
          steps = Math.min(steps, Math.trunc((event - t) / first) + 2);
        }
        if (cums.length < steps) { cums = new Float64Array(Math.max(steps, 2 * cums.length)); durs = new Float64Array(cums.length); }
        cost.decodeRun(nd, csum, steps, overhead, durs, cums);  // t + cums[s]: iteration s's end
        if (event < Infinity) {  // stop at the first iteration starting at or after the event
          let before = t < event ? 1 : 0;  // numpy.searchsorted(starts, event, "left"), starts = [t, ends[:-1]]
          if (before) while (before < steps && t + cums[before - 1] < event) before++;
          steps = Math.max(1, Math.min(steps, before));
        }
        for (let s = 0; s < steps; s++) pushAlone(durs[s]);
        nIters += steps;
        if (pdDecode) emitFirst(t + cums[0]);
        t = t + cums[steps - 1];
      } else {  // one iteration with prefill work
        const chunks = [];
        let budget = g.schedule === "vllm-v1" ? g.budget - decIds.length : startBudget;
        for (const i of prefilling) {
          const left = pfLen[i] - donePrefill[i];
          if (prefillOnly && chunks.length && left > budget) break;
          const length = prefillOnly ? left : Math.min(budget, left);
          if (length <= 0) break;
          chunks.push([i, donePrefill[i], length]);
          budget -= length;
          if (budget <= 0) break;
        }
        const decoders = prefillOnly ? 0 : decIds.length;
        const ctxSum = decoders ? sumCtx() : 0;
        const d = cost.seconds(decoders, ctxSum, chunks.map((c) => [c[1], c[2]])) + overhead;
        t += d;
        if (decoders) {
          pushAlone(cost.decode(decoders, ctxSum) + overhead);
          nIters += 1;
          if (pdDecode) emitFirst(t);
        }
        for (const [i, s, ln] of chunks) {
          if (resume[i] || handoff) out.preempt_dec_s[i] += d;
          else out.own_prefill_s[i] += d;
          donePrefill[i] = s + ln;
          if (donePrefill[i] === pfLen[i]) {
            prefilling.splice(prefilling.indexOf(i), 1);
            const left = output[i] - (pfLen[i] - prompt[i]) - 1;
            if (resume[i]) {
              piecesOf(i).push(["t", t]);
              resume[i] = 0;
            } else {
              out.first_token_s[i] = t;
            }
            if (left <= 0) {
              finish([i], t, -1);
              out.dec_first[i] = -1;
            } else {
              startDecoding(i, pfLen[i] + 1, left);
            }
          }
        }
        joinBatch();
      }
      if (decIds.length && leftMin() === 0) {
        const done = [], keepIds = [], keepBase = [], keepEnd = [];
        for (let j = 0; j < decIds.length; j++) {
          if (endAt[j] === nIters) { done.push(decIds[j]); ctxBaseSum -= ctxBase[j]; } else { keepIds.push(decIds[j]); keepBase.push(ctxBase[j]); keepEnd.push(endAt[j]); }
        }
        finish(done, t, nIters - 1);
        decIds = keepIds; ctxBase = keepBase; endAt = keepEnd;
        minDirty = true;
      }
    }
    return {cum: aloneCum.subarray(0, nAlone + 1), peak};
  }

  // ---- engine.simulate ------------------------------------------------------------------------------------
  // reqs: {arrival_s, prompt_tokens, output_tokens} (arrays, sorted by arrival). opts as simulate()'s keywords:
  // chunk_tokens, max_batch, prefill_gpus, decode_gpus, capacity_bytes, max_num_batched_tokens, first_token,
  // efficiency {flops_fraction, bandwidth_fraction, overhead_s}, paged, memory {block_size,
  // gpu_memory_utilization}, max_concurrency.
  function simulate(model, gpu, reqs, schedule, opts = {}) {
    const o = {chunk_tokens: 512, max_batch: null, prefill_gpus: 1, decode_gpus: 1, capacity_bytes: null,
      max_num_batched_tokens: null, first_token: "decode", efficiency: {flops_fraction: 1, bandwidth_fraction: 1, overhead_s: 0},
      paged: null, memory: {block_size: 16, gpu_memory_utilization: 0.9}, max_concurrency: null, ...opts};
    if (!SCHEDULES.includes(schedule) && !PRESETS.includes(schedule)) throw new Error(`schedule must be one of ${SCHEDULES.concat(PRESETS).join(", ")}`);
    if (!["decode", "prefill"].includes(o.first_token)) throw new Error("first_token must be one of decode, prefill");
    const paged = o.paged === null ? PAGED_PRESETS.includes(schedule) : o.paged;
    const arrivalIn = Array.from(reqs.arrival_s), prompt = Array.from(reqs.prompt_tokens), output = Array.from(reqs.output_tokens);
    const n = arrivalIn.length;
    let budget = Infinity, maxBatch = o.max_batch;
    if (schedule === "vllm-v1") {
      const [defTokens, defSeqs] = vllmV1Defaults(gpu.hbm_bytes, gpu.name);
      budget = o.max_num_batched_tokens || defTokens;
      maxBatch = maxBatch || Math.min(defSeqs, budget);
      if (maxBatch > budget) throw new Error(`vllm-v1: max_num_seqs (${maxBatch}) must not exceed max_num_batched_tokens (${budget})`);
    } else if (schedule === "vllm-v0") {
      budget = o.max_num_batched_tokens || model.max_position_embeddings;
      maxBatch = maxBatch || 256;
      let longest = 0;
      for (let i = 0; i < n; i++) longest = Math.max(longest, prompt[i] + (paged ? output[i] - 1 : 0));
      if (budget < longest) throw new Error(`vllm-v0: max_num_batched_tokens (${budget}) is shorter than the longest prompt (${longest})`);
    }
    maxBatch = maxBatch === null || maxBatch === undefined ? 2 ** 30 : maxBatch;
    const sched = Object.keys(LESSON_PRESETS).find((name) => LESSON_PRESETS[name] === schedule) || schedule;
    if (o.max_concurrency !== null && (o.max_concurrency < 1 || sched === "disagg")) throw new Error("max_concurrency must be at least 1 and applies to the colocated schedules");
    if (o.chunk_tokens < 1 || maxBatch < 1 || o.prefill_gpus < 1 || o.decode_gpus < 1 || budget < 1) {
      throw new Error("chunk_tokens, max_batch, max_num_batched_tokens and the GPU counts must be at least 1");
    }
    const mem = paged ? o.memory : null;
    let capacity;
    if (o.capacity_bytes !== null) capacity = o.capacity_bytes;
    else if (paged) capacity = o.memory.gpu_memory_utilization * gpu.hbm_bytes - model.weight_bytes_total - model.runtime_reserve_bytes;
    else capacity = gpu.hbm_bytes - model.weight_bytes_total - model.runtime_reserve_bytes;
    if (capacity <= 0) throw new Error(`no memory is left for requests (${(capacity / 1e9).toFixed(1)} GB after the weights and reserve)`);
    const eff = o.efficiency, bound = eff.flops_fraction === 1 && eff.bandwidth_fraction === 1 && eff.overhead_s === 0;
    const bandwidth = bound ? gpu.hbm_bandwidth_bytes_per_s : gpu.hbm_bandwidth_bytes_per_s * eff.bandwidth_fraction;
    const peakFlops = bound ? gpu.peak_bf16_flops : gpu.peak_bf16_flops * eff.flops_fraction;
    const cost = iterationCost(model, bandwidth, peakFlops);
    const nan = () => new Float64Array(n).fill(NaN), neg = () => new Float64Array(n).fill(-1);
    const out = {admitted_s: nan(), first_token_s: nan(), finish_s: nan(), dec_first: neg(), dec_last: neg(),
      seg_start: neg(), own_prefill_s: new Float64Array(n), transfer_end_s: nan(), join_s: nan(),
      preemptions: new Float64Array(n), preempt_pre_s: new Float64Array(n), preempt_dec_s: new Float64Array(n),
      send_s: Float64Array.from(arrivalIn), pieces: {}};
    const gpuOf = new Float64Array(n);
    let runs, peak = 0, heldPeak = 0, ready, arrival = arrivalIn;
    const engine = (s, cap) => ({model, cost, schedule: s, chunk: o.chunk_tokens, maxBatch, capacity, budget: cap,
      overhead: eff.overhead_s, memory: mem, cap: o.max_concurrency || 2 ** 62});
    if (sched !== "disagg") {
      const r = runGpu(engine(sched, budget), arrivalIn, prompt, output, out, null);
      runs = [r];
      arrival = Array.from(out.send_s);
      peak = r.peak;
      ready = out.admitted_s;
    } else {
      const P = o.prefill_gpus, D = o.decode_gpus;
      for (let i = 0; i < n; i++) gpuOf[i] = i % D;  // vLLM's P/D proxy deals requests round-robin
      const pfStart = new Float64Array(n), pfEnd = new Float64Array(n), pfGpu = new Float64Array(n);
      const freeAt = new Float64Array(P);
      for (let i = 0; i < n; i++) {  // engine._prefill_gpus
        if (bytesPerRequest(model, prompt[i]) > capacity) throw new Error(`a ${prompt[i]}-token prompt does not fit on a prefill GPU`);
        let gi = 0;
        for (let k = 1; k < P; k++) if (freeAt[k] < freeAt[gi]) gi = k;
        pfStart[i] = Math.max(arrivalIn[i], freeAt[gi]);
        pfEnd[i] = freeAt[gi] = pfStart[i] + cost.prefill(prompt[i]) + eff.overhead_s;
        pfGpu[i] = gi;
      }
      const decodeTokens = output.map((x) => (o.first_token === "decode" ? x : x - 1));
      if (o.first_token === "prefill") out.first_token_s.set(pfEnd);
      runs = [];
      for (let gd = 0; gd < D; gd++) {
        const ids = [];
        for (let i = gd; i < n; i += D) if (decodeTokens[i] > 0) ids.push(i);  // request i decodes on GPU i mod D
        ids.sort((x, y) => pfEnd[x] - pfEnd[y] || x - y);  // numpy's stable argsort
        const sub = {pieces: {}};
        for (const [key, v] of Object.entries(out)) if (key !== "pieces") sub[key] = Float64Array.from(ids, (i) => v[i]);
        const handoff = {transfer_s: ids.map((i) => bytesPerRequest(model, prompt[i]) / model.pd_link_bytes_per_s),
          decode_tokens: ids.map((i) => decodeTokens[i])};
        const r = runGpu(engine("whole", Infinity), ids.map((i) => pfEnd[i]), ids.map((i) => prompt[i]),
          ids.map((i) => output[i]), sub, handoff);
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
      heldPeak = heldPeakBytes(model, prompt, pfStart, Array.from({length: n}, (_, i) => (decodeTokens[i] === 0 ? pfEnd[i] : out.transfer_end_s[i])), pfGpu);
      ready = pfStart;
    }
    const workTo = Float64Array.from(out.dec_last);
    for (let i = 0; i < n; i++) if (out.dec_last[i] < out.dec_first[i]) { out.dec_first[i] = -1; out.dec_last[i] = -1; }
    const breakdown = breakdownOf(arrival, ready, out, workTo, gpuOf, runs, sched === "disagg");
    return {arrival_s: arrival, prompt_tokens: prompt, output_tokens: output, admitted_s: out.admitted_s,
      first_token_s: out.first_token_s, finish_s: out.finish_s, preemptions: out.preemptions, breakdown,
      peak_reserved_bytes: peak, capacity_bytes: capacity, prefill_held_peak_bytes: heldPeak};
  }

  function heldPeakBytes(model, prompt, start, release, where) {  // engine._held_peak
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

  function breakdownOf(arrival, ready, out, workTo, gpuOf, runs, disagg) {  // engine._breakdown
    const n = arrival.length;
    const cum = runs.map((r) => r.cum);
    const decoded = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      const c = runs.length ? cum[gpuOf[i]] : null;
      if (out.seg_start[i] >= 0 && workTo[i] >= out.seg_start[i]) decoded[i] += c[workTo[i] + 1] - c[out.seg_start[i]];
      for (const piece of out.pieces[i] || []) if (piece[0] === "seg") decoded[i] += c[piece[3] + 1] - c[piece[2]];
    }
    const parts = {};
    for (const p of PARTS) parts[p] = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      const finish = out.finish_s[i], preemption = out.preempt_pre_s[i] + out.preempt_dec_s[i];
      if (!disagg) {
        const prefill = out.own_prefill_s[i];
        parts.queueing_s[i] = ready[i] - arrival[i];
        parts.prefill_s[i] = prefill;
        parts.interference_s[i] = (finish - ready[i]) - prefill - preemption - decoded[i];
        parts.decode_s[i] = decoded[i];
        parts.preemption_s[i] = preemption;
      } else {
        const reached = !Number.isNaN(out.transfer_end_s[i]);
        const prefillEnd = ready[i] + out.own_prefill_s[i];
        const waited = reached ? (out.admitted_s[i] - prefillEnd) + (out.join_s[i] - out.transfer_end_s[i]) : 0;
        parts.queueing_s[i] = (ready[i] - arrival[i]) + waited;
        parts.prefill_s[i] = out.own_prefill_s[i];
        parts.interference_s[i] = reached ? finish - out.join_s[i] - decoded[i] - preemption : 0;
        parts.transfer_s[i] = reached ? out.transfer_end_s[i] - out.admitted_s[i] : 0;
        parts.decode_s[i] = decoded[i];
        parts.preemption_s[i] = preemption;
      }
    }
    return parts;
  }

  // ---- workload.arrival_times from the workload's standard gamma draws -------------------------------------
  // numpy's Generator.gamma(shape, scale) is scale x standard_gamma(shape): the same draws times the same scale.
  function arrivalTimes(draws, rate, burstiness = 1) {
    const n = draws.length, scale = 1.0 / (rate * burstiness), times = new Array(n);
    let acc = 0;
    for (let i = 0; i < n; i++) { acc += draws[i] * scale; times[i] = acc; }
    if (n && times[n - 1] > 0) {
      const factor = (n / rate) / times[n - 1];
      for (let i = 0; i < n; i++) times[i] *= factor;
    }
    return times;
  }

  // ---- numpy helpers: rint (half to even), pairwise sum (np.add.reduce), percentile ('linear') --------------
  function rint(x) {
    const f = Math.floor(x), d = x - f;
    if (d < 0.5) return f;
    if (d > 0.5) return f + 1;
    return f % 2 === 0 ? f : f + 1;
  }
  function pairwiseSum(a, lo, n) {  // numpy's pairwise_sum (PW_BLOCKSIZE 128, eight accumulators)
    if (n < 8) { let s = -0; for (let i = 0; i < n; i++) s += a[lo + i]; return s; }
    if (n <= 128) {
      const r = [a[lo], a[lo + 1], a[lo + 2], a[lo + 3], a[lo + 4], a[lo + 5], a[lo + 6], a[lo + 7]];
      let i;
      for (i = 8; i < n - (n % 8); i += 8) for (let k = 0; k < 8; k++) r[k] += a[lo + i + k];
      let res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
      for (; i < n; i++) res += a[lo + i];
      return res;
    }
    let n2 = Math.floor(n / 2);
    n2 -= n2 % 8;
    return pairwiseSum(a, lo, n2) + pairwiseSum(a, lo + n2, n - n2);
  }
  const npMean = (a) => pairwiseSum(a, 0, a.length) / a.length;
  function percentile(sorted, q) {
    const n = sorted.length;
    if (n === 0) return 0;
    const pos = (n - 1) * q / 100, lo = Math.floor(pos), hi = Math.min(lo + 1, n - 1), t = pos - lo;
    const a = sorted[lo], b = sorted[hi];
    return t >= 0.5 ? b - (b - a) * (1 - t) : a + (b - a) * t;
  }
  // aggregate.quantize_ms: whole units of quantumMs, rounded up, after rounding to 1e-6 units (numpy's round).
  const quantize = (seconds, quantumMs) => Math.ceil(rint(seconds * 1000 / quantumMs * 1e6) / 1e6);

  // What the page's under-load experiment reads of one run: TTFT and TPOT (vLLM's all_tpots) per request in
  // whole units of quantumMs, the duration, and sweep.tail_breakdown's tail means (ms, rounded as serving.json's).
  function cellSummary(trace, quantumMs, tailParts) {
    const n = trace.arrival_s.length, ttft = new Array(n), tpot = new Array(n), e2el = new Float64Array(n);
    let duration = -Infinity;
    for (let i = 0; i < n; i++) {
      const t1 = trace.first_token_s[i] - trace.arrival_s[i], t2 = trace.finish_s[i] - trace.arrival_s[i];
      e2el[i] = t2;
      ttft[i] = quantize(t1, quantumMs);
      const out = trace.output_tokens[i];
      tpot[i] = quantize(out > 1 ? (t2 - t1) / (out - 1) : 0, quantumMs);
      if (trace.finish_s[i] > duration) duration = trace.finish_s[i];
    }
    const cut = percentile(Float64Array.from(e2el).sort(), 99), tail = [];
    for (let i = 0; i < n; i++) if (e2el[i] >= cut) tail.push(i);
    const tailMs = {};
    for (const part of tailParts) {
      const v = Float64Array.from(tail, (i) => trace.breakdown[`${part}_s`][i]);
      tailMs[part] = roundHalfEven(npMean(v) * 1000, 1);
    }
    return {ttft, tpot, duration_s: duration, tail_ms: tailMs, prefill_over: trace.prefill_held_peak_bytes > trace.capacity_bytes};
  }
  function roundHalfEven(x, digits) {  // Python's round(x, digits): the exact value, ties to even
    const s = 10 ** digits, y = x * s;
    if (Number.isInteger(y * 2) && !Number.isInteger(y) && y / s === x) return rint(y) / s;  // an exact tie
    return Number(x.toFixed(digits));  // toFixed rounds the exact binary value (ties are handled above)
  }

  return {PARTS, LESSON_PRESETS, simulate, arrivalTimes, cellSummary, percentile, quantize, pairwiseSum, rint, vllmV1Defaults};
}
if (typeof self !== "undefined") self.C13Sim = c13ServingSim();
if (typeof module !== "undefined") module.exports = c13ServingSim();
