"""The three parts the loop asks, as contracts: every attribute and method the loop (loop.py), the P/D side
(disagg.py) and simulate() (simulation.py) use of a scheduler, a KV manager and a step-cost model, each with what
holds before the call (pre) and after it (post). A new part implements its contract and registers by name
(registry.py); tests/test_engine_components.py fails when the loop uses a member that is not declared here, or when a
registered class lacks one. Requests are numbered 0..n-1 in arrival order; `tokens` counts tokens, bytes are bytes,
times are seconds. The loop passes each part what it needs: no part reads the loop. Pure (declarations only)."""
from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class SchedulerContract(Protocol):
    """An engine's iteration rule (schedulers.py). Settings are fixed for a run; the rule keeps no state."""
    max_batch: int  # at most this many requests admitted at once (vLLM's max_num_seqs; UNCAPPED: none)
    token_budget: float  # prompt-and-decode tokens an iteration may take (inf: no budget)
    chunk_tokens: int  # Sarathi's prompt tokens per iteration
    class_budget: tuple[int, int] | None  # (threshold, long_tokens): admission by request class; None: FCFS only
    decodes_with_prefill: bool  # whether the running decodes get their token in an iteration with prompt work
    paged_by_default: bool  # whether simulate() manages this engine's KV in paged blocks unless told otherwise

    def prefill_chunks(self, prefilling: list[int], pf_len: list[int], done_prefill: list[int],
                       decoding: int) -> list[tuple[int, int, int]]:
        """pre: `prefilling` holds the admitted requests with prompt work left, in admission order; request i has
        `pf_len[i]` tokens to prefill of which `done_prefill[i]` are done; `decoding` requests run decodes.
        post: (request, first token, length) of each chunk this iteration computes, length >= 1, in the order of
        `prefilling`; the lists are not changed."""

    def victim(self, running: list[int], admit_seq: list[int]) -> int:
        """pre: `running` is not empty; admit_seq[i] is request i's admission order. post: the request to preempt
        (one of `running`)."""


@runtime_checkable
class KVContract(Protocol):
    """One GPU's KV memory over one run (kv.py). The loop calls `start` once, then for each request, in this
    order: `fits` (may be asked many times), `admit`, `prefix_hit` (unless its KV is pulled, P/D), `computed`
    after each of its prompt chunks, `join` when it enters the decode batch and `leave` when it exits it, and
    `release` then `dropped` when it stops being admitted (finished, or preempted: then it may be admitted again)."""
    capacity: float  # bytes for requests on this GPU
    preempts: bool  # True: running requests can outgrow `capacity` (the loop then asks `after` and preempts)

    def start(self, prompt: np.ndarray, output: np.ndarray) -> None:
        """pre: the run's requests' prompt and output lengths (int arrays). post: empty; refuses (ValueError) a
        request that could never fit."""

    def fits(self, i: int, tokens: int, used: float) -> bool:
        """pre: request i waits with `tokens` to prefill (its prompt, or all its tokens after a preemption);
        `used` is what `after` or `in_use` last returned at this boundary. post: whether admitting it keeps the
        memory within `capacity`; nothing changes."""

    def admit(self, i: int, tokens: int) -> None:
        """pre: `fits(i, tokens, used)`. post: request i holds its memory (its context, or its prompt's blocks)."""

    def prefix_hit(self, i: int, tokens: int) -> int:
        """pre: i was just admitted with `tokens` to prefill. post: how many of them (from the first) this GPU
        already holds the KV of (0 without a prefix cache); the rest are prefilled."""

    def computed(self, i: int, done: int) -> None:
        """post: request i's first `done` prompt tokens have their KV (a prefix cache may keep them)."""

    def join(self, i: int, base: int) -> None:
        """pre: i's prompt is computed (or its KV pulled); `base` = its context less the loop's decode-iteration
        count. post: its prompt's booking becomes a decode's growing context."""

    def leave(self, i: int, base: int) -> None:
        """pre: i is in the decode batch with that `base`. post: it no longer counts as a decode."""

    def release(self, i: int) -> None:
        """pre: i is admitted (after `leave` if it was decoding). post: all it held is freed."""

    def dropped(self, i: int, computed: int, t: float) -> None:
        """pre: `release(i)` just ran at time t; i had the KV of its first `computed` tokens. post: a prefix cache
        keeps what it may of them."""

    def in_use(self, n_iters: int) -> float:
        """post: bytes held now (`n_iters`: the loop's decode-iteration count); the loop's peak."""


@runtime_checkable
class PreemptingKVContract(KVContract, Protocol):
    """A KV manager whose running requests can outgrow its memory (`preempts` is True: vLLM's paged blocks). The
    loop asks `after` at each boundary and before each admission, and preempts the scheduler's victim while it
    exceeds `capacity`."""

    def after(self, n_iters: int) -> float:
        """post: bytes the admitted requests hold when the decode-iteration count is `n_iters`
        (each decode one block-rounded token longer per iteration); nothing changes."""

    def steps_that_fit(self, n_iters: int, k: int) -> int:
        """pre: `after(n_iters)` <= capacity, k >= 1. post: of the k pure-decode iterations from
        `n_iters`, how many run before the first whose blocks do not fit (1..k)."""


@runtime_checkable
class PricingContract(Protocol):
    """What a run of the loop pays per iteration (stepcost.py Pricing), overhead excluded. `dec_ids`: the running
    decodes' ids in batch order; `context_sum`: the sum of their contexts."""

    def shortest(self, decoders: int, context_sum: float, dec_ids: list[int]) -> float:
        """post: no iteration of a pure-decode run starting here is shorter (contexts only grow)."""

    def decode_run(self, decoders: int, context_sums: np.ndarray, dec_ids: list[int]) -> np.ndarray:
        """pre: one context sum per iteration of the run. post: each iteration's seconds, drawn in order (a noisy
        pricing advances its stream once per iteration)."""

    def iteration(self, decoders: int, context_sum: float, chunks: list[tuple[int, int, int]],
                  dec_ids: list[int]) -> tuple[float, float | None]:
        """pre: `chunks` as the scheduler gave them. post: (the iteration's seconds, its decoders' seconds alone;
        None without decoders)."""


@runtime_checkable
class StepCostContract(Protocol):
    """How long iterations take (stepcost.py). `cost` has IterationCost's `seconds(decoders, context_sum,
    chunks=None)` and `decode_run(decoders, context_sums)`; an `IterationCost` also lets the loop price decode runs
    with its terms inline (the same arithmetic)."""
    anchor: object  # the Anchor whose memory a request needs (roofline.bytes_per_request)
    cost: object
    overhead_s: float  # seconds added to every iteration

    def pricing(self, kv: KVContract) -> PricingContract:
        """post: this run's prices (its own noise stream; the slots of `kv` when the cost prices them)."""


CONTRACTS = {"scheduler": SchedulerContract, "kv": KVContract, "step_cost": StepCostContract}  # by registry kind
