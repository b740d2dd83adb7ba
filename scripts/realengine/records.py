"""The real-engine comparison as page records (merged into bench_medians.json by scripts/bench/records.py, beside
the KV-cache benchmark): measured numbers (`measured`: the load runs' mean over their runs, with the run-to-run
spread), the simulator's predictions of them (`calibrated`: the serving model on step times fitted to the
calibration run), the errors, and the settings the measurement ran with (`assumed`: our choices). Record ids:
real.<machine>.<workload>.r<rate>.<metric>.{measured,predicted}, real.<machine>.{summary,step,engine,model,server,
cal,goal,load,slo}.*."""
from __future__ import annotations

import functools
import json
from pathlib import Path

from scripts.common.display import exact_format
from scripts.realengine.heldout_comparison import session_key, start_range
from scripts.record import provenance as pv
from scripts.record.manifest import sha256

WORDS = json.loads((Path(__file__).parent / "labels.json").read_text(encoding="utf-8"))  # every label and sentence
UNITS, FITS, SOURCES, SPREADS = WORDS["units"], WORDS["fits"], WORDS["sources"], WORDS["spreads"]


def goal_source(name: str, goals: dict) -> str:
    """The sentence that says where a family's goals come from, each goal filled in from `goals` (fractions, as
    config/real_engine.json comparison.goals holds them) in percent."""
    return SOURCES[name].format(**{k: f"{v * 100:.6g}" for k, v in goals.items()})


def shown(table: str) -> dict:
    """A table's metrics: metric -> (label, unit, format, scale from the metrics' own unit), in the table's order."""
    return {key: tuple(WORDS["metrics"][key]) for key in WORDS["shown"][table]}


# The page's table (the load runs), the lab's prefix-reuse table and its held-out table
SHOWN, PREFIX_SHOWN, HELD_SHOWN = shown("load"), shown("prefix"), shown("held")
WORKLOAD_LABELS = WORDS["load_workloads"]
PREDICTION, SEPARATE, LAYOUT = FITS["load"], FITS["separate"], FITS["layout"]


def prices_layout(e: dict) -> bool:
    """Whether the comparison's step models priced the slots' ubatches (their dicts carry U)."""
    models = [e.get("step_model"), (e.get("separate_calibration") or {}).get("step_model")]
    halves = e.get("halves") or {}
    models += [h.get("step_model") for h in (halves.values() if isinstance(halves, dict) else halves)]
    return any(m and "ubatch_seconds" in m for m in models)


@functools.cache
def _digest(path: str) -> str:  # every cell's run file backs seven records: hashed once
    return sha256(Path(path))


class _Records:
    """The record constructors of one engine + machine, with its machine line and calibration file bound."""

    def __init__(self, e: dict, prov: dict, folder: str = "precomputed/serve"):
        m = e["machine"]
        self.m, self.mid, self.prov, self.cal_file = m, m["id"], prov, e["calibration"]
        eid = e["engine"]["id"]
        self.data = [self.cal_file, f"{folder}/{eid}-{self.mid}-*.json",
                     f"{folder}/calibration/{eid}-{self.mid}-calibration-*.json"]
        self.machine = f"{m['cpu']} · {m['cores']} cores · llama-server -t {m['engine_threads']} · {m['os']}"
        first = e["cells"][0]
        self.first_run = first["runs"][0]["file"] if "runs" in first else first["file"]  # a whole-measurement file
        self.layout = LAYOUT if prices_layout(e) else ""

    def measured(self, rid, label, value, unit, fmt, file, runs, spread):
        self.prov[rid] = pv.measured(rid, label, value, unit, fmt, machine=self.machine, date=self.m["date"],
                                     runs=runs, spread=spread, file=file, file_sha256=_digest(file),
                                     script="scripts/realengine/run.py", machine_id=self.mid,
                                     git_commit=self.m["git_commit"])

    def predicted(self, rid, label, value, unit, fmt, args, fit=PREDICTION):
        self.prov[rid] = pv.calibrated(rid, label, value, unit, fmt, fit=fit + self.layout, data=self.data,
                                       script="scripts/realengine/comparison.py", args=args)

    def setting(self, key, label, value, unit, fmt, assumption):
        rid = f"real.{self.mid}.{key}"
        self.prov[rid] = pv.assumed(rid, label, value, unit, fmt, assumption=assumption)


