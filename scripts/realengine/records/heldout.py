"""The held-out cells' records (heldout_comparison.py): each cell measured with another client and predicted
(noiseless, noisy), a closed loop's waves, starts, slot layouts and turnaround, the summaries, the other
calibrations and the settings; the repeat's records come from repeat.py. Record ids
realengine.heldout.<machine>.<workload>.{r<rate>,c<concurrency>}.<metric>.{measured,predicted,noisy}, ..."""
from __future__ import annotations

from pathlib import Path

from scripts.realengine.analyses.closed_loop import start_range
from scripts.realengine.analyses.comparison import within_goal
from scripts.realengine.analyses.heldout_comparison import session_key
from scripts.realengine.records.repeat import repeat_block
from scripts.realengine.records.verdicts import held_claims, loop_claims
from scripts.realengine.records.words import (
    FITS,
    HELD_AT_ONCE,
    HELD_LABELS,
    HELD_NOISY,
    HELD_PATTERN,
    HELD_PREDICTION,
    HELD_SHOWN,
    HW,
    SOURCES,
    SPREADS,
    UNITS,
    WORDS,
    HeldOutRecords,
    cell_name,
    goal_source,
    held_where,
    layout_records,
)
from scripts.record import provenance as pv


def _waves_records(r: HeldOutRecords, c: dict, base: str, where: str, args: dict) -> None:
    """A closed loop's client turnaround (measured), its waves' first prefill sizes (measured and predicted) and the
    TPOT of the requests that met the TTFT target."""
    turn = c.get("turnaround_ms")
    if turn:
        for key, label in HW["turnaround_names"].items():
            r.measured(f"{base}.turnaround_{key}", HW["turnaround"].format(where=where, label=label), turn[key], "ms",
                       "f1", c["file"], 1, "—")
    sizes = sorted({k for w in (c["send_waves"], c.get("predicted_waves")) if w for k in w["first_part"]}, key=int)
    for k in sizes:
        label = HW["first_part"].format(where=where, k=k)
        r.measured(f"{base}.first{k}.measured", HW["as_measured"].format(label=label),
                   c["send_waves"]["first_part"].get(k, 0), UNITS["rounds"], "int", c["file"], 1, "—")
        if c.get("predicted_waves"):
            r.predicted(f"{base}.first{k}.predicted", HW["as_predicted"].format(label=label),
                        c["predicted_waves"]["first_part"].get(k, 0), UNITS["rounds"], "int",
                        {**args, "first_part": k})
    met = c.get("ttft_met_tpot_ms")
    if met and met["measured"] is not None:
        label = HW["met_tpot"].format(where=where)
        r.measured(f"{base}.met_tpot.measured", HW["as_measured"].format(label=label), met["measured"], "ms", "f1",
                   c["file"], 1, "—")
        if met["predicted"] is not None:
            r.predicted(f"{base}.met_tpot.predicted", HW["as_predicted"].format(label=label), met["predicted"], "ms",
                        "f1", {**args, "met_tpot": True})


def _loop_records(r: HeldOutRecords, c: dict, base: str, where: str, args: dict) -> None:
    """A closed loop's waves (_waves_records), the settled patterns of its starts, its slot layouts and the
    prediction with every request released at the finish."""
    _waves_records(r, c, base, where, args)
    bounds = start_range(c.get("starts"))
    if bounds:  # the settled patterns the model has: the lowest and highest attainment over the starts
        for end, st in bounds.items():
            together = {**args, "together": st["together"]}
            r.predicted(f"{base}.pattern_{end}.attainment", HW["pattern_attainment"].format(
                where=where, together=st["together"], which=HW["pattern_which"][end]), st["slo_attainment"] * 100,
                "%", "int", {**args, "metric": "slo_attainment", "together": st["together"]}, HELD_PATTERN)
            r.predicted(f"{base}.pattern_{end}.together", HW["pattern_together"].format(where=where), st["together"],
                        UNITS["count"], "int", together, HELD_PATTERN)
            for k, n in (st["first_part"] or {}).items():
                r.predicted(f"{base}.pattern_{end}.first{k}", HW["pattern_first_part"].format(where=where, k=k), n,
                            UNITS["rounds"], "int", {**together, "first_part": k}, HELD_PATTERN)
    if c.get("slot_layouts"):
        layout_records(r, c["slot_layouts"], base, where, args)
    once = c.get("released_at_once")
    if once:
        for key, (label, unit, fmt, scale) in HELD_SHOWN.items():
            if key in once:
                r.predicted(f"{base}.{key}.at_once", HW["at_once"].format(where=where, label=label),
                            once[key] * scale, unit, fmt, {**args, "metric": key, "released_at_once": True},
                            HELD_AT_ONCE)


