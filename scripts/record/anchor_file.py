"""Load and validate an anchor file (schema, cross-field rules, weights fit); one line per failure."""
from __future__ import annotations

import json
from pathlib import Path

import jsonschema

from scripts.model import roofline
from scripts.model.anchor import Anchor, anchor_from
from scripts.record.inputs import InputError, read_json

SCHEMA_PATH = Path(__file__).resolve().parent / "schemas" / "anchor-model.schema.json"


def _field_path(error: jsonschema.ValidationError) -> str:
    path = ".".join(str(p) for p in error.absolute_path)
    if error.validator == "required":
        missing = error.message.split("'")[1]
        return f"{path}.{missing}" if path else missing
    if error.validator == "additionalProperties":
        unknown = error.message.split("'")[1]
        return f"{path}.{unknown}" if path else unknown
    return path or "(top level)"


def _describe(error: jsonschema.ValidationError) -> str:
    kind = error.validator
    if kind == "required":
        return "is missing"
    if kind == "additionalProperties":
        return "is not a known field"
    if kind == "type":
        return f"must be of type {error.validator_value}, got {json.dumps(error.instance)[:40]}"
    if kind in ("minimum", "exclusiveMinimum"):
        op = ">" if kind == "exclusiveMinimum" else ">="
        return f"must be {op} {error.validator_value}, got {error.instance}"
    if kind in ("maximum", "exclusiveMaximum"):
        return f"must be <= {error.validator_value}, got {error.instance}"
    if kind == "oneOf":
        return "needs exactly one of 'source' or 'assumption'"
    if kind == "const":
        return f"must be {error.validator_value}, got {json.dumps(error.instance)[:40]}"
    return error.message.splitlines()[0][:120]


def validate(data: object, filename: str = "anchor-model.json") -> dict:
    """Check structure, types, ranges and cross-field rules; raise InputError on the first problem."""
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(data), key=lambda e: (len(e.absolute_path), list(map(str, e.absolute_path))))
    if errors:
        first = errors[0]
        raise InputError(f"{filename}: field {_field_path(first)} {_describe(first)}")
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


def load(path: Path) -> tuple[Anchor, dict]:
    """The validated anchor and the raw document (for sources and scenario)."""
    data = validate(read_json(path), Path(path).name)
    return anchor_from(data), data


def load_gpus(path: Path) -> dict:
    """config/gpus.json: the GPUs the page can switch to, each number with its datasheet."""
    from scripts.record.inputs import read_config

    doc, gpus = read_config(path, "gpus")
    name = Path(path).as_posix()
    bounds = {"hbm_bytes": (1e9, 1e13), "hbm_bandwidth_bytes_per_s": (1e10, 1e15), "peak_bf16_flops": (1e12, 1e18)}
    for gid, g in gpus.items():
        if not isinstance(g, dict) or not isinstance(g.get("label"), str) or not g["label"].strip():
            raise InputError(f"{name}: field gpus.{gid}.label must be a non-empty string")
        for key, (lo, hi) in bounds.items():
            f = g.get(key)
            v = f.get("value") if isinstance(f, dict) else None
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not lo <= v <= hi:
                raise InputError(f"{name}: field gpus.{gid}.{key}.value must be a number in [{lo:g}, {hi:g}]")
            if not str(f.get("source") or "").strip():
                raise InputError(f"{name}: field gpus.{gid}.{key}.source must name the datasheet")
    return doc
