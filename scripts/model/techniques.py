"""The earlier lessons' techniques as changes to one roofline step of the anchor (issue 40). Pure: no I/O.

Which "fast" does each technique buy? Each one changes a term of the same cost model (scripts/model/roofline.py):

  weight quantization   bytes per weight of the linear layers (embeddings, the LM head, norms, the DeltaNet
                        convolution and per-head parameters stay bf16: config/techniques.json weights.keep_bf16);
                        with W8A8 FP8 the linear layers' matmuls also run at the GPU's FP8 peak where its
                        datasheet has one (config/gpus.json peak_fp8_flops), weight-only int4 computes in bf16
  KV-cache quantization bytes per cached K/V element, the window layers' too (the DeltaNet state stays fp32)
  speculative decoding  a verification step carries k + 1 tokens per request through the same roofline; k draft
                        steps each cost `draft_cost` of the target's decode step; each verification yields
                        (1 - a^(k+1)) / (1 - a) tokens (Leviathan, Kalman & Matias 2023, eq. 1); the draft also
                        prefills the prompt
  reserved contexts     without paging a request sets aside `reserve_tokens` (or its own context, if longer) when
                        admitted; paged KV holds only what it has (the baseline)

Attention (QK^T and PV) is priced at the bf16 peak in every case: the FP8 peak applies to the linear layers only.
Every function is a roofline bound on speed, like the baseline; quality is not modelled (C14)."""
from __future__ import annotations

import math
from dataclasses import dataclass, fields

from scripts.model import roofline as rl
from scripts.model import sizes
from scripts.model.anchor import Anchor


@dataclass(frozen=True)
class Technique:
    """One technique's settings (the baseline: every field at its default)."""
    weight_bytes: float | None = None  # bytes per linear-layer weight (None: the anchor's)
    fp8_compute: bool = False          # linear-layer matmuls at the GPU's FP8 peak, where it has one
    kv_bytes: float | None = None      # bytes per cached K or V element (None: the anchor's)
    draft_tokens: int = 0              # k: speculative tokens per verification step (0: no speculation)
    acceptance: float = 0.0            # a: the chance each draft token is accepted
    draft_cost: float = 0.0            # one draft step's time as a share of the target's decode step
    reserve_tokens: int = 0            # tokens a request reserves when admitted (0: paged, holds what it has)

    @classmethod
    def of(cls, d: dict) -> Technique:
        return cls(**{f.name: d[f.name] for f in fields(cls) if f.name in d})


@dataclass(frozen=True)
class Gpu:
    hbm_bytes: float
    hbm_bandwidth_bytes_per_s: float
    peak_bf16_flops: float
    peak_fp8_flops: float | None = None  # None: the datasheet lists no FP8 tensor-core rate

    @classmethod
    def of(cls, d: dict) -> Gpu:
        return cls(**{f.name: d.get(f.name) for f in fields(cls)})


def linear_weight_params(a: Anchor) -> int:
    """The weights of the decoder layers' linear projections (what a quantization recipe quantizes): attention's
    q/k/v/o, DeltaNet's in/out projections, the MLP (a MoE layer's: every routed and shared expert; its router
    stays in the model's format); not embeddings, the LM head, norms or the convolution."""
    dense = (sizes.full_attention_layers(a) * (sizes.full_attention_projection_params(a) + sizes.mlp_params(a))
             + sizes.linear_attention_layers(a) * (sizes.linear_attention_projection_params(a) + sizes.mlp_params(a)))
    if a.sliding_window:  # a window layer has the full layers' projections
        dense += sizes.window_attention_layers(a) * (sizes.full_attention_projection_params(a) + sizes.mlp_params(a))
    if not a.num_experts:
        return dense
    experts = (a.num_experts + a.num_shared_experts) * sizes.expert_params(a)
    return dense + sizes.moe_layers(a) * (experts - sizes.mlp_params(a))


