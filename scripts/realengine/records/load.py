"""The load runs' records (comparison.py): each cell measured and predicted, the summary errors and the worst
cells, the calibration's step times and the settings the measurement ran with. Record ids
realengine.load.<machine>.<workload>.r<rate>.<metric>.{measured,predicted},
realengine.load.<machine>.{summary,step,engine,model,server,cal,goal,load,slo}.*."""
from __future__ import annotations

from scripts.realengine.records.verdicts import claim, goal_claims
from scripts.realengine.records.words import (
    PREDICTION,
    SEPARATE,
    SHOWN,
    SOURCES,
    SPREADS,
    UNITS,
    WORDS,
    WORKLOAD_LABELS,
    Records,
)


def _cells(r: Records, e: dict) -> list[dict]:
    w = WORDS["load"]
    rows = []
    for c in e["cells"]:
        base = f"{r.ids}.{c['workload']}.r{c['rate']:g}"
        files = [run["file"] for run in c["runs"]]
        where = w["where"].format(name=WORKLOAD_LABELS.get(c["workload"], c["workload"]), rate=f"{c['rate']:g}")
        for key, (label, unit, fmt, scale) in SHOWN.items():
            runs = [run["measured"][key] * scale for run in c["runs"]]
            spread = SPREADS["two_runs"].format(runs=" / ".join(f"{v:.1f}" for v in runs), unit=unit) \
                if len(runs) > 1 else "—"
            r.measured(f"{base}.{key}.measured", w["measured"].format(where=where, label=label),
                       c["measured"][key] * scale, unit, fmt, files[0], len(runs), spread)
            r.predicted(f"{base}.{key}.predicted", w["predicted"].format(where=where, label=label),
                        c["predicted"][key] * scale, unit, fmt, {"workload": c["workload"], "rate": c["rate"],
                                                                 "metric": key})
        r.measured(f"{base}.rate", w["rate"].format(where=where), c["rate"], "req/s", "f1", files[0], len(files),
                   SPREADS["same_send_times"])
        rows.append({"workload": c["workload"], "rate": c["rate"], "saturated": c["saturated"], "id": base,
                     "error": c["error"], "spread": c["spread"]})
    return rows


def _worst(r: Records, s: dict) -> None:
    """The load cells' worst central error and worst attainment, each with where it was."""
    w, first = WORDS["load"], r.first_run
    worst = s.get("worst_central")
    if worst:
        where = w["where_worst"].format(name=WORKLOAD_LABELS.get(worst["workload"], worst["workload"]),
                                        rate=f"{worst['rate']:g}")
        label = SHOWN[worst["metric"]][0]
        r.predicted(f"{r.ids}.worst.error", w["worst_error"].format(where=where, label=label),
                    abs(worst["error"]) * 100, "%", "int", {"worst": "central"})
        if worst["spread"] is not None:
            r.measured(f"{r.ids}.worst.spread", w["worst_spread"].format(where=where, label=label),
                       worst["spread"] * 100, "%", "int", first, 2, SPREADS["same_cell"])
        r.measured(f"{r.ids}.worst.rate", w["worst_rate"].format(where=where), worst["rate"], "req/s", "f1",
                   first, 2, "—")
    a = s.get("worst_attainment")
    if a:
        where = w["where_worst"].format(name=WORKLOAD_LABELS.get(a["workload"], a["workload"]), rate=f"{a['rate']:g}")
        r.measured(f"{r.ids}.worst_att.rate", w["worst_rate"].format(where=where), a["rate"], "req/s", "f1",
                   first, 2, "—")
        r.measured(f"{r.ids}.worst_att.measured", w["worst_att_measured"].format(where=where),
                   a["measured"] * 100, "%", "int", first, 2, SPREADS["mean_of_two"])
        r.predicted(f"{r.ids}.worst_att.predicted", w["worst_att_predicted"].format(where=where),
                    a["predicted"] * 100, "%", "int", {"worst": "attainment"})
        r.predicted(f"{r.ids}.worst_att.p99_ttft_error", w["worst_att_p99_ttft"].format(where=where),
                    abs(a["p99_ttft_error"]) * 100, "%", "int", {"worst": "attainment_p99_ttft"})


