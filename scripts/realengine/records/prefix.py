"""The prefix-reuse runs' records (prefix_comparison.py): each cell measured and predicted with the slots'
reuse, the summary and its goals. Record ids
realengine.prefix.<machine>.<workload>.r<rate>.<metric>.{measured,predicted}, realengine.prefix.<machine>.summary.*."""
from __future__ import annotations

from scripts.common.display import exact_format
from scripts.realengine.records.verdicts import claim, goal_claims
from scripts.realengine.records.words import (
    FITS,
    PREFIX_SHOWN,
    UNITS,
    WORDS,
    Records,
    goal_source,
)
from scripts.record import provenance as pv

PREFIX_LABELS = {k: tuple(v) for k, v in WORDS["prefix_workloads"].items()}  # workload -> (name, what is sent)


class _PrefixRecords(Records):
    """The prefix-reuse runs' records: data under precomputed/serve-prefix/, predictions by prefix_comparison.py."""
    FAMILY = "realengine.prefix"

    def __init__(self, e: dict, prov: dict):
        super().__init__(e, prov, "precomputed/serve-prefix")

    def predicted(self, rid, label, value, unit, fmt, args, fit=FITS["prefix"]):
        self.prov[rid] = pv.calibrated(rid, label, value, unit, fmt, fit=fit + self.layout, data=self.data,
                                       script="scripts/realengine/analyses/prefix_comparison.py", args=args)


def _prefix_cell(r: _PrefixRecords, c: dict) -> dict:
    """One prefix-reuse cell's records (measured, predicted, the slots' reuse) and its table row."""
    w = WORDS["prefix"]
    base = f"{r.ids}.{c['workload']}.r{c['rate']:g}"
    name, per = PREFIX_LABELS.get(c["workload"], (c["workload"], UNITS["requests"]))
    where = w["where"].format(name=name, rate=f"{c['rate']:g}", per=per)
    for key, (label, unit, fmt, scale) in PREFIX_SHOWN.items():
        r.measured(f"{base}.{key}.measured", w["measured"].format(where=where, label=label),
                   c["measured"][key] * scale, unit, fmt, c["file"], 1, "—")
        r.predicted(f"{base}.{key}.predicted", w["predicted"].format(where=where, label=label),
                    c["predicted"][key] * scale, unit, fmt, {"workload": c["workload"], "rate": c["rate"],
                                                             "metric": key})
    r.measured(f"{base}.hit.measured", w["hit_measured"].format(where=where), c["reuse"]["measured_hit"] * 100, "%",
               "int", c["file"], 1, "—")
    r.predicted(f"{base}.hit.predicted", w["hit_predicted"].format(where=where), c["reuse"]["predicted_hit"] * 100,
                "%", "int", {"workload": c["workload"], "rate": c["rate"], "metric": "hit"})
    r.predicted(f"{base}.reuse_equal", w["reuse_equal"].format(where=where), c["reuse"]["equal_share"] * 100, "%",
                "int", {"workload": c["workload"], "rate": c["rate"], "metric": "reuse_equal"})
    r.measured(f"{base}.rate", w["rate"].format(where=where), c["rate"], "/s", exact_format(c["rate"]), c["file"], 1,
               "—")
    r.measured(f"{base}.requests", w["requests"].format(where=where), c["requests"], UNITS["count"], "int",
               c["file"], 1, "—")
    return {"workload": c["workload"], "rate": c["rate"], "saturated": c["saturated"], "id": base, "label": name,
            "per": per}


def _prefix_summary(r: _PrefixRecords, s: dict, goals: dict) -> None:
    """The prefix-reuse runs' summary, its goals (config/real_engine.json comparison.goals) and why reuse differed."""
    w, prov = WORDS["prefix"], r.prov
    for key in ("reuse_equal_share", "central_median_abs_error", "tail_median_abs_error"):
        if s[key] is not None:
            label = w[{"central_median_abs_error": "central", "tail_median_abs_error": "tail"}.get(key, key)]
            fmt = "int" if key == "reuse_equal_share" else "f1"
            r.predicted(f"{r.ids}.summary.{key}", label, s[key] * 100, "%", fmt, {"summary": key})
    r.measured(f"{r.ids}.summary.below_saturation", WORDS["load"]["below_saturation"],
               s["below_saturation"], UNITS["count"], "int", r.first_run, 1, "—")
    if s.get("speed_moved"):
        r.measured(f"{r.ids}.summary.speed_moved", WORDS["load"]["speed_moved"], s["speed_moved"],
                   UNITS["count"], "int", r.first_run, 1, "—")
    for key, goal in (("goal.reuse", "reuse_equal_share"), ("goal.central", "central_median_abs_error")):
        rid = f"{r.ids}.{key}"
        prov[rid] = pv.assumed(rid, w[key.replace(".", "_")], round(goals[goal] * 100, 9), "%", "int",
                               assumption=goal_source("prefix_goal", goals))
    r.measured(f"{r.ids}.summary.requests", w["summary_requests"], s["reuse_requests"], UNITS["count"],
               "int", r.first_run, 1, "—")
    for key, field in (("reuse_differ", "reuse_differ"), ("reuse_differ_busy", "reuse_differ_all_slots_busy"),
                       ("reuse_differ_turn", "reuse_differ_previous_turn")):
        r.predicted(f"{r.ids}.summary.{key}", w[key], s[field], UNITS["count"], "int", {"summary": field})


def prefix_page_block(comparison: dict) -> dict:
    """{"engines": [...], "provenance": {...}, "claims": [...]} for the prefix-reuse runs; record ids
    realengine.prefix.<machine>.<workload>.r<rate>.<metric>.{measured,predicted}, realengine.prefix.<machine>.summary.*;
    claims realengine.prefix.<machine>.summary.meets.{reuse,central}."""
    engines, prov, claims = [], {}, []
    for e in comparison.get("engines", []):
        r = _PrefixRecords(e, prov)
        rows = [_prefix_cell(r, c) for c in e["cells"]]
        _prefix_summary(r, e["summary"], comparison["goals"])
        base = f"{r.ids}"
        claims += claim(prov, f"{base}.summary.meets.reuse", "reaches_goal", f"{base}.summary.reuse_equal_share", ">=",
                        f"{base}.goal.reuse") + goal_claims(prov, f"{base}.summary", base, ("central",))
        s = e["summary"]  # the requests whose reuse differs for neither reason the page names
        rest = s["reuse_differ"] - s["reuse_differ_all_slots_busy"] - s["reuse_differ_previous_turn"]
        engines.append({"id": r.mid, "rows": rows, "summary": s, "machine": e["machine"],
                        "calibration": e["calibration"], "fitted_on": e["fitted_on"], "reuse_differ_rest": rest})
    return {"engines": engines, "provenance": prov, "claims": claims}
