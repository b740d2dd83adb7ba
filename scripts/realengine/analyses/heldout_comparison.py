"""The held-out cells beside the simulator's prediction (precomputed/measured_vs_simulated_heldout.json, issue 43).

Held out by design (heldout.py): the cells were sent by another client (aiperf) with shapes the fitted workloads
never had, and the step model is fitted only on the calibration load runs of the same session
(precomputed/serve-heldout/session-N/calibration/); no held-out cell is fitted on. A Poisson cell is predicted from
its own send times; the closed loop (`max_concurrency` set, `request_rate` inf; closed_loop.py) with the client's
cap and its measured turnaround (closed_loop.client_turnaround: its start stagger, and per request how long after the
finish that freed its slot it was sent; the client's side of the cell, as a Poisson cell's send times are), its
latencies measured from the simulated sends. Released at the very finish instead (`released_at_once`, kept for
contrast), a closed loop of equal requests runs in lockstep: every request the same TTFT. Each cell is predicted
twice: by the noiseless step model, and with the step-time noise the calibration measured (stepmodel.Noisy;
`held_out.noise_seeds` seeds, the median over them).

Reported apart (`summaries`): the fitted family (the calibration load runs, predicted by the model fitted on them:
in-sample, the floor of what the model can reach), the held-out Poisson cells below saturation (the issue's goals:
central median |error| <= 10 %, p99s <= 20 %, attainment <= 5 points), at and above saturation (no goal: the
latencies there grow with the run's length), and the closed loop (goals: predicted TTFT p50 != p99, attainment within
10 points); every cell with the Kolmogorov-Smirnov distance of its TTFT and TPOT distributions. The same cells are
predicted again from every other committed calibration of the engine and machine kind (`other_calibrations`: the load
runs' own, precomputed/serve/calibration/, and the archived ones, precomputed/serve-archive/<date>/calibration/),
each marked another day or the same day hours apart, beside how far the engine's lone speed moved between the two
calibrations: how far a calibration carries.

Sessions: each folder precomputed/serve-heldout/session-N/ (run.py --held-out --session N) is the whole measurement,
its calibration and its cells; each session is predicted from its own calibration only. When an engine + machine has
more than one session, `repeats` sets every cell's sessions side by side (in the order of their numbers:
session_key): each one's error, the error of the sessions' mean, how far the measurements themselves are apart, and
for a closed loop the floor that spread puts under any single prediction (attainment_floor)."""
from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path

import numpy as np

from scripts.realengine.analyses import accuracy, calibrate, closed_loop, predict
from scripts.realengine.analyses.comparison import (
    GOAL_KEYS,
    calibration_runs,
    error_figures,
    goals_met,
    is_load_calibration,
    mean_metrics,
    median_abs_error,
    session_runs,
    summarize,
    within_goal,
)
from scripts.realengine.analyses.settings import read_calibration
from scripts.record.inputs import InputError
from scripts.serving.measures import results

FIELDS = ("send_times", "workload", "run", "request_rate", "max_concurrency", "client")


SESSION_NUMBER = re.compile(r"session-(\d+)$")


def session_key(name: str) -> tuple:
    """A session folder's place among its siblings (run.py --session N writes session-N): by number, so session-2
    comes before session-10 (as text it would not); a folder named otherwise after them, by name."""
    m = SESSION_NUMBER.search(name)
    return (0, int(m.group(1)), name) if m else (1, 0, name)


def _mean_of_served(doc: dict, key: str) -> float:
    """The mean over the successful requests (a failed one's length may be 0: clients.from_aiperf)."""
    return float(np.mean([v for v, ok in zip(doc[key], doc["success"], strict=True) if ok]))


