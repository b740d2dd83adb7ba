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

Disaggregated (`disagg`, DistServe-style, P prefill + D decode GPUs): each prefill GPU runs one prompt at a time,
FCFS across the P GPUs, taking `roofline.prefill_seconds`; the prompt's KV cache and state then cross the link
(`roofline.transfer_seconds`, one link per prefill GPU, overlapping the next prefill). As in the page's timeline
experiment, the first token counts as emitted when the transfer ends (TTFT = queue + prefill + transfer). Request
i goes to decode GPU i mod D, which admits and batches like the colocated engine with no prefill work.

Runs of pure-decode iterations between events (an admission, a finish) are computed in one vectorised step:
contexts grow by one token per iteration, so their bytes and FLOPs grow linearly.

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
Memory stays as above (the full context reserved at admission, no preemption) for every preset.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np

from scripts.common.names import SCHEDULES

PRESETS = ("orca", "sarathi", "vllm-v1", "vllm-v0", "disagg")
LESSON_PRESETS = {"whole": "orca", "chunked": "sarathi", "disagg": "disagg"}  # the lesson's names, as engines
GIB = 1 << 30


def vllm_v1_defaults(hbm_bytes: float, gpu_name: str) -> tuple[int, int]:
    """(max_num_batched_tokens, max_num_seqs) as `vllm serve` (UsageContext.OPENAI_API_SERVER) defaults them."""
    if hbm_bytes >= 70 * GIB and "a100" not in gpu_name.lower():
        return 8192, 1024
    return 2048, 256
from scripts.model import roofline as rl
from scripts.model.anchor import Anchor
from scripts.serving.workload import Requests


@dataclass
class Trace:
    """Per request (in input order): when it was admitted to a GPU, its first token and its last; where its decode
    tokens sit in its GPU's iteration end times (`dec_first`..`dec_last`, -1 when it has one output token)."""
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

    def token_gaps(self, i: int) -> np.ndarray:
        """Request i's inter-token latencies: first token to second, and so on."""
        if self.dec_last[i] < 0:
            return np.empty(0)
        ends = self.decode_end_s[self.gpu[i]][self.dec_first[i]:self.dec_last[i] + 1]
        return np.diff(np.concatenate(([self.first_token_s[i]], ends)))

    def all_token_gaps(self) -> np.ndarray:
        return np.concatenate([self.token_gaps(i) for i in range(len(self.requests))] or [np.empty(0)])


