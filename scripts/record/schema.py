"""Every input file's JSON Schema, in one place (scripts/record/schemas/<name>.schema.json), and one validator.

A loader reads its file with `inputs.read_json` (encoding, duplicate keys, NaN, digit limits), then calls
`validate(doc, SCHEMA, name)` here before it looks at any value: types, required keys, allowed keys, bounds and
name patterns are the schema's; the loader's own code keeps only what a schema cannot say (one field against
another, a sum against the GPU's memory). Each bound carries a `description` saying why; the one-line error quotes
it, so a user learns the reason with the refusal.
"""
from __future__ import annotations

import functools
import hashlib
import json
import math
from pathlib import Path

import jsonschema

from scripts.record import fastcheck, memo
from scripts.record.inputs import MAX_JSON_BYTES, InputError, read_json

SCHEMAS = Path(__file__).resolve().parent / "schemas"
ANCHOR = "anchor-model"
WORKLOADS = "workloads"
GPUS = "gpus"
CITED = "cited"
TOKENIZERS = "tokenizers"
PASSAGES = "passages"
VENDOR = "vendor"
CLUSTER = "cluster"
BENCH_RECORD = "bench-record"
VLLM_RESULT = "vllm-result"
COURSE = "course"
REAL_ENGINE = "real-engine"
TECHNIQUES = "techniques"
PREFIX = "prefix"
LAB = "lab"
ALL = (ANCHOR, WORKLOADS, GPUS, CITED, TOKENIZERS, PASSAGES, VENDOR, CLUSTER, BENCH_RECORD, VLLM_RESULT, COURSE,
       REAL_ENGINE, TECHNIQUES, PREFIX, LAB)


# Schemas whose exact bytes have passed the metaschema check, one empty memo per sha256 (scripts/record/memo.py):
# checking all fourteen against the metaschema took about 0.5 s of every Snakemake start and every rule's script
# (issue 61); a schema is checked again only when its bytes change.
CHECKED = "schemas"


def _check_schema_once(text: str, schema: dict) -> None:
    name = hashlib.sha256(text.encode("utf-8")).hexdigest()
    if memo.marked(CHECKED, name):
        return
    jsonschema.Draft202012Validator.check_schema(schema)
    memo.mark(CHECKED, name)


@functools.cache
def validator(name: str) -> jsonschema.Draft202012Validator:
    text = (SCHEMAS / f"{name}.schema.json").read_text(encoding="utf-8")
    schema = json.loads(text)
    _check_schema_once(text, schema)
    return jsonschema.Draft202012Validator(schema)


@functools.cache
def quick_check(name: str) -> fastcheck.Check | None:
    """scripts/record/fastcheck.py's checker for the schema (None when it uses a keyword the checker lacks): a yes
    from it is jsonschema's yes, a no sends the document to jsonschema."""
    return fastcheck.compiled(validator(name).schema)  # the schema validator() has read and checked


def _quoted(message: str) -> str:
    """The first 'single-quoted' name in a jsonschema message (the missing or unknown key)."""
    parts = message.split("'")
    return parts[1] if len(parts) > 2 else "?"


def field_path(error: jsonschema.ValidationError) -> str:
    path = ".".join(str(p) if not isinstance(p, int) else f"[{p}]" for p in error.absolute_path).replace(".[", "[")
    if error.validator in ("required", "additionalProperties"):
        key = _quoted(error.message)
        return f"{path}.{key}" if path else key
    return path or "(top level)"


def _shown(value: object) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 40 else text[:37] + "..."


