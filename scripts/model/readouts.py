"""What each live readout on the page means, as one Python definition. Pure: no I/O.

The page's JS (templates/lesson.js) computes the same names from precomputed.json's constants;
the browser tests hold the two together within 1e-6 relative.
"""
from __future__ import annotations

from scripts.model import roofline as rl
from scripts.model import sizes
from scripts.model import timeline as tl
from scripts.model.anchor import Anchor

SLIDERS = ("batch", "context_tokens", "tpot_slo_ms", "prompt_tokens", "chunk_tokens")


def effective_batch(a: Anchor, batch: int, context: int) -> int:
    """The batch slider cannot go past what memory holds at this context."""
    return max(0, min(int(batch), rl.max_batch_by_memory(a, context)))


def readouts(a: Anchor, batch: int, context_tokens: int, tpot_slo_ms: float, prompt_tokens: int,
             chunk_tokens: int, new_tokens: int, prefix_cached: bool = False) -> dict[str, float]:
    """`new_tokens`: what a prompt adds to its cached prefix (config/cited.json cited.kimi.new_tokens);
    `prefix_cached`: the timeline's switch (all but new_tokens of the newcomer's prompt cached)."""
    c, p, k = context_tokens, prompt_tokens, chunk_tokens
    cached = tl.cached_prefix(p, new_tokens) if prefix_cached else 0
    b = effective_batch(a, batch, c)
    nb = rl.max_batch_under_slo(a, c, tpot_slo_ms / 1e3)
    moe = {"experts_read_at_batch": sizes.expected_experts_touched(a, b)} if a.num_experts else {}  # per MoE layer
    return {**moe,
        "max_batch_mem": rl.max_batch_by_memory(a, c),
        "max_batch_slo": nb,
        "throughput_at_slo_tok_s": rl.decode_throughput_tok_s(a, nb, c) if nb else 0.0,
        "per_user_tok_s_at_slo": rl.per_user_tok_s(a, nb, c) if nb else 0.0,
        "effective_batch": b,
        "step_ms_at_batch": rl.decode_step_seconds(a, b, c) * 1e3 if b else 0.0,
        "throughput_at_batch_tok_s": rl.decode_throughput_tok_s(a, b, c) if b else 0.0,
        "per_user_tok_s_at_batch": rl.per_user_tok_s(a, b, c) if b else 0.0,
        "running_users": tl.running_decoders(a, c),
        "whole_prefill_stall_s": tl.whole_prefill_stall_s(a, c, p, cached),
        "whole_ttft_s": tl.whole_ttft_s(a, c, p, cached),
        "chunked_max_step_ms": tl.chunked_max_step_s(a, c, p, k, cached) * 1e3,
        "chunked_ttft_s": tl.chunked_ttft_s(a, c, p, k, cached),
        "disagg_max_step_ms": tl.disagg_max_step_s(a, c) * 1e3,
        "disagg_ttft_s": tl.disagg_ttft_s(a, p, cached),
        # the prefix cache, hit against miss, whatever the switch says
        "prefix_cached_tokens": tl.cached_prefix(p, new_tokens),
        "prefix_hit_ttft_s": tl.prefix_hit_ttft_s(a, c, p, new_tokens),
        "prefix_miss_ttft_s": tl.whole_ttft_s(a, c, p),
        "prefix_saved_serves": tl.prefix_saved_serves(a, c, p, new_tokens),
        "transfer_ms": rl.transfer_seconds(a, p) * 1e3,
        # the request-path diagram: what each stage moves and computes at these settings
        "prefill_tflop": rl.prefill_flops(a, p) / 1e12,
        "prefill_gb": rl.prefill_bytes(a, p) / 1e9,
        "prefill_s": rl.prefill_seconds(a, p),
        "decode_gb_at_batch": rl.decode_step_bytes(a, b, c) / 1e9,
        "decode_gflop_at_batch": rl.decode_step_flops(a, b, c) / 1e9,
        # which side of the roofline holds each step (1 compute, 0 memory bandwidth): the path's words follow them
        "decode_compute_bound_at_batch": float(rl.compute_bound(a, rl.decode_step_bytes(a, b, c),
                                                                rl.decode_step_flops(a, b, c))),
        "prefill_compute_bound": float(rl.compute_bound(a, rl.prefill_bytes(a, p), rl.prefill_flops(a, p))),
        "kv_mb_per_request": rl.bytes_per_request(a, c) / 1e6,
        "kv_gb_at_batch": b * rl.bytes_per_request(a, c) / 1e9,
    }


def readout_formats(a: Anchor) -> dict[str, tuple[str, str]]:
    """Each readout's format and unit for this anchor (a mixture of experts has one more: the experts a step reads)."""
    return {**READOUT_FORMATS, **({"experts_read_at_batch": ("int", "expert")} if a.num_experts else {})}


READOUT_FORMATS = {
    "max_batch_mem": ("int", "request"), "max_batch_slo": ("int", "request"),
    "throughput_at_slo_tok_s": ("int", "tok/s"), "per_user_tok_s_at_slo": ("int", "tok/s"),
    "effective_batch": ("int", "request"), "step_ms_at_batch": ("f1", "ms"),
    "throughput_at_batch_tok_s": ("int", "tok/s"), "per_user_tok_s_at_batch": ("int", "tok/s"),
    "running_users": ("int", "request"), "whole_prefill_stall_s": ("f2", "s"), "whole_ttft_s": ("f2", "s"),
    "chunked_max_step_ms": ("f1", "ms"), "chunked_ttft_s": ("f2", "s"), "disagg_max_step_ms": ("f1", "ms"),
    "disagg_ttft_s": ("f2", "s"), "transfer_ms": ("int", "ms"),
    "prefill_tflop": ("int", "TFLOP"), "prefill_gb": ("f1", "GB"), "prefill_s": ("f2", "s"),
    "decode_gb_at_batch": ("f1", "GB"), "decode_gflop_at_batch": ("int", "GFLOP"),
    "kv_mb_per_request": ("int", "MB"), "kv_gb_at_batch": ("f1", "GB"),
    "prefix_cached_tokens": ("int", "token"), "prefix_hit_ttft_s": ("f2", "s"), "prefix_miss_ttft_s": ("f2", "s"),
    "prefix_saved_serves": ("int", "request"),
    "decode_compute_bound_at_batch": ("int", "flag"), "prefill_compute_bound": ("int", "flag"),
}
