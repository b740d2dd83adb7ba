"""Iteration times of a measured engine, fitted from its calibration runs (scripts/realengine/). Pure.

On this CPU an iteration's time is not the roofline's max(bytes/bandwidth, FLOPs/peak): one decode token costs
about 10 ms alone, two cost 15 ms in adjacent slots and 21 ms in slots apart (two forward passes: the server's
slots, below), while prompt tokens in bulk cost about 1.2 ms each. So the step model is measured:
    seconds = D(decoders) + sum over prompt chunks (a + b x length + c x pairs [+ context_cost(start, length)])
              + attention x (decoders' contexts)
where D(m) is the time of a decode-only iteration of m running requests (piecewise linear through its knots,
linear past the last, D(0) = 0), a, b and c the cost of a prompt chunk riding in the iteration (per chunk, per
token, per query-key pair: L*s + L^2/2 for L tokens after s earlier ones). When the calibration measured cached
prefixes (calibrate.cached_context_cost), `context_cost` prices the s earlier tokens instead of the pair term, which
then counts only the pairs inside the chunk (L^2/2): p x L x s for a chunk shorter than the engine's attention tile
(T = 64 rows), e x ceil(L / T) x s from it (on this CPU 63 new tokens after 1,024 cached ones took 235 ms to the
first token, 64 took 108 ms). With neither measured (a calibration without cached points) the pair term covers the
earlier tokens as before. `attention` is the cost per token of a decoder's
context. `request_overhead_s` is the time between the client's send and the engine
seeing the request plus the response's way back (the simulation delays each arrival by it).

The server's slots (issue 43): llama.cpp cuts each iteration's batch into ubatches of consecutive slot ids
(`split_equal`), each a forward pass of its own. On this CPU two decoders in slots 0 and 1 took 16 ms a step, in
slots 0 and 2 23 ms (two lone steps); all eight slots 41 ms (scripts/realengine/investigations/slot_sweep.py). D(m)
is the median
over whatever layouts the calibration happened to run. `with_ubatches` gives the model U(n), one ubatch of n
one-token sequences, and the loop then passes each iteration's slots (`seconds`/`decode_run` with `slots`),
priced by `laid_out`; off unless config/real_engine.json comparison.ubatch_layout says so.

Fitted from calibration runs that the predicted runs never include (scripts/realengine/analyses/calibrate.py):
  attention and the round trip from lone requests (decode steps at a short and a long context; a 1-token prompt's
  TTFT less a lone decode step);
  D, a, b and c from Poisson load runs at rates of their own, read off the client's streamed token times by
  `iterations`: tokens that reach the client within a small gap of each other (config/real_engine.json
  comparison.iteration_gap_ms) left the engine in one iteration; an
  iteration's duration is known when a request had tokens in it and in the one before (the engine ran back to back);
  its decoders are the requests with an earlier token, its prompt chunks the requests whose first token it is.
  llama.cpp decodes every generating slot in every iteration, so a group of tokens that lacks one of a request that
  was generating across it (a token before it and one after) is a fragment: the client, busy reading other streams,
  got that iteration's tokens more than the gap apart. An iteration that starts or ends at a fragment is left out
  (9-45 % of each committed calibration run's iterations; kept, they showed as small batches that took two or three
  steps: 5-20 % of the decode-only iterations with one decoder, 41-55 % on held-out session 6's slow hour, 69-81 % in
  the runs with every slot busy). Every generating slot joins each batch: tools/server/server-context.cpp
  update_slots, "determine which slots are generating", in the llama.cpp of llama-cpp-python 0.3.36.
D(m), a, b, c, the attention and the noise are fitted in stepfit.py. The object has IterationCost's
`seconds` and `decode_run`, so engine.simulate(step_cost=...) runs on it unchanged.

Step-time noise (`StepNoise`, issue 43): the same iterations' measured / modelled time, kept as quantiles per decode
batch size (decode-only iterations, for each knot of D) and for the iterations with prompt work. `Noisy(model,
noise, seed)` is a step model whose iterations the engine loop stretches by seeded draws from those quantiles
(inverse CDF, linear between them), so requests that arrive together do not move in lockstep and the p99s carry the
engine's jitter. The client's own jitter in reading the iterations (a token read late makes one iteration longer
and the next shorter) is taken out by the lag-one covariance (stepfit.engine_share), and each distribution is scaled to
mean 1: the step model's medians already price the iterations, the noise adds their spread."""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class StepModel:
    decode_batch: tuple[float, ...]  # D's knots (running requests), increasing, from 1
    decode_seconds: tuple[float, ...]  # D at each knot, non-decreasing
    prompt_chunk_s: float  # a
    prompt_token_s: float  # b
    prompt_pair_s: float  # c
    attention_s_per_token: float
    request_overhead_s: float
    prompt_context_s: float = 0.0  # e: per prompt chunk (per tile of it), per token before it; 0 when unmeasured
    prompt_context_pair_s: float = 0.0  # p: per (chunk token, token before it) pair, for a chunk below the tile
    context_tile_rows: int = 0  # the engine's attention tile; 0: e prices every chunk, whatever its length
    ubatch_seconds: tuple[float, ...] = ()  # U(n), n = 1, 2, ...: one ubatch of n one-token sequences; () unpriced
    ubatch_tokens: int = 0  # the engine's -ub: the most tokens in one ubatch

    def __post_init__(self):
        k, v = np.asarray(self.decode_batch, float), np.asarray(self.decode_seconds, float)
        if len(k) < 2 or len(k) != len(v) or np.any(np.diff(k) <= 0) or np.any(np.diff(v) < 0) or v[0] <= 0 \
                or k[0] != 1:
            raise ValueError("step model: D needs at least two knots from 1, increasing, with positive "
                             "non-decreasing seconds")
        if min(self.prompt_chunk_s, self.prompt_token_s, self.prompt_pair_s, self.attention_s_per_token,
               self.request_overhead_s, self.prompt_context_s, self.prompt_context_pair_s,
               self.context_tile_rows) < 0:
            raise ValueError("step model: the prompt, attention and overhead costs must be >= 0")
        u = np.asarray(self.ubatch_seconds, float)
        if len(u) and (len(u) < 2 or u[0] <= 0 or np.any(np.diff(u) < 0) or self.ubatch_tokens < 1):
            raise ValueError("step model: U needs at least two positive non-decreasing values and a ubatch size")

    @property
    def prices_layout(self) -> bool:
        """Whether iterations are priced by the ubatches their slots make (`laid_out`) when the loop knows them."""
        return len(self.ubatch_seconds) > 0

    def ubatch(self, n: int) -> float:
        """U(n): one ubatch of n one-token sequences (linear past the last value)."""
        u = self.ubatch_seconds
        return u[n - 1] if n <= len(u) else u[-1] + (n - len(u)) * (u[-1] - u[-2])

    def laid_out(self, decode_slots, chunks=(), chunk_slots=()) -> float:
        """An iteration's time without its decoders' attention, from the ubatches llama.cpp cuts it into
        (`split_equal`): a ubatch of one-token sequences costs U(n) (a prompt's token among them adds what its
        earlier tokens cost it); one of k > 1 tokens per sequence costs each sequence's chunk of k less the cost
        per chunk (a ubatch is one forward pass: it pays that once), plus what its further sequences add to one,
        U(n) - U(1)."""
        pieces = [(slot, s, n) for slot, (s, n) in zip(chunk_slots, chunks, strict=True)]
        total = 0.0
        for ub in split_equal(decode_slots, pieces, self.ubatch_tokens):
            k = ub[0][2]
            if k == 1:
                total += self.ubatch(len(ub)) + sum(self.chunk(s, 1) - self.chunk(0, 1) for _, s, _, p in ub if p)
            else:
                total += sum(self.chunk(s, k) - self.prompt_chunk_s for _, s, _, _ in ub) + self.prompt_chunk_s \
                    + self.ubatch(len(ub)) - self.ubatch(1)
        return total

    def decode(self, m):
        k, v = np.asarray(self.decode_batch, float), np.asarray(self.decode_seconds, float)
        m = np.asarray(m, dtype=float)
        slope = (v[-1] - v[-2]) / (k[-1] - k[-2])
        out = np.where(m > k[-1], v[-1] + (m - k[-1]) * slope, np.interp(m, k, v))
        return np.where(m > 0, out, 0.0)

    def chunk(self, start: float, length: float) -> float:
        if self.prompt_context_s > 0 or self.prompt_context_pair_s > 0:  # earlier tokens measured apart (cached)
            return (self.prompt_chunk_s + self.prompt_token_s * length + self.prompt_pair_s * length * length / 2
                    + self.context_cost(start, length))
        return self.prompt_chunk_s + self.prompt_token_s * length + self.prompt_pair_s * (length * start
                                                                                         + length * length / 2)

    def context_cost(self, start: float, length: float) -> float:
        """What a chunk of `length` tokens pays for the `start` tokens before it. ggml's CPU flash attention takes
        a chunk of at least `context_tile_rows` query rows in tiles of that many (each tile reads every earlier
        token once: e per token per tile) and a shorter chunk one row at a time (p per row and earlier token):
        ggml/src/ggml-cpu/ops.cpp ggml_compute_forward_flash_attn_ext, use_tiled when its rows reach
        GGML_FA_TILE_Q (common.h, 64), in the llama.cpp of llama-cpp-python 0.3.36."""
        tile = self.context_tile_rows
        if tile and length < tile:
            return self.prompt_context_pair_s * length * start
        return self.prompt_context_s * (math.ceil(length / tile) if tile else 1) * start

    def seconds(self, decoders: float, decode_context_sum: float, chunks=(), slots=None, chunk_slots=()) -> float:
        """`slots` (the decoders' server slots) and `chunk_slots` (each chunk's): priced by the ubatches they make
        when the model has U (`laid_out`), else by D."""
        if slots is not None and self.ubatch_seconds:
            t = self.laid_out(slots, chunks, chunk_slots)
        else:
            t = float(self.decode(decoders)) + sum(self.chunk(s, n) for s, n in chunks)
        return t + self.attention_s_per_token * decode_context_sum

    def decode_run(self, decoders: int, decode_context_sums, slots=None):
        base = self.laid_out(slots) if slots is not None and self.ubatch_seconds else self.decode(decoders)
        return base + self.attention_s_per_token * np.asarray(decode_context_sums, dtype=float)

    def as_dict(self) -> dict:
        return {"decode_batch": list(self.decode_batch), "decode_seconds": list(self.decode_seconds),
                "prompt_chunk_s": self.prompt_chunk_s, "prompt_token_s": self.prompt_token_s,
                "prompt_pair_s": self.prompt_pair_s, "attention_s_per_token": self.attention_s_per_token,
                "request_overhead_s": self.request_overhead_s, "prompt_context_s": self.prompt_context_s,
                "prompt_context_pair_s": self.prompt_context_pair_s, "context_tile_rows": self.context_tile_rows,
                **({"ubatch_seconds": list(self.ubatch_seconds), "ubatch_tokens": self.ubatch_tokens}
                   if self.ubatch_seconds else {})}

    @classmethod
    def from_dict(cls, d: dict) -> StepModel:
        return cls(tuple(d["decode_batch"]), tuple(d["decode_seconds"]), d["prompt_chunk_s"], d["prompt_token_s"],
                   d["prompt_pair_s"], d["attention_s_per_token"], d["request_overhead_s"],
                   d.get("prompt_context_s", 0.0), d.get("prompt_context_pair_s", 0.0), d.get("context_tile_rows", 0),
                   tuple(d.get("ubatch_seconds", ())), d.get("ubatch_tokens", 0))


