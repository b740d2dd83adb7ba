"""Step-cost models: how long one iteration takes, given its decode tokens (and their contexts) and its prompt
chunks. Pure. Each is registered by name (registry.py). For each run the loop (loop.py) takes the model's
`pricing(kv)` and asks it for an iteration with prompt work (`iteration`), a run of pure-decode iterations
(`decode_run`) and a lower bound on a run's first iteration (`shortest`), then adds `overhead_s` to every iteration.
What a measured engine adds (its step-time noise, the ubatches its slots make) lives in its pricing, not the loop.

  roofline  the anchor's roofline bound, max(bytes / bandwidth, FLOPs / peak) (scripts/model/roofline.py
            IterationCost, the one cost model of the page): the seed's numbers.
  derated   the same roofline with the peaks scaled by achieved shares and a fixed time per iteration
            (roofline.Efficiency; roofline.achieved(anchor) is the anchor's realistic set).
  measured  an engine's fitted step times (scripts/realengine/analyses/stepmodel.py StepModel, from a real engine's
            runs); with `stepmodel.Noisy` its measured step-time noise too (seeded factors that stretch each iteration),
            and with a model that prices the slots' ubatches (stepmodel.split_equal) on a KV manager that knows
            each request's slot (kv.py reserved+slots), the slots of the requests in each iteration.
`cost` is what the loop times iterations with; an `IterationCost` lets the loop price pure-decode runs step by step
with its terms inline (the same arithmetic as IterationCost.seconds, in the same order)."""
from __future__ import annotations

import numpy as np

from scripts.model import roofline as rl
from scripts.model.anchor import Anchor
from scripts.serving.engine.registry import register


class Pricing:
    """A cost's prices for the loop, with neither noise nor slots: `cost.seconds` and `cost.decode_run` as they are.
    `dec_ids` are the running decodes' request ids, `chunks` the scheduler's (request, start, length)."""

    def __init__(self, cost):
        self.cost = cost

    def shortest(self, decoders: int, context_sum: float, dec_ids: list[int]) -> float:
        """No iteration of a decode run starting here is shorter (contexts only grow)."""
        return self.cost.seconds(decoders, context_sum)

    def decode_run(self, decoders: int, context_sums: np.ndarray, dec_ids: list[int]) -> np.ndarray:
        return self.cost.decode_run(decoders, context_sums)

    def iteration(self, decoders: int, context_sum: float, chunks, dec_ids: list[int]) -> tuple[float, float | None]:
        """(an iteration with prompt work, its decoders' time alone; None without decoders)."""
        d = self.cost.seconds(decoders, context_sum, [(s, ln) for _, s, ln in chunks])
        return d, (self.cost.seconds(decoders, context_sum) if decoders else None)


class MeasuredPricing(Pricing):
    """A measured engine's prices: each iteration stretched by its own draw of the step-time noise (`noise`, a
    stepmodel.NoiseDraws, drawn in the loop's order; None: none), and priced by the slots its requests hold when
    the step model prices ubatches (`kv`: a KV manager with `slot_of`, read at each call; None: no layout)."""

    def __init__(self, cost, noise, kv):
        super().__init__(cost)
        self.noise, self.kv = noise, kv

    def _slot_ids(self, ids) -> list[int]:
        return [self.kv.slot_of[i].id for i in ids]

    def _slots(self, ids) -> dict:
        return {"slots": self._slot_ids(ids)} if self.kv is not None else {}

    def shortest(self, decoders, context_sum, dec_ids):
        return self.cost.seconds(decoders, context_sum, **self._slots(dec_ids)) * \
            (self.noise.floor if self.noise else 1.0)

    def decode_run(self, decoders, context_sums, dec_ids):
        durations = self.cost.decode_run(decoders, context_sums, **self._slots(dec_ids))
        return durations * self.noise.decode(decoders, len(context_sums)) if self.noise else durations

    def iteration(self, decoders, context_sum, chunks, dec_ids):
        laid = self._slots(dec_ids)
        chunk_slots = {"chunk_slots": self._slot_ids(i for i, _, _ in chunks)} if self.kv is not None else {}
        d = self.cost.seconds(decoders, context_sum, [(s, ln) for _, s, ln in chunks], **laid, **chunk_slots)
        factor = self.noise.prompt() if self.noise else None
        d = d * factor if factor is not None else d
        if not decoders:
            return d, None
        alone = self.cost.seconds(decoders, context_sum, **laid)
        return d, (alone * factor if factor is not None else alone)


@register("step_cost", "roofline")
class Roofline:
    """The roofline bound of anchor `a` (roofline.BOUND: peak FLOP/s and bandwidth, no overhead)."""

    def __init__(self, a: Anchor):
        self.anchor, self.cost, self.overhead_s = a, rl.iteration_cost(a), 0.0

    def pricing(self, kv) -> Pricing:
        return Pricing(self.cost)


@register("step_cost", "derated")
class Derated:
    """The roofline of anchor `a` at `efficiency`'s achieved shares of its peaks, plus its overhead per iteration.
    Memory and the P/D link stay as the anchor says (roofline.derated changes the peaks only)."""

    def __init__(self, a: Anchor, efficiency: rl.Efficiency):
        self.anchor = rl.derated(a, efficiency)
        self.cost, self.overhead_s = rl.iteration_cost(self.anchor), efficiency.overhead_s

    def pricing(self, kv) -> Pricing:
        return Pricing(self.cost)


@register("step_cost", "measured")
class Measured:
    """A measured engine's step times: any object with IterationCost's `seconds` and `decode_run` (a StepModel);
    `a` still gives the memory a request needs. No overhead is added: the fit already holds it."""

    def __init__(self, a: Anchor, step_model):
        self.anchor, self.cost, self.overhead_s = a, step_model, 0.0
        self.noise = step_model.draws() if hasattr(step_model, "draws") else None  # a fresh seeded stream per run

    def pricing(self, kv) -> MeasuredPricing:
        """Its noise, and the slots of `kv` when the model prices ubatches and `kv` holds slots."""
        laid = getattr(self.cost, "prices_layout", False) and hasattr(kv, "slot_of")
        return MeasuredPricing(self.cost, self.noise, kv if laid else None)


def step_cost_for(a: Anchor, efficiency: rl.Efficiency = rl.BOUND, step_model=None):
    """The step-cost model simulate() uses: `measured` when a fitted model is given, else `roofline` at the bound
    and `derated` otherwise."""
    if step_model is not None:
        if not efficiency.is_bound():
            raise ValueError("step_cost applies to the colocated schedules and replaces `efficiency`")
        return Measured(a, step_model)
    return Roofline(a) if efficiency.is_bound() else Derated(a, efficiency)