def _cells(r: _Records, e: dict) -> list[dict]:
    w = WORDS["load"]
    rows = []
    for c in e["cells"]:
        base = f"real.{r.mid}.{c['workload']}.r{c['rate']:g}"
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


def _worst(r: _Records, s: dict) -> None:
    """The load cells' worst central error and worst attainment, each with where it was."""
    w, first = WORDS["load"], r.first_run
    worst = s.get("worst_central")
    if worst:
        where = w["where_worst"].format(name=WORKLOAD_LABELS.get(worst["workload"], worst["workload"]),
                                        rate=f"{worst['rate']:g}")
        label = SHOWN[worst["metric"]][0]
        r.predicted(f"real.{r.mid}.worst.error", w["worst_error"].format(where=where, label=label),
                    abs(worst["error"]) * 100, "%", "int", {"worst": "central"})
        if worst["spread"] is not None:
            r.measured(f"real.{r.mid}.worst.spread", w["worst_spread"].format(where=where, label=label),
                       worst["spread"] * 100, "%", "int", first, 2, SPREADS["same_cell"])
        r.measured(f"real.{r.mid}.worst.rate", w["worst_rate"].format(where=where), worst["rate"], "req/s", "f1",
                   first, 2, "—")
    a = s.get("worst_attainment")
    if a:
        where = w["where_worst"].format(name=WORKLOAD_LABELS.get(a["workload"], a["workload"]), rate=f"{a['rate']:g}")
        r.measured(f"real.{r.mid}.worst_att.rate", w["worst_rate"].format(where=where), a["rate"], "req/s", "f1",
                   first, 2, "—")
        r.measured(f"real.{r.mid}.worst_att.measured", w["worst_att_measured"].format(where=where),
                   a["measured"] * 100, "%", "int", first, 2, SPREADS["mean_of_two"])
        r.predicted(f"real.{r.mid}.worst_att.predicted", w["worst_att_predicted"].format(where=where),
                    a["predicted"] * 100, "%", "int", {"worst": "attainment"})
        r.predicted(f"real.{r.mid}.worst_att.p99_ttft_error", w["worst_att_p99_ttft"].format(where=where),
                    abs(a["p99_ttft_error"]) * 100, "%", "int", {"worst": "attainment_p99_ttft"})


def _summary(r: _Records, e: dict) -> None:
    s, first, w = e["summary"], r.first_run, WORDS["load"]
    variants = [("summary", s, PREDICTION)]
    if e.get("separate_calibration"):
        variants.append(("separate", e["separate_calibration"]["summary"], SEPARATE))
    for prefix, summ, fit in variants:
        for key, label in (("central_median_abs_error", w["central"]), ("tail_median_abs_error", w["tail"])):
            if summ[key] is not None:
                r.predicted(f"real.{r.mid}.{prefix}.{key}", label, summ[key] * 100, "%", "f1", {prefix: key}, fit)
        if summ["attainment_max_abs_error"] is not None:
            r.predicted(f"real.{r.mid}.{prefix}.attainment_max_abs_error", w["attainment"],
                        summ["attainment_max_abs_error"] * 100, UNITS["points"], "f1", {prefix: "attainment"}, fit)
    r.measured(f"real.{r.mid}.summary.below_saturation", w["below_saturation"], s["below_saturation"],
               UNITS["count"], "int", first, 2, "—")
    if s.get("speed_moved"):
        r.measured(f"real.{r.mid}.summary.speed_moved", w["speed_moved"], s["speed_moved"], UNITS["count"], "int",
                   first, 2, "—")
    _worst(r, s)
    for half, h in e["halves"].items():
        r.predicted(f"real.{r.mid}.half{half}.fit_error", w["fit_error"],
                    h["fit_quality"]["median_abs_rel_error"] * 100, "%", "f1", {"half": half}, PREDICTION)
    sep = e.get("separate_calibration")
    if sep:
        i = sep["step_model"]["decode_batch"].index(1.0)
        r.predicted(f"real.{r.mid}.separate.decode_b1", w["separate_decode_b1"],
                    sep["step_model"]["decode_seconds"][i] * 1e3, "ms", "f1", {"separate": "decode_b1"}, SEPARATE)
        d1 = [h["step_model"]["decode_seconds"][h["step_model"]["decode_batch"].index(1.0)] for h in
              e["halves"].values()]
        for end, value in (("low", min(d1)), ("high", max(d1))):
            r.predicted(f"real.{r.mid}.cells.decode_b1_{end}",
                        w["cells_decode_b1"].format(which=w["cells_decode_b1_which"][end]),
                        value * 1e3, "ms", "f1", {"halves": "decode_b1", "end": end}, PREDICTION)
    if s.get("per_metric_median_spread"):
        for key in ("median_ttft_ms", "mean_tpot_ms", "p99_itl_ms"):
            r.measured(f"real.{r.mid}.summary.spread.{key}", w["spread"].format(label=SHOWN[key][0]),
                       s["per_metric_median_spread"][key] * 100, "%", "f1", first, 2, SPREADS["each_cell_twice"])


