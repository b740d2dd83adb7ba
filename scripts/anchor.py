"""Load and validate anchor-model.json; every failure is one line naming the file and the field."""
from __future__ import annotations

import json
from dataclasses import dataclass, fields
from pathlib import Path

import jsonschema

SCHEMA_PATH = Path(__file__).resolve().parent / "schemas" / "anchor-model.schema.json"


class InputError(Exception):
    """A bad input file: the message is one line, naming file and field."""


@dataclass(frozen=True)
class Anchor:
    num_hidden_layers: int
    full_attention_interval: int
    hidden_size: int
    intermediate_size: int
    num_attention_heads: int
    attn_output_gate: bool
    num_key_value_heads: int
    head_dim: int
    linear_num_key_heads: int
    linear_num_value_heads: int
    linear_key_head_dim: int
    linear_value_head_dim: int
    linear_conv_kernel_dim: int
    vocab_size: int
    tie_word_embeddings: bool
    max_position_embeddings: int
    weight_bytes: int
    kv_cache_bytes: int
    recurrent_state_bytes: int
    hbm_bytes: float
    hbm_bandwidth_bytes_per_s: float
    peak_bf16_flops: float
    runtime_reserve_bytes: float
    pd_link_bytes_per_s: float


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
    from scripts import roofline  # imported here: roofline itself imports this module

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


def anchor_from(data: dict) -> Anchor:
    flat = {**{k: v["value"] for k, v in data["model"].items()}, **{k: v["value"] for k, v in data["hardware"].items()}}
    return Anchor(**{f.name: flat[f.name] for f in fields(Anchor)})


def read_json(path: Path) -> object:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"{path}: cannot be read ({exc.strerror})") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: not valid JSON at line {exc.lineno} column {exc.colno} ({exc.msg})") from None


def read_config(path: Path, section: str) -> tuple[dict, dict]:
    """A version-1 JSON input and its non-empty `section` object, or one line naming what is wrong."""
    doc, name = read_json(path), Path(path).as_posix()
    if not isinstance(doc, dict) or doc.get("schema_version") != 1:
        raise InputError(f"{name}: field schema_version must be 1")
    part = doc.get(section)
    if not isinstance(part, dict) or not part:
        raise InputError(f"{name}: field {section} must be a non-empty object")
    return doc, part


def load(path: Path) -> tuple[Anchor, dict]:
    """The validated anchor and the raw document (for sources and scenario)."""
    data = validate(read_json(path), Path(path).name)
    return anchor_from(data), data
