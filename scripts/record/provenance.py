"""Provenance records: every number the page shows gets one. Pure: no I/O.

`Record` is the one type: an id, a kind, the number as the page shows it, and the fields of its kind, each with one
meaning. One constructor per kind (`derived`, `measured`, `cited`, `assumed`, `simulated`, `calibrated`); a derived
record also says how it was derived (`Derivation`), which fixes what its `inputs` are, so the audit recomputes it
from its type (scripts/audit/report.py), never from the formula's text. Records travel as JSON (`to_json`) and
come back checked (`Record.from_json`).
"""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from scripts.common.display import DECIMALS, format_number

GENERATOR = "scripts/gen_c13_precomputed.py"


class Kind(StrEnum):
    DERIVED = "derived"        # computed here from inputs by a named formula
    MEASURED = "measured"      # timed on a named machine, with runs and spread
    CITED = "cited"            # taken from a named work (paper, datasheet, config)
    ASSUMED = "assumed"        # our choice, with the assumption stated
    SIMULATED = "simulated"    # the serving simulator's output for a named cell
    CALIBRATED = "calibrated"  # fitted to measurements (room for the real-engine step-time model)


class Derivation(StrEnum):
    """How a derived record was computed, and so what its `inputs` are."""
    ANCHOR = "anchor"        # formula(anchor, **args)[key] * scale; inputs: the anchor fields the formula read
    RECORDS = "records"      # formula(*values of the input records, in order); inputs: record ids
    PASSAGE = "passage"      # formula(text); inputs: ["<file> passages.<id>.text"]
    TOKENIZER = "tokenizer"  # a token count; inputs: the passage and the pinned tokenizer files (re-encoded by tests)
    TINYGPT = "tinygpt"      # formula(TinyGPT(Shape(**args))); inputs: the benchmark record's model shape
    FITTED = "fitted"        # a workload length fitted to the model's context; inputs: context and configured length
    PAGE = "page"            # formula(the built page's HTML); inputs: ["site/<page>.html"] (the header's reading time)


REQUIRED = {  # each kind's own fields, in the order they are written
    Kind.DERIVED: ("derivation", "formula", "inputs", "script"),
    Kind.MEASURED: ("machine", "date", "runs", "spread", "file", "file_sha256", "script"),
    Kind.CITED: ("work", "version", "locator", "self_reported"),
    Kind.ASSUMED: ("assumption",),
    Kind.SIMULATED: ("workload", "schedule", "seed", "requests", "metric", "script"),
    Kind.CALIBRATED: ("fit", "data", "script"),
}
OPTIONAL = {
    Kind.DERIVED: ("args", "scale", "key", "field", "rule"),
    Kind.MEASURED: ("machine_id", "git_commit"),
    Kind.CITED: ("field", "scale"),
    Kind.ASSUMED: ("field", "scale"),
    Kind.SIMULATED: ("rate_per_gpu", "slo_ms", "formula", "args", "key", "interval"),
    Kind.CALIBRATED: ("args",),
}
COMMON = ("id", "kind", "label", "value", "unit", "format", "display")


class RecordError(ValueError):
    """A record that is not a well-formed record of its kind (the message names the record and the field)."""


