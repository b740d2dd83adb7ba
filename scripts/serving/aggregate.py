"""serving.json: each cell's metrics, each request's TTFT and TPOT in whole units of 0.1 ms (what the page needs
for client-side SLO math), DistServe goodput per (workload, schedule), and a `simulated` provenance record per
headline number. Pure: no I/O.
"""
from __future__ import annotations

import numpy as np

from scripts.common.names import SCHEDULE_LABELS, TAIL_PARTS, TRY_LABELS, metric_label
from scripts.record import provenance as pv
from scripts.record.claims import settle as settle_claims
from scripts.serving.engines_page import engine_claims, engines_block, simulated

# The goodput_<part> records: the replications' mean and the ends of their interval (at the sweep's confidence).
from scripts.serving.labels import LABELS  # every record's label (labels.json)
from scripts.serving.sweep import page_states, per_request_metrics, search_of, workload_seed

INTERVAL_PARTS = LABELS["interval_parts"]
QUANTUM_MS = 0.1  # per-request TTFT/TPOT stored in whole units of this
RECORD_METRICS = {"mean_ttft_ms": ("ms", "int"), "p50_ttft_ms": ("ms", "int"), "p90_ttft_ms": ("ms", "int"),
                  "p99_ttft_ms": ("ms", "int"), "mean_tpot_ms": ("ms", "f1"), "p50_tpot_ms": ("ms", "f1"),
                  "p90_tpot_ms": ("ms", "f1"), "p99_tpot_ms": ("ms", "f1"), "slo_attainment": ("", "f3"),
                  "request_goodput": ("req/s", "f2")}

READOUTS = "scripts.serving.experiments.load_page:readouts"  # the formula of the page's readout records


def quantize_ms(seconds: np.ndarray) -> list[int]:
    """Whole units of QUANTUM_MS, rounded up: then `units * QUANTUM_MS <= target` holds exactly when the exact
    value <= target, for every target that is a multiple of QUANTUM_MS (the page's SLO sliders move in 1 ms and
    100 ms steps), so the page's verdicts are the simulation's. (Rounding to nearest flipped 781 of 768,000
    verdicts.) Values are first rounded to 1e-6 units (1e-10 s) so that float noise in an exact multiple does
    not push it up a unit."""
    units = np.round(np.asarray(seconds, dtype=float) * 1000 / QUANTUM_MS, 6)
    return [int(v) for v in np.ceil(units)]




def interval_field(seeds: list[int], values: list[float], interval: dict) -> dict:
    """A record's `interval`: every replication's seed and value, their mean and its t interval."""
    return {"confidence": interval["confidence"], "replications": interval["replications"], "seeds": seeds,
            "values": values, "mean": interval["mean"], "low": interval["low"], "high": interval["high"]}


