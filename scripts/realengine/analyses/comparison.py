"""Measured load runs beside the simulator's prediction (precomputed/measured_vs_simulated_load.json).

Calibrate on one half, predict the other: for each workload the measured rates are split alternately into two
halves (rates 1, 3, 5 of the sorted six, and 2, 4, 6); the step model (scripts/realengine/analyses/stepmodel.py) is
fitted on the iterations of one half's runs (both workloads, both runs) and predicts every run of the other half, and
the other way round, so each cell is predicted by a model that never saw it, fitted on runs made in the same hour on
the same machine. The lone-request calibration gives both models their attention cost and round trip.
A second prediction uses only the separate calibration load runs (precomputed/serve/calibration/*-calibration-*,
taken apart from the cells, just before them in run.py, at rates of their own): how far a calibration taken at
another time carries.

Per engine + machine: every cell (workload, rate) with each run's measured metrics and prediction, the error of the
prediction against the runs' mean, the run-to-run spread (the floor no model can beat), and summaries against the
issue's goals."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from scripts.realengine.analyses import accuracy, calibrate, predict
from scripts.realengine.analyses.settings import read_calibration
from scripts.record.inputs import InputError
from scripts.serving.measures import results

GOAL_KEYS = ("central_median_abs_error", "tail_median_abs_error", "attainment_abs_error")  # this comparison's goals
FOLDS = 2  # the halves: a workload's sorted rates alternate between them


def mean_metrics(runs: list[dict]) -> dict:
    """Metric by metric, the runs' mean; None where a run lacks the metric."""
    return {k: None if any(r[k] is None for r in runs) else float(np.mean([r[k] for r in runs]))
            for k in accuracy.COMPARED}


def median_abs_error(errors: list, keys) -> float | None:
    """The median |error| over `keys` of every cell's errors (accuracy.CellErrors, or a dict as the files hold them),
    leaving out the metrics a measurement did not give; None when there is none."""
    vals = [abs(e[k]) for e in errors for k in keys if e[k] is not None]
    return float(np.median(vals)) if vals else None


@dataclasses.dataclass(frozen=True)
class FamilyErrors:
    """The goals' three figures over a family of cells' errors (accuracy.CellErrors): the median |error| of the
    central metrics and of the tail metrics, and the largest |attainment error|; None over no cell."""
    central_median_abs_error: float | None
    tail_median_abs_error: float | None
    attainment_max_abs_error: float | None

    @classmethod
    def of(cls, errors: list[accuracy.CellErrors]) -> FamilyErrors:
        return cls(median_abs_error(errors, accuracy.CENTRAL), median_abs_error(errors, accuracy.TAIL),
                   max((abs(e.slo_attainment) for e in errors), default=None))

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)


def error_figures(errors: list[dict]) -> dict:
    """FamilyErrors over errors as the comparison files hold them (accuracy.cell_errors), as those files hold it."""
    return FamilyErrors.of([accuracy.CellErrors.read(e) for e in errors]).as_dict()


@dataclasses.dataclass(frozen=True)
class CellGroups:
    """A comparison's cells as its goals count them: `below` (open-loop cells below saturation whose engine kept its
    speed: the cells every goal is judged on), `saturated` (open-loop, at or past saturation), `closed_loops` (a
    client with a concurrency cap); `usable`, the three together in the cells' order, and `speed_moved`, the cells
    left out because a speed check moved past the bound."""
    cells: int
    usable: list
    below: list
    saturated: list
    closed_loops: list

    @property
    def speed_moved(self) -> int:
        return self.cells - len(self.usable)


def summarize(cells: list[dict], error=lambda c: c["error"]) -> tuple[CellGroups, FamilyErrors]:
    """The one grouping and the one error summary the three comparisons share (load halves, prefix reuse, held-out
    sessions): the cells grouped, and FamilyErrors over the `below` group (`error`: a cell's errors as the
    comparison files hold them, accuracy.cell_errors)."""
    usable = [c for c in cells if not c.get("speed_moved")]
    open_loop = [c for c in usable if not c.get("concurrency")]
    groups = CellGroups(len(cells), usable, [c for c in open_loop if not c["saturated"]],
                        [c for c in open_loop if c["saturated"]], [c for c in usable if c.get("concurrency")])
    return groups, FamilyErrors.of([accuracy.CellErrors.read(error(c)) for c in groups.below])


def is_load_calibration(path: Path) -> bool:
    """precomputed/serve/calibration/ holds one record per engine and machine, and its calibration load runs."""
    return "-calibration-" in Path(path).name


def calibration_runs(loads: list[Path], cal: dict) -> list[Path]:
    """The calibration load runs of `cal`'s engine and machine among `loads`."""
    prefix = f"{cal['engine']['id']}-{cal['machine']['id']}-calibration-"
    return [p for p in loads if Path(p).name.startswith(prefix)]