def _summary(r: Records, e: dict) -> None:
    s, first, w = e["summary"], r.first_run, WORDS["load"]
    variants = [("summary", s, PREDICTION)]
    if e.get("separate_calibration"):
        variants.append(("separate", e["separate_calibration"]["summary"], SEPARATE))
    for prefix, summ, fit in variants:
        for key, label in (("central_median_abs_error", w["central"]), ("tail_median_abs_error", w["tail"])):
            if summ[key] is not None:
                r.predicted(f"{r.ids}.{prefix}.{key}", label, summ[key] * 100, "%", "f1", {prefix: key}, fit)
        if summ["attainment_max_abs_error"] is not None:
            r.predicted(f"{r.ids}.{prefix}.attainment_max_abs_error", w["attainment"],
                        summ["attainment_max_abs_error"] * 100, UNITS["points"], "f1", {prefix: "attainment"}, fit)
    r.measured(f"{r.ids}.summary.below_saturation", w["below_saturation"], s["below_saturation"],
               UNITS["count"], "int", first, 2, "—")
    if s.get("speed_moved"):
        r.measured(f"{r.ids}.summary.speed_moved", w["speed_moved"], s["speed_moved"], UNITS["count"], "int",
                   first, 2, "—")
    _worst(r, s)
    for half, h in e["halves"].items():
        r.predicted(f"{r.ids}.half{half}.fit_error", w["fit_error"],
                    h["fit_quality"]["median_abs_rel_error"] * 100, "%", "f1", {"half": half}, PREDICTION)
    sep = e.get("separate_calibration")
    if sep:
        r.predicted(f"{r.ids}.separate.decode_b1", w["separate_decode_b1"], _lone_step(sep) * 1e3, "ms", "f1",
                    {"separate": "decode_b1"}, SEPARATE)
        d1 = [_lone_step(h) for h in e["halves"].values()]
        for end, value in (("low", min(d1)), ("high", max(d1))):
            r.predicted(f"{r.ids}.cells.decode_b1_{end}",
                        w["cells_decode_b1"].format(which=w["cells_decode_b1_which"][end]),
                        value * 1e3, "ms", "f1", {"halves": "decode_b1", "end": end}, PREDICTION)
    if s.get("per_metric_median_spread"):
        for key in ("median_ttft_ms", "mean_tpot_ms", "p99_itl_ms"):
            r.measured(f"{r.ids}.summary.spread.{key}", w["spread"].format(label=SHOWN[key][0]),
                       s["per_metric_median_spread"][key] * 100, "%", "f1", first, 2, SPREADS["each_cell_twice"])


def _calibration(r: Records, e: dict) -> None:
    w = WORDS["load"]
    pts = e["calibration_points"]
    dec = {d["batch"]: d for d in pts["decode"] if d["prompt_tokens"] == pts["settings"]["decode_prompt_tokens"]}
    pre = {p["prompt_tokens"]: p for p in pts["prefill"]}
    batch_max = max(dec)
    for b in (1, batch_max):
        d = dec[b]
        r.measured(f"{r.ids}.step.decode_b{'max' if b == batch_max else b}", w["cal_decode"].format(batch=b),
                   d["median_s"] * 1e3, "ms", "f1", r.cal_file, d["n"],
                   SPREADS["quartiles"].format(q1=f"{d['q1_s'] * 1e3:.1f}", q3=f"{d['q3_s'] * 1e3:.1f}"))
    r.setting("cal.batch_max", w["cal_batch_max"], batch_max, UNITS["count"], "int", SOURCES["cal_batch_max"])
    for tag, n in (("short", 64), ("long", 512)):
        p = pre[n]
        r.measured(f"{r.ids}.step.prompt_{tag}", w["cal_prompt_ttft"].format(n=n), p["median_s"] * 1e3, "ms",
                   "int", r.cal_file, p["n"],
                   SPREADS["quartiles"].format(q1=f"{p['q1_s'] * 1e3:.1f}", q3=f"{p['q3_s'] * 1e3:.1f}"))
        r.setting(f"cal.prompt_{tag}", w["cal_prompt"][tag], n, "token", "int",
                  SOURCES["cal_prompt"].format(why=SOURCES["cal_prompt_why"][tag]))


