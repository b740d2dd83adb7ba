"""config/workloads.json: named workloads and the default sweep, every field sourced or assumed; one line per error."""
from __future__ import annotations

import math
from pathlib import Path

from scripts.record.inputs import InputError, read_config

DISTS = {"fixed": ("value",), "uniform": ("min", "max"), "lognormal": ("median", "sigma")}
SWEEP = ("policies", "rates_per_gpu", "requests", "seed", "burstiness", "chunk_tokens", "prefill_gpus", "decode_gpus",
         "slo_ms", "attainment_target", "percentiles", "bisection_steps")
MAX_TOKENS = 1 << 20


def _number(value, lo: float, hi: float) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) and lo <= value <= hi


def _check_lengths(spec, where: str, fail) -> None:
    if not isinstance(spec, dict) or spec.get("dist") not in DISTS:
        fail(f"{where}.dist", f"must be one of {', '.join(DISTS)}")
    for key in DISTS[spec["dist"]] + tuple(k for k in ("min", "max") if k in spec):
        limit = 10.0 if key == "sigma" else MAX_TOKENS
        if not _number(spec.get(key), 0 if key == "sigma" else 1, limit):
            fail(f"{where}.{key}", f"must be a number in [{0 if key == 'sigma' else 1}, {limit:g}]")
    if spec.get("min", 1) > spec.get("max", MAX_TOKENS):
        fail(f"{where}.min", "must not exceed max")


def _sourced(node, where: str, fail) -> None:
    if ("source" in node) == ("assumption" in node):
        fail(where, "needs exactly one of 'source' or 'assumption'")
    text = node.get("source", node.get("assumption"))
    if not isinstance(text, str) or not text.strip():
        fail(where, "has an empty source or assumption")


def load_workloads(path: Path) -> dict:
    doc, workloads = read_config(path, "workloads")
    name = Path(path).as_posix()

    def fail(field: str, why: str):
        raise InputError(f"{name}: field {field} {why}")

    for wid, w in workloads.items():
        if not isinstance(w, dict) or not isinstance(w.get("label"), str) or not w["label"].strip():
            fail(f"workloads.{wid}.label", "must be a non-empty string")
        for key in ("prompt_tokens", "output_tokens"):
            _check_lengths(w.get(key), f"workloads.{wid}.{key}", fail)
            _sourced(w[key], f"workloads.{wid}.{key}", fail)
        if "long_prompts" in w:
            long = w["long_prompts"]
            if not isinstance(long, dict) or not _number(long.get("fraction"), 0, 1):
                fail(f"workloads.{wid}.long_prompts.fraction", "must be a number in [0, 1]")
            _check_lengths(long.get("prompt_tokens"), f"workloads.{wid}.long_prompts.prompt_tokens", fail)
            _sourced(long, f"workloads.{wid}.long_prompts", fail)
    sweep = doc.get("sweep")
    if not isinstance(sweep, dict):
        fail("sweep", "must be an object")
    for key in SWEEP:
        if not isinstance(sweep.get(key), dict) or "value" not in sweep[key]:
            fail(f"sweep.{key}.value", "is missing")
        _sourced(sweep[key], f"sweep.{key}", fail)
    v = {k: sweep[k]["value"] for k in SWEEP}
    if not isinstance(v["policies"], list) or not v["policies"] or \
            not set(v["policies"]) <= {"whole", "chunked", "disagg"}:
        fail("sweep.policies.value", "must list some of whole, chunked, disagg")
    rates = v["rates_per_gpu"]
    if not isinstance(rates, list) or not rates or not all(_number(r, 1e-3, 1e4) for r in rates) or \
            rates != sorted(set(rates)):
        fail("sweep.rates_per_gpu.value", "must be increasing numbers in [0.001, 10000] req/s")
    for key, lo, hi in (("requests", 1, 200_000), ("seed", 0, 2**63 - 1), ("chunk_tokens", 1, MAX_TOKENS),
                        ("prefill_gpus", 1, 64), ("decode_gpus", 1, 64), ("bisection_steps", 0, 30)):
        if not (isinstance(v[key], int) and not isinstance(v[key], bool) and lo <= v[key] <= hi):
            fail(f"sweep.{key}.value", f"must be a whole number in [{lo}, {hi}]")
    if not _number(v["burstiness"], 1e-3, 1e3):
        fail("sweep.burstiness.value", "must be a number in [0.001, 1000]")
    if not _number(v["attainment_target"], 0.01, 1):
        fail("sweep.attainment_target.value", "must be a fraction in [0.01, 1]")
    slo = v["slo_ms"]
    if not isinstance(slo, dict) or not slo or not set(slo) <= {"ttft", "tpot", "e2el"} or \
            not all(_number(x, 1e-3, 1e7) for x in slo.values()):
        fail("sweep.slo_ms.value", "must map some of ttft, tpot, e2el to milliseconds in [0.001, 1e7]")
    if not isinstance(v["percentiles"], list) or not v["percentiles"] or \
            not all(_number(p, 0, 100) for p in v["percentiles"]):
        fail("sweep.percentiles.value", "must be a list of percentiles in [0, 100]")
    if "page" in doc:
        _check_page(doc["page"], doc, fail)
    return doc


