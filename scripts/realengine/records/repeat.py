"""The held-out cells measured again in later sessions (heldout_comparison.repeats): each later session's
measurement and prediction, a closed loop's attainment floor across sessions, the summary of the sessions' mean
and of each session, and the spread between sessions. Record ids
realengine.heldout.<machine>.<session>.<workload>.<cell>.<metric>.{measured,predicted},
realengine.heldout.<machine>.rep.*."""
from __future__ import annotations

from scripts.realengine.analyses.comparison import within_goal
from scripts.realengine.records.words import (
    FITS,
    HELD_LABELS,
    HELD_NOISY,
    HELD_PREDICTION,
    HELD_SHOWN,
    HW,
    SPREADS,
    UNITS,
    WORDS,
    HeldOutRecords,
    cell_name,
    held_where,
    layout_records,
)


def _floor_records(r: HeldOutRecords, c: dict, floor: dict, base: str, where: str, args: dict,
                   data: list[str]) -> None:
    """A closed loop's attainment across the sessions with its slots known and its speed kept
    (heldout_comparison.attainment_floor): lowest, highest, the floor no single prediction gets under, and how many
    of those measurements the model's band of starts holds."""
    label, unit, fmt, scale = HELD_SHOWN["slo_attainment"]
    first, n = c["files"][c["present"].index(floor["sessions"][0])], len(floor["sessions"])
    kept, spread = HW["floor_kept"].format(n=n), SPREADS["sessions_each_calibrated"].format(n=n)
    for key, which in HW["floor_which"].items():
        r.measured(f"{base}.{key}", HW["floor_end"].format(where=where, label=label, which=which, kept=kept),
                   floor[key] * scale, unit, fmt, first, n, spread)
    r.measured(f"{base}.floor", HW["floor"].format(where=where, kept=kept), floor["floor"] * 100, UNITS["points"],
               "f1", first, n, spread)
    r.measured(f"{base}.sessions", HW["floor_sessions"].format(where=where, kept=kept), n, UNITS["times"], "int",
               first, n, "—")
    if floor["with_starts"]:
        r.predicted(f"{base}.within_starts", HW["within_starts"].format(where=where, kept=kept),
                    floor["within_starts"], UNITS["times"], "int", {**args, "figure": "within_starts"}, data=data)


REPEAT_SHOWN = tuple(WORDS["shown"]["repeat"])  # the repeat table's metrics (HELD_SHOWN's formats)


def _loop_over_goal(c: dict, k: int, comparison: dict) -> bool:
    """Whether a closed loop's k-th measurement and its prediction differ by more than the closed-loop goal: the
    repeat's own attainment error (accuracy.cell_errors) against the closed loop's goal (comparison.goals)
    (`comparison["goals"]`); False for a Poisson cell."""
    if not c["concurrency"]:
        return False
    goal = comparison["goals"]["closed_loop_attainment_abs_error"]
    return not within_goal(abs(c["error"][k]["slo_attainment"]), goal)


def _repeat_session(r: HeldOutRecords, c: dict, k: int, i: int, tag: str, noisy: bool, cell: str, where: str) -> dict:
    """The i-th session (0-based) of a repeated cell, its k-th measurement: records and the table's ids."""
    base = f"{r.ids}.{tag}.{c['workload']}.{cell}"
    for key in REPEAT_SHOWN:
        label, unit, fmt, scale = HELD_SHOWN[key]
        r.measured(f"{base}.{key}.measured", HW["repeat_measured"].format(where=where, label=label, i=i + 1),
                   c["measured"][k][key] * scale, unit, fmt, c["files"][k], 1, "—")
        r.predicted(f"{base}.{key}.predicted", HW["repeat_predicted"].format(where=where, label=label, i=i + 1),
                    c["predicted"][k][key] * scale, unit, fmt,
                    {"session": tag, "workload": c["workload"], "cell": cell, "metric": key},
                    HELD_NOISY if noisy else HELD_PREDICTION)
    layouts = c["slot_layouts"][k]
    if layouts:  # a closed loop run with the slots in an unknown order: the band the layouts leave
        layout_records(r, layouts, base, HW["repeat_session"].format(where=where, i=i + 1),
                        {"session": tag, "workload": c["workload"], "cell": cell})
        label, unit, fmt, scale = HELD_SHOWN["mean_tpot_ms"]
        r.measured(f"{base}.mean_tpot_ms.measured", HW["repeat_measured"].format(where=where, label=label, i=i + 1),
                   c["measured"][k]["mean_tpot_ms"] * scale, unit, fmt, c["files"][k], 1, "—")
    return {"base": base, "predicted": "predicted", "layouts": layouts, "moved": c["speed_moved_each"][k]}


