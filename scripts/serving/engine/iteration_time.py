"""How long the loop's iterations take (loop.GpuLoop): a run of pure-decode iterations priced in one pass
(`priced_run`), and one iteration with prompt work (`priced_iteration`). Pure.

Between events (an admission, a finish, a transfer's end, the first step whose new blocks do not fit) no request
joins or leaves the batch: contexts grow by one token per iteration, so step s's bytes and FLOPs follow from the
batch's context sum `csum + s * nd`. Iteration s ends at t + (d_0 + ... + d_s) (numpy's cumsum, sequential) and the
run stops at the first iteration starting at or after the event (numpy.searchsorted(starts, event, "left")).

A run of IterationCost's longer than SCALAR_RUN_MAX is priced over numpy arrays (the pricing's decode_run: the same
terms in the same order, a sequential cumsum, the same stop), shorter ones in a Python loop (a numpy call costs about
as much as 30 loop steps), and a step model's own decode_run always over arrays. Either way every iteration's
duration is the same double. templates/serving_sim/loop.js prices its runs the same way."""
from __future__ import annotations

import numpy as np

SCALAR_RUN_MAX = 32


def priced_run(step, pricing, scalar: bool, nd: int, csum: float, m: int, t: float, event: float,
               dec_ids: list) -> tuple[list[float], list[float]]:
    """At most `m` (>= 1) pure-decode iterations of `nd` decoders whose contexts sum to `csum`, from time `t`,
    stopping at the first one that would start at or after `event` (inf: none): each one's end and its duration
    (its `step.overhead_s` included). `scalar`: the step prices as IterationCost does (its `cost` inlined here);
    otherwise `pricing.decode_run` prices the run."""
    cost, overhead = step.cost, step.overhead_s
    ends: list[float] = []
    alone: list[float] = []
    if scalar and m <= SCALAR_RUN_MAX:  # IterationCost.seconds(nd, x) of each step, its terms in order
        kv_cost, attention, bandwidth, peak_flops = cost.kv, cost.attention, cost.bandwidth, cost.peak_flops
        base_bytes, dense_flops = cost.weights_for(nd), cost.dense * nd
        state_bytes, window_bytes = (2 * nd) * cost.state, nd * cost.window
        acc, start = 0.0, t
        add_end, add_alone = ends.append, alone.append
        for s in range(m):
            if s and start >= event:
                break
            x = csum + s * nd
            u = (base_bytes + x * kv_cost + state_bytes + window_bytes) / bandwidth
            v = (dense_flops + x * attention) / peak_flops
            d = (u if u >= v else v) + overhead  # max(u, v): the same double
            acc += d
            start = t + acc
            add_end(start)
            add_alone(d)
        return ends, alone
    durations = pricing.decode_run(nd, float(csum) + np.arange(m, dtype=np.float64) * nd, dec_ids) + overhead
    run_ends = t + np.cumsum(durations)
    if event < np.inf:
        starts = np.concatenate(([t], run_ends[:-1]))
        m = max(1, min(m, int(np.searchsorted(starts, event, side="left"))))
    return run_ends[:m].tolist(), durations[:m].tolist()


def priced_iteration(step, pricing, decoders: int, ctx_sum: float, chunks: list,
                     dec_ids: list) -> tuple[float, float | None]:
    """One iteration with prompt work (`chunks`: (request, start, length)) and `decoders` running requests riding
    with it (the first of `dec_ids`, their contexts summing to `ctx_sum`), priced by `pricing.iteration`: its
    duration, and the decoders' time alone (what the iteration would have taken without the prompts, stretched as it
    was; None without decoders), both with `step.overhead_s`."""
    d, alone = pricing.iteration(decoders, ctx_sum, chunks, dec_ids[:decoders])
    return d + step.overhead_s, (alone + step.overhead_s if decoders else None)
