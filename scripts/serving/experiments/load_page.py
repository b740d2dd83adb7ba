"""The "under load" experiment's math, one definition for the page (templates/lesson.js mirrors each function),
its tests and the audit. Pure: no I/O.

Input: serving.json's per-request TTFT and TPOT (vLLM's all_tpots) in whole units of 0.1 ms rounded up (so a
verdict against a target in whole 0.1 ms is the exact one: serving/aggregate.quantize_ms), and each cell's
duration. Output, per schedule, at one rate per GPU and one SLO pair, the numbers `vllm bench serve` reports:
mean / p50 / p90 / p99 TTFT and TPOT (numpy's linear percentile; TPOT over requests with more than one output
token, as vLLM), SLO attainment (a request counts when TTFT <= target and TPOT <= target, vLLM's goodput rule),
request goodput (those requests / the run's duration, vLLM's `request_goodput`), and DistServe's goodput per
GPU: the one goodput search of the kit (sweep.goodput_search: the swept rates up to the first whose attainment
misses the target, then `bisection_steps` halvings, each a simulation at the probed rate: `probe(schedule, rate)`
gives its attainment, the page's worker or scripts.serving.sweep.attainment), so that at the build's targets it is
serving.<w>.<s>.goodput_rate exactly; and where
the slowest 1% of requests (E2EL at or above its p99) spent their time, per part (engine.PARTS, in ms, rounded to
0.1 ms in the page's data)."""
from __future__ import annotations

import base64
import math

import numpy as np

from scripts.common.names import SCHEDULES, TAIL_PARTS
from scripts.serving.labels import claim
from scripts.serving.sweep import goodput_search


def cell_key(workload: str, schedule: str, rate_per_gpu: float) -> str:
    return f"{workload}/{schedule}/{rate_per_gpu:g}"


def percentile(sorted_values: list[float], q: float) -> float:
    """numpy.percentile(values, q) with its default 'linear' method, on values already sorted."""
    n = len(sorted_values)
    if n == 0:
        return 0.0
    pos = (n - 1) * q / 100
    lo = math.floor(pos)
    hi = min(lo + 1, n - 1)
    t = pos - lo
    a, b = sorted_values[lo], sorted_values[hi]
    return b - (b - a) * (1 - t) if t >= 0.5 else a + (b - a) * t  # numpy's _lerp, exactly


def encode_cell(ttft_units: list[int], tpot_units: list[int]) -> dict:
    """Requests sorted by TTFT, TTFT stored as differences (small numbers: about a third of the bytes)."""
    pairs = sorted(zip(ttft_units, tpot_units, strict=True))
    ttft_delta = [pairs[0][0]] + [pairs[i][0] - pairs[i - 1][0] for i in range(1, len(pairs))] if pairs else []
    return {"ttft_delta": ttft_delta, "tpot": [p[1] for p in pairs]}


def decode_cell(cell: dict) -> tuple[list[int], list[int]]:
    ttft, total = [], 0
    for d in cell["ttft_delta"]:
        total += d
        ttft.append(total)
    return ttft, list(cell["tpot"])


def cell_readouts(ttft: list[int], tpot: list[int], unit_ms: float, duration_s: float, ttft_slo_ms: float,
                  tpot_slo_ms: float) -> dict:
    ttft_ms = sorted(v * unit_ms for v in ttft)
    tpot_ms = sorted(v * unit_ms for v in tpot if v > 0)  # vLLM's `tpots`: one-token answers have none
    n = len(ttft)
    good = sum(1 for a, b in zip(ttft, tpot, strict=True) if a * unit_ms <= ttft_slo_ms and b * unit_ms <= tpot_slo_ms)
    return {"mean_ttft_ms": sum(ttft_ms) / n if n else 0.0, "p50_ttft_ms": percentile(ttft_ms, 50),
            "p90_ttft_ms": percentile(ttft_ms, 90), "p99_ttft_ms": percentile(ttft_ms, 99),
            "mean_tpot_ms": sum(tpot_ms) / len(tpot_ms) if tpot_ms else 0.0, "p50_tpot_ms": percentile(tpot_ms, 50),
            "p90_tpot_ms": percentile(tpot_ms, 90), "p99_tpot_ms": percentile(tpot_ms, 99),
            "attainment": good / n if n else 0.0, "request_goodput": good / duration_s if duration_s > 0 else 0.0}