def _calibration(r: _Records, e: dict) -> None:
    w = WORDS["load"]
    pts = e["calibration_points"]
    dec = {d["batch"]: d for d in pts["decode"] if d["prompt_tokens"] == pts["settings"]["decode_prompt_tokens"]}
    pre = {p["prompt_tokens"]: p for p in pts["prefill"]}
    batch_max = max(dec)
    for b in (1, batch_max):
        d = dec[b]
        r.measured(f"real.{r.mid}.step.decode_b{'max' if b == batch_max else b}", w["cal_decode"].format(batch=b),
                   d["median_s"] * 1e3, "ms", "f1", r.cal_file, d["n"],
                   SPREADS["quartiles"].format(q1=f"{d['q1_s'] * 1e3:.1f}", q3=f"{d['q3_s'] * 1e3:.1f}"))
    r.setting("cal.batch_max", w["cal_batch_max"], batch_max, UNITS["count"], "int", SOURCES["cal_batch_max"])
    for tag, n in (("short", 64), ("long", 512)):
        p = pre[n]
        r.measured(f"real.{r.mid}.step.prompt_{tag}", w["cal_prompt_ttft"].format(n=n), p["median_s"] * 1e3, "ms",
                   "int", r.cal_file, p["n"],
                   SPREADS["quartiles"].format(q1=f"{p['q1_s'] * 1e3:.1f}", q3=f"{p['q3_s'] * 1e3:.1f}"))
        r.setting(f"cal.prompt_{tag}", w["cal_prompt"][tag], n, "token", "int",
                  SOURCES["cal_prompt"].format(why=SOURCES["cal_prompt_why"][tag]))


