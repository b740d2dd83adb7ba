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
    """One row per request, sorted by arrival; times in seconds from the start of the run. `segments` (optional):
    each prompt's content as (content id, tokens) runs summing to its prompt tokens, for the prefix caches
    (engine/prefix.py); `answer_ids`: the content id of each request's output (default -(i + 1)), which a later
    prompt that re-sends the answer (a conversation's next turn) holds as a segment."""
    arrival_s: np.ndarray
    prompt_tokens: np.ndarray
    output_tokens: np.ndarray
    segments: tuple | None = None
    answer_ids: tuple | None = None

    def __len__(self) -> int:
        return len(self.arrival_s)

    def with_times(self, arrival_s) -> Requests:
        """The same requests sent at other times (their content kept)."""
        return Requests(arrival_s, self.prompt_tokens, self.output_tokens, self.segments, self.answer_ids)

    def contents(self) -> tuple[list, list[int]]:
        """Each prompt's segments and each output's content id; refuses segments that do not add up."""
        n = len(self)
        if self.segments is None:
            raise ValueError("prefix caching needs requests that carry their prompts' segments")
        if len(self.segments) != n:
            raise ValueError(f"{len(self.segments)} prompts' segments for {n} requests")
        answers = list(self.answer_ids) if self.answer_ids is not None else [-(i + 1) for i in range(n)]
        segments = []
        for i, segs in enumerate(self.segments):
            segs = [(int(c), int(t)) for c, t in segs]
            if sum(t for _, t in segs) != int(self.prompt_tokens[i]) or any(t < 1 for _, t in segs):
                raise ValueError(f"request {i}: its segments hold {sum(t for _, t in segs)} tokens, its prompt "
                                 f"{int(self.prompt_tokens[i])} (each segment at least 1)")
            segments.append(segs)
        return segments, [int(x) for x in answers]


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


# ---- workloads whose prompts share prefixes (config/prefix.json; the prefix caches of engine/kv.py) ---------------
SYSTEM, USER, TURN = 1 << 40, 2 << 40, 3 << 40  # content id ranges: shared prefixes, own questions, conversations


def shared_system_prompts(spec: dict, n: int, rate: float, seed: int) -> Requests:
    """Each request: one of `prefixes` (equal chance), then its own question (`user_tokens`); answers of
    `output_tokens`. Sent as vLLM sends (arrival_times)."""
    lengths_rng, arrivals_rng = streams(seed)
    prefixes = spec["prefixes"]["value"]
    which = lengths_rng.integers(0, len(prefixes), size=n)
    own = sample_lengths(lengths_rng, spec["user_tokens"], n)
    outputs = sample_lengths(lengths_rng, spec["output_tokens"], n)
    segments = tuple(((SYSTEM + int(k), int(prefixes[k])), (USER + i, int(u)))
                     for i, (k, u) in enumerate(zip(which, own, strict=True)))
    prompts = np.array([prefixes[k] for k in which], dtype=np.int64) + own
    return Requests(arrival_times(arrivals_rng, n, rate), prompts, outputs, segments)


def conversations(spec: dict, n: int, rate: float, seed: int) -> tuple[Requests, np.ndarray, np.ndarray]:
    """Multi-turn conversations: each turn's prompt is the shared system prompt, every earlier question and answer
    of its conversation, then its new question. Conversations start as vLLM sends requests (arrival_times at
    rate / mean turns); each later turn is sent an exponential think time (mean `think_time_s`) after the one before,
    without waiting for its answer. The first n turns by send time are the run. Returns the requests, each one's
    conversation and its turn's index (the previous turn is the request with the same conversation and index - 1)."""
    lengths_rng, arrivals_rng = streams(seed)
    turns_spec, think = spec["turns"], float(spec["think_time_s"]["value"])
    mean_turns = (turns_spec["min"] + turns_spec["max"]) / 2 if turns_spec["dist"] == "uniform" else \
        float(turns_spec.get("value", turns_spec.get("median", 1)))
    counts = []
    while sum(counts) < n:  # enough conversations for n turns (the last ones' later turns may fall outside the run)
        counts.extend(sample_lengths(lengths_rng, turns_spec, max(1, n // max(1, int(mean_turns)))).tolist())
    starts = arrival_times(arrivals_rng, len(counts), rate / mean_turns)
    total = int(sum(counts))
    questions = sample_lengths(lengths_rng, spec["user_tokens"], total)
    answers = sample_lengths(lengths_rng, spec["output_tokens"], total)
    gaps = arrivals_rng.exponential(think, size=total) if think > 0 else np.zeros(total)
    system = int(spec["system_tokens"]["value"])
    sends, segs, outs, answer_ids, conv, turn = [], [], [], [], [], []
    g = 0
    for c, (start, k) in enumerate(zip(starts, counts, strict=True)):
        history = [(SYSTEM, system)] if system else []
        t = float(start)
        for j in range(k):
            if j:
                t += float(gaps[g])
            history = history + [(TURN + 2 * g, int(questions[g]))]
            sends.append(t)
            segs.append(tuple(history))
            outs.append(int(answers[g]))
            answer_ids.append(TURN + 2 * g + 1)
            conv.append(c)
            turn.append(j)
            history = history + [(TURN + 2 * g + 1, int(answers[g]))]
            g += 1
    order = np.argsort(np.array(sends), kind="stable")[:n]
    pick = order.tolist()
    prompts = np.array([sum(t for _, t in segs[i]) for i in pick], dtype=np.int64)
    reqs = Requests(np.array(sends)[order], prompts, np.array(outs, dtype=np.int64)[order],
                    tuple(segs[i] for i in pick), tuple(answer_ids[i] for i in pick))
    return reqs, np.array(conv)[order], np.array(turn)[order]
