"""Iteration-level simulator of the anchor serving a request stream. Pure: arrays in, arrays out, no I/O.

Colocated (one GPU, schedules `whole` and `chunked`): at each iteration boundary the scheduler admits waiting
requests first-come-first-served while the head's full context (prompt + output: KV cache plus the fixed
recurrent state, `roofline.bytes_per_request`) fits beside those already admitted, and while fewer than
`max_batch` are admitted; nothing is preempted, a blocked head blocks the queue. The iteration then carries
one decode token for every running request, each at its own context, plus prefill work:
  whole    the whole prompts of every admitted request not yet prefilled;
  chunked  (Sarathi-Serve) prefill tokens FCFS up to `chunk_tokens` per iteration, a prompt spread over
           several iterations as needed (the page's chunk slider has the same meaning).
Its duration is `roofline.iteration_seconds` of exactly that work: the one cost model of the page.
A request's first token is emitted at the end of the iteration that finishes its prompt, then one token per
iteration; its memory is freed at the end of the iteration that emits its last token.

Disaggregated (`disagg`, P prefill + D decode GPUs): each prefill GPU runs one prompt at a time, FCFS across
the P GPUs (the least busy takes the next), taking `roofline.prefill_seconds` (+ the iteration overhead). The
finished prompt then waits for its decode GPU (request i goes to decode GPU i mod D, as vLLM's P/D proxy deals
requests round-robin), which admits it FCFS like the colocated engine — memory for prompt + output reserved
first, so a full decode GPU holds the KV back (backpressure: the wait counts in the request's TTFT) — and
only then pulls its KV cache and state over its inbound link (`roofline.transfer_seconds`; one link per decode
GPU, a FIFO queue: a transfer starts when the link is free). The request joins the decode batch at the first
iteration boundary after its transfer ends. Where the first token counts as emitted (`first_token`):
  decode   (the default: vLLM's P/D proxy streams the decode instance's output, and the metrics are vLLM's) at the
           end of the request's first iteration on the decode GPU, which computes all `output` tokens (it
           recomputes the last prompt position, as vLLM does when the whole prompt's KV came from outside);
  prefill  (DistServe's convention) when its prefill ends; the decode GPU computes the other output - 1 tokens,
           and a one-token request never reaches it.
A prefill GPU's memory is not a limit: prompts waiting for a decode GPU are assumed to fit beside it
(`Trace.prefill_held_peak_bytes` reports the most they held at once; each sweep cell carries it, and the page says
where it exceeds the GPU, i.e. where this model is optimistic).

Step times (`efficiency`, roofline.Efficiency): every kernel time is the roofline of the anchor with its peaks
scaled by the achieved shares (`roofline.derated`), and every iteration (prefill-GPU prompts included) adds a
fixed `overhead_s`. The default, roofline.BOUND (1, 1, 0), is the roofline bound; `roofline.achieved(anchor)` is
the anchor's realistic set.

Runs of pure-decode iterations between events (an admission, a finish, a transfer's end) are computed in one
pass with no per-request work: contexts grow by one token per iteration, so each step's bytes and FLOPs follow from
the batch's context sum (templates/serving_sim.js, the page's twin, does the same).

Engine presets (`simulate(a, reqs, "<preset>")`), each an engine's own iteration rule; the lesson's three schedules
are `orca` (whole), `sarathi` (chunked) and `disagg`:
  orca     as `whole` above (Orca, OSDI'22: iteration-level scheduling, decodes ride along with whole prefills).
  sarathi  as `chunked` above (Sarathi-Serve, OSDI'24): every running decode, then up to `chunk_tokens` of prefill
           on top.
  vllm-v1  one token budget per iteration, `max_num_batched_tokens`, shared: every running decode first (one token
           each), then prefill tokens FCFS with what is left, the last prompt chunked (vllm/v1/core/sched/
           scheduler.py: RUNNING requests are scheduled before WAITING ones, each taking min(its remaining tokens,
           the remaining budget; the rule as that file states it, not re-read line by line for this kit); chunked
           prefill is always on in V1. `max_num_seqs` caps the running requests.
           Defaults as `vllm serve` sets them (vllm/engine/arg_utils.py, EngineArgs._set_default_args, the v0.11
           line; `vllm_v1_defaults` below): 8,192 tokens and 1,024 sequences on a GPU of at least 70 GiB that is not
           an A100, else 2,048 and 256 (and max_num_seqs <= max_num_batched_tokens, so decodes always fit).
  vllm-v0  vLLM's V0 scheduler without chunked prefill (vllm/core/scheduler.py `_schedule_default`): when waiting
           requests can be admitted, the iteration is prefill-only — whole prompts FCFS while their sum fits
           `max_num_batched_tokens` (by default the model's context, as arg_utils sets it with chunked prefill
           off) — and running decodes get no token in it; otherwise a decode-only iteration. max_num_seqs 256
           (EngineArgs.__post_init__, `256 if not envs.VLLM_USE_V1`, vllm/engine/arg_utils.py at commit 001999d).
Memory: orca, sarathi and disagg (the lesson's schedules) reserve each request's full context at admission, as
above, and never preempt. vllm-v1 and vllm-v0 manage it as vLLM does (`Memory`; paged=True gives any schedule
this): KV in blocks of 16 tokens allocated as tokens arrive, in a pool of gpu_memory_utilization (0.9) x HBM less
the weights and the reserve; a waiting request is admitted when the blocks of its whole prompt (and its state)
fit beside what the running ones need for their next token (vLLM V1 allocates only the scheduled chunk's blocks: a
simplification that admits no more than V1 does), and none is admitted in an iteration that preempted. When a
running request's next block does not fit, the latest admitted running request is preempted by recompute (vLLM
V1's `_schedule_running`: `self.running.pop()`, its blocks freed, first in the waiting queue): on readmission all
its tokens so far are prefilled again, and a request that had already streamed tokens gets its next one when that
recompute ends. Trace.preemptions counts them per request.

Where each request's time went (`Trace.breakdown`, parts summing to its E2EL): its wait before admission (and,
under P/D, for a decode GPU and for the next iteration boundary after its transfer); its own prefill (the
iterations that computed a chunk of its prompt, or its prefill on a prefill GPU); interference (iterations that
carried other requests' prefill while it waited for its own or decoded: beyond what a decode-only iteration of
the same running batch would take); its KV transfer (link queue included); decode (the decode-only time of
the iterations that gave it a token); and preemption (the wait to be readmitted and the recompute of what it lost).
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np

from scripts.common.names import PRESETS, SCHEDULES
from scripts.model import roofline as rl
from scripts.model.anchor import Anchor
from scripts.serving.workload import Requests

LESSON_PRESETS = {"whole": "orca", "chunked": "sarathi", "disagg": "disagg"}  # the lesson's names, as engines
FIRST_TOKEN = ("decode", "prefill")  # where a P/D request's first token counts as emitted; the first is the default
PARTS = ("queueing_s", "prefill_s", "interference_s", "transfer_s", "decode_s", "preemption_s")  # sum to E2EL
PAGED_PRESETS = ("vllm-v1", "vllm-v0")  # vLLM manages KV in blocks; the lesson's schedules reserve each context
GIB = 1 << 30


def vllm_v1_defaults(hbm_bytes: float, gpu_name: str) -> tuple[int, int]:
    """(max_num_batched_tokens, max_num_seqs) as `vllm serve` (UsageContext.OPENAI_API_SERVER) defaults them."""
    if hbm_bytes >= 70 * GIB and "a100" not in gpu_name.lower():
        return 8192, 1024
    return 2048, 256


@dataclass
class Trace:
    """Per request (in input order): when it was admitted to a GPU, its first token and its last; where its decode
    tokens sit in its GPU's iteration end times (`dec_first`..`dec_last`, -1 when it has none after its first) —
    for a preempted request, its tokens before the last preemption are in `pieces`."""
    requests: Requests
    admitted_s: np.ndarray
    first_token_s: np.ndarray
    finish_s: np.ndarray
    gpu: np.ndarray
    dec_first: np.ndarray
    dec_last: np.ndarray
    iteration_end_s: list[np.ndarray]  # one array per (decode) GPU: every iteration's end
    peak_reserved_bytes: float
    capacity_bytes: float
    decode_end_s: list[np.ndarray]  # per GPU, the ends of the iterations that gave every running decode a token
    # (dec_first/dec_last index these: all iterations but vllm-v0's prefill-only ones and prefills with none running)
    breakdown: dict[str, np.ndarray]  # PARTS -> per request seconds; they sum to finish_s - arrival_s
    preemptions: np.ndarray  # per request: how often it was preempted (paged memory only)
    pieces: dict  # request -> its tokens before a preemption: ("seg", first, work_first, last) decode iterations,
    # ("t", time) the token its recompute emitted; in order
    prefill_held_peak_bytes: float = 0.0  # P/D: the most KV a prefill GPU held for prompts waiting to transfer

    def token_times(self, i: int) -> np.ndarray:
        """Request i's token times, its first token's included."""
        ends = self.decode_end_s[self.gpu[i]] if len(self.decode_end_s) else np.empty(0)
        parts = [np.array([self.first_token_s[i]])]
        for piece in self.pieces.get(i, ()):
            parts.append(np.array([piece[1]]) if piece[0] == "t" else ends[piece[1]:piece[3] + 1])
        if self.dec_last[i] >= 0:
            parts.append(ends[self.dec_first[i]:self.dec_last[i] + 1])
        return np.concatenate(parts)

    def token_gaps(self, i: int) -> np.ndarray:
        """Request i's inter-token latencies: first token to second, and so on."""
        if self.dec_last[i] < 0 and i not in self.pieces:
            return np.empty(0)
        return np.diff(self.token_times(i))

    def all_token_gaps(self) -> np.ndarray:
        return np.concatenate([self.token_gaps(i) for i in range(len(self.requests))] or [np.empty(0)])


