"""Prefill/decode disaggregation: P prefill GPUs and D decode GPUs. Pure.

The prefill side (`PrefillPool`, scheduler `disagg.prefill`): each prefill GPU runs one prompt at a time, FCFS across
the P GPUs (the least busy takes the next), taking roofline.prefill_seconds plus the iteration overhead. The
finished prompt then goes to its decode GPU (request i to decode GPU i mod D, as vLLM's P/D proxy deals requests
round-robin), whose loop (loop.py, scheduler `disagg.decode`) admits it FCFS with memory for prompt + output
reserved first (a full decode GPU holds the KV back: backpressure, counted in its TTFT), and only then pulls its KV
cache and state over its inbound link (roofline.transfer_seconds; one link per decode GPU, a FIFO queue). Where the
first token counts as emitted (`first_token`):
  decode   (the default: vLLM's P/D proxy streams the decode instance's output, and the metrics are vLLM's) at the
           end of the request's first iteration on the decode GPU, which computes all `output` tokens (it
           recomputes the last prompt position, as vLLM does when the whole prompt's KV came from outside);
  prefill  (DistServe's convention) when its prefill ends; the decode GPU computes the other output - 1 tokens,
           and a one-token request never reaches it.
A prefill GPU's memory is not a limit: prompts waiting for a decode GPU are assumed to fit beside it (`held_peak`
reports the most they held at once; each sweep cell carries it, and the page says where it exceeds the GPU, i.e.
where this model is optimistic)."""
from __future__ import annotations

import numpy as np

from scripts.model import roofline as rl
from scripts.model.anchor import Anchor
from scripts.serving.engine.kv import kv_manager
from scripts.serving.engine.loop import GpuLoop
from scripts.serving.engine.registry import register
from scripts.serving.engine.schedulers import DisaggDecode
from scripts.serving.workloads.workload import Requests

FIRST_TOKEN = ("decode", "prefill")  # where a P/D request's first token counts as emitted; the first is the default


@register("scheduler", "disagg.prefill")
class PrefillPool:
    """The prefill GPUs (DistServe, Zhong et al., OSDI'24; vLLM's P/D proxy): one prompt at a time per GPU, FCFS, on
    the least busy GPU."""

    def __init__(self, a: Anchor, gpus: int, capacity: float, overhead_s: float = 0.0):
        self.a, self.gpus, self.capacity, self.overhead_s = a, gpus, capacity, overhead_s

    def serve(self, reqs: Requests):
        """Each request's prefill start and end and its prefill GPU."""
        free_at = np.zeros(self.gpus)
        start, end, where = np.empty(len(reqs)), np.empty(len(reqs)), np.empty(len(reqs), dtype=np.int64)
        seconds: dict[int, float] = {}  # per prompt length (lengths repeat): its prefill time
        for i, (arrive, prompt) in enumerate(zip(reqs.arrival_s.tolist(), reqs.prompt_tokens.tolist(), strict=True)):
            if prompt not in seconds:
                if rl.bytes_per_request(self.a, float(prompt)) > self.capacity:
                    raise ValueError(f"a {int(prompt)}-token prompt does not fit on a prefill GPU")
                seconds[prompt] = rl.prefill_seconds(self.a, float(prompt))
            g = int(np.argmin(free_at)) if self.gpus > 1 else 0
            start[i] = max(arrive, free_at[g])
            end[i] = free_at[g] = start[i] + seconds[prompt] + self.overhead_s
            where[i] = g
        return start, end, where


def held_peak(a: Anchor, prompt, start, release, where) -> float:
    """The most KV cache and state one prefill GPU holds at once: each prompt's from its prefill's start until its
    transfer ends."""
    peak = 0.0
    for g in np.unique(where):
        ids = np.flatnonzero(where == g)
        size = rl.bytes_per_request(a, prompt[ids].astype(float))
        times = np.concatenate((start[ids], release[ids]))
        delta = np.concatenate((size, -size))
        order = np.lexsort((delta, times))  # at equal times, releases (negative) first
        peak = max(peak, float(np.cumsum(delta[order]).max(initial=0.0)))
    return peak


def run(a: Anchor, step, reqs: Requests, out: dict, *, prefill_gpus: int, decode_gpus: int, capacity: float,
        max_batch: int, chunk_tokens: int, memory, first_token: str, progress=None):
    """Both sides on `reqs`, filling `out`; returns (each request's decode GPU, the decode GPUs' runs, their peak
    memory, the prefill GPUs' held peak, when each request's own work started)."""
    n = len(reqs)
    prompt, output = reqs.prompt_tokens.astype(np.int64), reqs.output_tokens.astype(np.int64)
    pf_start, pf_end, pf_gpu = PrefillPool(step.anchor, prefill_gpus, capacity, step.overhead_s).serve(reqs)
    gpu = np.arange(n) % decode_gpus
    decode_tokens = output if first_token == "decode" else output - 1
    if first_token == "prefill":
        out["first_token_s"][:] = pf_end
    runs, peak = [], 0.0
    for g in range(decode_gpus):
        ids = np.flatnonzero((gpu == g) & (decode_tokens > 0))
        ids = ids[np.argsort(pf_end[ids], kind="stable")]
        sub = {k: v[ids].copy() for k, v in out.items() if k != "pieces"} | {"pieces": {}}
        loop = GpuLoop(step, DisaggDecode(max_batch, chunk_tokens=chunk_tokens),
                       kv_manager(step.anchor, capacity, memory), progress=progress)
        handoff = {"transfer_s": rl.transfer_seconds(a, prompt[ids].astype(float)),
                   "decode_tokens": decode_tokens[ids]}
        runs.append(loop.run(pf_end[ids], prompt[ids], output[ids], sub, handoff))
        for k, v in sub.items():
            if k == "pieces":
                out["pieces"].update({int(ids[j]): pieces for j, pieces in v.items()})
            elif k != "own_prefill_s":
                out[k][ids] = v
        peak = max(peak, loop.peak)
    out["own_prefill_s"] = pf_end - pf_start
    one = decode_tokens == 0  # prefill convention, one output token: done at its prefill
    out["finish_s"][one], out["admitted_s"][one] = pf_end[one], pf_end[one]
    held = held_peak(a, prompt, pf_start, np.where(one, pf_end, out["transfer_end_s"]), pf_gpu)
    return gpu, runs, peak, held, pf_start