def session_runs(cpath: Path, loads: list[Path], result_paths: list[Path], fields: tuple, predicted: str,
                 recorded_by: str) -> tuple[dict, list[Path], list[tuple[str, dict]]]:
    """A session's calibration record, its calibration load runs (required: `predicted` are predicted from those
    only) and its result files of the same engine and machine, each with `fields` (`recorded_by` says who writes
    them)."""
    cal = read_calibration(cpath)
    mid, eid = cal["machine"]["id"], cal["engine"]["id"]
    mine = calibration_runs(loads, cal)
    if not mine:
        raise InputError(f"{Path(cpath).as_posix()}: no calibration load runs beside it ({predicted} predicted from "
                         "those only)")
    docs = []
    for path in sorted(result_paths):
        doc = results.load_result(path)
        if doc.get("machine_id") != mid or doc.get("label") != eid:
            continue
        for field in fields:
            if field not in doc:
                raise InputError(f"{Path(path).as_posix()}: field {field} is missing ({recorded_by})")
        docs.append((Path(path).as_posix(), doc))
    return cal, mine, docs


def within_goal(value: float | None, goal: float) -> bool:
    """Whether an error figure meets its goal (none: it does not). Attainments are ratios of counts: 6/120 - 0 as
    doubles can land 4e-17 past 0.05, so the goal is met up to 1e-12 beyond it."""
    return value is not None and value <= goal + 1e-12


def goals_met(out: dict, goals: dict) -> dict:
    """Whether a summary's central and tail median |error| and its attainment error are within `goals`
    (config/real_engine.json comparison.goals, read by settings.comparison_settings)."""
    def within(key, goal):
        return within_goal(out[key], goals[goal])
    return {"central": within("central_median_abs_error", "central_median_abs_error"),
            "tail": within("tail_median_abs_error", "tail_median_abs_error"),
            "attainment": within("attainment_max_abs_error", "attainment_abs_error")}


def folds_of(docs: list[dict]) -> dict[tuple, int]:
    """(workload, rate) -> its half: the workload's distinct rates, sorted, alternate."""
    rates: dict[str, set] = {}
    for d in docs:
        rates.setdefault(d["workload"], set()).add(float(d["request_rate"]))
    return {(w, r): i % FOLDS for w, rs in rates.items() for i, r in enumerate(sorted(rs))}


def _cells(docs: list[tuple[str, dict]], predicted: dict) -> list[dict]:
    cells: dict[tuple, dict] = {}
    for path, doc in docs:
        key = (doc["workload"], float(doc["request_rate"]))
        cell = cells.setdefault(key, {"workload": key[0], "rate": key[1], "runs": []})
        cell["runs"].append({"file": path, "run": doc["run"], **predicted[path]})
    rows = []
    for key in sorted(cells):
        cell = cells[key]
        cell["runs"].sort(key=lambda r: r["run"])
        measured = mean_metrics([r["measured"] for r in cell["runs"]])
        pred = mean_metrics([r["predicted"] for r in cell["runs"]])
        cell["measured"], cell["predicted"] = measured, pred
        cell["error"] = accuracy.cell_errors({"measured": measured, "predicted": pred})
        runs = cell["runs"]
        cell["spread"] = accuracy.run_spread([r["measured"] for r in runs]) if len(runs) > 1 else None
        cell["saturated"] = any(r["saturated"] for r in runs)
        cell["speed_moved"] = any(r.get("speed_moved", False) for r in runs)
        rows.append(cell)
    return rows