@dataclass(frozen=True)
class Memory:
    """vLLM's paged KV cache (vllm/v1/core/kv_cache_manager.py, as its docs describe it): the pool is
    `gpu_memory_utilization` x HBM minus the weights and the activation and graph reserve (the anchor's
    runtime_reserve_bytes), cut into blocks of `block_size` tokens; a request holds ceil(tokens / block_size) blocks
    of the tokens whose KV it has, allocated as tokens arrive, plus its recurrent state. Defaults as `vllm serve`'s
    --block-size (16 on CUDA) and --gpu-memory-utilization (0.9)."""
    block_size: int = 16
    gpu_memory_utilization: float = 0.9

    def __post_init__(self):
        if not (1 <= self.block_size <= 1024 and 0 < self.gpu_memory_utilization <= 1):
            raise ValueError(f"paged memory: block_size must be in [1, 1024] and gpu_memory_utilization in (0, 1], "
                             f"not {self.block_size} and {self.gpu_memory_utilization:g}")

    def blocks(self, tokens):
        return np.ceil(np.asarray(tokens, dtype=float) / self.block_size)

    def pool_bytes(self, a: Anchor) -> float:
        return self.gpu_memory_utilization * a.hbm_bytes - rl.weight_bytes_total(a) - a.runtime_reserve_bytes