def predicted_cell(path: str, doc: dict, step, quality: dict, cal: dict, anchor, settings: dict, seeds: int,
                   detail: bool = True) -> dict:
    """One cell measured and predicted noiseless and with noise (`noisy`), with errors; a closed loop is never
    `saturated` (its sends follow the server), and with `detail` has closed_loop.details: five more simulations,
    which a prediction kept only for its errors (other_predictions) goes without."""
    sent, cap = closed_loop.as_sent(doc), doc.get("max_concurrency")
    kw = {"max_concurrency": cap, "speed_bound": settings.get("speed_check_bound")}
    plain, trace = predict.compare_cell(anchor, sent, step, cal["server"], cal["slo_ms"], settings["saturated_below"],
                                        **kw, with_trace=True)
    out = {"workload": doc["workload"], "rate": None if cap else float(doc["request_rate"]), "concurrency": cap,
           "file": path, "client": doc["client"], "requests": len(doc["ttfts"]), "completed": doc["completed"],
           "prompt_tokens_mean": _mean_of_served(doc, "input_lens"),
           "output_tokens_mean": _mean_of_served(doc, "output_lens"),
           **plain, "error": accuracy.cell_errors(plain)}
    if cap:
        out["saturated"] = False
    if cap and detail:
        out.update(closed_loop.details(anchor, doc, sent, (plain, trace), step, cal, settings, kw))
    noise = predict.noise_arguments(quality, seeds)
    if noise:
        noisy = predict.compare_cell(anchor, sent, step, cal["server"], cal["slo_ms"], settings["saturated_below"],
                                     **kw, **noise)
        out["noisy"] = {k: noisy[k] for k in ("predicted", "predicted_spread", "ks", "noise_seeds")}
        out["noisy"]["error"] = accuracy.cell_errors(noisy)
    return out


def summary(cells: list[dict], goals: dict, variant: str = "") -> dict:
    """The error figures of `cells` (noiseless, or the `noisy` prediction when variant == "noisy"), apart for the
    Poisson cells below saturation, the saturated ones and the closed loops."""
    def err(c):
        return c[variant]["error"] if variant else c["error"]

    def ks(c):
        return c[variant]["ks"] if variant else c["ks"]

    def pred(c):
        return c[variant]["predicted"] if variant else c["predicted"]

    def med(keys, group):
        return median_abs_error([err(c) for c in group], keys)

    groups, errors = summarize(cells, err)
    above, loops, usable = groups.saturated, groups.closed_loops, groups.usable
    out = {"cells": groups.cells, "speed_moved": groups.speed_moved, "below_saturation": len(groups.below),
           "saturated": len(above), "closed_loops": len(loops), **errors.as_dict(),
           "saturated_central_median_abs_error": med(accuracy.CENTRAL, above),
           "saturated_tail_median_abs_error": med(accuracy.TAIL, above),
           "ks_median": {k: float(np.median([ks(c)[k] for c in usable])) if usable else None
                         for k in ("ttft", "tpot")},
           "closed_loop": [{"workload": c["workload"], "concurrency": c["concurrency"],
                            "measured_ttft_ms": [c["measured"]["median_ttft_ms"], c["measured"]["p99_ttft_ms"]],
                            "predicted_ttft_ms": [pred(c)["median_ttft_ms"], pred(c)["p99_ttft_ms"]],
                            "p50_differs_from_p99": pred(c)["p99_ttft_ms"] > 1.001 * pred(c)["median_ttft_ms"],
                            "attainment": [c["measured"]["slo_attainment"], pred(c)["slo_attainment"]],
                            "attainment_abs_error": abs(err(c)["slo_attainment"]),
                            "central_median_abs_error": med(accuracy.CENTRAL, [c]),
                            "send_waves": c.get("send_waves"), "predicted_waves": c.get("predicted_waves"),
                            "released_at_once": c.get("released_at_once"), "starts": c.get("starts"),
                            "start_range": closed_loop.start_range(c.get("starts")),
                            "measured_within_starts": closed_loop.within_starts(c),
                            "slot_layouts": c.get("slot_layouts")} for c in loops]}
    loop_goal = goals["closed_loop_attainment_abs_error"]
    out["meets"] = {**goals_met(out, goals), "closed_loop": bool(loops) and all(
        c["p50_differs_from_p99"] and within_goal(c["attainment_abs_error"], loop_goal) for c in out["closed_loop"])}
    return out


def fitted_family(paths: list[Path], step, cal: dict, anchor, settings: dict) -> dict:
    """The calibration load runs predicted by the model fitted on them (in-sample): the family's error floor."""
    cells = []
    for p in paths:
        doc = results.load_result(p)
        c = predict.compare_cell(anchor, doc, step, cal["server"], cal["slo_ms"], settings["saturated_below"])
        cells.append({"file": Path(p).as_posix(), "workload": doc["workload"], "rate": float(doc["request_rate"]),
                      "saturated": c["saturated"], "error": accuracy.cell_errors(c), "ks": c["ks"]})
    below = [c["error"] for c in cells if not c["saturated"]]
    return {"cells": cells, "central_median_abs_error": median_abs_error(below, accuracy.CENTRAL),
            "tail_median_abs_error": median_abs_error(below, accuracy.TAIL)}


