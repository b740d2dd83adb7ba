"""Provenance records: every number the page shows gets one. Pure: no I/O.

A derived record names the formula (module:function), the arguments, the anchor fields the
formula actually read (recorded while it ran, so the list cannot drift from the code) and the script.
"""
from __future__ import annotations

from collections.abc import Callable

from scripts.page.display import format_number

GENERATOR = "scripts/gen_c13_precomputed.py"


class _Recording:
    """Stands in for the Anchor and notes each field a formula reads."""

    def __init__(self, anchor):
        self._anchor = anchor
        self.used: set[str] = set()

    def __getattr__(self, name):
        self.used.add(name)
        return getattr(self._anchor, name)


def field_paths(anchor_doc: dict) -> dict[str, str]:
    return {name: f"{section}.{name}" for section in ("model", "hardware") for name in anchor_doc[section]}


def derived(anchor, paths: dict[str, str], rid: str, fn: Callable, args: dict, *, unit: str, fmt: str,
            label: str, scale: float = 1.0, key: str | None = None, script: str = GENERATOR) -> dict:
    rec = _Recording(anchor)
    result = fn(rec, **args)
    value = (result[key] if key else result) * scale
    return {
        "id": rid, "kind": "derived", "label": label, "value": value, "unit": unit, "format": fmt,
        "display": format_number(value, fmt), "formula": f"{fn.__module__}:{fn.__name__}", "args": args,
        "scale": scale, **({"key": key} if key else {}), "inputs": sorted(paths[name] for name in rec.used),
        "script": script,
    }


def from_anchor(anchor_doc: dict, section: str, name: str, *, unit: str, fmt: str, label: str,
                scale: float = 1.0, rid: str | None = None, key: str = "value", index: int | None = None) -> dict:
    """An input value as the page shows it: cited when it has a source, assumed when it is our assumption."""
    field = anchor_doc[section][name]
    raw = field[key] if index is None else field[key][index]
    value = raw * scale
    record = {"id": rid or f"{section}.{name}", "label": label, "value": value, "unit": unit, "format": fmt,
              "display": format_number(value, fmt), "field": f"{section}.{name}", "scale": scale}
    if "source" in field:
        record.update(kind="cited", work=field["source"], version="as recorded in anchor-model.json",
                      locator=f"anchor-model.json {section}.{name}", self_reported=False)
    else:
        record.update(kind="assumed", assumption=field["assumption"])
    return record


def cited(entry: dict) -> dict:
    record = {k: entry[k] for k in ("id", "label", "value", "unit", "format", "work", "version", "locator",
                                     "self_reported")}
    record.update(kind="cited", display=format_number(entry["value"], entry["format"]))
    return record


def ratio(rid: str, numerator: dict, denominator: dict, *, fmt: str, label: str, script: str = GENERATOR) -> dict:
    """A number derived from two other records (e.g. two cited counts), not from the anchor."""
    value = numerator["value"] / denominator["value"]
    return {"id": rid, "kind": "derived", "label": label, "value": value, "unit": "×", "format": fmt,
            "display": format_number(value, fmt), "formula": "operator:truediv",
            "args": {}, "scale": 1.0, "inputs": [numerator["id"], denominator["id"]], "script": script}