class _Gpu:
    """One GPU's continuous-batching loop (admission, prefill, decode, and with paged memory, preemption)."""

    def __init__(self, a: Anchor, schedule: str, chunk_tokens: int, max_batch: int, capacity: float,
                 token_budget: float = np.inf, overhead_s: float = 0.0, memory: Memory | None = None,
                 max_concurrency: int | None = None, step_cost=None):
        """`schedule`: `whole`, `chunked`, `vllm-v1` or `vllm-v0` (see the module docstring; simulate() has turned
        `orca` and `sarathi` into the lesson's names); `a` is the anchor as achieved (roofline.derated);
        `token_budget`: max_num_batched_tokens for the vLLM presets; `overhead_s`: added to every iteration;
        `memory`: paged KV blocks (None: each request's full context reserved at admission, within `capacity`);
        `max_concurrency`: the client sends a request only while fewer are in flight (vllm bench serve);
        `step_cost`: iteration times from another model than the anchor's roofline (simulate's `step_cost`)."""
        self.a, self.schedule, self.chunk, self.step_cost = a, schedule, chunk_tokens, step_cost
        self.max_batch, self.capacity, self.budget, self.overhead = max_batch, capacity, token_budget, overhead_s
        self.memory, self.cap = memory, max_concurrency or (1 << 62)
        self.peak = 0.0

    def run(self, arrival, prompt, output, out, handoff=None):
        """Serve requests (arrays sorted by arrival); write admitted/first-token/finish/dec indices, each request's
        own prefill and preemption time into `out`. `handoff` (P/D decode GPU): per request its KV transfer seconds
        and how many tokens this GPU computes (`decode_tokens`); the transfer starts at admission.

        Per request the loop reads Python numbers (lists, not numpy scalars: a numpy scalar operation costs ten
        times a float's, and the arithmetic is the same IEEE double either way). The decode batch is kept relative
        to `n_iters`, the count of decode-carrying iterations (as templates/serving_sim.js keeps it): a running
        request's context is `ctx_base + n_iters` and its tokens left `end_at - n_iters`, so an iteration changes
        no per-request state. Contexts are whole numbers: their sum is exact in any order, as numpy's was."""
        a, n, mem = self.a, len(arrival), self.memory
        kv, state = rl.kv_bytes_per_token(a), rl.state_bytes_per_request(a)
        if mem is None:  # the full context, reserved at admission
            need = rl.bytes_per_request(a, (prompt + output).astype(float))
            biggest = float(need.max()) if n else 0.0
        else:
            block_bytes = mem.block_size * kv
            need = np.zeros(n)
            biggest = mem.blocks(float((prompt + output).max())) * block_bytes + state if n else 0.0
        if biggest > self.capacity:
            raise ValueError(f"a request needs {biggest / 1e9:.1f} GB, more than the {self.capacity / 1e9:.1f} GB "
                             "free for requests on one GPU")
        need, arrival = need.tolist(), np.asarray(arrival, dtype=float).tolist()
        prompt, output = prompt.tolist(), output.tolist()
        queue, prefilling = deque(), []
        transfers: deque = deque()  # (transfer end, request), FIFO on this GPU's inbound link
        link_free = 0.0
        if handoff is not None:
            transfer_s, decode_tokens = handoff["transfer_s"].tolist(), handoff["decode_tokens"].tolist()
        done_prefill = [0] * n
        pf_len = list(prompt)  # tokens to prefill: the prompt, or after preemption all so far
        admit_seq = [0] * n  # admission order: the latest admitted is preempted first
        resume = [False] * n  # preempted after its first token: its recompute emits its next token
        first_pending = [False] * n  # P/D decode convention: first token at its first iteration here
        preempted_at = [None] * n
        dec_ids: list[int] = []  # the running decodes, in the order they joined
        ctx_base: list[int] = []  # context - n_iters
        end_at: list[int] = []  # n_iters at which the last token is out
        base_sum, min_end, pending_first = 0, None, 0
        bs = mem.block_size if mem is not None else 1
        q_sum, residues, live_residues = 0, [0] * bs, set()  # paged_bytes: the decode batch's block counts
        reserved, peak, admitted, t, nxt, finished, seq = 0.0, 0.0, 0, 0.0, 0, 0, 0
        slot_free_at = 0.0  # when the client last got a free slot (max_concurrency)
        overhead = self.overhead
        cost = self.step_cost or rl.iteration_cost(a)
        scalar_run = isinstance(cost, rl.IterationCost)  # pure-decode runs priced step by step, else vectorised
        if scalar_run:
            kv_cost, attention, bandwidth, peak_flops = cost.kv, cost.attention, cost.bandwidth, cost.peak_flops
        pd_decode = handoff is not None  # first tokens may be pending only on a P/D decode GPU
        prefill_only = self.schedule == "vllm-v0"
        start_budget = {"chunked": self.chunk, "vllm-v0": self.budget}.get(self.schedule, np.inf)
        ends, dec_alone = [], []  # every iteration's end; each decode-carrying one's duration without prefill work
        no_decode = []  # the iterations that gave no running decode a token (none ran, or vllm-v0's prefills)
        ends_append, alone_append = ends.append, dec_alone.append
        n_iters = 0
        o_finish, o_dec_last, o_dec_first, o_seg_start = (out["finish_s"], out["dec_last"], out["dec_first"],
                                                          out["seg_start"])

        def finish(ids, when, last_iter):
            nonlocal reserved, admitted, finished, slot_free_at
            if nxt - finished >= self.cap:
                slot_free_at = when
            for i in ids:
                o_finish[i] = when
                o_dec_last[i] = last_iter
                reserved -= need[i]
            admitted -= len(ids)
            finished += len(ids)

        joining = []  # (request, context, tokens) that start decoding at this boundary, joined at once

        def start_decoding(i, context, tokens):
            o_dec_first[i] = o_seg_start[i] = n_iters  # its next token: the next decode iteration
            if np.isnan(out["join_s"][i]):
                out["join_s"][i] = t
            joining.append((i, context, tokens))

        def join_batch():
            nonlocal base_sum, min_end
            for i, context, tokens in joining:
                dec_ids.append(i)
                ctx_base.append(context - n_iters)
                end_at.append(tokens + n_iters)
                base_sum += context - n_iters
                if min_end is not None and tokens + n_iters < min_end:
                    min_end = tokens + n_iters
                if mem is not None:
                    count_blocks(context - n_iters, 1)
            joining.clear()

        def count_blocks(base, sign):  # paged_bytes' per-residue counts of the decode batch
            nonlocal q_sum
            q, r = divmod(base, bs)
            q_sum += sign * q
            residues[r] += sign
            if residues[r] == 0:
                live_residues.discard(r)
            elif sign > 0:
                live_residues.add(r)

        def left_min():  # the fewest tokens any running request has left
            nonlocal min_end
            if min_end is None:
                min_end = min(end_at)
            return min_end - n_iters

        def remove_at(k):
            nonlocal base_sum, min_end
            base_sum -= ctx_base[k]
            if mem is not None:
                count_blocks(ctx_base[k], -1)
            del dec_ids[k], ctx_base[k], end_at[k]
            min_end = None

        def paged_bytes(extra_steps=0):
            """Blocks every running request holds in the next iteration (+ extra_steps decode tokens), as bytes.
            A decode at context c = q*bs + r (0 <= r < bs) holds ceil((c + N) / bs) = q + (r + N + bs - 1) // bs
            blocks, N = n_iters + extra_steps: summed over the residues' counts, whatever the batch size (whole
            numbers: the same total as Memory.blocks summed in floats)."""
            shift = n_iters + extra_steps + bs - 1
            blocks = q_sum
            for r in live_residues:
                blocks += residues[r] * ((r + shift) // bs)
            for i in prefilling:
                blocks += -(-pf_len[i] // bs)
            for _, i in transfers:
                blocks += -(-prompt[i] // bs)
            return blocks * block_bytes + state * admitted

        def preempt(i):
            """vLLM's preemption by recompute: free the request's blocks and put it first in the queue; all its
            tokens so far are prefilled again on readmission."""
            nonlocal admitted, pending_first
            out["preemptions"][i] += 1
            preempted_at[i] = t
            if i in prefilling:
                prefilling.remove(i)
                done_prefill[i] = 0
            else:
                k = dec_ids.index(i)
                generated = output[i] - (end_at[k] - n_iters)
                if first_pending[i]:  # P/D: no token yet; the decode GPU prefills the prompt itself
                    first_pending[i] = False
                    pending_first -= 1
                    pf_len[i] = prompt[i]
                else:
                    if n_iters - 1 >= o_seg_start[i]:  # the decode iterations it had: tokens, work
                        out["pieces"].setdefault(i, []).append(("seg", int(o_dec_first[i]), int(o_seg_start[i]),
                                                                n_iters - 1))
                    resume[i] = True
                    pf_len[i] = prompt[i] + generated
                done_prefill[i] = 0
                remove_at(k)
            admitted -= 1
            queue.appendleft(i)

        def head_fits(i, used):
            if admitted >= self.max_batch:
                return False
            if mem is None:
                return reserved + need[i] <= self.capacity
            return used + -(-pf_len[i] // bs) * block_bytes + state <= self.capacity

        def emit_first(when):
            """P/D decode convention: requests in their first iteration here emit their first token at its end."""
            nonlocal pending_first
            if pending_first:
                for i in dec_ids:
                    if first_pending[i]:
                        out["first_token_s"][i] = when
                        o_dec_first[i] += 1
                        first_pending[i] = False
                        pending_first -= 1

        while finished < n:
            while nxt < n and arrival[nxt] <= t and nxt - finished < self.cap:
                out["send_s"][nxt] = max(arrival[nxt], slot_free_at)  # vllm bench serve's semaphore
                queue.append(nxt)
                nxt += 1
            used, preempted = 0.0, False
            if mem is not None:  # room for every running request's next token, or preempt the latest admitted
                used = paged_bytes()
                while used > self.capacity:
                    running = dec_ids + prefilling
                    if not running:
                        raise ValueError("the KV blocks of requests waiting for their transfer exceed the pool")
                    victim = max(running, key=lambda i: admit_seq[i])
                    preempt(victim)
                    preempted = True
                    used = paged_bytes()
            while not preempted and queue and head_fits(queue[0], used):  # vLLM V1 admits none after a preemption
                i = queue.popleft()
                reserved += need[i]
                admitted += 1
                seq += 1
                admit_seq[i] = seq
                if np.isnan(out["admitted_s"][i]):
                    out["admitted_s"][i] = t
                if preempted_at[i] is not None:
                    out["preempt_dec_s" if resume[i] else "preempt_pre_s"][i] += t - preempted_at[i]
                    preempted_at[i] = None
                    prefilling.append(i)
                elif pd_decode:  # P/D decode GPU: pull the KV cache, then decode
                    link_free = max(link_free, t) + transfer_s[i]
                    out["transfer_end_s"][i] = link_free
                    transfers.append((link_free, i))
                else:
                    prefilling.append(i)
                if mem is not None:
                    used = paged_bytes()
            while transfers and transfers[0][0] <= t:
                i = transfers.popleft()[1]
                tokens = decode_tokens[i]
                first_pending[i] = tokens == output[i]  # decode convention: its first token comes from here
                pending_first += first_pending[i]
                start_decoding(i, prompt[i] + output[i] - tokens, tokens)
            if joining:
                join_batch()
            used_now = reserved if mem is None else paged_bytes()
            if used_now > peak:
                peak = used_now
            if not prefilling and not dec_ids:
                if preempted:
                    continue  # admit at this same boundary
                upcoming = [transfers[0][0]] if transfers else []
                if nxt < n:
                    upcoming.append(arrival[nxt])
                if upcoming:
                    t = max(t, min(upcoming))
                continue
            if not prefilling:  # a run of pure-decode iterations, up to the next event
                k = left_min()
                m, event = k, np.inf
                if not queue and nxt < n and head_fits(nxt, used) and nxt - finished < self.cap:
                    event = arrival[nxt]  # an arrival that will be admitted
                if transfers:
                    event = min(event, transfers[0][0])  # a request that joins the batch
                if mem is not None and paged_bytes(k - 1) > self.capacity:  # stop before the first step whose
                    lo, hi = 0, k - 1  # new blocks do not fit: step lo fits (the loop top saw to it), step hi not
                    while hi - lo > 1:
                        mid = (lo + hi) // 2
                        lo, hi = (mid, hi) if paged_bytes(mid) <= self.capacity else (lo, mid)
                    m = lo + 1
                nd = len(dec_ids)
                csum = base_sum + nd * n_iters
                if event < np.inf:  # iterations only lengthen as contexts grow: the event falls within this many
                    first = cost.seconds(nd, csum) + overhead
                    m = min(m, int((event - t) / first) + 2)
                # Iteration s ends at t + (d_0 + ... + d_s) (numpy's cumsum, sequential) and the run stops at the
                # first iteration starting at or after the event (numpy.searchsorted(starts, event, "left")).
                if scalar_run:  # IterationCost.seconds(nd, x) of each step, its terms in their order
                    base_bytes, dense_flops = cost.weights, cost.dense * nd
                    state_bytes = (2 * nd) * cost.state
                    acc, start, steps = 0.0, t, m
                    for s in range(m):
                        if s and start >= event:
                            steps = s
                            break
                        x = csum + s * nd
                        d = max((base_bytes + x * kv_cost + state_bytes) / bandwidth,
                                (dense_flops + x * attention) / peak_flops) + overhead
                        acc += d
                        start = t + acc
                        ends_append(start)
                        alone_append(d)
                    m = steps
                else:
                    durations = cost.decode_run(nd, float(csum) + np.arange(m, dtype=np.float64) * nd) + overhead
                    run_ends = t + np.cumsum(durations)
                    if event < np.inf:
                        starts = np.concatenate(([t], run_ends[:-1]))
                        m = max(1, min(m, int(np.searchsorted(starts, event, side="left"))))
                    ends.extend(run_ends[:m].tolist())
                    dec_alone.extend(durations[:m].tolist())
                    start = float(run_ends[m - 1])
                first_end = ends[len(ends) - m]
                n_iters += m
                if pd_decode:
                    emit_first(first_end)
                t = start
            else:  # one iteration with prefill work
                chunks = []
                budget = self.budget - len(dec_ids) if self.schedule == "vllm-v1" else start_budget
                for i in prefilling:
                    left = pf_len[i] - done_prefill[i]
                    if prefill_only and chunks and left > budget:
                        break  # V0 schedules whole prompts only, FCFS, while they fit the budget
                    length = left if prefill_only else min(budget, left)
                    if length <= 0:
                        break
                    chunks.append((i, done_prefill[i], length))
                    budget -= length
                    if budget <= 0:
                        break
                decoders = 0 if prefill_only else len(dec_ids)
                ctx_sum = base_sum + decoders * n_iters if decoders else 0.0
                d = cost.seconds(decoders, ctx_sum, [(s, ln) for _, s, ln in chunks]) + overhead
                t += d
                ends_append(t)
                if decoders:  # an iteration that gives every running decode a token; its decode-only time:
                    alone_append((max((cost.weights + ctx_sum * cost.kv + (2 * decoders) * cost.state)
                                      / cost.bandwidth, (cost.dense * decoders + ctx_sum * cost.attention)
                                      / cost.peak_flops) if scalar_run else cost.seconds(decoders, ctx_sum))
                                 + overhead)  # IterationCost.seconds(decoders, ctx_sum) inline, as above
                    n_iters += 1
                    if pd_decode:
                        emit_first(t)
                else:
                    no_decode.append(len(ends) - 1)
                for i, s, ln in chunks:
                    if resume[i] or pd_decode:  # recomputing what preemption threw away
                        out["preempt_dec_s"][i] += d
                    else:
                        out["own_prefill_s"][i] += d
                    done_prefill[i] = s + ln
                    if done_prefill[i] == pf_len[i]:
                        prefilling.remove(i)
                        left = output[i] - (pf_len[i] - prompt[i]) - 1  # tokens still to come after this one
                        if resume[i]:  # the recompute emits the request's next token
                            out["pieces"].setdefault(i, []).append(("t", t))
                            resume[i] = False
                        else:
                            out["first_token_s"][i] = t
                        if left <= 0:
                            finish([i], t, -1)
                            o_dec_first[i] = -1
                        else:
                            start_decoding(i, pf_len[i] + 1, left)
                if joining:
                    join_batch()
            if dec_ids and left_min() == 0:  # those whose last token this was, in batch order
                done, k = [], end_at.index(n_iters)
                while k >= 0:
                    done.append(dec_ids[k])
                    remove_at(k)
                    k = end_at.index(n_iters, k) if n_iters in end_at[k:] else -1
                finish(done, t, n_iters - 1)
        self.peak = peak
        all_ends = np.array(ends, dtype=float)
        return all_ends, np.delete(all_ends, no_decode), np.array(dec_alone, dtype=float)


def simulate(a: Anchor, reqs: Requests, schedule: str, *, chunk_tokens: int = 512, max_batch: int | None = None,
             prefill_gpus: int = 1, decode_gpus: int = 1, capacity_bytes: float | None = None,
             max_num_batched_tokens: int | None = None, gpu_name: str = "", first_token: str = "decode",
             efficiency: rl.Efficiency = rl.BOUND, paged: bool | None = None, memory: Memory = Memory(),
             max_concurrency: int | None = None, step_cost=None) -> Trace:
    """`schedule`: one of the lesson's SCHEDULES or an engine preset (PRESETS). For `vllm-v1` and `vllm-v0`,
    `max_num_batched_tokens` and `max_batch` (max_num_seqs) default as that vLLM sets them (`gpu_name` is what
    vLLM checks for "a100"); the other schedules have no batch cap unless `max_batch` is given. `first_token`
    (FIRST_TOKEN) and the GPU counts apply to `disagg`; `efficiency` to every schedule. `paged` (default: for the
    PAGED_PRESETS) manages KV as `memory` says, preempting by recompute; otherwise each request's full context is
    reserved at admission. `capacity_bytes` overrides the room for requests on one GPU. `max_concurrency`
    (colocated schedules): as `vllm bench serve --max-concurrency`, a request is sent at its arrival or, when that
    many are in flight, when one finishes; the trace's arrival times are then the send times, from which vLLM
    measures TTFT and E2EL. `step_cost` (colocated schedules): an object with IterationCost's `seconds` and
    `decode_run` that times every iteration instead of the anchor's roofline (a measured engine's fitted step
    times, scripts/serving/stepmodel.py); `efficiency` then does not apply."""
    if schedule not in SCHEDULES + PRESETS:
        raise ValueError(f"schedule must be one of {', '.join(SCHEDULES + PRESETS)}")
    if first_token not in FIRST_TOKEN:
        raise ValueError(f"first_token must be one of {', '.join(FIRST_TOKEN)}")
    paged = schedule in PAGED_PRESETS if paged is None else paged
    budget = np.inf
    if schedule == "vllm-v1":
        default_tokens, default_seqs = vllm_v1_defaults(a.hbm_bytes, gpu_name)
        budget = max_num_batched_tokens or default_tokens
        max_batch = max_batch or min(default_seqs, budget)
        if max_batch > budget:
            raise ValueError(f"vllm-v1: max_num_seqs ({max_batch}) must not exceed max_num_batched_tokens "
                             f"({budget}), or running decodes would not fit an iteration")
    elif schedule == "vllm-v0":
        budget = max_num_batched_tokens or a.max_position_embeddings
        max_batch = max_batch or 256
        longest = int((reqs.prompt_tokens + (reqs.output_tokens - 1 if paged else 0)).max(initial=0))
        if budget < longest:
            raise ValueError(f"vllm-v0: max_num_batched_tokens ({budget}) is shorter than the longest prompt "
                             f"({longest}{', with a preempted output' if paged else ''}); without chunked prefill "
                             "it could never run")
    max_batch = (1 << 30) if max_batch is None else max_batch
    schedule = {preset: name for name, preset in LESSON_PRESETS.items()}.get(schedule, schedule)
    if step_cost is not None and (schedule == "disagg" or not efficiency.is_bound()):
        raise ValueError("step_cost applies to the colocated schedules and replaces `efficiency`")
    if max_concurrency is not None and (max_concurrency < 1 or schedule == "disagg"):
        raise ValueError("max_concurrency must be at least 1 and applies to the colocated schedules")
    if chunk_tokens < 1 or max_batch < 1 or prefill_gpus < 1 or decode_gpus < 1 or budget < 1:
        raise ValueError("chunk_tokens, max_batch, max_num_batched_tokens and the GPU counts must be at least 1")
    n = len(reqs)
    if capacity_bytes is not None:
        capacity = capacity_bytes
    else:
        capacity = memory.pool_bytes(a) if paged else rl.free_bytes_for_requests(a)
    if capacity <= 0:
        raise ValueError(f"no memory is left for requests ({capacity / 1e9:.1f} GB after the weights and reserve)")
    fast = rl.derated(a, efficiency)  # kernel times as achieved; memory and the link are as the anchor says
    out = {"admitted_s": np.full(n, np.nan), "first_token_s": np.full(n, np.nan), "finish_s": np.full(n, np.nan),
           "dec_first": np.full(n, -1, dtype=np.int64), "dec_last": np.full(n, -1, dtype=np.int64),
           "seg_start": np.full(n, -1, dtype=np.int64), "own_prefill_s": np.zeros(n),
           "transfer_end_s": np.full(n, np.nan), "join_s": np.full(n, np.nan), "preemptions": np.zeros(n, dtype=int),
           "preempt_pre_s": np.zeros(n), "preempt_dec_s": np.zeros(n), "send_s": reqs.arrival_s.astype(float),
           "pieces": {}}
    gpu = np.zeros(n, dtype=np.int64)
    prompt, output = reqs.prompt_tokens.astype(np.int64), reqs.output_tokens.astype(np.int64)
    held_peak = 0.0
    mem = memory if paged else None
    if schedule != "disagg":
        engine = _Gpu(fast, schedule, chunk_tokens, max_batch, capacity, budget, efficiency.overhead_s, mem,
                      max_concurrency, step_cost)
        runs = [engine.run(reqs.arrival_s, prompt, output, out)]
        reqs = Requests(out["send_s"], reqs.prompt_tokens, reqs.output_tokens)
        peak = engine.peak
        ready = out["admitted_s"]  # the breakdown's "own work starts here" (after the admission wait)
    else:
        pf_start, pf_end, pf_gpu = _prefill_gpus(fast, reqs, prefill_gpus, capacity, efficiency.overhead_s)
        gpu = np.arange(n) % decode_gpus
        decode_tokens = output if first_token == "decode" else output - 1
        if first_token == "prefill":
            out["first_token_s"][:] = pf_end
        runs, peak = [], 0.0
        for g in range(decode_gpus):
            ids = np.flatnonzero((gpu == g) & (decode_tokens > 0))
            ids = ids[np.argsort(pf_end[ids], kind="stable")]
            sub = {k: v[ids].copy() for k, v in out.items() if k != "pieces"} | {"pieces": {}}
            engine = _Gpu(fast, "whole", chunk_tokens, max_batch, capacity, overhead_s=efficiency.overhead_s,
                          memory=mem)
            handoff = {"transfer_s": rl.transfer_seconds(a, prompt[ids].astype(float)),
                       "decode_tokens": decode_tokens[ids]}
            runs.append(engine.run(pf_end[ids], prompt[ids], output[ids], sub, handoff))
            for k, v in sub.items():
                if k == "pieces":
                    out["pieces"].update({int(ids[j]): pieces for j, pieces in v.items()})
                elif k != "own_prefill_s":
                    out[k][ids] = v
            peak = max(peak, engine.peak)
        out["own_prefill_s"] = pf_end - pf_start
        one = decode_tokens == 0  # prefill convention, one output token: done at its prefill
        out["finish_s"][one], out["admitted_s"][one] = pf_end[one], pf_end[one]
        held_peak = _held_peak(a, prompt, pf_start, np.where(one, pf_end, out["transfer_end_s"]), pf_gpu)
        ready = pf_start
    work_to = out["dec_last"].copy()
    gone = out["dec_last"] < out["dec_first"]  # P/D decode convention, one token: no token after its first
    out["dec_first"][gone], out["dec_last"][gone] = -1, -1
    parts = _breakdown(reqs.arrival_s, ready, out, work_to, gpu, runs, schedule == "disagg")
    return Trace(reqs, out["admitted_s"], out["first_token_s"], out["finish_s"], gpu, out["dec_first"],
                 out["dec_last"], [r[0] for r in runs], peak, capacity, [r[1] for r in runs], parts,
                 out["preemptions"], out["pieces"], held_peak)


def _breakdown(arrival, ready, out, work_to, gpu, runs, disagg: bool) -> dict[str, np.ndarray]:
    """PARTS per request (module docstring). Every interval of [arrival, finish] is counted once: the wait before
    `ready` (admission; P/D, the prefill GPU); colocated, then its own prefill's iterations, preemption (the wait
    to be readmitted and the recompute of what was lost), the decode-only time of the iterations that gave it a
    token (`decode`) and the rest (interference); P/D, its prefill, the wait for a decode GPU (queueing), the
    transfer, the wait for an iteration boundary (queueing), decode, preemption and the rest (interference:
    other requests' recomputes). The decode iterations of its last stretch are `seg_start`..`work_to` on its GPU,
    earlier stretches are in its pieces."""
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


def _prefill_gpus(a: Anchor, reqs: Requests, gpus: int, capacity: float, overhead_s: float = 0.0):
    """P/D prefill GPUs: FCFS over `gpus`, one prompt at a time on the least busy GPU. Returns each request's
    prefill start and end and its prefill GPU."""
    free_at = np.zeros(gpus)
    start, end, where = np.empty(len(reqs)), np.empty(len(reqs)), np.empty(len(reqs), dtype=np.int64)
    seconds: dict[int, float] = {}  # per prompt length (lengths repeat): its prefill time
    for i, (arrive, prompt) in enumerate(zip(reqs.arrival_s.tolist(), reqs.prompt_tokens.tolist(), strict=True)):
        if prompt not in seconds:
            if rl.bytes_per_request(a, float(prompt)) > capacity:
                raise ValueError(f"a {int(prompt)}-token prompt does not fit on a prefill GPU")
            seconds[prompt] = rl.prefill_seconds(a, float(prompt))
        g = int(np.argmin(free_at)) if gpus > 1 else 0
        start[i] = max(arrive, free_at[g])
        end[i] = free_at[g] = start[i] + seconds[prompt] + overhead_s
        where[i] = g
    return start, end, where


def _held_peak(a: Anchor, prompt, start, release, where) -> float:
    """The most KV cache and state one prefill GPU holds at once: each prompt's from its prefill's start until its
    transfer ends."""
    peak = 0.0
    for g in np.unique(where):
        ids = np.flatnonzero(where == g)
        size = rl.bytes_per_request(a, prompt[ids].astype(float))
        times = np.concatenate((start[ids], release[ids]))
        delta = np.concatenate((size, -size))
        order = np.lexsort((delta, times))  # at equal times, releases (negative) first
        peak = max(peak, float(np.cumsum(delta[order]).max(initial=0.0)))
    return peak
