"""Roofline math for one decode or prefill step of the hybrid anchor model, from its sizes (sizes.py: parameters,
weight bytes, KV and state bytes). Pure: no I/O.

Hybrid attention is first-class: only the full-attention layers keep a per-token KV cache; the
Gated DeltaNet (linear) layers keep a fixed-size recurrent state per request, read and written
once per decode step. Every function is an upper bound on speed (a roofline), not a measurement.

A mixture of experts (issue 64): memory holds every expert; a token's FLOPs follow its active parameters (the
shared experts and the k routed ones); a step reads the experts its tokens touch, E * (1 - (1 - k/E)^T) of them
per MoE layer for T tokens routed uniformly at random (sizes.expected_experts_touched), so the weight bytes a step reads
grow with its tokens until every expert is read. Multi-head latent attention caches one latent per token and layer
(kv_lora_rank + qk_rope_head_dim values). A dense anchor's numbers are unchanged by either.

Sliding-window attention (gpt-oss): the layers between the full-attention ones attend only to their last W tokens,
so a request holds W tokens' K and V there whatever its context (a fixed size, like the DeltaNet state, priced at
the window: an upper bound for contexts shorter than W), and a decode step reads it once. Its attention FLOPs
(4 * heads * head_dim * W per token and window layer) are left out, as the DeltaNet layers' recurrence is: for
gpt-oss-120b at W = 128 they are 0.4 % of a token's matmul FLOPs.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np

from scripts.model import sizes
from scripts.model.anchor import Anchor


def weight_bytes_read(a: Anchor, tokens: float) -> float:
    """The weight bytes a step of `tokens` tokens reads: all of a dense model; the routed experts its tokens touch
    besides (expected_experts_touched per MoE layer). One formula with the simulator's: IterationCost.weights_for."""
    return iteration_cost(a).weights_for(tokens)


@lru_cache(maxsize=256)  # pure in the (frozen, hashable) anchor; the simulator calls it every iteration
def attention_flops_per_token_position(a: Anchor) -> int:
    """FLOPs for one query attending to one cached position, over all full-attention layers (QK^T and PV)."""
    return 4 * a.num_attention_heads * a.head_dim * sizes.full_attention_layers(a)


def decode_step_bytes(a: Anchor, batch: float, context: float) -> float:
    return weight_bytes_read(a, batch) + batch * (context * sizes.kv_bytes_per_token(a) + sizes.decode_state_bytes(a))


def decode_step_flops(a: Anchor, batch: float, context: float) -> float:
    return 2 * sizes.active_params_per_token(a) * batch + batch * context * attention_flops_per_token_position(a)


def step_seconds(a: Anchor, step_bytes: float, step_flops: float) -> float:
    return max(step_bytes / a.hbm_bandwidth_bytes_per_s, step_flops / a.peak_bf16_flops)


def compute_bound(a: Anchor, step_bytes: float, step_flops: float) -> bool:
    """The roofline's side: the step's FLOPs take longer at peak than its bytes at the memory's bandwidth."""
    return step_flops / a.peak_bf16_flops > step_bytes / a.hbm_bandwidth_bytes_per_s


def decode_step_seconds(a: Anchor, batch: float, context: float) -> float:
    return step_seconds(a, decode_step_bytes(a, batch, context), decode_step_flops(a, batch, context))


def decode_throughput_tok_s(a: Anchor, batch: float, context: float) -> float:
    return batch / decode_step_seconds(a, batch, context)


def per_user_tok_s(a: Anchor, batch: float, context: float) -> float:
    return 1.0 / decode_step_seconds(a, batch, context)


def bytes_per_request(a: Anchor, context: float) -> float:
    return context * sizes.kv_bytes_per_token(a) + sizes.state_bytes_per_request(a)


def free_bytes_for_requests(a: Anchor) -> float:
    return a.hbm_bytes - sizes.weight_bytes_total(a) - a.runtime_reserve_bytes