def compare(calibration_paths: list[Path], result_paths: list[Path], anchor, settings: dict,
            other_calibrations: list[Path] = ()) -> dict:
    """Every engine + machine's held-out cells predicted (module docstring); `other_calibrations`: other committed
    calibrations' records and load runs (precomputed/serve/calibration/, precomputed/serve-archive/*/calibration/),
    each predicting the same cells again."""
    seeds = settings.get("held_out_noise_seeds", 0)
    engines, others = [], fitted_calibrations(other_calibrations, settings)  # fitted once, used by every session
    loads = sorted(p for p in calibration_paths if is_load_calibration(p))
    for cpath in sorted((p for p in calibration_paths if not is_load_calibration(p)),
                        key=lambda p: session_key(Path(p).parent.parent.name)):
        folder = Path(cpath).parent.parent  # the session: its calibration/ and its cells (run.py --session)
        cal, mine, docs = session_runs(cpath, [p for p in loads if Path(p).parent == Path(cpath).parent],
                                       [p for p in result_paths if Path(p).parent == folder], FIELDS,
                                       "the held-out cells are",
                                       "a held-out cell records it: scripts/realengine/harness/heldout.py")
        if not docs:
            continue
        runs = [(p, results.load_result(p)) for p in mine]
        step, quality = calibrate.fit(cal["calibration"], [d for _, d in runs], settings)
        cells = [predicted_cell(p, d, step, quality, cal, anchor, settings, seeds) for p, d in docs]
        cells.sort(key=lambda c: (c["concurrency"] or 0, c["workload"], c["rate"] or 0))
        entry = {"session": folder.name, "folder": folder.as_posix(), "calibration": Path(cpath).as_posix(),
                 "fitted_on": [Path(p).as_posix() for p in mine],
                 "machine": cal["machine"], "engine": cal["engine"],
                 "server": {k: v for k, v in cal["server"].items() if k != "threads_source"},
                 "slo_ms": cal["slo_ms"], "slo_assumption": cal.get("slo_assumption"),
                 "step_model": step.as_dict(), "fit_quality": quality,
                 # the harness put the slots in a known order before every cell (run.speed_checked), and the
                 # calibration load runs name each request's slot (client.result_document)
                 "slots_known": all("slot_order_at_start" in d for _, d in docs) and all("slots" in d for _, d in runs),
                 "noise_seeds": seeds, "cells": cells,
                 "summaries": {"fitted_family": fitted_family(mine, step, cal, anchor, settings),
                               "held_out": summary(cells, settings["goals"]),
                               "held_out_noisy": summary(cells, settings["goals"], "noisy")
                               if seeds and quality.get("noise") else None}}
        entry["other_calibrations"] = other_predictions(others, cal, taken_at(runs), docs, anchor, settings)
        engines.append(entry)
    return {"schema_version": 1, "definitions": "scripts/realengine/analyses/heldout_comparison.py, scripts/realengine/"
            "analyses/closed_loop.py, scripts/realengine/analyses/accuracy.py, scripts/serving/measures/metrics.py",
            "goals": {k: settings["goals"][k] for k in (*GOAL_KEYS, "closed_loop_attainment_abs_error")},
            "engines": engines, "repeats": repeats(engines, settings["goals"])}


def _cell_key(c: dict) -> tuple:
    return c["workload"], c["rate"], c["concurrency"]


def _shown(c: dict) -> dict:
    """A cell's prediction as the page shows it: with the measured noise when there is one, else noiseless."""
    return c["noisy"]["predicted"] if c.get("noisy") else c["predicted"]


