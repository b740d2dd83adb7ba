"""config/workloads.json: named workloads and the default sweep, every field sourced or assumed; one line per error."""
from __future__ import annotations

from pathlib import Path

from scripts.common.names import SCHEDULES, STEP_TIMES
from scripts.record import schema
from scripts.record.inputs import InputError
from scripts.record.schema import read_input
from scripts.serving.engine import FIRST_TOKEN, PRESETS

SWEEP = ("schedules", "presets", "step_times", "rates_per_gpu", "requests", "seed", "burstiness", "chunk_tokens",
         "prefill_gpus", "decode_gpus", "first_token", "block_size", "gpu_memory_utilization", "pd_split_gpus",
         "slo_ms", "attainment_target", "percentiles", "bisection_steps", "replications", "confidence")


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
    for i, s in enumerate(doc["sweep"]["schedules"]["value"]):
        if s not in SCHEDULES:
            fail(f"sweep.schedules.value[{i}]", f"({s!r}) is not a schedule ({', '.join(SCHEDULES)})")
    for key, known in (("presets", PRESETS), ("step_times", STEP_TIMES)):
        for i, s in enumerate(doc["sweep"][key]["value"]):
            if s not in known:
                fail(f"sweep.{key}.value[{i}]", f"({s!r}) is not one of {', '.join(known)}")
    if doc["sweep"]["first_token"]["value"] not in FIRST_TOKEN:
        fail("sweep.first_token.value", f"must be one of {', '.join(FIRST_TOKEN)}")
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
    controls = page["engine_controls"]["value"]
    if doc["sweep"]["chunk_tokens"]["value"] not in controls["chunk_tokens"]:
        fail("page.engine_controls.value.chunk_tokens", "must include the sweep's chunk_tokens (the opening state)")
    if controls["chunk_tokens"] != sorted(controls["chunk_tokens"]):
        fail("page.engine_controls.value.chunk_tokens", "must be in increasing order (a slider's stops)")
    split = f"{doc['sweep']['prefill_gpus']['value']}:{doc['sweep']['decode_gpus']['value']}"
    if split not in controls["pd_splits"]:
        fail("page.engine_controls.value.pd_splits", f"must include the sweep's split {split} (the opening state)")
    ranges = {"ttft_slo_ms": page["ttft_slo_ms"]["value"], "load_tpot_slo_ms": page["tpot_slo_ms"]["value"]}
    for tid, t in page["try"]["value"].items():
        if t["workload"] not in doc["workloads"]:
            fail(f"page.try.value.{tid}.workload", f"must name a workload ({', '.join(doc['workloads'])})")
        for key, r in ranges.items():
            if key in t and not r["min"] <= t[key] <= r["max"]:
                fail(f"page.try.value.{tid}.{key}", f"must be within the slider's range [{r['min']}, {r['max']}]")


def fit_to_context(workloads: dict, context: int, where: str = "config/workloads.json") -> tuple[dict, list[dict]]:
    """The workloads as a model with `context` positions can serve them, and what had to change.

    A request's prompt plus its output must fit the context. The output lengths stay; a prompt length range whose
    max leaves no room for the longest output is fitted: an ordinary prompt's max is clipped to `context - longest
    output` (its median and spread stay), and a long-prompt range is scaled as a whole by `room / max`, so the long
    prompts keep their place relative to the model's context (24K-48K on a 256K model become 1.5K-3K on a 4K one).
    Nothing changes for a model whose context already holds every request. Pure: the inputs are not modified."""
    fitted, adapted = {}, []
    for wid, w in workloads.items():
        out_max = w["output_tokens"]["max"]
        room = context - out_max
        w = {**w}
        prompt = w["prompt_tokens"]
        if room < prompt.get("min", 1) or room < prompt.get("median", prompt.get("value", 1)):
            raise InputError(f"{where}: field workloads.{wid}.output_tokens.max ({out_max}) leaves {room} of the "
                             f"model's {context} positions for the prompt, less than its typical prompt "
                             f"(prompt_tokens); shorten the outputs or use a model with a longer context")
        if prompt["max"] > room:
            w["prompt_tokens"] = {**prompt, "max": room}
            adapted.append({"workload": wid, "field": "prompt_tokens.max", "was": prompt["max"], "now": room,
                            "context": context, "rule": "clipped to context - output_tokens.max"})
        long = w.get("long_prompts")
        if long and long["prompt_tokens"]["max"] > room:
            spec = long["prompt_tokens"]
            factor = room / spec["max"]
            lo = max(1, int(spec["min"] * factor))
            w["long_prompts"] = {**long, "prompt_tokens": {**spec, "min": lo, "max": room}}
            adapted.append({"workload": wid, "field": "long_prompts.prompt_tokens", "was": [spec["min"], spec["max"]],
                            "now": [lo, room], "context": context,
                            "rule": f"scaled by (context - output_tokens.max) / max = {factor:.4g}"})
        fitted[wid] = w
    return fitted, adapted


def sweep_settings(doc: dict) -> dict:
    """The sweep's values, and the page's workload (the P/D split search runs on it) and opening rate."""
    settings = {k: doc["sweep"][k]["value"] for k in SWEEP}
    if "page" in doc:
        settings["page_workload"] = doc["page"]["workload"]["value"]
        settings["page_rate"] = doc["page"]["request_rate"]["value"]
    return settings


def workloads_for(path: Path, anchor) -> dict:
    """config/workloads.json as the anchor's model serves it: `workloads` fitted to its context (fit_to_context),
    `adapted` saying what changed (empty for a model that holds every request as written)."""
    doc = load_workloads(path)
    fitted, adapted = fit_to_context(doc["workloads"], anchor.max_position_embeddings, Path(path).as_posix())
    return {**doc, "workloads": fitted, "adapted": adapted}


def sweep_doc(anchor_path: Path, workloads_path: Path):
    """The anchor, config/workloads.json as it serves it (workloads_for) and the sweep's settings (with the anchor's
    GPU name, which vLLM's default token budget depends on), each file read once."""
    from scripts.record.anchor_file import load

    anchor, anchor_doc = load(anchor_path)
    doc = workloads_for(workloads_path, anchor)
    return anchor, doc, {**sweep_settings(doc), "gpu_name": anchor_doc["hardware"]["name"]["value"]}


def sweep_inputs(anchor_path: Path, workloads_path: Path):
    """What every sweep rule starts from: the anchor, the named workloads (fitted to its context) and the sweep's
    settings (sweep_doc)."""
    anchor, doc, settings = sweep_doc(anchor_path, workloads_path)
    return anchor, doc["workloads"], settings
