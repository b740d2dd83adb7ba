"""Schedulers: an engine's iteration rule. Which waiting requests are admitted (FCFS while the KV manager has room
and fewer than `max_batch` run), which prompt tokens go into this iteration, whether the running decodes ride along,
and which running request is preempted when memory runs out. Pure. One class per engine, registered by name
(registry.py), each docstring naming the source file and version it follows; `configure` turns simulate()'s
keywords into the engine's settings, with that engine's defaults and refusals.

The lesson's schedules are presets: whole = orca, chunked = sarathi, disagg = the two P/D sides (disagg.decode here,
disagg.prefill in disagg.py). A request's first token is out at the end of the iteration that finishes its prompt."""
from __future__ import annotations

import math

from scripts.model.anchor import Anchor
from scripts.serving.engine.registry import register

GIB = 1 << 30
UNCAPPED = 1 << 30  # the running-request cap of a schedule that has none


def vllm_v1_defaults(hbm_bytes: float, gpu_name: str) -> tuple[int, int]:
    """(max_num_batched_tokens, max_num_seqs) as `vllm serve` (UsageContext.OPENAI_API_SERVER) defaults them."""
    if hbm_bytes >= 70 * GIB and "a100" not in gpu_name.lower():
        return 8192, 1024
    return 2048, 256


class Scheduler:
    """FCFS continuous batching (Orca's iteration-level scheduling): every running decode gets one token in every
    iteration, and prompt tokens are taken FCFS up to `iteration_budget`, the last prompt chunked to fit.

    `class_budget` (simulate's option; the schedules with a token budget): admission by request class, the remedy the
    Kimi K3 report describes for bursts of long prompts: a prompt of at least `threshold` tokens is long, and all long
    prompts together take at most `long_tokens` of an iteration's budget; short ones keep FCFS over the rest, so a
    burst of long prompts at the head of the queue cannot take every iteration whole."""
    paged_by_default = False  # whether the engine manages KV in paged blocks (kv.py) unless told otherwise
    decodes_with_prefill = True  # whether running decodes get their token in an iteration with prompt work
    class_budget: tuple[int, int] | None = None  # (threshold, long_tokens)

    def __init__(self, max_batch: int = UNCAPPED, token_budget: float = math.inf, chunk_tokens: int = 512):
        self.max_batch, self.token_budget, self.chunk_tokens = max_batch, token_budget, chunk_tokens

    @classmethod
    def configure(cls, a: Anchor, reqs, *, chunk_tokens: int, max_batch: int | None,
                  max_num_batched_tokens: int | None, gpu_name: str, paged: bool) -> Scheduler:
        """The engine's settings from simulate()'s keywords (schedules without a batch cap get none)."""
        return cls(UNCAPPED if max_batch is None else max_batch, math.inf, chunk_tokens)

    def iteration_budget(self, decoding: int) -> float:
        """Prompt tokens this iteration may take, with `decoding` requests running."""
        return math.inf

    def prefill_chunks(self, prefilling: list, pf_len: list, done_prefill: list, decoding: int) -> list:
        """(request, first token, length) of each prompt chunk in this iteration: FCFS over the admitted prompts,
        each taking min(what is left of it, what is left of the budget)."""
        chunks, budget = [], self.iteration_budget(decoding)
        classes = self.class_budget
        if classes is not None:
            return self._class_chunks(prefilling, pf_len, done_prefill, budget, *classes)
        for i in prefilling:
            length = min(budget, pf_len[i] - done_prefill[i])
            if length <= 0:
                break
            chunks.append((i, done_prefill[i], length))
            budget -= length
            if budget <= 0:
                break
        return chunks

    @staticmethod
    def _class_chunks(prefilling, pf_len, done_prefill, budget, threshold, long_tokens) -> list:
        """FCFS as above, long prompts (pf_len >= threshold) drawing also on their class's `long_tokens`: a long
        one that finds its class's share spent is passed over, not waited for."""
        chunks, long_left = [], long_tokens
        for i in prefilling:
            is_long = pf_len[i] >= threshold
            length = min(budget, pf_len[i] - done_prefill[i], long_left) if is_long else \
                min(budget, pf_len[i] - done_prefill[i])
            if length <= 0:
                if is_long and budget > 0:
                    continue
                break
            chunks.append((i, done_prefill[i], length))
            budget -= length
            if is_long:
                long_left -= length
            if budget <= 0:
                break
        return chunks

    @staticmethod
    def victim(running: list, admit_seq: list) -> int:
        """The request to preempt when the running ones' next blocks do not fit: the latest admitted (vLLM V1's
        `_schedule_running`: `self.running.pop()`; its blocks are freed and it goes first in the waiting queue, to
        recompute all its tokens on readmission)."""
        return max(running, key=lambda i: admit_seq[i])


@register("scheduler", "orca")
class Orca(Scheduler):
    """Orca (Yu et al., OSDI'22), the lesson's `whole`: iteration-level scheduling; every admitted prompt is
    prefilled whole in the next iteration, the running decodes riding along."""


@register("scheduler", "sarathi")
class Sarathi(Scheduler):
    """Sarathi-Serve (Agrawal et al., OSDI'24), the lesson's `chunked`: every running decode, then up to
    `chunk_tokens` prefill tokens on top, FCFS, a prompt spread over several iterations as needed (the page's chunk
    slider has the same meaning)."""

    def iteration_budget(self, decoding: int) -> float:
        return self.chunk_tokens


