"""What happens when one long prompt arrives while a full batch is decoding. Pure: no I/O.

Three strategies on one time axis, from t = 0 (the prompt arrives at a step boundary):
whole-step prefill, chunked prefill co-scheduled with the decoders (Sarathi-Serve), and
prefill/decode disaggregation (DistServe), where prefill runs on another GPU and the KV cache
and recurrent state cross the link in `Anchor.pd_link_bytes_per_s`.
"""
from __future__ import annotations

import math

from scripts.model import roofline as rl
from scripts.model.anchor import Anchor


def running_decoders(a: Anchor, context: float) -> int:
    """The batch already decoding: the memory cap less one slot for the newcomer."""
    return max(0, rl.max_batch_by_memory(a, context) - 1)


def scenario_bytes(a: Anchor, context: float, prompt: int) -> float:
    """What the timeline's scenario holds at once: the running users' KV (and state) at `context` plus the
    newcomer's prompt. The course counts the running users as the memory cap less one slot, a slot sized for
    `context`, so a prompt longer than `context` may not fit beside them: the page says when."""
    return running_decoders(a, context) * rl.bytes_per_request(a, context) + rl.bytes_per_request(a, prompt)


def chunk_starts(prompt: int, chunk: int) -> list[int]:
    return list(range(0, prompt, max(1, min(chunk, prompt))))


def decode_step_with_newcomer_seconds(a: Anchor, decoders: float, context: float, prompt: float) -> float:
    """A decode step after the newcomer joined: it decodes at context `prompt` beside the others."""
    step_bytes = (rl.decode_step_bytes(a, decoders, context) + rl.decode_step_bytes(a, 1, prompt)
                  - rl.weight_bytes_read_per_step(a))  # the weights are read once for both
    step_flops = rl.decode_step_flops(a, decoders, context) + rl.decode_step_flops(a, 1, prompt)
    return rl.step_seconds(a, step_bytes, step_flops)


def whole_prefill_steps(a: Anchor, decoders: int, context: float, prompt: int) -> list[float]:
    return [rl.mixed_step_seconds(a, decoders, context, prompt, 0)]


def chunked_prefill_steps(a: Anchor, decoders: int, context: float, prompt: int, chunk: int) -> list[float]:
    return [rl.mixed_step_seconds(a, decoders, context, min(chunk, prompt - start), start)
            for start in chunk_starts(prompt, chunk)]


def whole_prefill_stall_s(a: Anchor, context: float, prompt: int) -> float:
    return max(whole_prefill_steps(a, running_decoders(a, context), context, prompt))


def chunked_max_step_s(a: Anchor, context: float, prompt: int, chunk: int) -> float:
    return max(chunked_prefill_steps(a, running_decoders(a, context), context, prompt, chunk))


def chunked_ttft_s(a: Anchor, context: float, prompt: int, chunk: int) -> float:
    return math.fsum(chunked_prefill_steps(a, running_decoders(a, context), context, prompt, chunk))


def whole_ttft_s(a: Anchor, context: float, prompt: int) -> float:
    return math.fsum(whole_prefill_steps(a, running_decoders(a, context), context, prompt))


def disagg_ttft_s(a: Anchor, prompt: int) -> float:
    return rl.prefill_seconds(a, prompt) + rl.transfer_seconds(a, prompt)


def disagg_max_step_s(a: Anchor, context: float) -> float:
    """Running users never share a step with prefill; their slowest step is a plain decode step."""
    return rl.decode_step_seconds(a, running_decoders(a, context), context)


def lanes(a: Anchor, context: float, prompt: int, chunk: int, tail_steps: int = 6) -> list[dict]:
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

    run("whole", whole_prefill_steps(a, decoders, context, prompt), "prefill")
    run("chunked", chunked_prefill_steps(a, decoders, context, prompt, chunk), "chunk")
    ttft = disagg_ttft_s(a, prompt)
    t, n = 0.0, math.ceil(ttft / plain) if plain > 0 else 0
    for _ in range(n):
        bars.append({"lane": "disagg", "kind": "decode", "start_s": t, "end_s": t + plain})
        t += plain
    for _ in range(tail_steps):
        bars.append({"lane": "disagg", "kind": "decode", "start_s": t, "end_s": t + after})
        t += after
    prefill = rl.prefill_seconds(a, prompt)
    bars.append({"lane": "disagg_prefill", "kind": "prefill", "start_s": 0.0, "end_s": prefill})
    bars.append({"lane": "disagg_prefill", "kind": "transfer", "start_s": prefill, "end_s": ttft})
    return bars
