"""Whether a calibration applies to a run: the run's own engine speed against its prediction's (issue 63). Pure.

A step model is fitted on one machine's calibration; a result file from another machine (or the same one on a
slower hour) runs the same engine faster or slower, and every predicted latency is then off by about that factor.
The run shows its own speed: its decode-only iterations, read off the client's token times as the calibration's
are (stepmodel.iterations, gap config/real_engine.json comparison.iteration_gap_ms), none with a prompt in it or a
request waiting for its first token (whose prompt work the client cannot see). The prediction of the same run
gives the same iterations as the step model prices them, the server's slots and ubatches included (a closed loop
of four requests in eight slots is priced by where its requests sit, which D(4) alone misses by up to 35 % on the
committed sessions). `run_speed` compares the two: the lone steps (one decoder) when both runs have
`min_iterations` of them (config comparison.min_iterations_per_knot), else the batch size both have most of.

`ratio` = run / prediction. Past config comparison.speed_check_bound (|ratio - 1|), predict says so with both
numbers and stops unless told `--rescale` (`scaled`: the decode times of the step model, D, U and the attention per
context token, times the ratio) or `--force`. Only what the run shows is rescaled: its decode speed. The prompt
costs and the round trip stay as calibrated, so on a machine whose compute differs too the TTFTs stay off.
Validated by `python -m scripts.realengine.investigations.rescale_check` on the committed held-out sessions, every
session's
calibration predicting every session's Poisson cells (ratios 0.71-1.43 between sessions; 0.96-1.08 within one,
but for one cell at 1.18): of the 418 cells below saturation, the 198 past the 10 % bound went from a central
median |error| of 15.4 % to 6.8 % and a tail one of 12.6 % to 8.8 %. Scaling the prompt costs too was tried first
on the same cells and did not help (15.5 %, 18.1 %): those sessions' speed moved in decode, not in prefill."""
from __future__ import annotations

import dataclasses

import numpy as np

from scripts.realengine.analyses.stepmodel import StepModel, iterations


def decode_only(doc: dict, gap_s: float) -> list[dict]:
    """The run's iterations with decoders and nothing else the engine did in them (module docstring)."""
    return [s for s in iterations(doc, gap_s)
            if s["decoders"] >= 1 and not s["prompts"] and not s.get("unseen_prompts", 0)]


def simulated_run(trace) -> dict:
    """The simulated run as a result file's token times (send, TTFT, ITLs per request), for `iterations`."""
    sent = trace.requests
    return {"send_times": [float(t) for t in sent.arrival_s],
            "ttfts": [float(t) for t in trace.first_token_s - sent.arrival_s],
            "itls": [trace.token_gaps(i).tolist() for i in range(len(sent))],
            "input_lens": [int(n) for n in sent.prompt_tokens]}


def run_speed(doc: dict, trace, gap_s: float, min_iterations: int) -> dict | None:
    """The run's decode-only iterations against the same iterations of its prediction (module docstring):
    {"decoders" (the batch compared: 1 when both have `min_iterations` lone steps, else the one both have most of),
    "iterations" (measured), "run_step_ms", "model_step_ms" (their medians), "ratio"}; None when no batch size has
    `min_iterations` iterations in both (too few to read the speed from)."""
    measured, predicted = ({}, {})
    for into, run in ((measured, doc), (predicted, simulated_run(trace))):
        for s in decode_only(run, gap_s):
            into.setdefault(s["decoders"], []).append(s["seconds"])
    both = {m: min(len(v), len(predicted.get(m, ()))) for m, v in measured.items()}
    both = {m: n for m, n in both.items() if n >= max(min_iterations, 1)}
    if not both:
        return None
    m = 1 if 1 in both else max(both, key=lambda k: (both[k], -k))
    run, model = float(np.median(measured[m])), float(np.median(predicted[m]))
    return {"decoders": m, "iterations": len(measured[m]), "run_step_ms": run * 1e3, "model_step_ms": model * 1e3,
            "ratio": run / model}


def beyond(speed: dict | None, bound: float) -> bool:
    """Whether the run's speed is further from the model's than `bound` allows (False when it could not be read)."""
    return speed is not None and abs(speed["ratio"] - 1.0) > bound


def scaled(step: StepModel, factor: float) -> StepModel:
    """`step` with its decode times times `factor` (D, U and the attention per context token: what a run's decode
    iterations show, module docstring); the prompt costs and the round trip as calibrated."""
    if not factor > 0:
        raise ValueError(f"a step model can only be rescaled by a positive factor, not {factor}")
    return dataclasses.replace(step, decode_seconds=tuple(v * factor for v in step.decode_seconds),
                               ubatch_seconds=tuple(v * factor for v in step.ubatch_seconds),
                               attention_s_per_token=step.attention_s_per_token * factor)


def speed_line(speed: dict, bound: float) -> str:
    """The one line predict prints when the run's speed is past the bound."""
    which = "lone decode steps" if speed["decoders"] == 1 else f"decode steps of {speed['decoders']} requests"
    return (f"the run's {which} took {speed['run_step_ms']:.2f} ms (median of {speed['iterations']}), the "
            f"prediction from the calibration {speed['model_step_ms']:.2f} ms: {speed['ratio']:.2f}x, past "
            f"speed_check_bound ({bound:.0%}); the calibration does not apply to this run")


def unread_line(min_iterations: int) -> str:
    """The line predict prints when the run shows too few decode-only iterations to read its speed from."""
    return (f"the run's own speed was not checked against the calibration: no decode batch size has {min_iterations} "
            "decode-only iterations both in the run and in its prediction (min_iterations_per_knot)")