def aggregate(anchor_doc: dict, workloads_doc: dict, settings: dict, cells: list[dict],
              goodputs: list[dict], anchor_file: str = "anchor-model.json", engines: list[dict] = ()) -> dict:
    workloads = workloads_doc["workloads"]
    prov, table, per_request, goodput = {}, [], {"unit_ms": QUANTUM_MS, "ttft": {}, "tpot": {}}, {}
    for cell in sorted(cells, key=lambda c: (list(workloads).index(c["workload"]),
                                             settings["schedules"].index(c["schedule"]), c["rate_per_gpu"])):
        key = f"{cell['workload']}/{cell['schedule']}/{cell['rate_per_gpu']:g}"
        reps = cell["replications"]
        table.append({k: cell[k] for k in ("workload", "schedule", "rate_per_gpu", "rate", "gpus", "seed", "requests")}
                     | {"metrics": cell["metrics"], "breakdown": cell["breakdown"], "memory": cell["memory"],
                        "intervals": {m: [i["low"], i["high"]] for m, i in reps["intervals"].items()}})
        ttft, tpot, _ = per_request_metrics(cell)
        per_request["ttft"][key], per_request["tpot"][key] = quantize_ms(ttft), quantize_ms(tpot)
        for metric, (unit, fmt) in RECORD_METRICS.items():
            rid = f"serving.{key.replace('/', '.')}.{metric}"
            prov[rid] = simulated(rid, cell["metrics"][metric], unit, fmt,
                                  LABELS["cell"].format(workload=workloads[cell["workload"]]["label"],
                                                        schedule=SCHEDULE_LABELS[cell["schedule"]],
                                                        rate=f"{cell['rate_per_gpu']:g}", metric=metric_label(metric)),
                                  cell, metric,
                                  interval=interval_field(reps["seeds"], reps["values"][metric],
                                                          reps["intervals"][metric]))
    order = {(w, p): (i, j) for i, w in enumerate(workloads) for j, p in enumerate(settings["schedules"])}
    for g in sorted(goodputs, key=lambda g: order[g["workload"], g["schedule"]]):
        wid, schedule = g["workload"], g["schedule"]
        reps = g["replications"]
        goodput.setdefault(wid, {})[schedule] = {k: g[k] for k in ("rate_per_gpu", "bounded_by_sweep", "probes")} | {
            "interval": [reps["interval"]["low"], reps["interval"]["high"]]}
        base = {"workload": wid, "schedule": schedule, "seed": workload_seed(settings, workloads, wid),
                "requests": settings["requests"], "slo_ms": settings["slo_ms"]}
        over_seeds = interval_field(reps["seeds"], reps["rates_per_gpu"], reps["interval"])
        rid = f"serving.{wid}.{schedule}.goodput_rate"
        prov[rid] = simulated(rid, g["rate_per_gpu"], "req/s per GPU", "f2",
                              LABELS["goodput"].format(workload=workloads[wid]["label"],
                                                       schedule=SCHEDULE_LABELS[schedule],
                                                       target=f"{settings['attainment_target']:g}"),
                              base, "distserve_goodput",
                              "scripts/simulate_goodput.py", interval=over_seeds)
        for part, word in INTERVAL_PARTS.items():  # the page states the replications' mean and interval too
            pid = f"serving.{wid}.{schedule}.goodput_{part}"
            prov[pid] = simulated(pid, reps["interval"][part], "req/s per GPU", "f2",
                                  LABELS["goodput_part"].format(
                                      workload=workloads[wid]["label"], schedule=SCHEDULE_LABELS[schedule],
                                      replications=settings["replications"],
                                      part=word.format(confidence=settings["confidence"] * 100)), base,
                                  f"distserve_goodput_{part}", "scripts/simulate_goodput.py", interval=over_seeds)
    for wid, by_schedule in goodput.items():
        if "whole" in by_schedule and by_schedule["whole"]["rate_per_gpu"] > 0:
            for schedule in by_schedule:
                rid = f"serving.{wid}.{schedule}.goodput_vs_whole"
                prov[rid] = pv.ratio(rid, prov[f"serving.{wid}.{schedule}.goodput_rate"],
                                     prov[f"serving.{wid}.whole.goodput_rate"], fmt="f2",
                                     label=LABELS["goodput_vs_whole"].format(workload=workloads[wid]["label"],
                                                                             schedule=SCHEDULE_LABELS[schedule]),
                                     script="scripts/simulate_sweep.py")
    anchor = {"name": anchor_doc["model"]["name"]["value"], "hardware": anchor_doc["hardware"]["name"]["value"]}
    doc = {"schema_version": 1, "anchor": anchor,
           "settings": settings,
           "workloads": {wid: {"label": w["label"], "description": w.get("description", "")}
                         for wid, w in workloads.items()},
           "definitions": "scripts/serving/measures/metrics.py (vllm bench serve's calculate_metrics)",
           "cells": table, "per_request": per_request, "goodput": goodput, "provenance": prov,
           "twin": twin_block(anchor_doc, workloads, settings)}
    workload_records(workloads, prov)
    if engines:
        doc["engines"] = engines_block(anchor_doc, settings, workloads, engines, prov, anchor_file,
                                       workloads_doc["sweep"])
    if workloads_doc.get("adapted"):  # only for a model too short for the workloads as written (config.fit_to_context)
        doc["adapted"] = adapted_lengths(workloads_doc["adapted"], anchor_doc, prov, anchor_file)
    if "page" in workloads_doc:
        add_page_opening(doc, workloads_doc, settings, anchor_doc, page_probes(goodputs))
        if engines and doc["goodput"]:
            doc["claims"] = doc.get("claims", []) + settle_claims(
                engine_claims(doc["engines"], workloads_doc["page"]["workload"]["value"]), doc["provenance"])
    return doc