class _Gpu:
    """One GPU's continuous-batching loop (admission, prefill, decode)."""

    def __init__(self, a: Anchor, schedule: str, chunk_tokens: int, max_batch: int, capacity: float,
                 token_budget: float = np.inf):
        """`schedule`: `whole`, `chunked`, `vllm-v1` or `vllm-v0` (see the module docstring; simulate() has turned
        `orca` and `sarathi` into the lesson's names);
        `token_budget`: max_num_batched_tokens for the vLLM presets."""
        self.a, self.schedule, self.chunk = a, schedule, chunk_tokens
        self.max_batch, self.capacity, self.budget = max_batch, capacity, token_budget
        self.ends: list[np.ndarray] = []  # every iteration's end
        self.dec_ends: list[np.ndarray] = []  # the ends of decode-carrying iterations, counted by n_iters
        self.n_iters = 0

    def run(self, arrival, prompt, output, prefilled, out):
        """Serve requests (arrays sorted by arrival); write admitted/first-token/finish/dec indices into `out`."""
        a, n = self.a, len(arrival)
        need = rl.bytes_per_request(a, (prompt + output).astype(float))  # full context, reserved at admission
        if n and need.max() > self.capacity:
            raise ValueError(f"a request needs {need.max() / 1e9:.1f} GB, more than the {self.capacity / 1e9:.1f} GB "
                             "free for requests on one GPU")
        queue, prefilling = deque(), deque()
        done_prefill = np.zeros(n, dtype=np.int64)
        dec_ids = np.empty(0, dtype=np.int64)
        dec_ctx = np.empty(0, dtype=np.float64)
        dec_left = np.empty(0, dtype=np.int64)
        reserved, peak, admitted, t, nxt, finished = 0.0, 0.0, 0, 0.0, 0, 0
        bw, peak_flops = a.hbm_bandwidth_bytes_per_s, a.peak_bf16_flops

        def finish(ids, when, last_iter):
            nonlocal reserved, admitted, finished
            for i in ids:
                out["finish_s"][i] = when
                out["dec_last"][i] = last_iter
                reserved -= need[i]
            admitted -= len(ids)
            finished += len(ids)

        while finished < n:
            while nxt < n and arrival[nxt] <= t:
                queue.append(nxt)
                nxt += 1
            while queue and admitted < self.max_batch and reserved + need[queue[0]] <= self.capacity:
                i = queue.popleft()
                reserved += need[i]
                admitted += 1
                out["admitted_s"][i] = t
                if prefilled[i]:  # disagg decode GPU: the first token came with the KV cache
                    if output[i] <= 1:
                        finish([i], out["first_token_s"][i], -1)
                        continue
                    out["dec_first"][i] = self.n_iters
                    dec_ids, dec_ctx = np.append(dec_ids, i), np.append(dec_ctx, prompt[i] + 1.0)
                    dec_left = np.append(dec_left, output[i] - 1)
                else:
                    prefilling.append(i)
            peak = max(peak, reserved)
            if not prefilling and not len(dec_ids):
                if nxt < n:
                    t = max(t, arrival[nxt])
                continue
            if not prefilling:  # a run of pure-decode iterations, up to the next event
                k = int(dec_left.min())
                m = k
                if not queue and nxt < n and admitted < self.max_batch and reserved + need[nxt] <= self.capacity:
                    m = -1  # an arrival that will be admitted: stop at the first iteration starting after it
                steps = np.arange(k, dtype=np.float64)
                nd, csum = len(dec_ids), dec_ctx.sum()
                bytes_ = rl.iteration_bytes(a, nd, csum + steps * nd, 0.0, 0)
                flops = rl.iteration_flops(a, nd, csum + steps * nd, 0.0, 0.0)
                ends = t + np.cumsum(np.maximum(bytes_ / bw, flops / peak_flops))
                if m < 0:
                    starts = np.concatenate(([t], ends[:-1]))
                    m = max(1, min(k, int(np.searchsorted(starts, arrival[nxt], side="left"))))
                self.ends.append(ends[:m])
                self.dec_ends.append(ends[:m])
                self.n_iters += m
                t = float(ends[m - 1])
                dec_ctx += m
                dec_left -= m
            else:  # one iteration with prefill work
                prefill_only = self.schedule == "vllm-v0"
                chunks, budget = [], {"chunked": self.chunk,
                                      "vllm-v1": self.budget - len(dec_ids), "vllm-v0": self.budget}.get(
                                          self.schedule, np.inf)
                for i in prefilling:
                    left = prompt[i] - done_prefill[i]
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
                d = rl.iteration_seconds(a, decoders, float(dec_ctx.sum()) if decoders else 0.0,
                                         [(s, ln) for _, s, ln in chunks])
                t += d
                self.ends.append(np.array([t]))
                if decoders:  # an iteration that gives every running decode a token
                    self.dec_ends.append(self.ends[-1])
                    self.n_iters += 1
                    dec_ctx += 1
                    dec_left -= 1
                for i, s, ln in chunks:
                    done_prefill[i] = s + ln
                    if done_prefill[i] == prompt[i]:
                        prefilling.remove(i)
                        out["first_token_s"][i] = t
                        if output[i] <= 1:
                            finish([i], t, -1)
                        else:
                            out["dec_first"][i] = self.n_iters  # its next token comes in the next decode iteration
                            dec_ids, dec_ctx = np.append(dec_ids, i), np.append(dec_ctx, prompt[i] + 1.0)
                            dec_left = np.append(dec_left, output[i] - 1)
            done = dec_left == 0
            if done.any():
                finish(dec_ids[done], t, self.n_iters - 1)
                dec_ids, dec_ctx, dec_left = dec_ids[~done], dec_ctx[~done], dec_left[~done]
        self.peak = peak
        join = lambda parts: np.concatenate(parts) if parts else np.empty(0)  # noqa: E731
        return join(self.ends), join(self.dec_ends)