def describe(error: jsonschema.ValidationError) -> str:
    kind, want, got = error.validator, error.validator_value, error.instance
    why = error.schema.get("description") if isinstance(error.schema, dict) else None
    if kind == "required":
        text = "is missing"
    elif kind == "additionalProperties":
        text = "is not a known field (this file allows no other keys)"
    elif kind == "type":
        text = f"must be of type {want if isinstance(want, str) else ' or '.join(want)}, got {_shown(got)}"
    elif kind in ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"):
        op = {"minimum": ">=", "exclusiveMinimum": ">", "maximum": "<=", "exclusiveMaximum": "<"}[kind]
        text = f"must be {op} {want:g}, got {_shown(got)}"
    elif kind == "oneOf" and isinstance(got, dict) and "source" in str(error.schema):
        text = "needs exactly one of 'source' or 'assumption'"
    elif kind == "const":
        text = f"must be {_shown(want)}, got {_shown(got)}"
    elif kind == "enum":
        text = f"must be one of {', '.join(map(str, want))}, got {_shown(got)}"
    elif kind == "pattern":
        text = f"must match {want}, got {_shown(got)}"
    elif kind == "propertyNames":
        bad = next((k for k in got if not validator_ok(error.schema["propertyNames"], k)), "?")
        text = f"has a key {_shown(bad)} that is not allowed ({error.schema['propertyNames'].get('description', '')})"
        why = None
    elif kind in ("minItems", "maxItems", "minProperties", "maxProperties", "minLength", "maxLength"):
        noun = "entries" if "Items" in kind or "Properties" in kind else "characters"
        text = f"must have {'at least' if kind.startswith('min') else 'at most'} {want} {noun}"
    elif kind == "uniqueItems":
        text = "must not repeat an entry"
    elif kind == "contains":
        text = f"must contain {_shown(want.get('const', want))}"
    else:
        text = error.message.splitlines()[0][:120]
    return f"{text} ({why})" if why and kind not in ("required", "additionalProperties", "type", "oneOf") else text


def validator_ok(schema: dict, value: object) -> bool:
    return jsonschema.Draft202012Validator(schema).is_valid(value)


def _order(error: jsonschema.ValidationError):
    # Structure before values: a missing key or a wrong type is reported before a bound deeper down.
    structural = error.validator in ("type", "required", "additionalProperties", "propertyNames")
    return (not structural, len(error.absolute_path), [str(p) for p in error.absolute_path])


def errors(doc: object, name: str) -> list[jsonschema.ValidationError]:
    return sorted(validator(name).iter_errors(doc), key=_order)


def _non_finite(doc: object, path: str = "") -> str | None:
    """The first field holding NaN or an infinity (JSON has neither; a schema's bounds do not catch NaN)."""
    if isinstance(doc, float) and not math.isfinite(doc):
        return path or "(the document)"
    items = doc.items() if isinstance(doc, dict) else enumerate(doc) if isinstance(doc, list) else ()
    for key, value in items:
        where = _non_finite(value, f"{path}[{key}]" if isinstance(key, int) else f"{path}.{key}" if path else key)
        if where:
            return where
    return None


def validate(doc: object, name: str, filename: str) -> object:
    """doc, if it satisfies schemas/<name>.schema.json and holds only finite numbers; else InputError naming file,
    field and what is allowed."""
    where = _non_finite(doc)
    if where:
        raise InputError(f"{filename}: field {where}: NaN or infinity is not a number JSON allows (use a finite "
                         "number)")
    quick = quick_check(name)
    if quick is not None and quick(doc):  # the common case, a valid file, without jsonschema's per-value walk
        return doc
    found = errors(doc, name)
    if found:
        first = found[0]
        raise InputError(f"{filename}: field {field_path(first)} {describe(first)}")
    return doc


def read_input(path: Path, schema_name: str, max_bytes: int = MAX_JSON_BYTES, free_text: tuple[str, ...] = ()):
    """A JSON input that satisfies its schema (scripts/record/schema.py), or one line naming file and field."""
    return validate(read_json(path, max_bytes, free_text), schema_name, Path(path).as_posix())


def read_config(path: Path, section: str, schema_name: str) -> tuple[dict, dict]:
    """A JSON input that satisfies its schema, and its `section` object."""
    doc = read_input(path, schema_name)
    return doc, doc[section]
