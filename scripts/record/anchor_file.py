"""Load and validate an anchor file (schema, cross-field rules, weights fit); one line per failure."""
from __future__ import annotations

from pathlib import Path

from scripts.model import roofline
from scripts.model.anchor import Anchor, anchor_from
from scripts.record import schema
from scripts.record.inputs import InputError, read_json
from scripts.record.schema import read_config

SCHEMA_PATH = schema.SCHEMAS / f"{schema.ANCHOR}.schema.json"


def validate(data: object, filename: str = "anchor-model.json") -> dict:
    """Check structure, types, ranges and cross-field rules; raise InputError on the first problem."""
    schema.validate(data, schema.ANCHOR, filename)
    _check_cross_fields(data, filename)
    _check_weights_fit(data, filename)
    return data


def _check_weights_fit(data: dict, filename: str) -> None:
    a = anchor_from(data)
    if roofline.free_bytes_for_requests(a) <= 0:
        raise InputError(f"{filename}: field hardware.hbm_bytes.value ({a.hbm_bytes / 1e9:.1f} GB) cannot hold the "
                         f"model's weights ({roofline.weight_bytes_total(a) / 1e9:.1f} GB) plus the runtime reserve")


def _check_cross_fields(data: dict, filename: str) -> None:
    model, scenario = data["model"], data["scenario"]

    def fail(field: str, why: str) -> None:
        raise InputError(f"{filename}: field {field} {why}")

    if model["num_hidden_layers"]["value"] % model["full_attention_interval"]["value"]:
        fail("model.full_attention_interval.value", "must divide model.num_hidden_layers")
    if model["num_attention_heads"]["value"] % model["num_key_value_heads"]["value"]:
        fail("model.num_key_value_heads.value", "must divide model.num_attention_heads")
    for name, slider in scenario.items():
        if "min" not in slider:
            continue
        lo, hi, value = slider["min"], slider["max"], slider["value"]
        if lo > hi:
            fail(f"scenario.{name}.min", f"({lo}) must not exceed scenario.{name}.max ({hi})")
        if not lo <= value <= hi:
            fail(f"scenario.{name}.value", f"({value}) must lie within [{lo}, {hi}]")
    longest = max(scenario["context_tokens"]["max"], scenario["prompt_tokens"]["max"])
    if longest > model["max_position_embeddings"]["value"]:
        fail("scenario.context_tokens.max", f"({longest}) is longer than the model allows "
             f"(model.max_position_embeddings = {model['max_position_embeddings']['value']})")
    for name in ("context_tokens", "prompt_tokens", "chunk_tokens"):  # log2 sliders
        s = scenario[name]
        for key in ("value", "min", "max"):
            v = s[key]
            if v != int(v) or int(v) & (int(v) - 1):
                fail(f"scenario.{name}.{key}", f"must be a power of two, got {v}")
    for key in ("value", "min", "max"):
        if scenario["batch"][key] != int(scenario["batch"][key]):
            fail(f"scenario.batch.{key}", "must be a whole number of requests")
    default, tries = scenario["context_tokens"]["value"], scenario.get("try_context_tokens", {}).get("value", [])
    for i, ctx in enumerate(tries):  # the frontier's "a longer context costs" step compares it with the default
        if not default < ctx <= scenario["context_tokens"]["max"]:
            fail(f"scenario.try_context_tokens.value[{i}]", f"({ctx}) must be longer than scenario.context_tokens."
                 f"value ({default}) and at most scenario.context_tokens.max ({scenario['context_tokens']['max']}): "
                 "the long-context try compares a longer context with the default")


def load(path: Path) -> tuple[Anchor, dict]:
    """The validated anchor and the raw document (for sources and scenario)."""
    data = validate(read_json(path), Path(path).name)
    return anchor_from(data), data


def load_gpus(path: Path) -> dict:
    """config/gpus.json: the GPUs the page can switch to, each number with its datasheet (schemas/gpus)."""
    return read_config(path, "gpus", schema.GPUS)[0]


def load_techniques(path: Path, workloads: Path) -> dict:
    """config/techniques.json (schemas/techniques), and what a schema cannot say: each slider's default within its
    range, and the reserving workload present in config/workloads.json."""
    from scripts.record.inputs import InputError, read_json

    doc = read_config(path, "speculative", schema.TECHNIQUES)[0]
    name = path.as_posix()
    for key in ("draft_tokens", "acceptance"):
        entry = doc["speculative"][key]
        lo, hi = entry.get("min", entry["value"]), entry.get("max", entry["value"])
        if not lo <= entry["value"] <= hi:
            raise InputError(f"{name}: field speculative.{key}: value {entry['value']:g} must lie within min {lo:g} "
                             f"and max {hi:g} (the slider's range)")
    wid = doc["reserved"]["reserve_from_workload"]["value"]
    wdoc = read_json(workloads)
    known = wdoc.get("workloads") if isinstance(wdoc, dict) else None
    if not isinstance(known, dict):  # read here before the workloads file's own check: say what is wrong with it
        raise InputError(f"{workloads.as_posix()}: field workloads must be an object of workloads by id (the file "
                         f"holds {'an object without it' if isinstance(wdoc, dict) else 'a ' + type(wdoc).__name__})")
    if wid not in known:
        raise InputError(f"{name}: field reserved.reserve_from_workload.value names {wid!r}, which is not a workload "
                         f"of {workloads.as_posix()} ({', '.join(known)})")
    return doc