def _settings(r: _Records, e: dict, goals: dict) -> None:
    eng, model, srv, w = e["engine"], e["model"], e["server"], WORDS["load"]
    r.measured(f"real.{r.mid}.engine.build_s", w["build_s"], eng["build_seconds"], "s", "int", r.cal_file, 1,
               SPREADS["one_build"])
    r.measured(f"real.{r.mid}.engine.binary_mb", w["binary_mb"], eng["binary_bytes"] / 1e6, "MB", "f1", r.cal_file,
               1, "—")
    r.measured(f"real.{r.mid}.model.params_m", w["params_m"], model["parameters"] / 1e6, "M", "f1", r.cal_file, 1,
               "—")
    r.measured(f"real.{r.mid}.model.file_mb", w["file_mb"], model["file_bytes"] / 1e6, "MB", "int", r.cal_file, 1,
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
    r.measured(f"real.{r.mid}.load.requests", w["requests"], load["requests"], UNITS["count"], "int", first,
               load["runs"], SPREADS["same_each_run"])
    if load.get("long_prompt_tokens"):
        r.measured(f"real.{r.mid}.load.long_prompt_tokens", w["long_prompt_tokens"], load["long_prompt_tokens"],
                   "token", "int", first, load["runs"], "—")
        r.measured(f"real.{r.mid}.load.long_share", w["long_share"], load["long_share"] * 100, "%", "int", first,
                   load["runs"], "—")
    for key in ("ttft", "tpot"):
        r.setting(f"slo.{key}", w["slo"].format(metric=key.upper()), e["slo_ms"][key], "ms", "int",
                  e.get("slo_assumption") or SOURCES["slo"])


def page_block(comparison: dict) -> dict:
    """{"engines": [...], "provenance": {...}}; empty when nothing was measured."""
    engines, prov = [], {}
    for e in comparison.get("engines", []):
        r = _Records(e, prov)
        rows = _cells(r, e)
        _summary(r, e)
        _calibration(r, e)
        _settings(r, e, comparison["goals"])
        engines.append({"id": r.mid, "machine": e["machine"], "worst": e["summary"].get("worst_central"),
                        "layout": bool(r.layout),
                        "worst_attainment": e["summary"].get("worst_attainment"), "engine": e["engine"],
                        "server": e["server"],
                        "calibration": e["calibration"], "rows": rows, "summary": e["summary"],
                        "separate_calibration": e.get("separate_calibration"),
                        "speed_check_bound": e.get("speed_check_bound"),
                        "workloads": [w for w in WORKLOAD_LABELS if any(x["workload"] == w for x in rows)],
                        "workload_labels": WORKLOAD_LABELS})
    return {"engines": engines, "provenance": prov}


PREFIX_LABELS = {k: tuple(v) for k, v in WORDS["prefix_workloads"].items()}  # workload -> (name, what is sent)


class _PrefixRecords(_Records):
    """The prefix-reuse runs' records: data under precomputed/serve-prefix/, predictions by prefix_comparison.py."""

    def __init__(self, e: dict, prov: dict):
        super().__init__(e, prov, "precomputed/serve-prefix")

    def predicted(self, rid, label, value, unit, fmt, args, fit=FITS["prefix"]):
        self.prov[rid] = pv.calibrated(rid, label, value, unit, fmt, fit=fit + self.layout, data=self.data,
                                       script="scripts/realengine/prefix_comparison.py", args=args)


def _prefix_cell(r: _PrefixRecords, c: dict) -> dict:
    """One prefix-reuse cell's records (measured, predicted, the slots' reuse) and its table row."""
    w = WORDS["prefix"]
    base = f"realpfx.{r.mid}.{c['workload']}.r{c['rate']:g}"
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
            r.predicted(f"realpfx.{r.mid}.summary.{key}", label, s[key] * 100, "%", fmt, {"summary": key})
    r.measured(f"realpfx.{r.mid}.summary.below_saturation", WORDS["load"]["below_saturation"],
               s["below_saturation"], UNITS["count"], "int", r.first_run, 1, "—")
    if s.get("speed_moved"):
        r.measured(f"realpfx.{r.mid}.summary.speed_moved", WORDS["load"]["speed_moved"], s["speed_moved"],
                   UNITS["count"], "int", r.first_run, 1, "—")
    for key, goal in (("goal.reuse", "reuse_equal_share"), ("goal.central", "central_median_abs_error")):
        rid = f"realpfx.{r.mid}.{key}"
        prov[rid] = pv.assumed(rid, w[key.replace(".", "_")], round(goals[goal] * 100, 9), "%", "int",
                               assumption=goal_source("prefix_goal", goals))
    r.measured(f"realpfx.{r.mid}.summary.requests", w["summary_requests"], s["reuse_requests"], UNITS["count"],
               "int", r.first_run, 1, "—")
    for key, field in (("reuse_differ", "reuse_differ"), ("reuse_differ_busy", "reuse_differ_all_slots_busy"),
                       ("reuse_differ_turn", "reuse_differ_previous_turn")):
        r.predicted(f"realpfx.{r.mid}.summary.{key}", w[key], s[field], UNITS["count"], "int", {"summary": field})


def prefix_page_block(comparison: dict) -> dict:
    """{"engines": [...], "provenance": {...}} for the prefix-reuse runs; record ids
    realpfx.<machine>.<workload>.r<rate>.<metric>.{measured,predicted}, realpfx.<machine>.summary.*."""
    engines, prov = [], {}
    for e in comparison.get("engines", []):
        r = _PrefixRecords(e, prov)
        rows = [_prefix_cell(r, c) for c in e["cells"]]
        _prefix_summary(r, e["summary"], comparison["goals"])
        engines.append({"id": r.mid, "rows": rows, "summary": e["summary"], "machine": e["machine"],
                        "calibration": e["calibration"], "fitted_on": e["fitted_on"]})
    return {"engines": engines, "provenance": prov}


def measured(records: list[Path], serve_comparison: Path, serve_prefix_comparison: Path | None = None,
             serve_heldout_comparison: Path | None = None) -> dict:
    """bench_medians.json: the KV-cache records' medians and ratios (scripts/bench/records.py), the real engine's
    runs beside the simulator's predictions (`serve_real`), its prefix-reuse runs (`serve_real_prefix`) and its
    held-out cells (`serve_real_heldout`): every measured number the page shows, in one file."""
    from scripts.bench.records import merge
    from scripts.record.inputs import read_json

    out = merge(records)
    real = page_block(read_json(serve_comparison))
    out["serve_real"] = real["engines"]
    out["provenance"].update(real["provenance"])
    if serve_prefix_comparison is not None:
        pfx = prefix_page_block(read_json(serve_prefix_comparison))
        out["serve_real_prefix"] = pfx["engines"]
        out["provenance"].update(pfx["provenance"])
    if serve_heldout_comparison is not None:
        held = heldout_page_block(read_json(serve_heldout_comparison))
        out["serve_real_heldout"] = held["engines"]
        out["provenance"].update(held["provenance"])
    return out


HELD_LABELS = WORDS["held_workloads"]
HELD_PREDICTION = FITS["held"]
HELD_AT_ONCE, HELD_PATTERN = HELD_PREDICTION + FITS["held_at_once"], HELD_PREDICTION + FITS["held_pattern"]
HELD_LAYOUT, HELD_NOISY = HELD_PREDICTION + FITS["held_layout"], HELD_PREDICTION + FITS["held_noisy"]
HW = WORDS["held"]


class _HeldOutRecords(_Records):
    """The held-out cells' records: data under precomputed/serve-heldout/, predictions by heldout_comparison.py."""

    def __init__(self, e: dict, prov: dict):
        super().__init__(e, prov, e.get("folder", "precomputed/serve-heldout"))  # the session's folder

    def predicted(self, rid, label, value, unit, fmt, args, fit=HELD_PREDICTION, data=None):
        self.prov[rid] = pv.calibrated(rid, label, value, unit, fmt, fit=fit + self.layout, data=data or self.data,
                                       script="scripts/realengine/heldout_comparison.py", args=args)


def _held_where(c: dict) -> str:
    name = HELD_LABELS.get(c["workload"], c["workload"])
    if c["concurrency"]:
        return HW["where_loop"].format(name=name, concurrency=c["concurrency"])
    return HW["where_rate"].format(name=name, rate=f"{c['rate']:g}")


def _layout_records(r: _HeldOutRecords, layouts: dict, base: str, where: str, args: dict) -> None:
    """A closed loop's prediction from the two slot layouts (heldout_comparison.slot_layouts): mean TPOT and
    attainment, realho.<...>.layout_{adjacent,apart}.<metric>."""
    for name, zh in HW["layout_names"].items():
        for key in ("mean_tpot_ms", "slo_attainment"):
            label, unit, fmt, scale = HELD_SHOWN[key]
            r.predicted(f"{base}.layout_{name}.{key}", HW["layout"].format(where=where, label=label, zh=zh),
                        layouts[name][key] * scale, unit, fmt, {**args, "metric": key, "slot_layout": name},
                        HELD_LAYOUT)


def _waves_records(r: _HeldOutRecords, c: dict, base: str, where: str, args: dict) -> None:
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


def _loop_records(r: _HeldOutRecords, c: dict, base: str, where: str, args: dict) -> None:
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
        _layout_records(r, c["slot_layouts"], base, where, args)
    once = c.get("released_at_once")
    if once:
        for key, (label, unit, fmt, scale) in HELD_SHOWN.items():
            if key in once:
                r.predicted(f"{base}.{key}.at_once", HW["at_once"].format(where=where, label=label),
                            once[key] * scale, unit, fmt, {**args, "metric": key, "released_at_once": True},
                            HELD_AT_ONCE)


def _held_cell(r: _HeldOutRecords, c: dict) -> dict:
    """One held-out cell's records (measured with aiperf, predicted, with noise, its closed loop's) and its row."""
    cell = f"c{c['concurrency']}" if c["concurrency"] else f"r{c['rate']:g}"
    base, where = f"realho.{r.mid}.{c['workload']}.{cell}", _held_where(c)
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


def _held_summaries(r: _HeldOutRecords, e: dict) -> None:
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
                r.predicted(f"realho.{r.mid}.{tag}.{key}", label, s[key] * 100, unit, "f1", {tag: key}, fit)
        for k in ("ttft", "tpot"):
            if s["ks_median"][k] is not None:
                r.predicted(f"realho.{r.mid}.{tag}.ks_{k}", HW["ks_median"].format(metric=k.upper()),
                            s["ks_median"][k], "", "f2", {tag: f"ks_{k}"}, fit)
    s, first = sums["held_out"], e["cells"][0]["file"]
    for key in ("below_saturation", "saturated"):
        r.measured(f"realho.{r.mid}.held.{key}", HW[key], s[key], UNITS["count"], "int", first, 1, "—")
    if s.get("speed_moved"):
        r.measured(f"realho.{r.mid}.held.speed_moved", WORDS["load"]["speed_moved"], s["speed_moved"],
                   UNITS["count"], "int", first, 1, "—")
    fam = sums["fitted_family"]
    for key, label in (("central_median_abs_error", HW["fitted_central"]),
                       ("tail_median_abs_error", HW["fitted_tail"])):
        if fam[key] is not None:
            r.predicted(f"realho.{r.mid}.fitted.{key}", label, fam[key] * 100, "%", "f1", {"fitted": key})


def _held_others(r: _HeldOutRecords, e: dict) -> dict:
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
                r.predicted(f"realho.{r.mid}.{tag}.{key}", label.format(which=which), o["summary"][key] * 100, "%",
                            "f1", {tag: key}, FITS["held_other_calibration"].format(folder=folder), odata)
        r.measured(f"realho.{r.mid}.{tag}.lone_step_ms", HW["other_lone_step"].format(which=which),
                   o["lone_step_ms"]["committed"], "ms", "f1", o["calibration"], 1, "—")
        if tag == "hour":  # the start stamps (`date`) of the two calibrations' load runs
            r.measured(f"realho.{r.mid}.hour.hours_apart", HW["hours_apart"], abs(o["hours_apart"]), UNITS["hours"],
                       "f1", o["fitted_on"][0], 1, "—")
    if others:
        o = next(iter(others.values()))
        r.measured(f"realho.{r.mid}.held.lone_step_ms", HW["this_lone_step"], o["lone_step_ms"]["this_session"], "ms",
                   "f1", r.cal_file, 1, "—")
        if o["speed_probe_itl_ms"]:
            for end, v in zip(("low", "high"), o["speed_probe_itl_ms"], strict=True):
                r.measured(f"realho.{r.mid}.held.probe_{end}", HW["probe"].format(which=HW["probe_which"][end]), v,
                           "ms", "f2", first, 1, SPREADS["probe_each_cell"])
    return others


def _held_settings(r: _HeldOutRecords, e: dict, goals: dict) -> None:
    """The held-out cells' SLO, noise seeds and goals (config/real_engine.json), as assumed records."""
    prov = r.prov
    for key in ("ttft", "tpot"):
        rid = f"realho.{r.mid}.slo.{key}"
        prov[rid] = pv.assumed(rid, HW["slo"].format(metric=key.upper()), e["slo_ms"][key], "ms", "int",
                               assumption=e.get("slo_assumption") or SOURCES["slo"])
    if e["noise_seeds"]:
        rid = f"realho.{r.mid}.noise_seeds"
        prov[rid] = pv.assumed(rid, HW["noise_seeds"], e["noise_seeds"], UNITS["count"], "int",
                               assumption=SOURCES["noise_seeds"])
    for key, goal, unit in (("central", "central_median_abs_error", "%"), ("tail", "tail_median_abs_error", "%"),
                            ("attainment", "attainment_abs_error", UNITS["points"]),
                            ("loop_attainment", "closed_loop_attainment_abs_error", UNITS["points"])):
        rid = f"realho.{r.mid}.goal.{key}"
        prov[rid] = pv.assumed(rid, HW[f"goal_{key}"], round(goals[goal] * 100, 6), unit, "int",
                               assumption=goal_source("held_goal", goals))


def heldout_page_block(comparison: dict) -> dict:
    """{"engines": [...], "provenance": {...}} for the held-out cells; record ids
    realho.<machine>.<workload>.{r<rate>,c<concurrency>}.<metric>.{measured,predicted,noisy}, a closed loop's
    .<metric>.at_once, .turnaround_*, .first<k>.{measured,predicted}, .met_tpot.*,
    realho.<machine>.{held,noisy,fitted,other,loop,goal,slo}.*."""
    engines, prov, done = [], {}, set()
    for e in comparison.get("engines", []):
        if (e["engine"]["id"], e["machine"]["id"]) in done:
            continue  # a later session of the same engine and machine: its records are the repeat's (_repeat_block)
        done.add((e["engine"]["id"], e["machine"]["id"]))
        r = _HeldOutRecords(e, prov)
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
                        "client": e["cells"][0]["client"],
                        "repeat": _repeat_block(r, e, comparison, prov)})
    return {"engines": engines, "provenance": prov}


