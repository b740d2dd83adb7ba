"""Where each request's time went (Trace.breakdown, parts summing to its E2EL; result.PARTS). Pure.

  queueing      its wait before admission (and, under P/D, for a decode GPU and for the next iteration boundary
                after its transfer);
  prefill       its own prefill: the iterations that computed a chunk of its prompt, or its prefill on a prefill GPU;
  interference  iterations that carried other requests' prefill while it waited for its own or decoded, beyond
                what a decode-only iteration of the same running batch would take;
  transfer      its KV transfer, the link's queue included;
  decode        the decode-only time of the iterations that gave it a token;
  preemption    the wait to be readmitted and the recompute of what it lost."""
from __future__ import annotations

import numpy as np


def breakdown(arrival, ready, out, work_to, gpu, runs, disagg: bool) -> dict[str, np.ndarray]:
    """Every interval of [arrival, finish] is counted once: the wait before `ready` (admission; P/D, the prefill
    GPU); colocated, then its own prefill's iterations, preemption, the decode-only time of the iterations that gave
    it a token (`decode`) and the rest (interference); P/D, its prefill, the wait for a decode GPU (queueing), the
    transfer, the wait for an iteration boundary (queueing), decode, preemption and the rest (interference: other
    requests' recomputes). The decode iterations of its last stretch are `seg_start`..`work_to` on its GPU, earlier
    stretches are in its pieces."""
    n = len(arrival)
    cum = [np.concatenate(([0.0], np.cumsum(r[2]))) for r in runs]
    decoded = np.zeros(n)
    for i in range(n):
        c = cum[gpu[i]] if runs else None
        if out["seg_start"][i] >= 0 and work_to[i] >= out["seg_start"][i]:
            decoded[i] += c[work_to[i] + 1] - c[out["seg_start"][i]]
        for piece in out["pieces"].get(i, ()):
            if piece[0] == "seg":
                decoded[i] += c[piece[3] + 1] - c[piece[2]]
    finish, preemption = out["finish_s"], out["preempt_pre_s"] + out["preempt_dec_s"]
    zero = np.zeros(n)
    if not disagg:
        prefill = out["own_prefill_s"]
        return {"queueing_s": ready - arrival, "prefill_s": prefill,
                "interference_s": (finish - ready) - prefill - preemption - decoded,
                "transfer_s": zero, "decode_s": decoded, "preemption_s": preemption}
    transfer_end, join = out["transfer_end_s"], out["join_s"]
    reached = ~np.isnan(transfer_end)  # requests that went to a decode GPU
    prefill_end = ready + out["own_prefill_s"]
    waited = np.where(reached, (out["admitted_s"] - prefill_end) + (join - transfer_end), 0.0)
    transfer = np.where(reached, transfer_end - out["admitted_s"], 0.0)
    interference = np.where(reached, finish - join - decoded - preemption, 0.0)
    return {"queueing_s": (ready - arrival) + waited, "prefill_s": out["own_prefill_s"],
            "interference_s": interference, "transfer_s": transfer, "decode_s": decoded,
            "preemption_s": preemption}