def kv_elements_per_token(a: Anchor) -> int:
    """Elements one token adds to the cache (the full-attention layers' K and V, or with multi-head latent attention
    one latent and its RoPE part): times bytes per element."""
    if a.kv_lora_rank:
        return sizes.full_attention_layers(a) * (a.kv_lora_rank + a.qk_rope_head_dim)
    return 2 * sizes.full_attention_layers(a) * a.num_key_value_heads * a.head_dim


class TechniqueCost:
    """The anchor under one technique on one GPU: bytes and FLOPs of a step, memory per request. A mixture of experts
    reads the routed experts its step's tokens touch (roofline.IterationCost.weights_for) and multiplies each token
    by its active parameters; a weight format never widens experts the model ships narrower (e.g. MXFP4)."""

    def __init__(self, a: Anchor, t: Technique, gpu: Gpu):
        linear, wb = linear_weight_params(a), (a.weight_bytes if t.weight_bytes is None else t.weight_bytes)
        routed = sizes.routed_expert_params(a)  # 0 for a dense model
        self.weights_read = (sizes.params_read_per_step(a) - linear) * a.weight_bytes + (linear - routed) * wb
        self.weights_total = (sizes.total_params(a) - linear) * a.weight_bytes + (linear - routed) * wb
        self.anchor, active_linear = a, linear  # the linear weights one token multiplies by
        if a.num_experts:
            ewb = min(wb, sizes.expert_bytes_per_param(a))
            self.weights_total += routed * ewb
            self.expert_bytes = sizes.moe_expert_params(a) * ewb
            active_linear = linear - routed + a.num_experts_per_tok * sizes.moe_expert_params(a)
        kvb = a.kv_cache_bytes if t.kv_bytes is None else t.kv_bytes
        self.kv = kv_elements_per_token(a) * kvb
        # a request's fixed-size memory: the DeltaNet state (its own format) and the window layers' KV (the cache's)
        recurrent, window = sizes.recurrent_state_bytes_per_request(a), sizes.window_kv_elements_per_request(a) * kvb
        self.state, self.decode_state = recurrent + window, 2 * recurrent + window
        fast = t.fp8_compute and gpu.peak_fp8_flops is not None
        self.fast_flops = 2 * active_linear if fast else 0     # per token, at the FP8 peak
        self.slow_flops = 2 * sizes.active_params_per_token(a) - self.fast_flops  # per token, at the bf16 peak
        self.attention = rl.attention_flops_per_token_position(a)
        self.peak_fast = gpu.peak_fp8_flops if fast else gpu.peak_bf16_flops
        self.peak = gpu.peak_bf16_flops
        self.bandwidth = gpu.hbm_bandwidth_bytes_per_s
        self.free = gpu.hbm_bytes - self.weights_total - a.runtime_reserve_bytes
        self.t = t

    def weights_for(self, tokens: float) -> float:
        """The weight bytes a step of `tokens` tokens reads (a dense model's: all of them, whatever the tokens)."""
        if not self.anchor.num_experts:
            return self.weights_read
        return self.weights_read + sizes.expected_experts_touched(self.anchor, tokens) * self.expert_bytes

    def step_seconds(self, batch: float, context: float, tokens: float = 1) -> float:
        """A decode step (or a verification step of `tokens` per request) at `batch` requests of `context`."""
        n = batch * tokens
        step_bytes = self.weights_for(n) + batch * (context * self.kv + self.decode_state)
        compute = n * self.fast_flops / self.peak_fast + \
            (n * self.slow_flops + n * context * self.attention) / self.peak
        return max(step_bytes / self.bandwidth, compute)

    def prefill_seconds(self, prompt: float) -> float:
        step_bytes = self.weights_for(prompt) + prompt * self.kv + self.state
        compute = prompt * self.fast_flops / self.peak_fast + \
            (prompt * self.slow_flops + prompt * prompt / 2 * self.attention) / self.peak
        return max(step_bytes / self.bandwidth, compute)

    def tokens_per_verification(self) -> float:
        """(1 - a^(k+1)) / (1 - a): the expected tokens one verification step yields (k + 1 when a = 1). The power
        by repeated products, as lesson.js computes it (the same bits in both)."""
        k, alpha = self.t.draft_tokens, self.t.acceptance
        if alpha >= 1:
            return k + 1.0
        power = 1.0
        for _ in range(k + 1):
            power *= alpha
        return (1 - power) / (1 - alpha)

    def tpot_seconds(self, batch: float, context: float) -> float:
        """Time per output token per request: one step, or (verification + k draft steps) / expected tokens."""
        k = self.t.draft_tokens
        if k == 0:
            return self.step_seconds(batch, context)
        draft = self.t.draft_cost * self.step_seconds(batch, context)
        return (self.step_seconds(batch, context, k + 1) + k * draft) / self.tokens_per_verification()

    def ttft_seconds(self, prompt: float) -> float:
        """The prompt's prefill alone (no queue); a draft model prefills it too."""
        extra = self.t.draft_cost if self.t.draft_tokens > 0 else 0.0
        return self.prefill_seconds(prompt) * (1 + extra)

    def bytes_per_request(self, context: float) -> float:
        return max(context, self.t.reserve_tokens) * self.kv + self.state

    def max_batch(self, context: float) -> int:
        return max(0, math.floor(self.free / self.bytes_per_request(context)))

    def max_batch_under_slo(self, context: float, tpot_slo_s: float) -> int:
        """The largest batch within memory whose TPOT meets the target (0 if none): TPOT rises with the batch, so
        a bisection over the integers finds it for every technique alike."""
        lo, hi = 0, self.max_batch(context)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.tpot_seconds(mid, context) <= tpot_slo_s:
                lo = mid
            else:
                hi = mid - 1
        return lo

    def frontier(self, context: float) -> list[dict]:
        """(TPOT, throughput) at every batch up to the memory cap."""
        rows = []
        for b in range(1, self.max_batch(context) + 1):
            tpot = self.tpot_seconds(b, context)
            rows.append({"batch": b, "step_ms": tpot * 1e3, "throughput_tok_s": b / tpot})
        return rows