def max_batch_by_memory(a: Anchor, context: float) -> int:
    """Requests whose KV cache and state fit beside the weights; 0 when not even one fits."""
    return max(0, math.floor(free_bytes_for_requests(a) / bytes_per_request(a, context)))


def max_batch_under_slo(a: Anchor, context: float, tpot_slo_s: float) -> int:
    """Largest batch within memory whose decode step meets the TPOT target (0 if none does).

    Step time rises monotonically with batch, so the answer is a closed form per roof, then clamped.
    """
    cap = max_batch_by_memory(a, context)
    if a.num_experts:  # the weight bytes grow with the batch: no closed form, but the step still only lengthens
        return _largest_batch_within(a, context, tpot_slo_s, cap)
    per_req_bytes = context * sizes.kv_bytes_per_token(a) + sizes.decode_state_bytes(a)
    by_bytes = (tpot_slo_s * a.hbm_bandwidth_bytes_per_s - sizes.weight_bytes_read_per_step(a)) / per_req_bytes
    per_req_flops = 2 * sizes.params_read_per_step(a) + context * attention_flops_per_token_position(a)
    by_flops = tpot_slo_s * a.peak_bf16_flops / per_req_flops
    return max(0, min(cap, math.floor(min(by_bytes, by_flops))))


def _largest_batch_within(a: Anchor, context: float, tpot_slo_s: float, cap: int) -> int:
    """max_batch_under_slo by bisection (decode_step_seconds rises with the batch)."""
    if cap < 1 or decode_step_seconds(a, 1, context) > tpot_slo_s:
        return 0
    lo, hi = 1, cap  # lo meets the target; find the last batch that does
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if decode_step_seconds(a, mid, context) <= tpot_slo_s else (lo, mid - 1)
    return lo


def step_growth_per_request(a: Anchor, context: float, batch_from: int, batch_to: int) -> float:
    """How much a decode step lengthens per request added between two batches (seconds per request)."""
    return (decode_step_seconds(a, batch_to, context) - decode_step_seconds(a, batch_from, context)) / (
        batch_to - batch_from)


def prefill_flops(a: Anchor, prompt: float) -> float:
    """Whole prompt in one step; causal attention touches about P^2/2 query-key pairs."""
    return 2 * sizes.active_params_per_token(a) * prompt + prompt * prompt / 2 * attention_flops_per_token_position(a)


def prefill_bytes(a: Anchor, prompt: float) -> float:
    return weight_bytes_read(a, prompt) + prompt * sizes.kv_bytes_per_token(a) + sizes.state_bytes_per_request(a)


def prefill_seconds(a: Anchor, prompt: float) -> float:
    return step_seconds(a, prefill_bytes(a, prompt), prefill_flops(a, prompt))


def state_passes(chunk_start: float) -> int:
    """How often a prefill chunk moves its request's recurrent state through HBM: a prompt's first chunk only
    writes it (the state starts at zero; prefill_seconds counts it once), a later chunk reads and writes it."""
    return 1 if chunk_start == 0 else 2


def mixed_step_seconds(a: Anchor, decoders: float, context: float, chunk: float, chunk_start: float) -> float:
    """One step carrying a prefill chunk [chunk_start, chunk_start + chunk) plus one token per running decoder."""
    step_bytes = (decode_step_bytes(a, decoders, context) + (chunk_start + chunk) * sizes.kv_bytes_per_token(a)
                  + state_passes(chunk_start) * sizes.state_bytes_per_request(a))
    if a.num_experts:  # the chunk's tokens touch more experts than the decoders' alone
        step_bytes += weight_bytes_read(a, decoders + chunk) - weight_bytes_read(a, decoders)
    chunk_pairs = chunk * chunk_start + chunk * chunk / 2  # each chunk token sees all earlier positions
    step_flops = (decode_step_flops(a, decoders, context) + 2 * sizes.active_params_per_token(a) * chunk
                  + chunk_pairs * attention_flops_per_token_position(a))
    return step_seconds(a, step_bytes, step_flops)


