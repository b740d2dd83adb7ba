"""How big the anchor model is: its parameters by kind of layer, the weight bytes it holds and those a step reads,
and the bytes each token (KV cache) and each request (recurrent state, a window's KV) keeps. Pure: no I/O.
roofline.py turns these into a step's bytes, FLOPs and time.

Hybrid attention is first-class: only the full-attention layers keep a per-token KV cache; the Gated DeltaNet
(linear) layers keep a fixed-size recurrent state per request; sliding-window layers (gpt-oss) keep their last W
tokens' K and V per request. A mixture of experts (issue 64): memory holds every expert, a token's FLOPs follow its
active parameters, and a step reads the experts its tokens touch (expected_experts_touched). Multi-head latent
attention caches one latent per token and layer (kv_lora_rank + qk_rope_head_dim values)."""
from __future__ import annotations

from functools import lru_cache

from scripts.model.anchor import Anchor


def full_attention_layers(a: Anchor) -> int:
    return a.num_hidden_layers // a.full_attention_interval


def window_attention_layers(a: Anchor) -> int:
    """Sliding-window attention layers: the layers between the full-attention ones when the anchor has a window."""
    return a.num_hidden_layers - full_attention_layers(a) if a.sliding_window else 0


def linear_attention_layers(a: Anchor) -> int:
    """Gated DeltaNet layers: the layers between the full-attention ones when the anchor has no window."""
    return a.num_hidden_layers - full_attention_layers(a) - window_attention_layers(a)


def full_attention_projection_params(a: Anchor) -> int:
    """The layer's linear projections (q with its output gate, k, v, o): what a quantization recipe quantizes."""
    q_width = a.num_attention_heads * a.head_dim
    q_out = q_width * (2 if a.attn_output_gate else 1)
    kv_out = 2 * a.num_key_value_heads * a.head_dim
    return a.hidden_size * (q_out + kv_out) + q_width * a.hidden_size


def full_attention_layer_params(a: Anchor) -> int:
    qk_norms = 2 * a.head_dim
    return full_attention_projection_params(a) + qk_norms


def linear_attention_projection_params(a: Anchor) -> int:
    """The Gated DeltaNet layer's linear projections (in_qkvz, the beta/decay gates' in_ba, out)."""
    key_dim = a.linear_num_key_heads * a.linear_key_head_dim
    value_dim = a.linear_num_value_heads * a.linear_value_head_dim
    in_qkvz = a.hidden_size * (2 * key_dim + 2 * value_dim)
    in_ba = a.hidden_size * 2 * a.linear_num_value_heads  # per-head beta and decay gates
    out = value_dim * a.hidden_size
    return in_qkvz + in_ba + out


def linear_attention_layer_params(a: Anchor) -> int:
    key_dim = a.linear_num_key_heads * a.linear_key_head_dim
    value_dim = a.linear_num_value_heads * a.linear_value_head_dim
    conv = (2 * key_dim + value_dim) * a.linear_conv_kernel_dim
    per_head = 2 * a.linear_num_value_heads  # A_log and dt_bias
    return linear_attention_projection_params(a) + conv + per_head + a.linear_value_head_dim


def mlp_params(a: Anchor) -> int:
    return 3 * a.hidden_size * a.intermediate_size


def moe_layers(a: Anchor) -> int:
    """Layers whose MLP is a mixture of experts (all but the first `first_dense_layers`; none for a dense model)."""
    return a.num_hidden_layers - a.first_dense_layers if a.num_experts else 0


def expert_params(a: Anchor) -> int:
    """One expert's SwiGLU FFN (gate, up, down) at its own width."""
    return 3 * a.hidden_size * a.moe_intermediate_size


def moe_layer_mlp_params(a: Anchor) -> int:
    """A MoE layer's MLP in memory: its router, every routed expert and the shared ones."""
    return a.hidden_size * a.num_experts + (a.num_experts + a.num_shared_experts) * expert_params(a)


def expert_bytes_per_param(a: Anchor) -> float:
    """The experts' bytes per parameter (their format's block scales included), else the model's."""
    return a.expert_weight_bytes or a.weight_bytes


def expected_experts_touched(a: Anchor, tokens: float) -> float:
    """Distinct routed experts a MoE layer reads for `tokens` tokens in one step, each routed to k of E uniformly at
    random: E * (1 - (1 - k/E)^tokens). One token reads k; many read all E."""
    if not a.num_experts or tokens <= 0:
        return 0.0
    return a.num_experts * (1.0 - (1.0 - a.num_experts_per_tok / a.num_experts) ** tokens)


def expert_knee_batch(a: Anchor, percent: float) -> int:
    """The smallest batch whose decode step reads at least `percent` % of the routed experts: the first B with
    (1 - k/E)^B <= 1 - percent/100 (past it more requests add KV reads but hardly any weight reads); 0 if dense."""
    if not a.num_experts:
        return 0
    b = 1  # counted up (at most a few thousand steps for any E, k and percent the schema allows)
    while expected_experts_touched(a, b) < a.num_experts * percent / 100:
        b += 1
    return b


def moe_expert_params(a: Anchor) -> int:
    """One routed expert in every MoE layer: the weights a step reads per expert it touches (times their bytes)."""
    return moe_layers(a) * expert_params(a)


def embedding_params(a: Anchor) -> int:
    return a.vocab_size * a.hidden_size