def twin_block(anchor_doc: dict, workloads: dict, settings: dict) -> dict:
    """What the browser's simulator (templates/serving_sim/) needs to re-run any cell: the model's constants, the
    step-time sets, the sweep's engine settings and each workload's requests (replication 0's seed), the GPUs being
    the page's own switch (precomputed.json `gpus`)."""
    from scripts.model.anchor import anchor_from
    from scripts.serving import twin
    from scripts.serving.sweep import workload_seed

    a = anchor_from(anchor_doc)
    keys = ("requests", "burstiness", "chunk_tokens", "prefill_gpus", "decode_gpus", "first_token", "block_size",
            "gpu_memory_utilization", "rates_per_gpu", "bisection_steps")
    return {"model": twin.model_constants(a), "efficiency": twin.efficiency_constants(a),
            "quantum_ms": QUANTUM_MS, "settings": {k: settings[k] for k in keys},
            "traces": {wid: twin.workload_trace(w, settings["requests"], workload_seed(settings, workloads, wid),
                                                settings["burstiness"]) for wid, w in workloads.items()}}






def workload_records(workloads: dict, prov: dict) -> None:
    """Each workload's lengths as the simulation drew them (config/workloads.json, fitted to the model's context:
    the page says which were fitted), one assumed record per number the page's workload table shows."""
    for wid, w in workloads.items():
        specs = [("prompt", w["prompt_tokens"]), ("output", w["output_tokens"])]
        if "long_prompts" in w:
            specs.append(("long", w["long_prompts"]["prompt_tokens"]))
        for part, spec in specs:
            why = (w["long_prompts"] if part == "long" else spec).get("assumption") or spec.get("source", "")
            for stat in ("median", "min", "max"):
                if stat in spec:
                    rid = f"serving.workload.{wid}.{part}.{stat}"
                    prov[rid] = pv.assumed(rid, f"{w['label']} · {part} · {stat}", spec[stat], "token", "int",
                                           assumption=why or "config/workloads.json", field=f"workloads.{wid}")
        if "long_prompts" in w:
            rid = f"serving.workload.{wid}.long.fraction"
            prov[rid] = pv.assumed(rid, LABELS["long_fraction"].format(workload=w["label"]),
                                   w["long_prompts"]["fraction"] * 100, "%",
                                   "int", assumption=w["long_prompts"]["assumption"],
                                   field=f"workloads.{wid}.long_prompts.fraction", scale=100.0)










def adapted_lengths(adapted: list[dict], anchor_doc: dict, prov: dict, anchor_file: str) -> list[dict]:
    """What fitting the workloads to the model's context changed, as the page says it: per change the record ids
    of the configured and the fitted lengths (`was` assumed, from config/workloads.json; `now` derived, recomputed
    by the audit with scripts/serving/config.fit_to_context), and the model's context (cited from the anchor)."""
    prov["serving.model_context"] = pv.from_anchor(anchor_file, anchor_doc, "model", "max_position_embeddings",
                                                   unit="token", fmt="int", label=LABELS["model_context"],
                                                   rid="serving.model_context")
    shown = []
    for a in adapted:
        was, now = (a["was"], a["now"]) if isinstance(a["was"], list) else ([None, a["was"]], [None, a["now"]])
        ids = {}
        for bound, w, n in zip(("min", "max"), was, now, strict=True):
            if w is None:
                continue
            rid = f"serving.adapted.{a['workload']}.{a['field']}.{bound}"
            ids[bound] = rid
            names = {"workload": a["workload"], "field": a["field"], "bound": bound}
            prov[f"{rid}.was"] = pv.assumed(f"{rid}.was", LABELS["adapted_was"].format(**names), w, "token",
                                            "int", field=f"workloads.{a['workload']}.{a['field']}",
                                            assumption="config/workloads.json, as written for a model with a long "
                                                       "context")
            prov[rid] = pv.derived(rid, LABELS["adapted_now"].format(**names), n, "token", "int",
                                   derivation=pv.Derivation.FITTED,
                                   formula="scripts.serving.workloads.config:fit_to_context",
                                   inputs=["serving.model_context", f"{rid}.was"], script="scripts/simulate_sweep.py",
                                   args={"workload": a["workload"], "field": a["field"], "bound": bound},
                                   rule=a["rule"])
        shown.append({**a, "records": ids})
    return shown


