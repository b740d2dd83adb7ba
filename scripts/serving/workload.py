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


def arrival_times(rng: np.random.Generator, n: int, rate: float, burstiness: float = 1.0,
                  normalize: bool = True) -> np.ndarray:
    if rate <= 0 or burstiness <= 0:
        raise ValueError("rate and burstiness must be positive")
    gaps = rng.gamma(shape=burstiness, scale=1.0 / (rate * burstiness), size=n)
    times = np.cumsum(gaps)
    if normalize and times[-1] > 0:
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


def generate(workload: dict, n: int, rate: float, seed: int, burstiness: float = 1.0) -> Requests:
    """A workload's request stream. Lengths and arrivals use separate streams of one seed, so two rates of one
    workload and seed get the same requests, only spaced differently (and every schedule sees the same trace)."""
    lengths_rng, arrivals_rng = (np.random.Generator(np.random.PCG64(s)) for s in np.random.SeedSequence(seed).spawn(2))
    prompts = sample_lengths(lengths_rng, workload["prompt_tokens"], n)
    outputs = sample_lengths(lengths_rng, workload["output_tokens"], n)
    long = workload.get("long_prompts")
    if long:
        is_long = lengths_rng.random(n) < long["fraction"]
        prompts = np.where(is_long, sample_lengths(lengths_rng, long["prompt_tokens"], n), prompts)
    return Requests(arrival_times(arrivals_rng, n, rate, burstiness), prompts, outputs)
