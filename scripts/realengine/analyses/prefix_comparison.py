"""The real engine's prefix-reuse runs beside the simulator's prediction
(precomputed/measured_vs_simulated_prefix.json).

Held out by design: the step model is fitted only on the calibration load runs of the same session
(precomputed/serve-prefix/calibration/: the `short` and `long_mix` workloads, random prompts that share nothing, at
rates of their own, measured just before the prefix cells); no prefix run is ever fitted on. Each cell is simulated
with llama.cpp's slots reusing prompts (predict.simulate_cell: engine kv `reserved+slots`), from the run's own send
times and segments. Per cell: the metrics measured and predicted with their error, the server's reused prompt tokens
against the simulated slots' per request (accuracy.reuse_agreement), and whether the run saturated. The goals: reused
tokens exactly equal for at least 95% of the requests (all cells pooled), and the central metrics' median |error|
at most 10% below saturation (the load comparison's goal, config/real_engine.json comparison.goals)."""
from __future__ import annotations

from pathlib import Path

from scripts.realengine.analyses import accuracy, calibrate, predict
from scripts.realengine.analyses.comparison import is_load_calibration, median_abs_error, session_runs, summarize
from scripts.record.inputs import InputError
from scripts.serving.measures import results

FIELDS = ("send_times", "workload", "workload_kind", "run", "request_rate", "segments", "answer_ids", "cached_tokens")


PER_REQUEST = ("segments", "answer_ids", "cached_tokens", "slots", "sessions", "turns")


def check_fields(doc: dict, name: str) -> None:
    """What prefix_load.py writes, beyond the vLLM layout results.load_result checked: one entry per request in each
    per-request list; each prompt's segments ([content id, tokens], tokens >= 1) adding up to its input_lens; the
    reused tokens a whole number from -1 (not reported) to the prompt's length."""
    n = len(doc["ttfts"])
    for key in PER_REQUEST:
        if key in doc and (not isinstance(doc[key], list) or len(doc[key]) != n):
            raise InputError(f"{name}: field {key} must hold one entry per request ({n})")
    for i, (segs, prompt) in enumerate(zip(doc["segments"], doc["input_lens"], strict=True)):
        ok = isinstance(segs, list) and segs and all(
            isinstance(s, list) and len(s) == 2 and all(isinstance(x, int) and not isinstance(x, bool) for x in s)
            and s[1] >= 1 for s in segs)
        if not ok or sum(s[1] for s in segs) != prompt:
            raise InputError(f"{name}: field segments[{i}] must be [content id, tokens] pairs adding up to "
                             f"input_lens[{i}] = {prompt}")
        c = doc["cached_tokens"][i]
        if isinstance(c, bool) or not isinstance(c, int) or not -1 <= c <= prompt:
            raise InputError(f"{name}: field cached_tokens[{i}] must be a whole number from -1 to {prompt}")


def _cell(path: str, doc: dict, step, cal: dict, saturated_below: float, anchor, speed_bound=None) -> dict:
    c = predict.compare_cell(anchor, doc, step, cal["server"], cal["slo_ms"], saturated_below,
                             speed_bound=speed_bound)
    return {"workload": doc["workload"], "kind": doc["workload_kind"], "rate": float(doc["request_rate"]),
            "run": doc["run"], "file": path, "requests": doc["num_prompts"], "completed": doc["completed"],
            "sessions": len(set(doc["sessions"])) if "sessions" in doc else None,
            **c, "error": accuracy.cell_errors(c)}


def compare(calibration_paths: list[Path], result_paths: list[Path], anchor, settings: dict) -> dict:
    engines = []
    loads = sorted(p for p in calibration_paths if is_load_calibration(p))
    for cpath in sorted(p for p in calibration_paths if not is_load_calibration(p)):
        cal, mine, docs = session_runs(cpath, loads, result_paths, FIELDS, "the prefix runs are",
                                       "a prefix-reuse run records it: scripts/realengine/harness/prefix_load.py")
        for path, doc in docs:
            check_fields(doc, path)
        if not docs:
            continue
        step, quality = calibrate.fit(cal["calibration"], [results.load_result(p) for p in mine], settings)
        cells = [_cell(path, doc, step, cal, settings["saturated_below"], anchor, settings.get("speed_check_bound"))
                 for path, doc in docs]
        cells.sort(key=lambda c: (c["workload"], c["rate"], c["run"]))
        engines.append({"calibration": Path(cpath).as_posix(), "fitted_on": [Path(p).as_posix() for p in mine],
                        "machine": cal["machine"], "engine": cal["engine"],
                        "server": {k: v for k, v in cal["server"].items() if k != "threads_source"},
                        "slo_ms": cal["slo_ms"], "step_model": step.as_dict(), "fit_quality": quality,
                        "cells": cells, "summary": summary(cells, settings["goals"])})
    return {"schema_version": 1, "definitions": "scripts/realengine/analyses/prefix_comparison.py, scripts/realengine/"
            "analyses/accuracy.py, scripts/serving/measures/metrics.py", "goals": {k: settings["goals"][k] for k in (
                "central_median_abs_error", "tail_median_abs_error", "attainment_abs_error", "reuse_equal_share")},
            "engines": engines}


def summary(cells: list[dict], goals: dict) -> dict:
    """comparison.summarize's figures over the cells below saturation, the saturated cells' central error apart,
    and how often the engine's reuse of a cached prefix agreed with the simulator's, per workload too."""
    groups, errors = summarize(cells)
    below = groups.below

    def med(keys, group):
        return median_abs_error([c["error"] for c in group], keys)

    def pooled(group):
        n = sum(c["reuse"]["requests"] for c in group)
        return sum(c["reuse"]["equal"] for c in group) / n if n else None

    out = {"cells": len(cells), "below_saturation": len(below),
           "speed_moved": sum(bool(c.get("speed_moved")) for c in cells), "reuse_equal_share": pooled(cells),
           "reuse_equal_share_below": pooled(below),
           "reuse_requests": sum(c["reuse"]["requests"] for c in cells),
           "reuse_differ": sum(c["reuse"]["requests"] - c["reuse"]["equal"] for c in cells),
           "reuse_differ_all_slots_busy": sum(c["reuse"]["differ_all_slots_busy"] for c in cells),
           "reuse_differ_previous_turn": sum(c["reuse"]["differ_previous_turn_running"] for c in cells),
           "central_median_abs_error": errors.central_median_abs_error,
           "tail_median_abs_error": errors.tail_median_abs_error,
           "central_median_abs_error_saturated": med(accuracy.CENTRAL, [c for c in cells if c["saturated"]]),
           "per_workload": {w: {"central_median_abs_error": med(accuracy.CENTRAL, [c for c in below
                                                                                 if c["workload"] == w]),
                                "reuse_equal_share": pooled([c for c in cells if c["workload"] == w])}
                            for w in sorted({c["workload"] for c in cells})}}
    out["meets"] = {
        "reuse": out["reuse_equal_share"] is not None and out["reuse_equal_share"] >= goals["reuse_equal_share"],
        "central": out["central_median_abs_error"] is not None
        and out["central_median_abs_error"] <= goals["central_median_abs_error"]}
    return out
