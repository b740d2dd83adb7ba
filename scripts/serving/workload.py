"""Request streams: arrival times and lengths. Pure: seeded `numpy.random.Generator`, no I/O.

Arrivals follow `vllm bench serve` (vllm/benchmarks/serve.py, get_request): each gap is drawn from a gamma
distribution with shape = burstiness and scale = 1 / (rate * burstiness) (burstiness 1 is a Poisson process),
the gaps are summed, and the sums are rescaled so that the last request is sent at N / rate, as vLLM does to
take the seed-to-seed jitter out of the duration. Request 0 is sent after the first gap, not at t = 0.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Requests:
    """One row per request, sorted by arrival; times in seconds from the start of the run."""
    arrival_s: np.ndarray
    prompt_tokens: np.ndarray
    output_tokens: np.ndarray

    def __len__(self) -> int:
        return len(self.arrival_s)


RAMPS = ("linear", "exponential")


def ramp_rates(n: int, start_rps: float, end_rps: float, strategy: str) -> np.ndarray:
    """Each request's rate under `vllm bench serve --ramp-up-strategy` (vllm/benchmarks/serve.py,
    _get_current_request_rate, commit def9ce85): progress = i / max(n - 1, 1); linear start + (end - start) *
    progress, exponential start * (end / start) ** progress."""
    if strategy not in RAMPS:
        raise ValueError(f"ramp-up strategy must be one of {', '.join(RAMPS)}")
    if start_rps <= 0 or end_rps <= 0:
        raise ValueError("ramp-up rates must be positive")
    progress = np.arange(n) / max(n - 1, 1)
    if strategy == "linear":
        return start_rps + (end_rps - start_rps) * progress
    return start_rps * (end_rps / start_rps) ** progress


def arrival_times(rng: np.random.Generator, n: int, rate: float, burstiness: float = 1.0,
                  normalize: bool = True, ramp: tuple[str, float, float] | None = None) -> np.ndarray:
    """Send times. With `ramp` = (strategy, start_rps, end_rps) each gap is drawn at that request's ramped rate
    and, as vLLM does under a ramp, the sums are not rescaled."""
    if rate <= 0 or burstiness <= 0:
        raise ValueError("rate and burstiness must be positive")
    rates = np.full(n, float(rate)) if ramp is None else ramp_rates(n, ramp[1], ramp[2], ramp[0])
    gaps = rng.gamma(shape=burstiness, scale=1.0 / (rates * burstiness), size=n)
    times = np.cumsum(gaps)
    if normalize and ramp is None and times[-1] > 0:
        times *= (n / rate) / times[-1]
    return times


def sample_lengths(rng: np.random.Generator, spec: dict, n: int) -> np.ndarray:
    """Token counts from one length spec: fixed, uniform (inclusive) or lognormal (median, sigma), clipped."""
    kind = spec["dist"]
    if kind == "fixed":
        values = np.full(n, float(spec["value"]))
    elif kind == "uniform":
        values = rng.integers(spec["min"], spec["max"], size=n, endpoint=True).astype(float)
    elif kind == "lognormal":
        values = np.exp(rng.normal(np.log(spec["median"]), spec["sigma"], size=n))
    else:
        raise ValueError(f"unknown length distribution {kind!r}")
    return np.clip(np.rint(values), spec.get("min", 1), spec.get("max", np.inf)).astype(np.int64)


def streams(seed: int) -> tuple[np.random.Generator, np.random.Generator]:
    """A workload's two random streams of one seed: lengths, arrivals."""
    lengths_rng, arrivals_rng = (np.random.Generator(np.random.PCG64(s)) for s in np.random.SeedSequence(seed).spawn(2))
    return lengths_rng, arrivals_rng


def generate(workload: dict, n: int, rate: float, seed: int, burstiness: float = 1.0,
             ramp: tuple[str, float, float] | None = None) -> Requests:
    """A workload's request stream. Lengths and arrivals use separate streams of one seed, so two rates of one
    workload and seed get the same requests, only spaced differently (and every schedule sees the same trace)."""
    lengths_rng, arrivals_rng = streams(seed)
    prompts = sample_lengths(lengths_rng, workload["prompt_tokens"], n)
    outputs = sample_lengths(lengths_rng, workload["output_tokens"], n)
    long = workload.get("long_prompts")
    if long:
        is_long = lengths_rng.random(n) < long["fraction"]
        prompts = np.where(is_long, sample_lengths(lengths_rng, long["prompt_tokens"], n), prompts)
    return Requests(arrival_times(arrivals_rng, n, rate, burstiness, ramp=ramp), prompts, outputs)