READOUT_FORMATS = {"mean_ttft_ms": ("ms", "int"), "p50_ttft_ms": ("ms", "int"), "p90_ttft_ms": ("ms", "int"),
                   "p99_ttft_ms": ("ms", "int"), "mean_tpot_ms": ("ms", "f1"), "p50_tpot_ms": ("ms", "f1"),
                   "p90_tpot_ms": ("ms", "f1"), "p99_tpot_ms": ("ms", "f1"), "attainment": ("", "f3"),
                   "request_goodput": ("req/s", "f2"), "goodput_rate": ("req/s per GPU", "f2"),
                   "goodput_gain": ("×", "f2"), **{f"tail_{part}_ms": ("ms", "int") for part in (*TAIL_PARTS, "e2el")}}


READOUT_CELL_METRIC = {"attainment": "slo_attainment"}  # a readout named otherwise than its cell metric


def attainment_probe(anchor_doc: dict, workloads: dict, settings: dict, workload: str, slo_ms: dict,
                     runs: dict | None = None, known: dict | None = None):
    """probe(schedule, rate): SLO attainment of one simulation of `workload` at `rate` per GPU under `slo_ms` (the
    page's goodput search between swept rates; memoised). `runs`: a dict shared between probes of other targets
    ((workload, schedule, rate) -> the run's latencies: one simulation serves every SLO); `known`: (schedule, rate)
    -> attainments already computed by the same function for these targets (the goodput rule's probes)."""
    from scripts.model.anchor import anchor_from
    from scripts.serving.sweep import run_latencies, slo_attainment

    a, seen = anchor_from(anchor_doc), dict(known or {})
    runs = {} if runs is None else runs

    def probe(schedule: str, rate: float) -> float:
        if (schedule, rate) not in seen:
            key = (workload, schedule, rate)
            if key not in runs:
                runs[key] = run_latencies(a, workloads, settings, workload, schedule, rate)
            seen[schedule, rate] = slo_attainment(runs[key], slo_ms)
        return seen[schedule, rate]
    return probe


def search_key(workload: str, slo_ms: dict, target: float) -> tuple:
    return workload, tuple(sorted(slo_ms.items())), target


def page_probes(goodputs: list[dict]) -> dict:
    """search_key -> {(schedule, rate): attainment}: the probes the goodput rule ran for the page's own searches
    (sweep.page_search_probes), which the page's searches here would otherwise simulate again."""
    out: dict = {}
    for g in goodputs:
        for search in g.get("page_searches", ()):
            known = out.setdefault(search_key(search["workload"], search["slo_ms"], search["attainment_target"]), {})
            known.update({(g["schedule"], p["rate_per_gpu"]): p["slo_attainment"] for p in search["probes"]})
    return out