def _check_page(page: object, doc: dict, fail) -> None:
    """The page experiment's opening settings and slider ranges (optional: a sweep without a page has none)."""
    if not isinstance(page, dict):
        fail("page", "must be an object")
    for key in ("workload", "request_rate", "ttft_slo_ms", "tpot_slo_ms", "attainment_target", "try"):
        if not isinstance(page.get(key), dict) or "value" not in page[key]:
            fail(f"page.{key}.value", "is missing")
        _sourced(page[key], f"page.{key}", fail)
    if page["workload"]["value"] not in doc["workloads"]:
        fail("page.workload.value", f"must name a workload ({', '.join(doc['workloads'])})")
    if page["request_rate"]["value"] not in doc["sweep"]["rates_per_gpu"]["value"]:
        fail("page.request_rate.value", "must be one of sweep.rates_per_gpu.value")
    slo, target = doc["sweep"]["slo_ms"]["value"], doc["sweep"]["attainment_target"]["value"]
    for key, default, lo, hi in (("ttft_slo_ms", slo.get("ttft"), 1, 1e6), ("tpot_slo_ms", slo.get("tpot"), 1, 1e4),
                                 ("attainment_target", target, 0.01, 1)):
        r = page[key]["value"]
        if not isinstance(r, dict) or set(r) != {"min", "max", "step"} or \
                not all(_number(r[k], lo, hi) for k in r) or not r["min"] < r["max"] or r["step"] > r["max"] - r["min"]:
            fail(f"page.{key}.value", f"must be {{min, max, step}} with {lo} <= min < max <= {hi}")
        if default is None or not r["min"] <= default <= r["max"]:
            fail(f"page.{key}.value", "must include the sweep's default (sweep.slo_ms / sweep.attainment_target)")
    tries = page["try"]["value"]
    if not isinstance(tries, dict) or set(tries) != {"tight_tpot", "tight_ttft"}:
        fail("page.try.value", "must hold the settings tight_tpot and tight_ttft")
    ranges = {"ttft_slo_ms": page["ttft_slo_ms"]["value"], "load_tpot_slo_ms": page["tpot_slo_ms"]["value"]}
    for tid, t in tries.items():
        if not isinstance(t, dict) or t.get("workload") not in doc["workloads"] or \
                not set(t) <= {"workload", *ranges} or len(t) != 2:
            fail(f"page.try.value.{tid}", "must name a workload and one of ttft_slo_ms, load_tpot_slo_ms")
        for key, r in ranges.items():
            if key in t and not (_number(t[key], r["min"], r["max"])):
                fail(f"page.try.value.{tid}.{key}", f"must be within the slider's range [{r['min']}, {r['max']}]")


def sweep_settings(doc: dict) -> dict:
    return {k: doc["sweep"][k]["value"] for k in SWEEP}


def sweep_inputs(anchor_path: Path, workloads_path: Path):
    """What every sweep rule starts from: the anchor, the named workloads and the sweep's settings."""
    from scripts.record.anchor_file import load

    doc = load_workloads(workloads_path)
    return load(anchor_path)[0], doc["workloads"], sweep_settings(doc)