@dataclass(frozen=True)
class Record:
    id: str
    kind: Kind
    label: str
    value: float
    unit: str
    format: str
    fields: Mapping = field(default_factory=dict)

    def __post_init__(self):
        def bad(why: str):
            raise RecordError(f"{self.id or '(no id)'}: {why}")

        if not isinstance(self.id, str) or not self.id:
            bad("no id")
        if self.kind not in tuple(Kind):
            bad(f"unknown provenance kind {self.kind!r}")
        object.__setattr__(self, "kind", Kind(self.kind))
        if isinstance(self.value, bool) or not isinstance(self.value, int | float) or not math.isfinite(self.value):
            bad(f"value {self.value!r} is not a finite number")
        if self.format not in DECIMALS:
            bad(f"unknown display format {self.format!r}")
        allowed = set(REQUIRED[self.kind]) | set(OPTIONAL[self.kind])
        if unknown := sorted(set(self.fields) - allowed):
            bad(f"a {self.kind} record has no field {unknown[0]!r}")
        for name in (n for n in REQUIRED[self.kind] if n != "self_reported"):  # a bool: checked below
            v = self.fields.get(name)
            if v is None or (isinstance(v, str) and not v.strip()):
                bad(f"{self.kind} record names no {name}")
        if self.kind is Kind.CITED and not isinstance(self.fields.get("self_reported"), bool):
            bad("cited record does not say whether the claim is self-reported")
        if self.kind is Kind.DERIVED:
            if self.fields["derivation"] not in tuple(Derivation):
                bad(f"unknown derivation {self.fields['derivation']!r}")
            if not isinstance(self.fields["inputs"], list):
                bad("derived record's inputs are not a list")

    @property
    def display(self) -> str:
        return format_number(self.value, self.format)

    @property
    def derivation(self) -> Derivation | None:
        return Derivation(self.fields["derivation"]) if self.kind is Kind.DERIVED else None

    def to_json(self) -> dict:
        out = {"id": self.id, "kind": str(self.kind), "label": self.label, "value": self.value, "unit": self.unit,
               "format": self.format, "display": self.display}
        for name in (*REQUIRED[self.kind], *OPTIONAL[self.kind]):
            if name in self.fields:
                v = self.fields[name]
                out[name] = str(v) if isinstance(v, StrEnum) else v
        return out

    @classmethod
    def from_json(cls, doc: Mapping, check_display: bool = True) -> Record:
        """A record read back (the audit, the page's data): checked as it was made; `display` must be the value's
        (unless `check_display` is off: the audit's recompute reports a wrong display as a wrong value)."""
        if not isinstance(doc, Mapping):
            raise RecordError(f"{doc!r}: a record is an object")
        rec = cls(doc.get("id", ""), doc.get("kind"), doc.get("label", ""), doc.get("value"), doc.get("unit", ""),
                  doc.get("format", ""), {k: v for k, v in doc.items() if k not in COMMON})
        if check_display and "display" in doc and doc["display"] != rec.display:
            raise RecordError(f"{rec.id}: display {doc['display']!r} is not its value's ({rec.display!r})")
        return rec


def _record(kind: Kind, rid: str, label: str, value: float, unit: str, fmt: str, fields: dict) -> dict:
    return Record(rid, kind, label, value, unit, fmt, {k: v for k, v in fields.items() if v is not None}).to_json()


def derived(rid: str, label: str, value: float, unit: str, fmt: str, *, derivation: Derivation, formula: str,
            inputs: list[str], script: str, args: dict | None = None, scale: float | None = None,
            key: str | None = None, field: str | None = None, rule: str | None = None) -> dict:
    return _record(Kind.DERIVED, rid, label, value, unit, fmt,
                   {"derivation": derivation, "formula": formula, "inputs": list(inputs), "script": script,
                    "args": args, "scale": scale, "key": key, "field": field, "rule": rule})


def measured(rid: str, label: str, value: float, unit: str, fmt: str, *, machine: str, date: str, runs: int,
             spread: str, file: str, file_sha256: str, script: str, machine_id: str | None = None,
             git_commit: str | None = None) -> dict:
    return _record(Kind.MEASURED, rid, label, value, unit, fmt,
                   {"machine": machine, "date": date, "runs": runs, "spread": spread, "file": file,
                    "file_sha256": file_sha256, "script": script, "machine_id": machine_id, "git_commit": git_commit})


def cited_record(rid: str, label: str, value: float, unit: str, fmt: str, *, work: str, version: str, locator: str,
                 self_reported: bool, field: str | None = None, scale: float | None = None) -> dict:
    return _record(Kind.CITED, rid, label, value, unit, fmt,
                   {"work": work, "version": version, "locator": locator, "self_reported": self_reported,
                    "field": field, "scale": scale})


def assumed(rid: str, label: str, value: float, unit: str, fmt: str, *, assumption: str, field: str | None = None,
            scale: float | None = None) -> dict:
    return _record(Kind.ASSUMED, rid, label, value, unit, fmt, {"assumption": assumption, "field": field,
                                                                 "scale": scale})