def readouts(a: Anchor, technique: dict, gpu: dict, context: int, prompt: int, tpot_slo_ms: float) -> dict:
    """The five numbers that answer "which fast?", for one technique on one GPU at one state:
    TTFT of the prompt, TPOT at batch 1, the batch memory holds, the batch (and its throughput and per-user speed)
    that meets the TPOT target, and the throughput at the memory cap."""
    m = TechniqueCost(a, Technique.of(technique), Gpu.of(gpu))
    cap, nb = m.max_batch(context), m.max_batch_under_slo(context, tpot_slo_ms / 1e3)
    at_slo = m.tpot_seconds(nb, context) if nb else 0.0
    at_cap = m.tpot_seconds(cap, context) if cap else 0.0
    return {
        "ttft_s": m.ttft_seconds(prompt),
        "tpot_b1_ms": m.tpot_seconds(1, context) * 1e3,
        "max_batch": cap,
        "slo_batch": nb,
        "slo_throughput_tok_s": nb / at_slo if nb else 0.0,
        "slo_per_user_tok_s": 1 / at_slo if nb else 0.0,
        "cap_throughput_tok_s": cap / at_cap if cap else 0.0,
    }


def change(a: Anchor, technique: dict, baseline: dict, gpu: dict, context: int, prompt: int, tpot_slo_ms: float,
           name: str) -> float:
    """One readout under the technique over the baseline's (NaN where the baseline's is 0)."""
    got = readouts(a, technique, gpu, context, prompt, tpot_slo_ms)[name]
    base = readouts(a, baseline, gpu, context, prompt, tpot_slo_ms)[name]
    return got / base if base else math.nan  # no ratio to a zero (the page shows a dash)