def repeats(engines: list[dict], goals: dict) -> list[dict]:
    """Each engine + machine measured in more than one session (run.py --session): every cell, with each session that
    has it (a session stopped early may lack some: `present`), its measurement and prediction (its own calibration),
    the prediction of the sessions' mean against their measurements' mean (as comparison.py judges a cell of two
    runs), and how far the sessions' measurements are apart (`spread`: the floor below which one measurement cannot
    tell a model's error; a closed loop's `attainment_floor`). Summed up over the Poisson cells at least two sessions
    have, below saturation in each and with the engine's speed kept."""
    groups: dict[tuple, list[dict]] = {}
    for e in engines:
        groups.setdefault((e["engine"]["id"], e["machine"]["id"]), []).append(e)
    out = []
    for (eid, mid), group in sorted(groups.items()):
        if len(group) < 2:
            continue
        group.sort(key=lambda e: session_key(e["session"]))
        keys = list(dict.fromkeys(_cell_key(c) for e in group for c in e["cells"]))
        cells = []
        for key in keys:
            present = [i for i, e in enumerate(group) if any(_cell_key(c) == key for c in e["cells"])]
            per = [next(c for c in group[i]["cells"] if _cell_key(c) == key) for i in present]
            measured, shown = [c["measured"] for c in per], [_shown(c) for c in per]
            cells.append({"workload": key[0], "rate": key[1], "concurrency": key[2], "present": present,
                          "files": [c["file"] for c in per], "saturated": any(c["saturated"] for c in per),
                          "speed_moved": any(bool(c.get("speed_moved")) for c in per),
                          "speed_moved_each": [bool(c.get("speed_moved")) for c in per],
                          "measured": measured, "predicted": shown,
                          "error": [accuracy.cell_errors({"measured": m, "predicted": p})
                                    for m, p in zip(measured, shown, strict=True)],
                          "mean_error": accuracy.cell_errors({"measured": mean_metrics(measured),
                                                             "predicted": mean_metrics(shown)}),
                          "spread": accuracy.run_spread(measured) if len(per) > 1 else None,
                          "slot_layouts": [c.get("slot_layouts") for c in per]})
            if key[2]:
                cells[-1]["attainment_floor"] = attainment_floor(present, per,
                                                                 goals["closed_loop_attainment_abs_error"])
        below = [c for c in cells if not c["concurrency"] and not c["saturated"] and not c["speed_moved"]
                 and c["spread"] is not None]

        def of_session(i, below):
            return [c["error"][c["present"].index(i)] for c in below if i in c["present"]]

        mean = error_figures([c["mean_error"] for c in below])
        spreads = [c["spread"]["slo_attainment"] for c in below]
        out.append({"engine": eid, "machine": mid, "sessions": [e["session"] for e in group], "cells": cells,
                    "below_saturation": len(below),
                    "summary": {"mean": {**mean, "meets": goals_met(mean, goals)},
                                "per_session": [error_figures(of_session(i, below)) for i in range(len(group))],
                                "spread": {"central_median": median_abs_error([c["spread"] for c in below],
                                                                              accuracy.CENTRAL),
                                           "tail_median": median_abs_error([c["spread"] for c in below], accuracy.TAIL),
                                           "attainment_median": float(np.median(spreads)) if spreads else None,
                                           "attainment_max": max(spreads, default=None)}}})
    return out


def attainment_floor(present: list[int], per: list[dict], goal: float) -> dict | None:
    """A closed loop measured in several sessions (`present`, its cells `per`), over those whose server had its
    slots in a known order (no `slot_layouts` band) and kept its speed: the measured attainment's lowest and highest,
    the least error some one of them must leave to any single prediction (`floor`, (high - low) / 2: no number is
    nearer both ends), whether that floor is above the closed loop's goal, and in how many of them the measurement
    lies within the model's own band of starts (within_starts). None with fewer than two such sessions."""
    kept = [(i, c) for i, c in zip(present, per, strict=True)
            if not c.get("slot_layouts") and not c.get("speed_moved")]
    if len(kept) < 2:
        return None
    att = [c["measured"]["slo_attainment"] for _, c in kept]
    low, high = min(att), max(att)
    floor = (high - low) / 2
    inside = [closed_loop.within_starts(c) for _, c in kept]
    return {"sessions": [i for i, _ in kept], "low": low, "high": high, "floor": floor,
            "above_goal": floor > goal,
            "within_starts": sum(1 for x in inside if x), "with_starts": sum(1 for x in inside if x is not None)}


LONE_STEP_DRIFT = 0.10  # the page's "一成": two calibrations whose lone decode steps differ by more moved apart