@lru_cache(maxsize=256)  # pure in the (frozen, hashable) anchor; the simulator calls it every iteration
def total_params(a: Anchor) -> int:
    per_layer_common = mlp_params(a) + 2 * a.hidden_size  # MLP and two RMSNorms
    layers = (full_attention_layers(a) * (full_attention_layer_params(a) + per_layer_common)
              + linear_attention_layers(a) * (linear_attention_layer_params(a) + per_layer_common))
    if a.sliding_window:  # a window layer has the full layers' projections
        layers += window_attention_layers(a) * (full_attention_layer_params(a) + per_layer_common)
    moe = moe_layers(a) * (moe_layer_mlp_params(a) - mlp_params(a))  # their experts in place of the dense MLP
    heads = embedding_params(a) * (1 if a.tie_word_embeddings else 2)
    return layers + moe + heads + a.hidden_size


def routed_expert_params(a: Anchor) -> int:
    """Every routed expert of every MoE layer: what a step reads only in part."""
    return moe_layers(a) * a.num_experts * expert_params(a)


@lru_cache(maxsize=256)  # pure in the (frozen, hashable) anchor; the simulator calls it every iteration
def params_read_per_step(a: Anchor) -> int:
    """Everything but the input embedding table, of which a step reads only B rows (negligible)."""
    return total_params(a) - (0 if a.tie_word_embeddings else embedding_params(a))


@lru_cache(maxsize=256)
def active_params_per_token(a: Anchor) -> int:
    """The parameters one token multiplies by (its FLOPs are twice this): all a dense model reads per step; for a
    MoE model, all but the routed experts, plus the k of them the token goes to in each MoE layer."""
    routed = routed_expert_params(a)
    return params_read_per_step(a) - routed + moe_layers(a) * a.num_experts_per_tok * expert_params(a)


def experts_in_own_format(a: Anchor) -> bool:
    """Whether a mixture's experts ship in a format of their own (e.g. gpt-oss's MXFP4), not the model's weight_bytes:
    what the page's weight and baseline labels then name."""
    return bool(a.num_experts) and expert_bytes_per_param(a) != a.weight_bytes


def weight_bytes_total(a: Anchor) -> int:
    routed = routed_expert_params(a)
    return (total_params(a) - routed) * a.weight_bytes + routed * expert_bytes_per_param(a)


@lru_cache(maxsize=256)  # pure in the (frozen, hashable) anchor; the simulator calls it every iteration
def weight_bytes_read_per_step(a: Anchor) -> int:
    """A dense step's weight bytes (for a MoE model: all but the routed experts; weight_bytes_read adds the ones
    its tokens touch)."""
    return (params_read_per_step(a) - routed_expert_params(a)) * a.weight_bytes


def weight_bytes_all_experts(a: Anchor) -> float:
    """The weight bytes a step reads once its tokens touch every routed expert (the limit of weight_bytes_read)."""
    return weight_bytes_read_per_step(a) + routed_expert_params(a) * expert_bytes_per_param(a)


@lru_cache(maxsize=256)  # pure in the (frozen, hashable) anchor; the simulator calls it every iteration
def kv_bytes_per_token(a: Anchor) -> int:
    """K and V of every KV head per full-attention layer; with MLA one latent and its RoPE part per layer."""
    if a.kv_lora_rank:
        return full_attention_layers(a) * (a.kv_lora_rank + a.qk_rope_head_dim) * a.kv_cache_bytes
    return 2 * full_attention_layers(a) * a.num_key_value_heads * a.head_dim * a.kv_cache_bytes


def recurrent_state_bytes_per_request(a: Anchor) -> int:
    """The Gated DeltaNet layers' recurrent state of one request: read and written whole by every decode step."""
    return (linear_attention_layers(a) * a.linear_num_value_heads * a.linear_key_head_dim
            * a.linear_value_head_dim * a.recurrent_state_bytes)


def window_kv_elements_per_request(a: Anchor) -> int:
    """K and V of the last `sliding_window` tokens in every window layer: what a request holds there once its
    context passes the window (a shorter context holds less; priced at the window, an upper bound)."""
    if not a.sliding_window:
        return 0
    return 2 * window_attention_layers(a) * a.num_key_value_heads * a.head_dim * a.sliding_window


def window_kv_bytes_per_request(a: Anchor) -> int:
    """window_kv_elements_per_request in the cache's format (0 without a window: the cache's format is then no input
    of a request's fixed-size memory, so its provenance does not name it)."""
    return window_kv_elements_per_request(a) * a.kv_cache_bytes if a.sliding_window else 0


@lru_cache(maxsize=256)  # pure in the (frozen, hashable) anchor; the simulator calls it every iteration
def state_bytes_per_request(a: Anchor) -> int:
    """A request's fixed-size memory beside its per-token KV cache: the DeltaNet state and the window layers' KV."""
    return recurrent_state_bytes_per_request(a) + window_kv_bytes_per_request(a)


@lru_cache(maxsize=256)
def decode_state_bytes(a: Anchor) -> int:
    """What a decode step moves of one request's fixed-size memory: the DeltaNet state read and written (twice),
    the window layers' KV read once (the new token's K and V, like the full layers' own, are not counted)."""
    return 2 * recurrent_state_bytes_per_request(a) + window_kv_bytes_per_request(a)