def _held_cell(r: HeldOutRecords, c: dict) -> dict:
    """One held-out cell's records (measured with aiperf, predicted, with noise, its closed loop's) and its row."""
    cell = cell_name(c)
    base, where = f"{r.ids}.{c['workload']}.{cell}", held_where(c)
    args = {"workload": c["workload"], "cell": cell}
    for key, (label, unit, fmt, scale) in HELD_SHOWN.items():
        r.measured(f"{base}.{key}.measured", HW["measured"].format(where=where, label=label),
                   c["measured"][key] * scale, unit, fmt, c["file"], 1, "—")
        r.predicted(f"{base}.{key}.predicted", HW["predicted"].format(where=where, label=label),
                    c["predicted"][key] * scale, unit, fmt, {**args, "metric": key})
        if c.get("noisy"):
            r.predicted(f"{base}.{key}.noisy", HW["noisy"].format(where=where, label=label),
                        c["noisy"]["predicted"][key] * scale, unit, fmt, {**args, "metric": key, "noisy": True},
                        HELD_NOISY)
    if c["concurrency"]:
        r.measured(f"{base}.concurrency", HW["concurrency"].format(where=where), c["concurrency"], UNITS["count"],
                   "int", c["file"], 1, "—")
        sw = c.get("send_waves")
        if sw:
            r.measured(f"{base}.waves", HW["waves"].format(where=where), sw["waves"], UNITS["rounds"], "int",
                       c["file"], 1, "—")
            r.measured(f"{base}.split", HW["split"].format(where=where), sw["split"], UNITS["rounds"], "int",
                       c["file"], 1, "—")
            if sw["split"]:
                for key, label in HW["split_names"].items():
                    r.measured(f"{base}.{key}", HW["split_ttft"].format(where=where, label=label), sw[key], "ms",
                               "int", c["file"], 1, "—")
            _loop_records(r, c, base, where, args)
    else:
        r.measured(f"{base}.rate", HW["rate"].format(where=where), c["rate"], "req/s", "f2", c["file"], 1, "—")
    r.measured(f"{base}.prompt_tokens", HW["prompt_tokens"].format(where=where), c["prompt_tokens_mean"], "token",
               "int", c["file"], 1, "—")
    r.measured(f"{base}.output_tokens", HW["output_tokens"].format(where=where), c["output_tokens_mean"], "token",
               "int", c["file"], 1, "—")
    ks = c["noisy"]["ks"] if c.get("noisy") else c["ks"]
    for k in ("ttft", "tpot"):
        r.predicted(f"{base}.ks_{k}", HW["ks"].format(where=where, metric=k.upper()), ks[k], "", "f2",
                    {**args, "ks": k}, HELD_NOISY if c.get("noisy") else HELD_PREDICTION)
    return {"workload": c["workload"], "label": HELD_LABELS.get(c["workload"], c["workload"]), "rate": c["rate"],
            "concurrency": c["concurrency"], "saturated": c["saturated"], "speed_moved": bool(c.get("speed_moved")),
            "id": base, "noisy": bool(c.get("noisy")), "send_waves": c.get("send_waves")}


def _held_summaries(r: HeldOutRecords, e: dict) -> None:
    """The held-out cells' summary errors (noiseless and noisy), their counts, and the calibration runs' own fit."""
    sums = e["summaries"]
    for tag, s, fit in (("held", sums["held_out"], HELD_PREDICTION), ("noisy", sums.get("held_out_noisy"),
                                                                     HELD_NOISY)):
        if not s:
            continue
        for key, label, unit in (("central_median_abs_error", HW["central"], "%"),
                                 ("tail_median_abs_error", HW["tail"], "%"),
                                 ("attainment_max_abs_error", HW["attainment"], UNITS["points"]),
                                 ("saturated_central_median_abs_error", HW["saturated_central"], "%")):
            if s[key] is not None:
                r.predicted(f"{r.ids}.{tag}.{key}", label, s[key] * 100, unit, "f1", {tag: key}, fit)
        for k in ("ttft", "tpot"):
            if s["ks_median"][k] is not None:
                r.predicted(f"{r.ids}.{tag}.ks_{k}", HW["ks_median"].format(metric=k.upper()),
                            s["ks_median"][k], "", "f2", {tag: f"ks_{k}"}, fit)
    s, first = sums["held_out"], e["cells"][0]["file"]
    for key in ("below_saturation", "saturated"):
        r.measured(f"{r.ids}.held.{key}", HW[key], s[key], UNITS["count"], "int", first, 1, "—")
    if s.get("speed_moved"):
        r.measured(f"{r.ids}.held.speed_moved", WORDS["load"]["speed_moved"], s["speed_moved"],
                   UNITS["count"], "int", first, 1, "—")
    fam = sums["fitted_family"]
    for key, label in (("central_median_abs_error", HW["fitted_central"]),
                       ("tail_median_abs_error", HW["fitted_tail"])):
        if fam[key] is not None:
            r.predicted(f"{r.ids}.fitted.{key}", label, fam[key] * 100, "%", "f1", {"fitted": key})