def simulate(a: Anchor, reqs: Requests, schedule: str, *, chunk_tokens: int = 512, max_batch: int | None = None,
             prefill_gpus: int = 1, decode_gpus: int = 1, capacity_bytes: float | None = None,
             max_num_batched_tokens: int | None = None, gpu_name: str = "") -> Trace:
    """`schedule`: one of the lesson's SCHEDULES or an engine preset (PRESETS). For `vllm-v1` and `vllm-v0`,
    `max_num_batched_tokens` and `max_batch` (max_num_seqs) default as that vLLM sets them (`gpu_name` is what
    vLLM checks for "a100"); the other schedules have no batch cap unless `max_batch` is given."""
    if schedule not in SCHEDULES + PRESETS:
        raise ValueError(f"schedule must be one of {', '.join(SCHEDULES + PRESETS)}")
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
        if budget < int(reqs.prompt_tokens.max(initial=0)):
            raise ValueError(f"vllm-v0: max_num_batched_tokens ({budget}) is shorter than the longest prompt "
                             f"({int(reqs.prompt_tokens.max())}); without chunked prefill it could never run")
    max_batch = (1 << 30) if max_batch is None else max_batch
    schedule = {preset: name for name, preset in LESSON_PRESETS.items()}.get(schedule, schedule)
    if chunk_tokens < 1 or max_batch < 1 or prefill_gpus < 1 or decode_gpus < 1 or budget < 1:
        raise ValueError("chunk_tokens, max_batch, max_num_batched_tokens and the GPU counts must be at least 1")
    n = len(reqs)
    capacity = rl.free_bytes_for_requests(a) if capacity_bytes is None else capacity_bytes
    out = {"admitted_s": np.full(n, np.nan), "first_token_s": np.full(n, np.nan), "finish_s": np.full(n, np.nan),
           "dec_first": np.full(n, -1, dtype=np.int64), "dec_last": np.full(n, -1, dtype=np.int64)}
    gpu = np.zeros(n, dtype=np.int64)
    prompt, output = reqs.prompt_tokens.astype(np.int64), reqs.output_tokens.astype(np.int64)
    if schedule != "disagg":
        engine = _Gpu(a, schedule, chunk_tokens, max_batch, capacity, budget)
        runs = [engine.run(reqs.arrival_s, prompt, output, np.zeros(n, dtype=bool), out)]
        peak = engine.peak
    else:
        first = _prefill_gpus(a, reqs, prefill_gpus, capacity)
        out["first_token_s"][:] = first
        gpu = np.arange(n) % decode_gpus
        runs, peak = [], 0.0
        for g in range(decode_gpus):
            ids = np.flatnonzero(gpu == g)
            ids = ids[np.argsort(first[ids], kind="stable")]
            sub = {k: np.empty(len(ids), dtype=v.dtype) for k, v in out.items()}
            sub["first_token_s"][:] = first[ids]
            sub["dec_first"][:] = -1
            sub["dec_last"][:] = -1
            engine = _Gpu(a, "whole", chunk_tokens, max_batch, capacity)
            runs.append(engine.run(first[ids], prompt[ids], output[ids], np.ones(len(ids), dtype=bool), sub))
            for k in ("admitted_s", "finish_s", "dec_first", "dec_last"):
                out[k][ids] = sub[k]
            peak = max(peak, engine.peak)
    return Trace(reqs, out["admitted_s"], out["first_token_s"], out["finish_s"], gpu, out["dec_first"],
                 out["dec_last"], [r[0] for r in runs], peak, capacity, [r[1] for r in runs])


def _prefill_gpus(a: Anchor, reqs: Requests, gpus: int, capacity: float) -> np.ndarray:
    """First-token times under P/D: FCFS over `gpus` prefill GPUs, one prompt at a time, then the KV transfer."""
    free_at = np.zeros(gpus)
    first = np.empty(len(reqs))
    for i, (arrive, prompt) in enumerate(zip(reqs.arrival_s, reqs.prompt_tokens, strict=True)):
        if rl.bytes_per_request(a, float(prompt)) > capacity:
            raise ValueError(f"a {int(prompt)}-token prompt does not fit on a prefill GPU")
        g = int(np.argmin(free_at))
        end = max(arrive, free_at[g]) + rl.prefill_seconds(a, float(prompt))
        free_at[g] = end
        first[i] = end + rl.transfer_seconds(a, float(prompt))
    return first