def simulated(rid: str, label: str, value: float, unit: str, fmt: str, *, workload: str, schedule: str, seed: int,
              requests: int, metric: str, script: str, rate_per_gpu: float | None = None, slo_ms: dict | None = None,
              formula: str | None = None, args: dict | None = None, key: str | None = None,
              interval: dict | None = None) -> dict:
    """`interval`: the same number over the sweep's replications (seeds, each one's value, their mean and its
    two-sided t interval: scripts/serving/measures/uncertainty.py); `seed` is replication 0's, whose value this is."""
    return _record(Kind.SIMULATED, rid, label, value, unit, fmt,
                   {"workload": workload, "schedule": schedule, "seed": seed, "requests": requests, "metric": metric,
                    "script": script, "rate_per_gpu": rate_per_gpu, "slo_ms": slo_ms, "formula": formula,
                    "args": args, "key": key, "interval": interval})


def calibrated(rid: str, label: str, value: float, unit: str, fmt: str, *, fit: str, data: list[str], script: str,
               args: dict | None = None) -> dict:
    return _record(Kind.CALIBRATED, rid, label, value, unit, fmt, {"fit": fit, "data": data, "script": script,
                                                                    "args": args})


# --- The lesson's records, built from the anchor and the cited numbers ------------------------------------------

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


def from_formula(anchor, paths: dict[str, str], rid: str, fn: Callable, args: dict, *, unit: str, fmt: str,
                 label: str, scale: float = 1.0, key: str | None = None, script: str = GENERATOR) -> dict:
    """A number computed from the anchor by `fn`; its inputs are the anchor fields `fn` read (recorded while it
    ran, so the list cannot drift from the code). An optional field the anchor file leaves out (a dense model's
    experts: anchor.Anchor's defaults) is read but is no input of the file."""
    rec = _Recording(anchor)
    result = fn(rec, **args)
    value = (result[key] if key else result) * scale
    return derived(rid, label, value, unit, fmt, derivation=Derivation.ANCHOR, formula=f"{fn.__module__}:{fn.__name__}",
                   inputs=sorted(paths[name] for name in rec.used if name in paths), script=script, args=args,
                   scale=scale, key=key)


def from_anchor(anchor_file: str, anchor_doc: dict, section: str, name: str, *, unit: str, fmt: str, label: str,
                scale: float = 1.0, rid: str | None = None, key: str = "value", index: int | None = None) -> dict:
    """An input value as the page shows it: cited when it has a source, assumed when it is our assumption."""
    entry = anchor_doc[section][name]
    raw = entry[key] if index is None else entry[key][index]
    rid, where = rid or f"{section}.{name}", f"{section}.{name}"
    if "source" in entry:  # a GPU's datasheet entry says where it was read (anchor_file.with_gpu)
        locator = entry.get("locator", f"{anchor_file} {where}")
        return cited_record(rid, label, raw * scale, unit, fmt, work=entry["source"],
                            version=f"as recorded in {locator.split(' ')[0]}", locator=locator,
                            self_reported=False, field=where, scale=scale)
    return assumed(rid, label, raw * scale, unit, fmt, assumption=entry["assumption"], field=where, scale=scale)


def cited(entry: dict) -> dict:
    """A number from config/cited.json (its entry merged with its work)."""
    return cited_record(entry["id"], entry["label"], entry["value"], entry["unit"], entry["format"],
                        work=entry["work"], version=entry["version"], locator=entry["locator"],
                        self_reported=entry["self_reported"])


def ratio(rid: str, numerator: dict, denominator: dict, *, fmt: str, label: str, script: str = GENERATOR) -> dict:
    """A number derived from two other records (e.g. two cited counts), not from the anchor."""
    return derived(rid, label, numerator["value"] / denominator["value"], "×", fmt, derivation=Derivation.RECORDS,
                   formula="operator:truediv", inputs=[numerator["id"], denominator["id"]], script=script, args={},
                   scale=1.0)