STAMP = re.compile(r"\d{8}-\d{6}")  # vLLM's `date` (vllm/benchmarks/serve.py: %Y%m%d-%H%M%S), as run.py writes it


def taken_at(calibration_loads: list[tuple[Path, dict]]) -> str:
    """When a calibration was taken: the earliest start stamp (`date`, YYYYMMDD-HHMMSS) of its calibration load
    runs (path, document); a run without one stops naming the file and field."""
    stamps = []
    for p, doc in calibration_loads:
        stamp = doc.get("date")
        if not isinstance(stamp, str) or not STAMP.fullmatch(stamp):
            raise InputError(f"{Path(p).as_posix()}: field date must be a YYYYMMDD-HHMMSS stamp (when the run started, "
                             f"as run.py and vLLM write it), not {stamp!r}")
        stamps.append(stamp)
    return min(stamps)


def hours_between(start: str, end: str) -> float:
    """`end` less `start` in hours, both YYYYMMDD-HHMMSS stamps."""
    fmt = "%Y%m%d-%H%M%S"
    return (datetime.strptime(end, fmt) - datetime.strptime(start, fmt)).total_seconds() / 3600


def fitted_calibrations(paths: list[Path], settings: dict) -> list[dict]:
    """Each calibration record among `paths` that has load runs beside it: the record (`path`, `record`), its runs
    (`fitted_on`), when they were taken (`taken`) and the step model fitted on them (`step`, `quality`)."""
    out = []
    for cpath in (p for p in paths if not is_load_calibration(p)):
        record = read_calibration(cpath)
        mine = calibration_runs([p for p in paths if is_load_calibration(p) and Path(p).parent == Path(cpath).parent],
                                record)
        if not mine:
            continue
        runs = [(p, results.load_result(p)) for p in mine]
        step, quality = calibrate.fit(record["calibration"], [d for _, d in runs], settings)
        out.append({"path": cpath, "record": record, "fitted_on": mine, "taken": taken_at(runs), "step": step,
                    "quality": quality})
    return out


def other_predictions(others: list[dict], cal: dict, taken: str, docs: list[tuple[str, dict]], anchor,
                      settings: dict) -> list[dict]:
    """The same cells predicted (noiseless) from every other committed calibration of the same engine and machine
    kind (`others`: fitted_calibrations, each fitted on the load runs in its own folder); `when`: "day" for a
    calibration taken on another date than this session's, "hour" for one taken the same date (`hours_apart`: from
    this session's calibration, signed), with both calibrations' lone decode step and every cell's speed probes: the
    drift beside the error. Sorted by when they were taken."""
    out = []
    probes = [d["speed_check"][k] for _, d in docs if d.get("speed_check") for k in ("before_itl_ms", "after_itl_ms")]
    for fitted in others:
        cpath, other, mine, when = fitted["path"], fitted["record"], fitted["fitted_on"], fitted["taken"]
        if other["engine"]["id"] != cal["engine"]["id"] or other["machine"]["id"] != cal["machine"]["id"]:
            continue
        step, quality = fitted["step"], fitted["quality"]
        cells = [predicted_cell(p, d, step, quality, other, anchor, settings, 0, detail=False) for p, d in docs]
        ratio = calibrate.lone_step_ms(cal["calibration"]) / calibrate.lone_step_ms(other["calibration"])
        out.append({"calibration": Path(cpath).as_posix(), "date": other["machine"].get("date"), "taken": when,
                    "when": "hour" if other["machine"].get("date") == cal["machine"].get("date") else "day",
                    "hours_apart": hours_between(taken, when),
                    "fitted_on": [Path(p).as_posix() for p in mine],
                    "lone_step_ms": {"committed": calibrate.lone_step_ms(other["calibration"]),
                                     "this_session": calibrate.lone_step_ms(cal["calibration"])},
                    "lone_step_ratio": ratio, "lone_step_moved": abs(ratio - 1) > LONE_STEP_DRIFT,
                    "speed_probe_itl_ms": [min(probes), max(probes)] if probes else None,
                    "summary": summary(cells, settings["goals"]),
                    "cells": [{"workload": c["workload"], "rate": c["rate"], "concurrency": c["concurrency"],
                               "error": c["error"]} for c in cells]})
    return sorted(out, key=lambda o: o["taken"])