def _held_others(r: HeldOutRecords, e: dict) -> dict:
    """The same cells predicted from one other calibration of each kind: another day ("other"), the same day
    ("hour"); this session's lone step and the speed probes. Returns {kind: other calibration}."""
    others, first = {}, e["cells"][0]["file"]
    for o in e.get("other_calibrations", []):
        others.setdefault("other" if o["when"] == "day" else "hour", o)
    for tag, o in others.items():
        folder = Path(o["calibration"]).parent.as_posix()
        odata = [o["calibration"], f"{folder}/*-calibration-*.json", *r.data]
        which = HW["other_day"].format(date=o["date"]) if tag == "other" else \
            HW["other_hour"].format(taken=o["taken"])
        for key, label in (("central_median_abs_error", HW["other_central"]),
                           ("tail_median_abs_error", HW["other_tail"])):
            if o["summary"][key] is not None:
                r.predicted(f"{r.ids}.{tag}.{key}", label.format(which=which), o["summary"][key] * 100, "%",
                            "f1", {tag: key}, FITS["held_other_calibration"].format(folder=folder), odata)
        r.measured(f"{r.ids}.{tag}.lone_step_ms", HW["other_lone_step"].format(which=which),
                   o["lone_step_ms"]["committed"], "ms", "f1", o["calibration"], 1, "—")
        if tag == "hour":  # the start stamps (`date`) of the two calibrations' load runs
            r.measured(f"{r.ids}.hour.hours_apart", HW["hours_apart"], abs(o["hours_apart"]), UNITS["hours"],
                       "f1", o["fitted_on"][0], 1, "—")
    if others:
        o = next(iter(others.values()))
        r.measured(f"{r.ids}.held.lone_step_ms", HW["this_lone_step"], o["lone_step_ms"]["this_session"], "ms",
                   "f1", r.cal_file, 1, "—")
        if o["speed_probe_itl_ms"]:
            for end, v in zip(("low", "high"), o["speed_probe_itl_ms"], strict=True):
                r.measured(f"{r.ids}.held.probe_{end}", HW["probe"].format(which=HW["probe_which"][end]), v,
                           "ms", "f2", first, 1, SPREADS["probe_each_cell"])
    return others


def _held_settings(r: HeldOutRecords, e: dict, goals: dict) -> None:
    """The held-out cells' SLO, noise seeds and goals (config/real_engine.json), as assumed records."""
    prov = r.prov
    for key in ("ttft", "tpot"):
        rid = f"{r.ids}.slo.{key}"
        prov[rid] = pv.assumed(rid, HW["slo"].format(metric=key.upper()), e["slo_ms"][key], "ms", "int",
                               assumption=e.get("slo_assumption") or SOURCES["slo"])
    if e["noise_seeds"]:
        rid = f"{r.ids}.noise_seeds"
        prov[rid] = pv.assumed(rid, HW["noise_seeds"], e["noise_seeds"], UNITS["count"], "int",
                               assumption=SOURCES["noise_seeds"])
    for key, goal, unit in (("central", "central_median_abs_error", "%"), ("tail", "tail_median_abs_error", "%"),
                            ("attainment", "attainment_abs_error", UNITS["points"]),
                            ("loop_attainment", "closed_loop_attainment_abs_error", UNITS["points"])):
        rid = f"{r.ids}.goal.{key}"
        prov[rid] = pv.assumed(rid, HW[f"goal_{key}"], round(goals[goal] * 100, 6), unit, "int",
                               assumption=goal_source("held_goal", goals))


