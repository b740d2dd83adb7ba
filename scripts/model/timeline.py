"""What happens when one long prompt arrives while a full batch is decoding. Pure: no I/O.

Three strategies on one time axis, from t = 0 (the prompt arrives at a step boundary):
whole-step prefill, chunked prefill co-scheduled with the decoders (Sarathi-Serve), and
prefill/decode disaggregation (DistServe), where prefill runs on another GPU and the KV cache
and recurrent state cross the link in `Anchor.pd_link_bytes_per_s`.

`cached`: the newcomer's first `cached` prompt tokens are already in a prefix cache (their KV, and the recurrent state
at their end, kept from an earlier request): only the rest is prefilled, each of its tokens still attending to the
whole prompt before it; under P/D the decode GPU still receives the whole prompt's KV.
"""
from __future__ import annotations

import math

from scripts.model import roofline as rl
from scripts.model import sizes
from scripts.model.anchor import Anchor


def running_decoders(a: Anchor, context: float) -> int:
    """The batch already decoding: the memory cap less one slot for the newcomer."""
    return max(0, rl.max_batch_by_memory(a, context) - 1)


def scenario_bytes(a: Anchor, context: float, prompt: int) -> float:
    """What the timeline's scenario holds at once: the running users' KV (and state) at `context` plus the
    newcomer's prompt. The course counts the running users as the memory cap less one slot, a slot sized for
    `context`, so a prompt longer than `context` may not fit beside them: the page says when."""
    return running_decoders(a, context) * rl.bytes_per_request(a, context) + rl.bytes_per_request(a, prompt)


def chunk_starts(prompt: int, chunk: int, cached: int = 0) -> list[int]:
    return list(range(cached, prompt, max(1, min(chunk, prompt - cached))))


def uncached_prefill_seconds(a: Anchor, prompt: int, cached: int = 0) -> float:
    """The newcomer's prefill alone on a GPU (P/D's prefill side): the whole prompt, or what follows its cached
    prefix (one chunk starting there: it reads the cached KV and the saved state)."""
    return rl.prefill_seconds(a, prompt) if cached <= 0 else rl.mixed_step_seconds(a, 0, 0.0, prompt - cached, cached)


def cached_prefix(prompt: int, new_tokens: int) -> int:
    """A prompt that adds `new_tokens` to a cached prefix (the Kimi K3 case: a long prefix, a few new tokens)."""
    return max(0, prompt - new_tokens)


def decode_step_with_newcomer_seconds(a: Anchor, decoders: float, context: float, prompt: float) -> float:
    """A decode step after the newcomer joined: it decodes at context `prompt` beside the others."""
    shared = sizes.weight_bytes_read_per_step(a)
    step_bytes = (rl.decode_step_bytes(a, decoders, context) + rl.decode_step_bytes(a, 1, prompt)
                  - shared)  # the weights are read once for both
    if a.num_experts:  # and the experts once: those the decoders' and the newcomer's tokens touch together
        step_bytes += (rl.weight_bytes_read(a, decoders + 1) - rl.weight_bytes_read(a, decoders)
                       - rl.weight_bytes_read(a, 1) + shared)
    step_flops = rl.decode_step_flops(a, decoders, context) + rl.decode_step_flops(a, 1, prompt)
    return rl.step_seconds(a, step_bytes, step_flops)


def whole_prefill_steps(a: Anchor, decoders: int, context: float, prompt: int, cached: int = 0) -> list[float]:
    return [rl.mixed_step_seconds(a, decoders, context, prompt - cached, cached)]


def chunked_prefill_steps(a: Anchor, decoders: int, context: float, prompt: int, chunk: int,
                          cached: int = 0) -> list[float]:
    return [rl.mixed_step_seconds(a, decoders, context, min(chunk, prompt - start), start)
            for start in chunk_starts(prompt, chunk, cached)]


def whole_prefill_stall_s(a: Anchor, context: float, prompt: int, cached: int = 0) -> float:
    return max(whole_prefill_steps(a, running_decoders(a, context), context, prompt, cached))


def chunked_max_step_s(a: Anchor, context: float, prompt: int, chunk: int, cached: int = 0) -> float:
    return max(chunked_prefill_steps(a, running_decoders(a, context), context, prompt, chunk, cached))


def chunked_ttft_s(a: Anchor, context: float, prompt: int, chunk: int, cached: int = 0) -> float:
    return math.fsum(chunked_prefill_steps(a, running_decoders(a, context), context, prompt, chunk, cached))


def whole_ttft_s(a: Anchor, context: float, prompt: int, cached: int = 0) -> float:
    return math.fsum(whole_prefill_steps(a, running_decoders(a, context), context, prompt, cached))


def disagg_ttft_s(a: Anchor, prompt: int, cached: int = 0) -> float:
    return uncached_prefill_seconds(a, prompt, cached) + rl.transfer_seconds(a, prompt)


def prefix_hit_ttft_s(a: Anchor, context: float, prompt: int, new_tokens: int) -> float:
    """The whole-prefill lane's TTFT when all but `new_tokens` of the prompt is cached."""
    return whole_ttft_s(a, context, prompt, cached_prefix(prompt, new_tokens))


def prefix_saved_serves(a: Anchor, context: float, prompt: int, new_tokens: int) -> int:
    """How many such cache-hit requests the prefill time a hit saves could serve: (miss - hit) / hit, whole."""
    hit = prefix_hit_ttft_s(a, context, prompt, new_tokens)
    return math.floor((whole_ttft_s(a, context, prompt) - hit) / hit) if hit > 0 else 0


def disagg_max_step_s(a: Anchor, context: float) -> float:
    """Running users never share a step with prefill; their slowest step is a plain decode step."""
    return rl.decode_step_seconds(a, running_decoders(a, context), context)


def lanes(a: Anchor, context: float, prompt: int, chunk: int, cached: int = 0, tail_steps: int = 6) -> list[dict]:
    """Every step of the three lanes, as bars for the chart: until each lane's TTFT plus a few decode steps."""
    decoders = running_decoders(a, context)
    plain = rl.decode_step_seconds(a, decoders, context)
    after = decode_step_with_newcomer_seconds(a, decoders, context, prompt)
    bars: list[dict] = []

    def run(lane: str, prefill_steps: list[float], kind: str) -> None:
        t = 0.0
        for d in prefill_steps:
            bars.append({"lane": lane, "kind": kind, "start_s": t, "end_s": t + d})
            t += d
        for _ in range(tail_steps):
            bars.append({"lane": lane, "kind": "decode", "start_s": t, "end_s": t + after})
            t += after

    run("whole", whole_prefill_steps(a, decoders, context, prompt, cached), "prefill")
    run("chunked", chunked_prefill_steps(a, decoders, context, prompt, chunk, cached), "chunk")
    ttft = disagg_ttft_s(a, prompt, cached)
    t, n = 0.0, math.ceil(ttft / plain) if plain > 0 else 0
    for _ in range(n):
        bars.append({"lane": "disagg", "kind": "decode", "start_s": t, "end_s": t + plain})
        t += plain
    for _ in range(tail_steps):
        bars.append({"lane": "disagg", "kind": "decode", "start_s": t, "end_s": t + after})
        t += after
    prefill = uncached_prefill_seconds(a, prompt, cached)
    bars.append({"lane": "disagg_prefill", "kind": "prefill", "start_s": 0.0, "end_s": prefill})
    bars.append({"lane": "disagg_prefill", "kind": "transfer", "start_s": prefill, "end_s": ttft})
    return bars