def add_page_opening(doc: dict, workloads_doc: dict, settings: dict, anchor_doc: dict,
                     probes: dict | None = None) -> None:
    """The page experiment's opening settings, slider ranges, and a record per readout at those settings. `probes`
    (page_probes): attainments already simulated for these searches; any other rate is simulated here."""
    probes = probes or {}
    from scripts.serving.experiments.load_page import claims, experiment_data, readouts_at

    page, sweep = workloads_doc["page"], workloads_doc["sweep"]
    opening, steps = page_states(workloads_doc, settings)
    doc["page_opening"] = opening
    doc["page_ranges"] = {"ttft_slo_ms": page["ttft_slo_ms"]["value"], "load_tpot_slo_ms": page["tpot_slo_ms"]["value"],
                          "attainment_target": page["attainment_target"]["value"],
                          "engine_controls": page["engine_controls"]["value"]}
    wid, workloads = opening["workload"], workloads_doc["workloads"]
    exp = experiment_data(doc)  # every cell's requests, encoded as the page gets them: built once for all readouts
    slo = search_of(opening)["slo_ms"]
    runs = {}  # one simulation per (workload, schedule, rate) for the opening's and every "try this" search
    known = probes.get(search_key(wid, slo, opening["attainment_target"]))
    for name, value in readouts_at(exp, opening, attainment_probe(anchor_doc, workloads, settings, wid, slo, runs,
                                                                  known)).items():
        metric, schedule = name.split(".")
        unit, fmt = READOUT_FORMATS[metric]
        rid = f"readout.{name}"
        cell = {"workload": wid, "schedule": schedule, "rate_per_gpu": opening["request_rate"],
                "seed": workload_seed(settings, workloads, wid),
                "requests": settings["requests"], "slo_ms": settings["slo_ms"]}
        same = doc["provenance"].get(f"serving.{wid}.{schedule}.{opening['request_rate']:g}."
                                     f"{READOUT_CELL_METRIC.get(metric, metric)}")  # the cell's own record
        label = LABELS["readout"].format(schedule=SCHEDULE_LABELS[schedule], metric=metric_label(metric))
        doc["provenance"][rid] = simulated(rid, value, unit, fmt, label, cell, metric,
                                           "scripts/simulate_sweep.py", formula=READOUTS,
                                           args=opening, key=name, interval=(same or {}).get("interval"))
    doc["page_try"] = page["try"]["value"]
    for tid, setting in page["try"]["value"].items():
        for key, value in setting.items():
            if key != "workload":
                rid = f"load.{tid}.{key}"
                label = LABELS["try_target"].format(name=TRY_LABELS.get(tid, tid))
                doc["provenance"][rid] = pv.assumed(rid, label, value, "ms",
                                                    "int", assumption=page["try"]["assumption"])
        args = steps[tid]
        slo = search_of(args)["slo_ms"]
        probe = attainment_probe(anchor_doc, workloads, settings, args["workload"], slo, runs,
                                 probes.get(search_key(args["workload"], slo, args["attainment_target"])))
        for name, value in readouts_at(exp, args, probe).items():
            metric, schedule = name.split(".")
            if metric not in ("goodput_rate", "goodput_gain", "attainment"):
                continue
            unit, fmt = READOUT_FORMATS[metric]
            rid = f"load.{tid}.{name}"
            cell = {"workload": args["workload"], "schedule": schedule, "rate_per_gpu": args["request_rate"],
                    "seed": workload_seed(settings, workloads, args["workload"]),
                    "requests": settings["requests"], "slo_ms": settings["slo_ms"]}
            doc["provenance"][rid] = simulated(rid, value, unit, fmt, LABELS["try_readout"].format(
                name=TRY_LABELS.get(tid, tid), schedule=SCHEDULE_LABELS[schedule], metric=metric_label(metric)),
                cell, metric,
                                               "scripts/simulate_sweep.py",
                                               formula=READOUTS, args=args, key=name)
    opening_values = {**opening, "requests": settings["requests"], "replications": settings["replications"],
                      "confidence": settings["confidence"] * 100, "chunk_tokens": settings["chunk_tokens"],
                      "prefill_gpus": settings["prefill_gpus"], "decode_gpus": settings["decode_gpus"],
                      "bisection_steps": settings["bisection_steps"], "max_rate": settings["rates_per_gpu"][-1]}
    sliders = {"requests": (sweep["requests"], "request", "int"), "replications": (sweep["replications"], "", "int"),
               "confidence": (sweep["confidence"], "%", "int"),
               "request_rate": (page["request_rate"], "req/s per GPU", "f1"),
               "ttft_slo_ms": (sweep["slo_ms"], "ms", "int"), "load_tpot_slo_ms": (sweep["slo_ms"], "ms", "int"),
               "attainment_target": (sweep["attainment_target"], "", "f2"),
               "chunk_tokens": (sweep["chunk_tokens"], "token", "int"),
               "prefill_gpus": (sweep["prefill_gpus"], "GPU", "int"),
               "decode_gpus": (sweep["decode_gpus"], "GPU", "int"),
               "bisection_steps": (sweep["bisection_steps"], "", "int"),
               "max_rate": (sweep["rates_per_gpu"], "req/s per GPU", "f1")}
    for key, (src, unit, fmt) in sliders.items():
        label = LABELS["sliders"][key]
        rid = f"load.{key}"
        doc["provenance"][rid] = pv.assumed(rid, label, opening_values[key], unit, fmt,
                                            assumption=src.get("assumption") or src.get("source"))
    if doc["goodput"]:  # the claims read the bisected goodput too (absent from the audit's partial rebuild)
        doc["claims"] = settle_claims(claims(opening), doc["provenance"])  # the page words each by its outcome
