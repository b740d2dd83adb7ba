  // ---- breakdown.py: where each request's time went (parts summing to its E2EL) ------------------------------
  const PARTS = ["queueing_s", "prefill_s", "interference_s", "transfer_s", "decode_s", "preemption_s"];
  function breakdown(arrival, ready, out, workTo, gpuOf, runs, disagg) {
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