def readouts(page: dict, workload: str, request_rate: float, ttft_slo_ms: float, load_tpot_slo_ms: float,
             attainment_target: float, probe=None) -> dict:
    """Every readout of the experiment, named as the page names them (`p99_ttft_ms.whole`, ...). The cells of the
    chosen rate and of every swept rate come from `page["cells"]`; DistServe goodput (`goodput_rate`, and its
    ratio to whole's) needs `probe(schedule, rate)`, the SLO attainment of a simulation at a rate between the swept
    ones (omitted without it)."""
    unit, rates, out = page["unit_ms"], page["rates_per_gpu"], {}
    for s in SCHEDULES:
        curve = []
        for r in rates:
            cell = page["cells"][cell_key(workload, s, r)]
            ttft, tpot = decode_cell(cell)
            values = cell_readouts(ttft, tpot, unit, cell["duration_s"], ttft_slo_ms, load_tpot_slo_ms)
            curve.append(values["attainment"])
            if r == request_rate:
                out.update({f"{k}.{s}": v for k, v in values.items()})
                out.update({f"tail_{part}_ms.{s}": cell["tail_ms"][part] for part in TAIL_PARTS})
                out[f"tail_e2el_ms.{s}"] = sum(cell["tail_ms"][part] for part in TAIL_PARTS)
        if probe is not None:
            swept = dict(zip(rates, curve, strict=True))
            search = goodput_search(lambda r, s=s, swept=swept: swept[r] if r in swept else probe(s, r), rates,
                                    attainment_target, page["bisection_steps"])
            out[f"goodput_rate.{s}"] = search["rate_per_gpu"]
    if probe is not None:
        for s in SCHEDULES:
            base = out["goodput_rate.whole"]
            out[f"goodput_gain.{s}"] = out[f"goodput_rate.{s}"] / base if base > 0 else 0.0
    return out


def experiment_data(serving: dict) -> dict:
    """What the page's serving-data.js carries, built from serving.json: rates, labels, every cell's requests
    (encoded), each cell's duration, the opening settings and slider ranges, and the build's bisected goodput."""
    per, settings = serving["per_request"], serving["settings"]
    cells = {}
    for row in serving["cells"]:
        key = cell_key(row["workload"], row["schedule"], row["rate_per_gpu"])
        tail = row["breakdown"]["tail"]  # mean seconds per part over the requests at or above p99 E2EL
        cells[key] = {"duration_s": row["metrics"]["duration"], "gpus": row["gpus"],
                      "tail_ms": {part: round(tail[f"{part}_s"] * 1000, 1) for part in TAIL_PARTS},
                      **encode_cell(per["ttft"][key], per["tpot"][key])}
        memory = row["memory"]  # P/D: prompts waiting for a decode GPU held more KV than a prefill GPU has
        if memory["prefill_held_peak_bytes"] > memory["capacity_bytes"]:
            cells[key]["prefill_over"] = True
    return {"unit_ms": per["unit_ms"], "rates_per_gpu": settings["rates_per_gpu"], "schedules": settings["schedules"],
            "workloads": {wid: w["label"] for wid, w in serving["workloads"].items()},
            "requests": settings["requests"], "seed": settings["seed"], "opening": serving.get("page_opening"),
            "bisection_steps": settings["bisection_steps"],
            "goodput_bisected": {w: {s: g["rate_per_gpu"] for s, g in by.items()}
                                 for w, by in serving["goodput"].items()},
            "cells": cells}