def compare(calibration_paths: list[Path], result_paths: list[Path], anchor, settings: dict) -> dict:
    """Every real engine's runs predicted (module docstring); `settings`: comparison_settings."""
    engines, saturated_below, seeds = [], settings["saturated_below"], settings.get("noise_seeds", 0)
    load_paths = sorted(p for p in calibration_paths if is_load_calibration(p))
    for cpath in sorted(p for p in calibration_paths if not is_load_calibration(p)):
        cal = read_calibration(cpath)
        mid, eid = cal["machine"]["id"], cal["engine"]["id"]
        docs = []
        for path in sorted(result_paths):
            doc = results.load_result(path)
            if doc.get("machine_id") != mid or doc.get("label") != eid:
                continue
            for field in ("send_times", "workload", "run", "request_rate"):
                if field not in doc:
                    raise InputError(f"{Path(path).as_posix()}: field {field} is missing (a real-engine run "
                                     "records it)")
            docs.append((Path(path).as_posix(), doc))
        if not docs:
            continue
        fold = folds_of([d for _, d in docs])
        models, quality = {}, {}
        for f in range(FOLDS):
            fitted_on = [d for _, d in docs if fold[(d["workload"], float(d["request_rate"]))] == f]
            models[f], quality[f] = calibrate.fit(cal["calibration"], fitted_on, settings)
        cross = {}
        for path, doc in docs:  # each run predicted by the half it is not in
            other = 1 - fold[(doc["workload"], float(doc["request_rate"]))]
            cross[path] = predict.compare_cell(anchor, doc, models[other], cal["server"], cal["slo_ms"],
                                               saturated_below, speed_bound=settings.get("speed_check_bound"),
                                               **predict.noise_arguments(quality[other], seeds))
        rows = _cells(docs, cross)
        mine = [p for p in load_paths if Path(p).name.startswith(f"{eid}-{mid}-calibration-")]
        separate = None
        if mine:
            step, q = calibrate.fit(cal["calibration"], [results.load_result(p) for p in mine], settings)
            sep = {path: predict.compare_cell(anchor, doc, step, cal["server"], cal["slo_ms"], saturated_below,
                                              speed_bound=settings.get("speed_check_bound"),
                                              **predict.noise_arguments(q, seeds)) for path, doc in docs}
            separate = {"files": [Path(p).as_posix() for p in mine], "step_model": step.as_dict(), "fit_quality": q,
                        "summary": summary(_cells(docs, sep), settings["goals"])}
        load = {"requests": max(d["num_prompts"] for _, d in docs), "runs": max(len(c["runs"]) for c in rows)}
        long = [d for _, d in docs if d["workload"] == "long_mix"]
        if long:
            length = max(max(d["input_lens"]) for d in long)
            load |= {"long_prompt_tokens": length,
                     "long_share": float(np.mean([np.mean(np.asarray(d["input_lens"]) == length) for d in long]))}
        engines.append({"calibration": Path(cpath).as_posix(), "load": load,
                        "slo_assumption": cal.get("slo_assumption"), "machine": cal["machine"],
                        "engine": cal["engine"], "model": cal["model"],
                        # the run files' threads_source named a note outside the repository: records.THREADS_SOURCE
                        "server": {k: v for k, v in cal["server"].items() if k != "threads_source"},
                        "slo_ms": cal["slo_ms"], "calibration_points": cal["calibration"],
                        "halves": {str(f): {"cells": sorted([w, r] for (w, r), v in fold.items() if v == f),
                                            "step_model": models[f].as_dict(), "fit_quality": quality[f]}
                                   for f in range(FOLDS)},
                        "cells": rows, "summary": summary(rows, settings["goals"]), "separate_calibration": separate,
                        # the bound a run's speed may move by (assumed): the page's "the machine moved" uses it too
                        "speed_check_bound": settings.get("speed_check_bound")})
    return {"schema_version": 1, "definitions": "scripts/realengine/analyses/comparison.py, "
            "scripts/realengine/analyses/accuracy.py, scripts/serving/measures/metrics.py",
            "goals": {k: settings["goals"][k] for k in GOAL_KEYS}, "engines": engines}


def summary(rows: list[dict], goals: dict) -> dict:
    """The error figures (summarize) over the cells below saturation whose engine kept its speed (a cell with a
    run whose speed check moved past the bound is counted in `speed_moved` and left out, as saturated ones are);
    the attainment error here is the largest over every cell, the saturated ones too (their attainment is the
    number a reader of this comparison is warned about)."""
    groups, errors = summarize(rows)
    below = groups.below

    def med(keys, cells):
        return median_abs_error([c["error"] for c in cells], keys)

    out = {"cells": groups.cells, "below_saturation": len(below), "speed_moved": groups.speed_moved,
           "central_median_abs_error": errors.central_median_abs_error,
           "tail_median_abs_error": errors.tail_median_abs_error,
           "attainment_max_abs_error": max((abs(c["error"]["slo_attainment"]) for c in rows), default=None),
           "per_metric_median_abs_error": {k: med([k], below) for k in accuracy.COMPARED},
           "per_metric_median_spread": {k: float(np.median([c["spread"][k] for c in below if c["spread"]]))
                                        for k in accuracy.COMPARED} if any(c["spread"] for c in below) else None}
    if below:  # where the prediction misses most, beside that cell's own run-to-run spread
        cell, key = max(((c, k) for c in below for k in accuracy.CENTRAL), key=lambda ck: abs(ck[0]["error"][ck[1]]))
        out["worst_central"] = {"workload": cell["workload"], "rate": cell["rate"], "metric": key,
                                "error": cell["error"][key], "spread": cell["spread"][key] if cell["spread"] else None}
    if rows:
        cell = max(rows, key=lambda c: abs(c["error"]["slo_attainment"]))
        out["worst_attainment"] = {"workload": cell["workload"], "rate": cell["rate"],
                                   "measured": cell["measured"]["slo_attainment"],
                                   "predicted": cell["predicted"]["slo_attainment"],
                                   "p99_ttft_error": cell["error"]["p99_ttft_ms"],
                                   "spread": cell["spread"]["slo_attainment"] if cell["spread"] else None}
    out["meets"] = goals_met(out, goals)
    return out