def _floor_records(r: _HeldOutRecords, c: dict, floor: dict, base: str, where: str, args: dict,
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
    repeat's own attainment error (predict.cell_errors) against the closed loop's goal (comparison.goals)
    (`comparison["goals"]`); False for a Poisson cell."""
    if not c["concurrency"]:
        return False
    return abs(c["error"][k]["slo_attainment"]) > comparison["goals"]["closed_loop_attainment_abs_error"] + 1e-12


def _repeat_session(r: _HeldOutRecords, c: dict, k: int, i: int, tag: str, noisy: bool) -> dict:
    """The i-th session (0-based) of a repeated cell, its k-th measurement: records and the table's ids."""
    cell = f"c{c['concurrency']}" if c["concurrency"] else f"r{c['rate']:g}"
    where, base = _held_where(c), f"realho.{r.mid}.{tag}.{c['workload']}.{cell}"
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
        _layout_records(r, layouts, base, HW["repeat_session"].format(where=where, i=i + 1),
                        {"session": tag, "workload": c["workload"], "cell": cell})
        label, unit, fmt, scale = HELD_SHOWN["mean_tpot_ms"]
        r.measured(f"{base}.mean_tpot_ms.measured", HW["repeat_measured"].format(where=where, label=label, i=i + 1),
                   c["measured"][k]["mean_tpot_ms"] * scale, unit, fmt, c["files"][k], 1, "—")
    return {"base": base, "predicted": "predicted", "layouts": layouts, "moved": c["speed_moved_each"][k]}


def _repeat_row(recs: list, rep: dict, c: dict, noisy: bool, comparison: dict, data: list[str]) -> dict:
    """One cell of the repeat table: the first session's ids (its own records), each later session's, its floor."""
    r1, mid = recs[0], recs[0].mid
    cell = f"c{c['concurrency']}" if c["concurrency"] else f"r{c['rate']:g}"
    where, first = _held_where(c), f"realho.{mid}.{c['workload']}.{cell}"
    ids = [{"base": first, "predicted": "noisy" if noisy else "predicted", "moved": c["speed_moved_each"][0],
            "over_goal": _loop_over_goal(c, 0, comparison)} if 0 in c["present"] else None]
    for i, (r, tag) in enumerate(zip(recs[1:], rep["sessions"][1:], strict=True), start=1):
        if i not in c["present"]:  # a session that stopped before this cell
            ids.append(None)
            continue
        k = c["present"].index(i)
        ids.append({**_repeat_session(r, c, k, i, tag, noisy), "over_goal": _loop_over_goal(c, k, comparison)})
    floor = c.get("attainment_floor")
    if floor:
        _floor_records(r1, c, floor, f"realho.{mid}.rep.{c['workload']}.{cell}.floor", where,
                       {"workload": c["workload"], "cell": cell}, data)
    return {"label": HELD_LABELS.get(c["workload"], c["workload"]), "rate": c["rate"],
            "concurrency": c["concurrency"], "saturated": c["saturated"], "speed_moved": c["speed_moved"],
            "first": first, "ids": ids, "complete": len(c["present"]) == len(rep["sessions"]),
            "floor": {**floor, "base": f"realho.{mid}.rep.{c['workload']}.{cell}.floor"} if floor else None}


def _repeat_summary(r1: _HeldOutRecords, rep: dict, fit: str, data: list[str]) -> None:
    """The repeat's summary: the sessions' mean against the predictions' mean, each session alone, the spread."""
    s, mid, n = rep["summary"], r1.mid, len(rep["sessions"])
    for key, (label, unit) in HW["repeat_figures"].items():
        if s["mean"][key] is not None:
            r1.predicted(f"realho.{mid}.rep.mean.{key}", HW["repeat_mean"].format(n=n, label=label),
                         s["mean"][key] * 100, unit, "f1", {"repeat": "mean", "figure": key}, fit, data)
        for i, per in enumerate(s["per_session"]):
            if per[key] is not None:
                r1.predicted(f"realho.{mid}.rep.s{i + 1}.{key}", HW["repeat_one"].format(i=i + 1, label=label),
                             per[key] * 100, unit, "f1", {"repeat": i + 1, "figure": key}, fit, data)
    files = [f for c in rep["cells"] for f in c["files"]]
    for key, (label, unit) in HW["repeat_spreads"].items():
        if s["spread"][key] is not None:
            r1.measured(f"realho.{mid}.rep.spread.{key}", HW["repeat_spread"].format(n=n, label=label),
                        s["spread"][key] * 100, unit, "f1", files[0], n,
                        SPREADS["sessions_each_calibrated"].format(n=n))
    r1.measured(f"realho.{mid}.rep.sessions", HW["repeat_sessions"], n, UNITS["times"], "int", files[0], n, "—")
    r1.measured(f"realho.{mid}.rep.below_saturation", HW["repeat_below_saturation"], rep["below_saturation"],
                UNITS["count"], "int", files[0], n, "—")


def _repeat_block(r1: _HeldOutRecords, e1: dict, comparison: dict, prov: dict) -> dict | None:
    """The sessions after the first of one engine + machine (heldout_comparison.repeats): per cell each later
    session's measurement and prediction (the first session's are its own records), the summary of the sessions'
    mean and of each session, and how far the sessions' measurements are apart. Record ids
    realho.<machine>.<session>.<workload>.<cell>.<metric>.{measured,predicted}, realho.<machine>.rep.*."""
    rep = next((x for x in comparison.get("repeats", []) if x["engine"] == e1["engine"]["id"]
                and x["machine"] == e1["machine"]["id"]), None)
    if rep is None:
        return None
    by_session = {e["session"]: e for e in comparison["engines"] if e["engine"]["id"] == rep["engine"]
                  and e["machine"]["id"] == rep["machine"]}
    recs = [r1] + [_HeldOutRecords(by_session[t], prov) for t in rep["sessions"][1:]]
    data = [d for r in recs for d in r.data]
    noisy = any(x.get("noisy") for e in by_session.values() for x in e["cells"])
    rows = [_repeat_row(recs, rep, c, noisy, comparison, data) for c in rep["cells"]]
    _repeat_summary(r1, rep, (HELD_NOISY if noisy else HELD_PREDICTION) + FITS["repeat"], data)
    return {"sessions": rep["sessions"], "rows": rows, "summary": rep["summary"],
            "dates": [by_session[t]["machine"].get("date") for t in rep["sessions"]]}
