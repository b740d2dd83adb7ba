"""Step-cost models: how long one iteration takes, given its decode tokens (and their contexts) and its prompt
chunks. Pure. Each is registered by name (registry.py); the loop (loop.py) calls `seconds` for an iteration with
prompt work and `decode_run` for a run of pure-decode iterations, then adds `overhead_s` to every iteration.

  roofline  the anchor's roofline bound, max(bytes / bandwidth, FLOPs / peak) (scripts/model/roofline.py
            IterationCost, the one cost model of the page): the seed's numbers.
  derated   the same roofline with the peaks scaled by achieved shares and a fixed time per iteration
            (roofline.Efficiency; roofline.achieved(anchor) is the anchor's realistic set).
  measured  an engine's fitted step times (scripts/realengine/stepmodel.py StepModel, from a real engine's runs);
            with `stepmodel.Noisy` its measured step-time noise too: `noise` gives the loop seeded factors that
            stretch each iteration (the others' `noise` is None).
`cost` is what the loop times iterations with; an `IterationCost` lets the loop price pure-decode runs step by step
with its terms inline (the same arithmetic as IterationCost.seconds, in the same order)."""
from __future__ import annotations

from scripts.model import roofline as rl
from scripts.model.anchor import Anchor
from scripts.serving.engine.registry import register


@register("step_cost", "roofline")
class Roofline:
    """The roofline bound of anchor `a` (roofline.BOUND: peak FLOP/s and bandwidth, no overhead)."""

    def __init__(self, a: Anchor):
        self.anchor, self.cost, self.overhead_s, self.noise = a, rl.iteration_cost(a), 0.0, None


@register("step_cost", "derated")
class Derated:
    """The roofline of anchor `a` at `efficiency`'s achieved shares of its peaks, plus its overhead per iteration.
    Memory and the P/D link stay as the anchor says (roofline.derated changes the peaks only)."""

    def __init__(self, a: Anchor, efficiency: rl.Efficiency):
        self.anchor = rl.derated(a, efficiency)
        self.cost, self.overhead_s, self.noise = rl.iteration_cost(self.anchor), efficiency.overhead_s, None


@register("step_cost", "measured")
class Measured:
    """A measured engine's step times: any object with IterationCost's `seconds` and `decode_run` (a StepModel);
    `a` still gives the memory a request needs. No overhead is added: the fit already holds it."""

    def __init__(self, a: Anchor, step_model):
        self.anchor, self.cost, self.overhead_s = a, step_model, 0.0
        self.noise = step_model.draws() if hasattr(step_model, "draws") else None  # a fresh seeded stream per run


def step_cost_for(a: Anchor, efficiency: rl.Efficiency = rl.BOUND, step_model=None):
    """The step-cost model simulate() uses: `measured` when a fitted model is given, else `roofline` at the bound
    and `derated` otherwise."""
    if step_model is not None:
        if not efficiency.is_bound():
            raise ValueError("step_cost applies to the colocated schedules and replaces `efficiency`")
        return Measured(a, step_model)
    return Roofline(a) if efficiency.is_bound() else Derated(a, efficiency)