def _start_patterns(bounds: dict | None) -> dict | None:
    """The settled pattern (first wave's size) of a closed loop's lowest- and highest-attainment starts, in words
    (labels.json held.batch_words), and whether the two are the same; None without starts."""
    if not bounds or bounds["low"]["main_part"] is None or bounds["high"]["main_part"] is None:
        return None
    low, high = (int(bounds[end]["main_part"]) for end in ("low", "high"))
    return {"same": low == high, "low": str(low), "high": str(high),
            "low_word": HW["batch_words"][low - 1], "high_word": HW["batch_words"][high - 1]}


def _held_view(e: dict, goals: dict, others: dict) -> dict:
    """What the section's sentences turn on, decided here so that the template holds prose only: per closed loop
    whether its attainment error (noiseless and noisy) is within the closed-loop goal, and how the TPOT of the
    requests that met the TTFT target compares with the measurement and the target; per other calibration whether
    it was slower and taken later (whether it is within the central goal is a claim: held_claims)."""
    sums, cells = e["summaries"], e["cells"]
    noisy = (sums.get("held_out_noisy") or {}).get("closed_loop")
    met = next((c.get("ttft_met_tpot_ms") for c in cells if c["concurrency"]), None) or {}
    near, slo = WORDS["near_target"]["value"], e["slo_ms"]["tpot"]
    loops = []
    for k, c in enumerate(sums["held_out"]["closed_loop"]):
        n = noisy[k] if noisy else None
        worst = max(c["attainment_abs_error"], n["attainment_abs_error"] if n else 0)
        predicted, measured = met.get("predicted"), met.get("measured")
        loops.append({"within_goal": within_goal(worst, goals["closed_loop_attainment_abs_error"]),
                      "met_tpot_slower": predicted is not None and measured is not None and predicted > measured,
                      "met_tpot_near_target": predicted is not None and near * slo < predicted <= slo,
                      "noise_lowers_attainment": bool(n) and n["attainment"][1] < c["attainment"][1],
                      "patterns": _start_patterns(c.get("start_range"))})
    return {"closed_loop": loops,
            "other": {tag: {"slower": o["lone_step_ratio"] > 1, "later": o["hours_apart"] > 0}
                      for tag, o in others.items()}}


def heldout_page_block(comparison: dict) -> dict:
    """{"engines": [...], "provenance": {...}, "claims": [...]} for the held-out cells; record ids
    realengine.heldout.<machine>.<workload>.{r<rate>,c<concurrency>}.<metric>.{measured,predicted,noisy}, a closed
    loop's .<metric>.at_once, .turnaround_*, .first<k>.{measured,predicted}, .met_tpot.*,
    realengine.heldout.<machine>.{held,noisy,fitted,other,loop,goal,slo}.*; the claims of held_claims."""
    engines, prov, done, claims = [], {}, set(), []
    for e in comparison.get("engines", []):
        if (e["engine"]["id"], e["machine"]["id"]) in done:
            continue  # a later session of the same engine and machine: its records are the repeat's (_repeat_block)
        done.add((e["engine"]["id"], e["machine"]["id"]))
        r = HeldOutRecords(e, prov)
        rows = [_held_cell(r, c) for c in e["cells"]]
        _held_summaries(r, e)
        others = _held_others(r, e)
        _held_settings(r, e, comparison["goals"])  # config/real_engine.json comparison.goals, as the comparison used
        sessions = sorted((x for x in comparison["engines"] if (x["engine"]["id"], x["machine"]["id"]) ==
                           (e["engine"]["id"], e["machine"]["id"])), key=lambda x: session_key(x["session"]))
        engines.append({"id": r.mid, "rows": rows, "summaries": e["summaries"], "machine": e["machine"],
                        "layout": bool(r.layout),
                        "slots_known": [k + 1 for k, x in enumerate(sessions)
                                        if x.get("slots_known")],
                        "calibration": e["calibration"], "fitted_on": e["fitted_on"], "noise_seeds": e["noise_seeds"],
                        "other_calibrations": {
                            tag: {**{k: o[k] for k in ("calibration", "date", "taken", "hours_apart",
                                                         "lone_step_ratio", "lone_step_moved")},
                                  "folder": Path(o["calibration"]).parent.as_posix()} for tag, o in others.items()},
                        "client": e["cells"][0]["client"], "view": _held_view(e, comparison["goals"], others),
                        "repeat": repeat_block(r, e, comparison, prov)})
        claims += held_claims(prov, f"{r.ids}")
        for c, row in zip(e["cells"], rows, strict=True):
            claims += loop_claims(prov, row["id"], held_where(c)) if c["concurrency"] else []
    return {"engines": engines, "provenance": prov, "claims": claims}