def _settings(r: Records, e: dict, goals: dict) -> None:
    eng, model, srv, w = e["engine"], e["model"], e["server"], WORDS["load"]
    r.measured(f"{r.ids}.engine.build_s", w["build_s"], eng["build_seconds"], "s", "int", r.cal_file, 1,
               SPREADS["one_build"])
    r.measured(f"{r.ids}.engine.binary_mb", w["binary_mb"], eng["binary_bytes"] / 1e6, "MB", "f1", r.cal_file,
               1, "—")
    r.measured(f"{r.ids}.model.params_m", w["params_m"], model["parameters"] / 1e6, "M", "f1", r.cal_file, 1,
               "—")
    r.measured(f"{r.ids}.model.file_mb", w["file_mb"], model["file_bytes"] / 1e6, "MB", "int", r.cal_file, 1,
               "—")
    r.setting("server.slots", w["slots"], srv["slots"], UNITS["count"], "int", SOURCES["server"])
    r.setting("server.batch_tokens", w["batch_tokens"], srv["batch_tokens"], "token", "int", SOURCES["server"])
    r.setting("server.threads", w["threads"], srv["threads"], UNITS["count"], "int", SOURCES["threads"])
    for key, goal, unit in (("goal.central", "central_median_abs_error", "%"),
                            ("goal.tail", "tail_median_abs_error", "%"),
                            ("goal.attainment", "attainment_abs_error", UNITS["points"])):
        r.setting(key, w[key.replace(".", "_")], round(goals[goal] * 100, 9), unit, "int", SOURCES["goal"])
    first = r.first_run
    load = e["load"]
    r.measured(f"{r.ids}.load.requests", w["requests"], load["requests"], UNITS["count"], "int", first,
               load["runs"], SPREADS["same_each_run"])
    if load.get("long_prompt_tokens"):
        r.measured(f"{r.ids}.load.long_prompt_tokens", w["long_prompt_tokens"], load["long_prompt_tokens"],
                   "token", "int", first, load["runs"], "—")
        r.measured(f"{r.ids}.load.long_share", w["long_share"], load["long_share"] * 100, "%", "int", first,
                   load["runs"], "—")
    for key in ("ttft", "tpot"):
        r.setting(f"slo.{key}", w["slo"].format(metric=key.upper()), e["slo_ms"][key], "ms", "int",
                  e.get("slo_assumption") or SOURCES["slo"])


def _lone_step(fit: dict) -> float:
    """A fit's (a half's, the separate calibration's) decode step of one request alone, in seconds."""
    model = fit["step_model"]
    return model["decode_seconds"][model["decode_batch"].index(1.0)]


def _separate_moved(e: dict) -> str | None:
    """Whether the separate calibration's lone decode step lies outside the cells' (the two halves' fits) by more
    than the speed checks' bound: "faster", "slower", or None (within it, or no separate calibration)."""
    sep = e.get("separate_calibration")
    if not sep:
        return None
    tol = e.get("speed_check_bound") or 0
    d1 = [_lone_step(h) for h in e["halves"].values()]
    own = _lone_step(sep)
    return "faster" if own < min(d1) * (1 - tol) else "slower" if own > max(d1) * (1 + tol) else None


def page_block(comparison: dict) -> dict:
    """{"engines": [...], "provenance": {...}, "claims": [...]}; empty when nothing was measured. The claims:
    whether each summary error is within its goal (words.goal_claims)."""
    engines, prov, claims = [], {}, []
    for e in comparison.get("engines", []):
        r = Records(e, prov)
        rows = _cells(r, e)
        _summary(r, e)
        _calibration(r, e)
        _settings(r, e, comparison["goals"])
        claims += goal_claims(prov, f"{r.ids}.summary", f"{r.ids}") + claim(
            prov, f"{r.ids}.worst.within_spread", "error_within_spread", f"{r.ids}.worst.spread", ">=",
            f"{r.ids}.worst.error", "precomputed/serve/ (the load runs measured)")
        engines.append({"id": r.mid, "machine": e["machine"], "worst": e["summary"].get("worst_central"),
                        "layout": bool(r.layout),
                        "worst_attainment": e["summary"].get("worst_attainment"), "engine": e["engine"],
                        "server": e["server"],
                        "calibration": e["calibration"], "rows": rows, "summary": e["summary"],
                        "separate_calibration": e.get("separate_calibration"), "separate_moved": _separate_moved(e),
                        "speed_check_bound": e.get("speed_check_bound"),
                        "workloads": [w for w in WORKLOAD_LABELS if any(x["workload"] == w for x in rows)],
                        "workload_labels": WORKLOAD_LABELS})
    return {"engines": engines, "provenance": prov, "claims": claims}