def page_experiment(serving: dict) -> dict:
    """What serving-data.js carries: experiment_data without the per-request cells, plus the simulator's inputs
    (serving.json `twin`): the browser re-simulates every cell (templates/serving_sim/, the engine's twin), the
    opening state's included, whose requests then equal serving.json's per_request exactly. Each workload's arrival
    draws travel packed (packed_draws)."""
    out = {k: v for k, v in experiment_data(serving).items() if k != "cells"}
    twin = serving["twin"]
    traces = {w: {**t, "gamma": {"float64_base64": packed_draws(t["gamma"])}} for w, t in twin["traces"].items()}
    return {**out, "twin": {**twin, "traces": traces}}


def packed_draws(values: list[float]) -> str:
    """Float64 draws as serving-data.js carries them: their IEEE 754 bytes, little-endian, in base64 (exact, and
    5.5 KB smaller gzipped over the two workloads than their shortest decimal text; templates/lesson/load.js
    unpacks them)."""
    return base64.b64encode(np.asarray(values, dtype="<f8").tobytes()).decode("ascii")


def readouts_at(experiment: dict, settings: dict, probe=None) -> dict:
    """readouts() at named settings (workload, request_rate, ttft_slo_ms, load_tpot_slo_ms, attainment_target)."""
    return readouts(experiment, settings["workload"], settings["request_rate"], settings["ttft_slo_ms"],
                    settings["load_tpot_slo_ms"], settings["attainment_target"], probe)


def opening_readouts(serving: dict) -> dict:
    """The readouts at the page's opening settings (what the HTML shows before any slider moves): from the cells,
    and the goodput search's (which simulated between the swept rates at build time) from its records."""
    out = readouts_at(experiment_data(serving), serving["page_opening"])
    for rid, rec in serving["provenance"].items():
        if rid.startswith(("readout.goodput_rate.", "readout.goodput_gain.")):
            out[rid.removeprefix("readout.")] = rec["value"]
    return out


def claims(opening: dict) -> list[dict]:
    """What the page's prose and 'try this' steps say about the experiment, as checkable claims
    (scripts/record/claims.py) over the records serving.json holds."""
    w, slo_tpot = opening["workload"], "load.load_tpot_slo_ms"
    tpot, ttft = "load.tight_tpot.goodput_rate", "load.tight_ttft.goodput_rate"
    return [
        claim("load.mean_fine_p99_not",
              [["readout.mean_tpot_ms.whole", "<=", slo_tpot], ["readout.p99_tpot_ms.whole", ">", slo_tpot]],
              "config/workloads.json page.request_rate"),
        claim("load.chunking_gains", [[f"serving.{w}.chunked.goodput_rate", ">", f"serving.{w}.whole.goodput_rate"]],
              "config/workloads.json sweep"),
        claim("load.chunking_gains_every_seed",
              [[f"serving.{w}.chunked.goodput_low", ">", f"serving.{w}.whole.goodput_high"]],
              "config/workloads.json sweep"),
        claim("load.pd_wins_tight_tpot",
              [[f"{tpot}.disagg", ">", f"{tpot}.chunked"], [f"{tpot}.disagg", ">", f"{tpot}.whole"]],
              "config/workloads.json page.try.tight_tpot"),
        claim("load.pd_loses_tight_ttft",
              [[f"{ttft}.disagg", "<", f"{ttft}.chunked"], [f"{ttft}.disagg", "<", f"{ttft}.whole"]],
              "config/workloads.json page.try.tight_ttft"),
    ]


def page_bundle(serving: dict | None) -> dict | None:
    """What the page renderer needs from serving.json (None when it has no page experiment): the document, the
    experiment's data for serving-data.js, and the readouts at the opening settings."""
    if not serving or "page_opening" not in serving:
        return None
    return {"serving": serving, "experiment": page_experiment(serving), "opening": opening_readouts(serving)}
