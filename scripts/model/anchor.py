"""The anchor model's shape and hardware as one frozen record: what every formula in this package reads."""
from __future__ import annotations

from dataclasses import dataclass, fields


@dataclass(frozen=True)
class Anchor:
    num_hidden_layers: int
    full_attention_interval: int
    hidden_size: int
    intermediate_size: int
    num_attention_heads: int
    attn_output_gate: bool
    num_key_value_heads: int
    head_dim: int
    linear_num_key_heads: int
    linear_num_value_heads: int
    linear_key_head_dim: int
    linear_value_head_dim: int
    linear_conv_kernel_dim: int
    vocab_size: int
    tie_word_embeddings: bool
    max_position_embeddings: int
    weight_bytes: int
    kv_cache_bytes: int
    recurrent_state_bytes: int
    hbm_bytes: float
    hbm_bandwidth_bytes_per_s: float
    peak_bf16_flops: float
    runtime_reserve_bytes: float
    pd_link_bytes_per_s: float
    achieved_flops_fraction: float  # the serving model's realistic step times (roofline.Efficiency)
    achieved_bandwidth_fraction: float
    iteration_overhead_s: float
    # Mixture of experts (issue 64; 0 = a dense model): routed experts, how many each token goes to, shared experts
    # every token goes through, each expert's FFN width, the first layers that keep a dense MLP, and the experts'
    # bytes per parameter with their block scales (0: the model's weight_bytes)
    num_experts: int = 0
    num_experts_per_tok: int = 0
    num_shared_experts: int = 0
    moe_intermediate_size: int = 0
    first_dense_layers: int = 0
    expert_weight_bytes: float = 0
    # Multi-head latent attention (MLA; 0 = grouped-query attention): the cached latent's width and its RoPE part
    kv_lora_rank: int = 0
    qk_rope_head_dim: int = 0
    # Sliding-window attention (0 = none): the layers between the full-attention ones attend to their last
    # `sliding_window` tokens with the full layers' projections (gpt-oss) instead of being Gated DeltaNet layers
    sliding_window: int = 0

    def __hash__(self) -> int:  # computed once: roofline's cached functions hash the anchor on every call
        cached = self.__dict__.get("_hash")
        if cached is None:
            cached = hash(tuple(getattr(self, f.name) for f in fields(self)))
            object.__setattr__(self, "_hash", cached)
        return cached


def anchor_from(data: dict) -> Anchor:
    """The anchor of a document whose hardware holds its GPU's datasheet (anchor_file.load); the optional fields
    (experts, MLA, sliding window) an anchor leaves out keep their defaults."""
    flat = {**{k: v["value"] for k, v in data["model"].items()}, **{k: v["value"] for k, v in data["hardware"].items()}}
    return Anchor(**{f.name: flat[f.name] for f in fields(Anchor) if f.name in flat})
