"""Read a `vllm bench serve --save-result --save-detailed` JSON file and compute the same metrics from it, so a
real measurement can sit beside a simulation. One line naming the file and the field on any problem."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from scripts.record.inputs import InputError, read_json
from scripts.serving import metrics

PER_REQUEST = ("ttfts", "itls", "input_lens", "output_lens")


def load_result(path: Path) -> dict:
    doc, name = read_json(path, max_bytes=200 * 1024 * 1024), Path(path).as_posix()
    if not isinstance(doc, dict):
        raise InputError(f"{name}: must be a JSON object (vllm bench serve --save-result --save-detailed)")
    duration = doc.get("duration")
    if not isinstance(duration, int | float) or isinstance(duration, bool) or not duration > 0 or \
            not math.isfinite(duration):
        raise InputError(f"{name}: field duration must be a positive number of seconds")
    n = None
    for key in PER_REQUEST + ("latencies", "errors"):
        if key not in doc:
            if key in PER_REQUEST:
                raise InputError(f"{name}: field {key} is missing (save with --save-detailed)")
            continue
        if not isinstance(doc[key], list) or (n is not None and len(doc[key]) != n):
            raise InputError(f"{name}: field {key} must be a list with one entry per request")
        n = len(doc[key])
    limits = {"ttfts": 1e6, "latencies": 1e6, "input_lens": 1e9, "output_lens": 1e9}  # seconds / tokens
    for key, limit in limits.items():
        for i, v in enumerate(doc.get(key, [])):
            if not isinstance(v, int | float) or isinstance(v, bool) or not math.isfinite(v) or not 0 <= v <= limit:
                raise InputError(f"{name}: field {key}[{i}] must be a number in [0, {limit:g}]")
    for i, gaps in enumerate(doc["itls"]):
        if not isinstance(gaps, list) or not all(isinstance(g, int | float) and not isinstance(g, bool)
                                                 and math.isfinite(g) and 0 <= g <= 1e6 for g in gaps):
            raise InputError(f"{name}: field itls[{i}] must be a list of gaps in [0, 1e6] seconds")
    if not duration <= 1e7:
        raise InputError(f"{name}: field duration must be at most 1e7 seconds")
    return doc


def metrics_of(doc: dict, slo_ms: dict | None = None, percentiles=metrics.DEFAULT_PERCENTILES) -> dict:
    """vLLM's metrics recomputed from its per-request lists (failed requests: a non-empty `errors` entry)."""
    n = len(doc["ttfts"])
    success = np.array([not e for e in doc.get("errors", [""] * n)], dtype=bool)
    ttft = np.asarray(doc["ttfts"], dtype=float)
    e2el = (np.asarray(doc["latencies"], dtype=float) if "latencies" in doc
            else ttft + np.array([sum(g) for g in doc["itls"]]))
    itl = np.array([g for i, gaps in enumerate(doc["itls"]) if success[i] for g in gaps], dtype=float)
    return metrics.compute(ttft, e2el, itl, np.asarray(doc["input_lens"]), np.asarray(doc["output_lens"]),
                           float(doc["duration"]), slo_ms, percentiles, success)


def summarize(paths: list[Path]) -> dict:
    """Every committed result file's metrics (vLLM's own SLO settings are not in the file: no goodput here)."""
    results = []
    for path in sorted(paths):
        doc = load_result(path)
        results.append({"file": Path(path).as_posix(), "model_id": doc.get("model_id"), "date": doc.get("date"),
                        "metrics": metrics_of(doc)})
    return {"schema_version": 1, "definitions": "scripts/serving/metrics.py", "results": results}
