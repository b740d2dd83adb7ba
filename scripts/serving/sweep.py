"""The default sweep: one cell per (workload, schedule, rate per GPU), and DistServe goodput per (workload, schedule).

A cell simulates `requests` requests of one workload at one rate with one schedule; every schedule and rate of a
workload uses the workload's seed (common random numbers). Pure: no I/O.
"""
from __future__ import annotations

import numpy as np

from scripts.model.anchor import Anchor
from scripts.serving import engine, metrics
from scripts.serving.workload import generate


def workload_seed(settings: dict, workloads: dict, wid: str) -> int:
    return int(settings["seed"]) + list(workloads).index(wid)


def gpus(settings: dict, schedule: str) -> int:
    return settings["prefill_gpus"] + settings["decode_gpus"] if schedule == "disagg" else 1


def simulate_cell(a: Anchor, workloads: dict, settings: dict, wid: str, schedule: str, rate_per_gpu: float):
    """The trace of one cell: the workload's requests at rate_per_gpu x (GPUs the schedule uses)."""
    reqs = generate(workloads[wid], settings["requests"], rate_per_gpu * gpus(settings, schedule),
                    workload_seed(settings, workloads, wid), settings["burstiness"])
    return engine.simulate(a, reqs, schedule, chunk_tokens=settings["chunk_tokens"],
                           prefill_gpus=settings["prefill_gpus"], decode_gpus=settings["decode_gpus"])


def requests_table(trace, detailed: bool = False) -> list[dict]:
    """One object per request, in arrival order (what `--out` and a cell file hold); `detailed` adds every
    inter-token gap (`itl_s`), enough to reproduce the pooled ITL percentiles exactly."""
    r = trace.requests
    rows = [{"arrival_s": float(r.arrival_s[i]), "first_token_s": float(trace.first_token_s[i]),
             "finish_s": float(trace.finish_s[i]), "prompt_tokens": int(r.prompt_tokens[i]),
             "output_tokens": int(r.output_tokens[i])} for i in range(len(r))]
    if detailed:
        for i, row in enumerate(rows):
            row["itl_s"] = [float(g) for g in trace.token_gaps(i)]
    return rows


def run_cell(a: Anchor, workloads: dict, settings: dict, wid: str, schedule: str, rate_per_gpu: float) -> dict:
    trace = simulate_cell(a, workloads, settings, wid, schedule, rate_per_gpu)
    return {"workload": wid, "schedule": schedule, "rate_per_gpu": rate_per_gpu,
            "rate": rate_per_gpu * gpus(settings, schedule), "gpus": gpus(settings, schedule),
            "seed": workload_seed(settings, workloads, wid), "requests": settings["requests"],
            "slo_ms": settings["slo_ms"],
            "metrics": metrics.from_trace(trace, settings["slo_ms"], settings["percentiles"]),
            "per_request": requests_table(trace)}


def per_request_metrics(cell: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """TTFT, TPOT (vLLM's all_tpots) and E2EL in seconds, from a cell's own per-request records."""
    rows = cell["per_request"]
    arrival = np.array([r["arrival_s"] for r in rows])
    ttft = np.array([r["first_token_s"] for r in rows]) - arrival
    e2el = np.array([r["finish_s"] for r in rows]) - arrival
    return ttft, metrics.per_request_tpot(ttft, e2el, np.array([r["output_tokens"] for r in rows])), e2el


def attainment(a: Anchor, workloads: dict, settings: dict, wid: str, schedule: str, rate: float) -> float:
    trace = simulate_cell(a, workloads, settings, wid, schedule, rate)
    return metrics.from_trace(trace, settings["slo_ms"], settings["percentiles"])["slo_attainment"]


def distserve_goodput(a: Anchor, workloads: dict, settings: dict, wid: str, schedule: str,
                      swept: dict[float, float]) -> dict:
    """Largest rate per GPU whose SLO attainment >= the target: the last sweep rate that meets it, refined by
    bisection against the next sweep rate (or 0 when even the lightest load misses it)."""
    target, rates = settings["attainment_target"], sorted(swept)
    meeting = [r for r in rates if swept[r] >= target]
    if meeting and meeting[-1] == rates[-1]:
        return {"rate_per_gpu": rates[-1], "bounded_by_sweep": True, "probes": []}
    lo = meeting[-1] if meeting else 0.0
    hi = rates[rates.index(lo) + 1] if meeting else rates[0]
    probes = []
    for _ in range(settings["bisection_steps"]):
        mid = (lo + hi) / 2
        att = attainment(a, workloads, settings, wid, schedule, mid)
        probes.append({"rate_per_gpu": mid, "slo_attainment": att})
        lo, hi = (mid, hi) if att >= target else (lo, mid)
    return {"rate_per_gpu": lo, "bounded_by_sweep": False, "probes": probes}


def goodput_of(a: Anchor, workloads: dict, settings: dict, wid: str, schedule: str, cells: list[dict]) -> dict:
    """DistServe goodput of one (workload, schedule) from its sweep cells (plus bisection runs)."""
    swept = {c["rate_per_gpu"]: c["metrics"]["slo_attainment"] for c in cells
             if c["workload"] == wid and c["schedule"] == schedule}
    return {"workload": wid, "schedule": schedule, **distserve_goodput(a, workloads, settings, wid, schedule, swept)}