def transfer_seconds(a: Anchor, prompt: float) -> float:
    """P/D disaggregation: ship the new request's KV cache and recurrent state to the decode GPU."""
    return bytes_per_request(a, prompt) / a.pd_link_bytes_per_s


def throughput_gain_over_batch1(a: Anchor, batch: float, context: float) -> float:
    return decode_throughput_tok_s(a, batch, context) / decode_throughput_tok_s(a, 1, context)


# One serving iteration in general: any set of running decoders (each at its own context) plus any prefill chunks.
# The serving simulator prices thousands of them per run, so the formulas live on IterationCost, which reads the
# anchor's constants once (the per-call lookups dominated); the functions below are the same formulas by anchor.
def chunk_kv_tokens_and_pairs(start: float, length: float) -> tuple[float, float]:
    """What one prefill chunk [start, start + length) adds to an iteration: KV positions read, query-key pairs."""
    return start + length, length * start + length * length / 2


class IterationCost:
    """One iteration's bytes, FLOPs and seconds on anchor `a` (its constants read once)."""

    __slots__ = ("weights", "kv", "state", "window", "dense", "attention", "bandwidth", "peak_flops", "experts",
                 "expert_keep", "expert_bytes")

    def __init__(self, a: Anchor):
        self.weights, self.kv = sizes.weight_bytes_read_per_step(a), sizes.kv_bytes_per_token(a)
        self.state, self.dense = sizes.recurrent_state_bytes_per_request(a), 2 * sizes.active_params_per_token(a)
        self.window = sizes.window_kv_bytes_per_request(a)  # read once per decode step, 0 without a window
        self.attention = attention_flops_per_token_position(a)
        self.bandwidth, self.peak_flops = a.hbm_bandwidth_bytes_per_s, a.peak_bf16_flops
        # a mixture of experts: E, the chance 1 - k/E that a token skips an expert, and one expert's bytes over
        # every MoE layer (weights_for adds the experts a step's tokens touch); 0 for a dense model
        self.experts = a.num_experts
        self.expert_keep = 1.0 - a.num_experts_per_tok / a.num_experts if a.num_experts else 1.0
        self.expert_bytes = sizes.moe_expert_params(a) * sizes.expert_bytes_per_param(a) if a.num_experts else 0

    def weights_for(self, tokens):
        """The weight bytes a step of `tokens` tokens reads (roofline.weight_bytes_read): a dense model's are a
        constant; a mixture of experts adds E * (1 - (1 - k/E)^tokens) experts per MoE layer. Works on numbers or
        numpy arrays alike."""
        if not self.experts:
            return self.weights
        return self.weights + self.experts * (1.0 - self.expert_keep ** tokens) * self.expert_bytes

    def bytes(self, decoders, decode_context_sum, prefill_kv_tokens, prefill_state_passes, prefill_tokens=0.0):
        """Weights once (a mixture of experts': those its decoders' and `prefill_tokens` tokens touch); each decoder's
        KV up to its context and its state read and written; each chunk's KV (all earlier positions plus its own) and
        its request's state, `state_passes` times per chunk (summed in `prefill_state_passes`). Works on numbers or
        numpy arrays alike."""
        return (self.weights_for(decoders + prefill_tokens) + (decode_context_sum + prefill_kv_tokens) * self.kv
                + (2 * decoders + prefill_state_passes) * self.state + (decoders + prefill_state_passes) * self.window)

    def flops(self, decoders, decode_context_sum, prefill_tokens, prefill_pairs):
        """Dense matmuls for every token in the step; attention for each query-key pair (a decoder at context C is
        C pairs; a chunk of L tokens starting at s is L*s + L^2/2)."""
        return self.dense * (decoders + prefill_tokens) + (decode_context_sum + prefill_pairs) * self.attention

    def seconds(self, decoders: float, decode_context_sum: float, chunks=()) -> float:
        """One iteration carrying `decoders` decode tokens (contexts summing to `decode_context_sum`) and the
        prefill `chunks` given as (start, length) pairs, one per request: step_seconds of its bytes and FLOPs."""
        kv_tokens = pairs = tokens = 0.0
        passes = 0
        for start, length in chunks:  # chunk_kv_tokens_and_pairs and state_passes, inline (the simulator's hot loop)
            kv_tokens, pairs, tokens = kv_tokens + (start + length), pairs + (length * start + length * length / 2), \
                tokens + length
            passes += 1 if start == 0 else 2
        # bytes() and flops(), inline: the same terms in the same order
        return max((self.weights_for(decoders + tokens) + (decode_context_sum + kv_tokens) * self.kv
                    + (2 * decoders + passes) * self.state + (decoders + passes) * self.window) / self.bandwidth,
                   (self.dense * (decoders + tokens) + (decode_context_sum + pairs) * self.attention)
                   / self.peak_flops)

    def decode_run(self, decoders: int, decode_context_sums):
        """seconds() of pure-decode iterations, one per entry of `decode_context_sums` (a numpy array)."""
        return np.maximum(self.bytes(decoders, decode_context_sums, 0.0, 0) / self.bandwidth,
                          self.flops(decoders, decode_context_sums, 0.0, 0.0) / self.peak_flops)