def with_ubatches(model: StepModel, slots: int, ubatch_tokens: int, steps=(), min_samples: int = 1) -> StepModel:
    """`model` pricing the ubatches the server's slots make. U(1) = D(1) (one decoder: one slot) and U(slots) =
    D(slots) (every slot decoding: slots 0..slots-1, one ubatch). Between them: from `steps` whose `decoder_slots`
    are known (calibrate.fit adds them when the load runs name each request's slot), U(n) is the median of the
    decode-only iterations whose n decoders held consecutive slots (one ubatch; their attention removed; none with a
    request waiting for its first token, whose prompt work the client cannot see: stepfit.counted), where at
    least `min_samples` did; the rest linear between the knots so found (a pinned-slot trial on this CPU: slots
    0..n-1 took 10.7, 15.3, 19.2, 24.6 ms for n = 1..4, python -m scripts.realengine.investigations.slot_sweep).
    Refused when D has
    no knot at `slots`."""
    if slots < 2 or model.decode_batch[-1] < slots or slots not in model.decode_batch:
        raise ValueError(f"step model: pricing the slots' ubatches needs D at every slot ({slots}); its knots are "
                         f"{[int(k) for k in model.decode_batch]}")
    one_run: dict[int, list[float]] = {}
    for s in steps:
        taken = s.get("decoder_slots")
        if taken and not s["prompts"] and not s.get("unseen_prompts", 0) and 1 < len(taken) < slots \
                and len(split_equal(taken, [], ubatch_tokens)) == 1:
            one_run.setdefault(len(taken), []).append(s["seconds"] - model.attention_s_per_token * s["context_sum"])
    knots = {1: float(model.decode(1)), slots: float(model.decode(slots))}
    knots.update({n: float(np.median(v)) for n, v in one_run.items() if len(v) >= min_samples})
    k = sorted(knots)
    u = np.maximum.accumulate(np.interp(np.arange(1, slots + 1), k, [knots[n] for n in k]))
    return dataclasses.replace(model, ubatch_seconds=tuple(float(x) for x in u), ubatch_tokens=int(ubatch_tokens))


