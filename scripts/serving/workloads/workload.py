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


def times_from_draws(draws, rate: float, burstiness: float = 1.0) -> np.ndarray:
    """arrival_times from its standard gamma draws (Generator.gamma(shape, scale) is scale x standard_gamma(shape),
    the same bits), so a stream can be shipped once and spaced at any rate: the twin's summary.js arrivalTimes."""
    if rate <= 0 or burstiness <= 0:
        raise ValueError("rate and burstiness must be positive")
    n = len(draws)
    times = np.cumsum((1.0 / (rate * burstiness)) * np.asarray(draws, dtype=float))
    if n and times[-1] > 0:
        times *= (n / rate) / times[-1]
    return times


# The two workloads below are each split in two, as the lab page needs them: the seeded draws (`*_draws`, which do
# not depend on the rate; the page ships them in prefix-data.js) and the requests built from them at a rate
# (`*_requests`; templates/serving_sim/workload.js does the same steps). The draws are taken from the streams in
# the order the generator always took them, so the requests are the same bits as before the split.
def system_prompt_draws(spec: dict, n: int, seed: int) -> dict:
    lengths_rng, arrivals_rng = streams(seed)
    prefixes = [int(x) for x in spec["prefixes"]["value"]]
    which = lengths_rng.integers(0, len(prefixes), size=n)
    own = sample_lengths(lengths_rng, spec["user_tokens"], n)
    outputs = sample_lengths(lengths_rng, spec["output_tokens"], n)
    return {"prefixes": prefixes, "which": [int(x) for x in which], "user_tokens": [int(x) for x in own],
            "output_tokens": [int(x) for x in outputs],
            "gamma": [float(x) for x in arrivals_rng.standard_gamma(1.0, size=n)]}


def system_prompt_requests(draws: dict, rate: float) -> Requests:
    """Each request: one of `prefixes` (equal chance), then its own question; sent as vLLM sends (arrival_times)."""
    prefixes, which, own = draws["prefixes"], draws["which"], draws["user_tokens"]
    segments = tuple(((SYSTEM + k, prefixes[k]), (USER + i, u))
                     for i, (k, u) in enumerate(zip(which, own, strict=True)))
    prompts = np.array([prefixes[k] + u for k, u in zip(which, own, strict=True)], dtype=np.int64)
    return Requests(times_from_draws(draws["gamma"], rate), prompts, np.array(draws["output_tokens"], dtype=np.int64),
                    segments)


def shared_system_prompts(spec: dict, n: int, rate: float, seed: int) -> Requests:
    """Each request: one of `prefixes` (equal chance), then its own question (`user_tokens`); answers of
    `output_tokens`. Sent as vLLM sends (arrival_times)."""
    return system_prompt_requests(system_prompt_draws(spec, n, seed), rate)


def mean_turns(turns_spec: dict) -> float:
    return (turns_spec["min"] + turns_spec["max"]) / 2 if turns_spec["dist"] == "uniform" else \
        float(turns_spec.get("value", turns_spec.get("median", 1)))


def conversation_draws(spec: dict, n: int, seed: int) -> dict:
    lengths_rng, arrivals_rng = streams(seed)
    turns_spec, think = spec["turns"], float(spec["think_time_s"]["value"])
    mean = mean_turns(turns_spec)
    counts = []
    while sum(counts) < n:  # enough conversations for n turns (the last ones' later turns may fall outside the run)
        counts.extend(sample_lengths(lengths_rng, turns_spec, max(1, n // max(1, int(mean)))).tolist())
    start_gamma = arrivals_rng.standard_gamma(1.0, size=len(counts))
    total = int(sum(counts))
    questions = sample_lengths(lengths_rng, spec["user_tokens"], total)
    answers = sample_lengths(lengths_rng, spec["output_tokens"], total)
    gaps = think * arrivals_rng.standard_exponential(size=total) if think > 0 else np.zeros(total)
    return {"n": n, "mean_turns": mean, "system_tokens": int(spec["system_tokens"]["value"]),
            "counts": [int(x) for x in counts], "start_gamma": [float(x) for x in start_gamma],
            "questions": [int(x) for x in questions], "answers": [int(x) for x in answers],
            "think_gaps_s": [float(x) for x in gaps]}


def conversation_requests(draws: dict, rate: float) -> tuple[Requests, np.ndarray, np.ndarray]:
    """The turns of conversation_draws at a rate: conversations start at rate / mean turns (arrival_times); each
    later turn is sent its think time after the one before; the first n turns by send time are the run."""
    n, system = draws["n"], draws["system_tokens"]
    starts = times_from_draws(draws["start_gamma"], rate / draws["mean_turns"])
    questions, answers, gaps = draws["questions"], draws["answers"], draws["think_gaps_s"]
    sends, segs, outs, answer_ids, conv, turn = [], [], [], [], [], []
    g = 0
    for c, (start, k) in enumerate(zip(starts, draws["counts"], strict=True)):
        history = [(SYSTEM, system)] if system else []
        t = float(start)
        for j in range(k):
            if j:
                t += gaps[g]
            history = history + [(TURN + 2 * g, questions[g])]
            sends.append(t)
            segs.append(tuple(history))
            outs.append(answers[g])
            answer_ids.append(TURN + 2 * g + 1)
            conv.append(c)
            turn.append(j)
            history = history + [(TURN + 2 * g + 1, answers[g])]
            g += 1
    order = np.argsort(np.array(sends), kind="stable")[:n]
    pick = order.tolist()
    prompts = np.array([sum(t for _, t in segs[i]) for i in pick], dtype=np.int64)
    reqs = Requests(np.array(sends)[order], prompts, np.array(outs, dtype=np.int64)[order],
                    tuple(segs[i] for i in pick), tuple(answer_ids[i] for i in pick))
    return reqs, np.array(conv)[order], np.array(turn)[order]


def conversations(spec: dict, n: int, rate: float, seed: int) -> tuple[Requests, np.ndarray, np.ndarray]:
    """Multi-turn conversations: each turn's prompt is the shared system prompt, every earlier question and answer
    of its conversation, then its new question. Conversations start as vLLM sends requests (arrival_times at
    rate / mean turns); each later turn is sent an exponential think time (mean `think_time_s`) after the one before,
    without waiting for its answer. The first n turns by send time are the run. Returns the requests, each one's
    conversation and its turn's index (the previous turn is the request with the same conversation and index - 1)."""
    return conversation_requests(conversation_draws(spec, n, seed), rate)
