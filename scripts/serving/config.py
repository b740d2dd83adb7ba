"""config/workloads.json: named workloads and the default sweep, every field sourced or assumed; one line per error."""
from __future__ import annotations

from pathlib import Path

from scripts.record import schema
from scripts.record.inputs import InputError
from scripts.record.schema import read_input

SWEEP = ("policies", "rates_per_gpu", "requests", "seed", "burstiness", "chunk_tokens", "prefill_gpus", "decode_gpus",
         "slo_ms", "attainment_target", "percentiles", "bisection_steps")


def rate_name(rate: float) -> str:
    """A rate as it appears in file names and Snakemake wildcards (r{rate}.json)."""
    return f"{rate:g}"


def _check_lengths(spec: dict, where: str, fail) -> None:
    lo, hi = spec.get("min", 1), spec["max"]
    if lo > hi:
        fail(f"{where}.min", f"({lo}) must not exceed max ({hi})")
    for key in ("value", "median"):
        if key in spec and not lo <= spec[key] <= hi:
            fail(f"{where}.{key}", f"({spec[key]}) must lie within [min, max] = [{lo}, {hi}]")


def load_workloads(path: Path) -> dict:
    """schemas/workloads (types, keys, bounds, id patterns, p50/p90/p99 present, schedules unique, at most 32
    rates), then what a schema cannot say: min <= max, rates increasing and distinct as file names, the page's
    settings naming what exists."""
    doc = read_input(path, schema.WORKLOADS)
    name = Path(path).as_posix()

    def fail(field: str, why: str):
        raise InputError(f"{name}: field {field} {why}")

    for wid, w in doc["workloads"].items():
        for key in ("prompt_tokens", "output_tokens"):
            _check_lengths(w[key], f"workloads.{wid}.{key}", fail)
        if "long_prompts" in w:
            _check_lengths(w["long_prompts"]["prompt_tokens"], f"workloads.{wid}.long_prompts.prompt_tokens", fail)
    rates = doc["sweep"]["rates_per_gpu"]["value"]
    if rates != sorted(rates):
        fail("sweep.rates_per_gpu.value", "must be in increasing order")
    names = [rate_name(r) for r in rates]
    for i in range(1, len(names)):
        if names[i] == names[i - 1]:
            fail(f"sweep.rates_per_gpu.value[{i}]", f"({rates[i]!r}) and {rates[i - 1]!r} both name the file "
                 f"r{names[i]}.json: rates must differ in their first 6 significant digits")
    if "page" in doc:
        _check_page(doc["page"], doc, fail)
    return doc


def _check_page(page: dict, doc: dict, fail) -> None:
    """The page experiment's opening settings and slider ranges (optional: a sweep without a page has none)."""
    if page["workload"]["value"] not in doc["workloads"]:
        fail("page.workload.value", f"must name a workload ({', '.join(doc['workloads'])})")
    if page["request_rate"]["value"] not in doc["sweep"]["rates_per_gpu"]["value"]:
        fail("page.request_rate.value", "must be one of sweep.rates_per_gpu.value")
    slo, target = doc["sweep"]["slo_ms"]["value"], doc["sweep"]["attainment_target"]["value"]
    for key, default in (("ttft_slo_ms", slo["ttft"]), ("tpot_slo_ms", slo["tpot"]),
                         ("attainment_target", target)):
        r = page[key]["value"]
        if not r["min"] < r["max"] or r["step"] > r["max"] - r["min"] or r["step"] <= 0:
            fail(f"page.{key}.value", "must have min < max and 0 < step <= max - min")
        if not r["min"] <= default <= r["max"]:
            fail(f"page.{key}.value", "must include the sweep's default (sweep.slo_ms / sweep.attainment_target)")
    ranges = {"ttft_slo_ms": page["ttft_slo_ms"]["value"], "load_tpot_slo_ms": page["tpot_slo_ms"]["value"]}
    for tid, t in page["try"]["value"].items():
        if t["workload"] not in doc["workloads"]:
            fail(f"page.try.value.{tid}.workload", f"must name a workload ({', '.join(doc['workloads'])})")
        for key, r in ranges.items():
            if key in t and not r["min"] <= t[key] <= r["max"]:
                fail(f"page.try.value.{tid}.{key}", f"must be within the slider's range [{r['min']}, {r['max']}]")


def sweep_settings(doc: dict) -> dict:
    return {k: doc["sweep"][k]["value"] for k in SWEEP}


def sweep_inputs(anchor_path: Path, workloads_path: Path):
    """What every sweep rule starts from: the anchor, the named workloads and the sweep's settings."""
    from scripts.record.anchor_file import load

    doc = load_workloads(workloads_path)
    return load(anchor_path)[0], doc["workloads"], sweep_settings(doc)