@lru_cache(maxsize=256)  # pure in the (frozen, hashable) anchor
def iteration_cost(a: Anchor) -> IterationCost:
    return IterationCost(a)


def iteration_bytes(a: Anchor, decoders, decode_context_sum, prefill_kv_tokens, prefill_state_passes,
                    prefill_tokens=0.0):
    return iteration_cost(a).bytes(decoders, decode_context_sum, prefill_kv_tokens, prefill_state_passes,
                                   prefill_tokens)


def iteration_flops(a: Anchor, decoders, decode_context_sum, prefill_tokens, prefill_pairs):
    return iteration_cost(a).flops(decoders, decode_context_sum, prefill_tokens, prefill_pairs)


def iteration_seconds(a: Anchor, decoders: float, decode_context_sum: float,
                      chunks: list[tuple[float, float]] = ()) -> float:
    return iteration_cost(a).seconds(decoders, decode_context_sum, chunks)


# Step times as an engine achieves them: the roofline is the bound; a real iteration runs its kernels below the
# datasheet peaks and spends fixed time outside them (scheduling, input preparation, sampling, launches).
@dataclass(frozen=True)
class Efficiency:
    """Achieved shares of peak FLOP/s and HBM bandwidth, and a fixed time per iteration. BOUND (1, 1, 0) is the
    roofline: every number of the frontier and timeline experiments."""
    flops_fraction: float = 1.0
    bandwidth_fraction: float = 1.0
    overhead_s: float = 0.0

    def __post_init__(self):
        if not (0 < self.flops_fraction <= 1 and 0 < self.bandwidth_fraction <= 1 and 0 <= self.overhead_s < 1):
            raise ValueError(f"efficiency: shares of peak must lie in (0, 1] and the overhead in [0, 1) s, not "
                             f"{self.flops_fraction:g}, {self.bandwidth_fraction:g}, {self.overhead_s:g} s")

    def is_bound(self) -> bool:
        return self == BOUND


BOUND = Efficiency()


def achieved(a: Anchor) -> Efficiency:
    """The anchor's realistic step times (its hardware's achieved_* fields and iteration_overhead_s)."""
    return Efficiency(a.achieved_flops_fraction, a.achieved_bandwidth_fraction, a.iteration_overhead_s)


@lru_cache(maxsize=64)  # one object per (anchor, efficiency): the cached functions above then match by identity
def derated(a: Anchor, eff: Efficiency) -> Anchor:
    """The anchor with its peaks scaled to what is achieved: every formula above then gives achieved kernel time
    (the per-iteration overhead is the engine's to add, once per iteration)."""
    if eff == BOUND:
        return a
    return replace(a, peak_bf16_flops=a.peak_bf16_flops * eff.flops_fraction,
                   hbm_bandwidth_bytes_per_s=a.hbm_bandwidth_bytes_per_s * eff.bandwidth_fraction)