@register("scheduler", "vllm-v1")
class VllmV1(Scheduler):
    """vLLM V1 (vllm/v1/core/sched/scheduler.py, the v0.11 line; the rule as that file states it: RUNNING requests are
    scheduled before WAITING ones, each taking min(its remaining tokens, the remaining budget)): one token budget per
    iteration, `max_num_batched_tokens`, shared: every running decode first (one token each), then prefill tokens
    FCFS with what is left, the last prompt chunked; chunked prefill is always on in V1. `max_num_seqs` caps the
    running requests. Defaults as `vllm serve` sets them (vllm/engine/arg_utils.py, EngineArgs._set_default_args,
    the v0.11 line; `vllm_v1_defaults`): 8,192 tokens and 1,024 sequences on a GPU of at least 70 GiB that is not an
    A100, else 2,048 and 256 (and max_num_seqs <= max_num_batched_tokens, so decodes always fit). KV in paged blocks
    (kv.py `paged`)."""
    paged_by_default = True

    @classmethod
    def configure(cls, a, reqs, *, chunk_tokens, max_batch, max_num_batched_tokens, gpu_name, paged):
        default_tokens, default_seqs = vllm_v1_defaults(a.hbm_bytes, gpu_name)
        budget = max_num_batched_tokens or default_tokens
        max_batch = max_batch or min(default_seqs, budget)
        cls._check_budget(max_batch, budget)
        return cls(max_batch, budget, chunk_tokens)

    @classmethod
    def _check_budget(cls, max_batch, budget):
        if max_batch > budget:
            raise ValueError(f"{cls.name}: max_num_seqs ({max_batch}) must not exceed max_num_batched_tokens "
                             f"({budget}), or running decodes would not fit an iteration")

    def iteration_budget(self, decoding: int) -> float:
        return self.token_budget - decoding


@register("scheduler", "llama.cpp")
class LlamaCpp(VllmV1):
    """llama.cpp's server (tools/server/server-context.cpp, `update_slots`, in the llama.cpp tree vendored by
    llama-cpp-python 0.3.36, config/real_engine.json; read for this kit): each iteration adds one token for every
    generating slot first, then waiting prompt tokens while the batch is below n_batch (`-b`), a longer prompt
    continuing in later iterations; at most `-np` requests hold a slot, the rest queue FIFO. So the rule is vLLM V1's
    shared budget with max_num_batched_tokens = -b and max_num_seqs = -np, both required (the server's own defaults
    are not guessed here). Each slot's context (-c / -np tokens) is reserved whole, so KV is not paged; the
    real-engine comparison gives it unbounded memory (every request of its workloads fits a slot)."""
    paged_by_default = False

    @classmethod
    def configure(cls, a, reqs, *, chunk_tokens, max_batch, max_num_batched_tokens, gpu_name, paged):
        if not max_batch or not max_num_batched_tokens:
            raise ValueError("llama.cpp: give the server's -np as max_batch and its -b as max_num_batched_tokens")
        cls._check_budget(max_batch, max_num_batched_tokens)
        return cls(max_batch, max_num_batched_tokens, chunk_tokens)


@register("scheduler", "vllm-v0")
class VllmV0(Scheduler):
    """vLLM's V0 scheduler without chunked prefill (vllm/core/scheduler.py `_schedule_default`): when waiting
    requests can be admitted, the iteration is prefill-only, whole prompts FCFS while their sum fits
    `max_num_batched_tokens` (by default the model's context, as vllm/engine/arg_utils.py sets it with chunked prefill
    off), and running decodes get no token in it; otherwise a decode-only iteration. max_num_seqs 256
    (EngineArgs.__post_init__, `256 if not envs.VLLM_USE_V1`, vllm/engine/arg_utils.py at commit 001999d). KV in
    paged blocks."""
    paged_by_default = True
    decodes_with_prefill = False

    @classmethod
    def configure(cls, a, reqs, *, chunk_tokens, max_batch, max_num_batched_tokens, gpu_name, paged):
        budget = max_num_batched_tokens or a.max_position_embeddings
        max_batch = max_batch or 256
        longest = int((reqs.prompt_tokens + (reqs.output_tokens - 1 if paged else 0)).max(initial=0))
        if budget < longest:
            raise ValueError(f"vllm-v0: max_num_batched_tokens ({budget}) is shorter than the longest prompt "
                             f"({longest}{', with a preempted output' if paged else ''}); without chunked prefill "
                             "it could never run")
        return cls(max_batch, budget, chunk_tokens)

    def prefill_chunks(self, prefilling, pf_len, done_prefill, decoding):
        """Whole prompts only, FCFS, while they fit the budget (the first always goes)."""
        chunks, budget = [], self.token_budget
        for i in prefilling:
            left = pf_len[i] - done_prefill[i]
            if chunks and left > budget:
                break
            if left <= 0:
                break
            chunks.append((i, done_prefill[i], left))
            budget -= left
            if budget <= 0:
                break
        return chunks


@register("scheduler", "disagg.decode")
class DisaggDecode(Orca):
    """The decode side of P/D disaggregation (the lesson's `disagg`; the prefill side is disagg.py): a request
    handed over by a prefill GPU is admitted FCFS like Orca's, memory for its prompt + output reserved first (a full
    decode GPU holds the KV back: backpressure), then pulls its KV over the GPU's inbound link and joins the batch
    at the first iteration boundary after its transfer ends. A prompt is prefilled here only to recompute a
    preempted request (paged memory)."""