def _repeat_row(recs: list, rep: dict, c: dict, noisy: bool, comparison: dict, data: list[str]) -> dict:
    """One cell of the repeat table: the first session's ids (its own records), each later session's, its floor."""
    r1 = recs[0]
    cell = cell_name(c)
    where, first = held_where(c), f"{r1.ids}.{c['workload']}.{cell}"
    floor_base = f"{r1.ids}.rep.{c['workload']}.{cell}.floor"
    ids = [{"base": first, "predicted": "noisy" if noisy else "predicted", "moved": c["speed_moved_each"][0],
            "over_goal": _loop_over_goal(c, 0, comparison)} if 0 in c["present"] else None]
    for i, (r, tag) in enumerate(zip(recs[1:], rep["sessions"][1:], strict=True), start=1):
        if i not in c["present"]:  # a session that stopped before this cell
            ids.append(None)
            continue
        k = c["present"].index(i)
        ids.append({**_repeat_session(r, c, k, i, tag, noisy, cell, where),
                    "over_goal": _loop_over_goal(c, k, comparison)})
    floor = c.get("attainment_floor")
    if floor:
        _floor_records(r1, c, floor, floor_base, where, {"workload": c["workload"], "cell": cell}, data)
    return {"label": HELD_LABELS.get(c["workload"], c["workload"]), "rate": c["rate"],
            "concurrency": c["concurrency"], "saturated": c["saturated"], "speed_moved": c["speed_moved"],
            "first": first, "ids": ids, "complete": len(c["present"]) == len(rep["sessions"]),
            "floor": {**floor, "base": floor_base} if floor else None}


def _repeat_summary(r1: HeldOutRecords, rep: dict, fit: str, data: list[str]) -> None:
    """The repeat's summary: the sessions' mean against the predictions' mean, each session alone, the spread."""
    s, n = rep["summary"], len(rep["sessions"])
    for key, (label, unit) in HW["repeat_figures"].items():
        if s["mean"][key] is not None:
            r1.predicted(f"{r1.ids}.rep.mean.{key}", HW["repeat_mean"].format(n=n, label=label),
                         s["mean"][key] * 100, unit, "f1", {"repeat": "mean", "figure": key}, fit, data)
        for i, per in enumerate(s["per_session"]):
            if per[key] is not None:
                r1.predicted(f"{r1.ids}.rep.s{i + 1}.{key}", HW["repeat_one"].format(i=i + 1, label=label),
                             per[key] * 100, unit, "f1", {"repeat": i + 1, "figure": key}, fit, data)
    files = [f for c in rep["cells"] for f in c["files"]]
    for key, (label, unit) in HW["repeat_spreads"].items():
        if s["spread"][key] is not None:
            r1.measured(f"{r1.ids}.rep.spread.{key}", HW["repeat_spread"].format(n=n, label=label),
                        s["spread"][key] * 100, unit, "f1", files[0], n,
                        SPREADS["sessions_each_calibrated"].format(n=n))
    r1.measured(f"{r1.ids}.rep.sessions", HW["repeat_sessions"], n, UNITS["times"], "int", files[0], n, "—")
    r1.measured(f"{r1.ids}.rep.below_saturation", HW["repeat_below_saturation"], rep["below_saturation"],
                UNITS["count"], "int", files[0], n, "—")


def repeat_block(r1: HeldOutRecords, e1: dict, comparison: dict, prov: dict) -> dict | None:
    """The sessions after the first of one engine + machine (heldout_comparison.repeats): per cell each later
    session's measurement and prediction (the first session's are its own records), the summary of the sessions'
    mean and of each session, and how far the sessions' measurements are apart. Record ids
    realengine.heldout.<machine>.<session>.<workload>.<cell>.<metric>.{measured,predicted},
    realengine.heldout.<machine>.rep.*."""
    rep = next((x for x in comparison.get("repeats", []) if x["engine"] == e1["engine"]["id"]
                and x["machine"] == e1["machine"]["id"]), None)
    if rep is None:
        return None
    by_session = {e["session"]: e for e in comparison["engines"] if e["engine"]["id"] == rep["engine"]
                  and e["machine"]["id"] == rep["machine"]}
    recs = [r1] + [HeldOutRecords(by_session[t], prov) for t in rep["sessions"][1:]]
    data = [d for r in recs for d in r.data]
    noisy = any(x.get("noisy") for e in by_session.values() for x in e["cells"])
    rows = [_repeat_row(recs, rep, c, noisy, comparison, data) for c in rep["cells"]]
    _repeat_summary(r1, rep, (HELD_NOISY if noisy else HELD_PREDICTION) + FITS["repeat"], data)
    return {"sessions": rep["sessions"], "rows": rows, "summary": rep["summary"],
            "dates": [by_session[t]["machine"].get("date") for t in rep["sessions"]]}