def split_equal(decode_slots, prompt_pieces, n_ubatch: int) -> list[list[tuple[int, float, int, bool]]]:
    """The ubatches llama.cpp cuts one iteration's batch into when each slot keeps its own KV stream (-np > 1
    without --kv-unified): llama_batch_allocr::split_equal(n_ubatch, sequential=true) (src/llama-batch.cpp, called
    from llama_kv_cache::init_batch, the llama.cpp of llama-cpp-python 0.3.36). The server's batch holds one token
    per decoding slot in slot order, then each prompting slot's tokens in slot order (tools/server/server-context.cpp
    update_slots). A ubatch starts at the first unused token's sequence and takes each next sequence whose id is one
    more than the last taken (slots 0, 1, 2 ride together; 0, 2 do not); every sequence in it gives the same number
    of tokens: the fewest any has left, at most n_ubatch / sequences. So a prompt whose slot follows a decoding
    one gives one token to that ubatch and the rest to a later one. `decode_slots`: slot ids; `prompt_pieces`:
    (slot, start, tokens). Returns each ubatch's (slot, start, tokens, is_prompt)."""
    order = [(int(s), 0.0, 1, False) for s in sorted(decode_slots)]
    order += [(int(s), float(st), int(n), True) for s, st, n in sorted(prompt_pieces) if n > 0]
    left = [[slot, start, n, prompt] for slot, start, n, prompt in order]
    out = []
    while True:
        pending = [x for x in left if x[2] > 0]
        if not pending:
            return out
        chosen = [pending[0]]
        for x in pending[1:]:
            if x[0] == chosen[-1][0] + 1:
                chosen.append(x)
        k = min(min(x[2] for x in chosen), max(1, n_ubatch // len(chosen)))
        out.append([(x[0], x[1], k, x[3]) for x in chosen])
        for x in chosen:
            x[1], x[2] = x[1] + k, x[2] - k


def iterations(doc: dict, gap_s: float) -> list[dict]:
    """The engine's iterations as the client saw them (module docstring), from a result file with `send_times`:
    [{"decoders", "context_sum", "prompts" (their lengths), "seconds", and which requests decoded and prompted}]
    for each iteration of known duration, none starting or ending at a fragment (`_whole`).
    Tokens that reach the client within `gap_s` of each other count as one iteration's."""
    events, spans = token_events(doc)
    ids = np.array([s[0] for s in spans], dtype=int)
    sent_at, first_at, last_at = np.array([s[1:] for s in spans], dtype=float).reshape(-1, 3).T
    clusters = token_clusters(events, gap_s)
    whole = [_whole(c, ids, first_at, last_at) for c in clusters]
    out = []
    for n, (before, now) in enumerate(zip(clusters, clusters[1:], strict=False)):
        if not (whole[n] and whole[n + 1]):
            continue  # it starts or ends at a fragment of an iteration: neither its duration nor its batch is known
        earlier = {i for _, i, _ in before}
        decoders = [(i, k) for _, i, k in now if k > 0]
        if not any(i in earlier for i, _ in decoders):
            continue  # the engine may have idled between them: no duration
        start, end = np.mean([t for t, _, _ in before]), np.mean([t for t, _, _ in now])
        out.append({"decoders": len(decoders),
                    "context_sum": float(sum(doc["input_lens"][i] + k for i, k in decoders)),
                    "prompts": [int(doc["input_lens"][i]) for _, i, k in now if k == 0],
                    "decoder_requests": [i for i, _ in decoders],  # indices in the file, for their slots
                    "prompt_requests": [i for _, i, k in now if k == 0],
                    "seconds": float(end - start), "start": float(start), "end": float(end),
                    # requests sent before it began whose first token came after it: the engine may have been
                    # working on their prompts in it, unseen by the client
                    "unseen_prompts": int(((sent_at < start) & (first_at > now[-1][0])).sum())})
    return out


def token_events(doc: dict) -> tuple[list[tuple[float, int, int]], list[tuple[int, float, float, float]]]:
    """Every token of every successful request as the client read it, (time, request, token index) by time, and
    each such request's span (request, sent, first token, last token)."""
    events, spans = [], []
    for i, (sent, ttft, gaps) in enumerate(zip(doc["send_times"], doc["ttfts"], doc["itls"], strict=True)):
        if not doc.get("success", [True] * len(doc["ttfts"]))[i]:
            continue
        times = sent + ttft + np.concatenate(([0.0], np.cumsum(gaps)))
        events.extend((float(t), i, k) for k, t in enumerate(times))
        spans.append((i, float(sent), float(times[0]), float(times[-1])))
    events.sort()
    return events, spans


def token_clusters(events: list[tuple[float, int, int]], gap_s: float) -> list[list[tuple[float, int, int]]]:
    """token_events cut where two tokens reach the client more than `gap_s` apart: the engine's iterations as the
    client read them (fragments included: `_whole`)."""
    clusters, current = [], []
    for e in events:
        if current and e[0] - current[-1][0] > gap_s:
            clusters.append(current)
            current = []
        current.append(e)
    if current:
        clusters.append(current)
    return clusters


def _whole(cluster: list, ids: np.ndarray, first_at: np.ndarray, last_at: np.ndarray) -> bool:
    """Whether a group of tokens (time, request, k) holds one of every request generating across it (first token
    before it, last token after it; `ids`, `first_at`, `last_at` per successful request): llama.cpp decodes every
    generating slot in each iteration, so a group that lacks one is a fragment of an iteration."""
    across = ids[(first_at < cluster[0][0]) & (last_at > cluster[-1][0])]
    return set(across.tolist()) <= {i for _, i, _ in cluster}


NOISE_QUANTILES = 20  # quantiles at 0, 1/20, ..., 1 of each distribution: 21 values
LEVELS = np.linspace(0.0, 1.0, NOISE_QUANTILES + 1)


@dataclass(frozen=True)
class StepNoise:
    """Measured / modelled iteration time: quantiles (levels k / NOISE_QUANTILES) per decode batch size of the
    decode-only iterations, and of the iterations with prompt work."""
    batches: tuple[int, ...]  # increasing; a batch beyond the last uses the last's
    decode: tuple[tuple[float, ...], ...]
    prompt: tuple[float, ...]
    engine_share: float = 1.0  # each row's spread around its median scaled by this (stepfit.step_noise)

    def __post_init__(self):
        rows = (*self.decode, self.prompt)
        if not self.batches or len(self.batches) != len(self.decode) or list(self.batches) != sorted(set(self.batches)):
            raise ValueError("step noise: one quantile row per decode batch, batches increasing")
        if any(len(r) != NOISE_QUANTILES + 1 or min(r) <= 0 or list(r) != sorted(r) for r in rows):
            raise ValueError(f"step noise: each row needs {NOISE_QUANTILES + 1} positive non-decreasing quantiles")

    def as_dict(self) -> dict:
        return {"batches": list(self.batches), "decode": [list(r) for r in self.decode], "prompt": list(self.prompt),
                "engine_share": self.engine_share}

    @classmethod
    def from_dict(cls, d: dict) -> StepNoise:
        return cls(tuple(int(b) for b in d["batches"]), tuple(tuple(r) for r in d["decode"]), tuple(d["prompt"]),
                   float(d.get("engine_share", 1.0)))

    def floor(self) -> float:
        """The smallest factor any draw can give (the loop's bound on how many iterations fit before an event)."""
        return min(min(r[0] for r in self.decode), self.prompt[0])


class NoiseDraws:
    """Seeded factors for the loop: `decode(batch, m)` for m decode-only iterations, `prompt()` for one with prompt
    work. Draws are taken in the loop's order, so a seed gives the same run every time."""

    def __init__(self, noise: StepNoise, seed: int):
        self.noise, self.rng, self.floor = noise, np.random.default_rng(seed), noise.floor()

    def _row(self, batch: int):
        k = int(np.searchsorted(self.noise.batches, batch, side="right")) - 1
        return self.noise.decode[max(k, 0)]

    def decode(self, batch: int, m: int) -> np.ndarray:
        return np.interp(self.rng.random(m), LEVELS, self._row(batch))

    def prompt(self) -> float:
        return float(np.interp(self.rng.random(), LEVELS, self.noise.prompt))


class Noisy:
    """`model`'s step times, which the engine loop stretches by `NoiseDraws(noise, seed)` (stepcost.Measured)."""

    def __init__(self, model: StepModel, noise: StepNoise, seed: int):
        self.model, self.noise, self.seed = model, noise, seed
        self.request_overhead_s = model.request_overhead_s
        self.seconds, self.decode_run = model.seconds, model.decode_run
        self.prices_layout = model.prices_layout

    def draws(self) -> NoiseDraws:
        return NoiseDraws(self.noise, self.seed)
