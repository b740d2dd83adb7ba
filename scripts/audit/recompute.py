"""Audit checks 2, 3, 5 and 6: a derived record recomputed from its derivation and inputs, a measured or
calibrated record against its file and the manifest, a cited one well formed (report.py runs them)."""
from __future__ import annotations

import functools
import hashlib
import importlib
import json
from pathlib import Path

from scripts.common.display import format_number
from scripts.record.provenance import Derivation, Record, RecordError


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@functools.lru_cache(maxsize=4)
def _anchor_of(path: Path, content: bytes):
    """The anchor file's (Anchor, document), loaded once per content: check_derived recomputes ~300 records from it,
    and each load validates the file against its schema (2.5 s of a 4 s audit before)."""
    from scripts.record.anchor_file import load

    return load(path)


def cached_anchor(path: Path):
    """scripts.record.anchor_file.load, cached by the file's bytes (an edited file is loaded again)."""
    return _anchor_of(Path(path), Path(path).read_bytes())


def recompute(rec: dict, records: dict, root: Path, anchor_path: Path | None = None, site: Path | None = None) \
        -> float | None:
    """The record's value recomputed as its derivation says (scripts/record/provenance.Derivation); None when it
    cannot be recomputed here (token counts: tests/test_tokenizers.py re-encodes them). A page count reads the
    audited site's page (`site`, site/ by default)."""
    how = Record.from_json(rec, check_display=False).derivation
    module, _, name = rec["formula"].partition(":")
    anchor_path = anchor_path or root / "anchor-model.json"
    if how is Derivation.ANCHOR:
        anchor, _ = cached_anchor(anchor_path)
        result = getattr(importlib.import_module(module), name)(anchor, **rec.get("args", {}))
        return (result[rec["key"]] if "key" in rec else result) * rec.get("scale", 1.0)
    if how is Derivation.FITTED:  # a workload length fitted to the model's context
        from scripts.serving.workloads.config import workloads_for

        doc = workloads_for(root / "config" / "workloads.json", cached_anchor(anchor_path)[0])
        args = rec["args"]
        for a in doc["adapted"]:
            if (a["workload"], a["field"]) == (args["workload"], args["field"]):
                return (a["now"][("min", "max").index(args["bound"])] if isinstance(a["now"], list) else a["now"])
        return float("nan")  # no longer adapted: the record is stale
    if how is Derivation.RECORDS:
        if any(i not in records for i in rec["inputs"]):
            return float("nan")  # reported: a number derived from a record that is gone
        return getattr(importlib.import_module(module), name)(*(records[i]["value"] for i in rec["inputs"]))
    if how is Derivation.PASSAGE:
        fn = {"builtins:len": len, "str.encode:utf-8": lambda t: len(t.encode("utf-8"))}[rec["formula"]]
        return _passage_value(rec, root, fn)
    if how is Derivation.PAGE:  # counted from the built page itself (scripts/page/reading.py)
        page = (site or root / "site") / Path(rec["inputs"][0]).name
        if not page.exists():
            return float("nan")
        return getattr(importlib.import_module(module), name)(page.read_text(encoding="utf-8"))
    if how is Derivation.TINYGPT:
        from scripts.bench.tinygpt import Shape, TinyGPT, param_count

        return param_count(TinyGPT(Shape(**rec["args"])))
    return None


def _passage_value(rec: dict, root: Path, fn) -> float:
    path, field = rec["inputs"][0].split(" ")
    pid = field.split(".")[1]
    return fn(json.loads((root / path).read_text(encoding="utf-8"))["passages"][pid]["text"])


def check_derived(records: dict, root: Path, anchor_path: Path | None = None, site: Path | None = None) \
        -> tuple[list[str], int]:
    problems, skipped = [], 0
    for rid, rec in records.items():
        if rec.get("kind") != "derived":
            continue
        try:
            value = recompute(rec, records, root, anchor_path, site)
        except RecordError as exc:
            problems.append(str(exc))
            continue
        if value is None:
            skipped += 1  # e.g. token counts, which need the tokenizer files (tests/test_tokenizers.py re-encodes)
            continue
        if value != value:  # NaN: recompute found no inputs to recompute from
            problems.append(f"{rid}: an input record is missing, or the number is no longer derived")
        elif format_number(value, rec["format"]) != rec["display"]:
            problems.append(f"{rid}: recomputes to {format_number(value, rec['format'])} but shows {rec['display']}")
    return problems, skipped


def check_measured(records: dict, manifest: dict, root: Path) -> list[str]:
    problems = []
    inputs = manifest.get("inputs", {})
    for rid, rec in records.items():
        if rec.get("kind") != "measured":
            continue
        missing = [k for k in ("machine", "date", "runs", "spread", "file", "file_sha256") if not rec.get(k)]
        if missing:
            problems.append(f"{rid}: measured record names no {', '.join(missing)}")
            continue
        path = root / rec["file"]
        if not path.exists():
            problems.append(f"{rid}: measured file {rec['file']} is missing")
        elif sha256(path) != rec["file_sha256"] or inputs.get(rec["file"]) != rec["file_sha256"]:
            problems.append(f"{rid}: {rec['file']} does not match the hash in the record and the manifest "
                            "(edited or re-measured without a rebuild)")
    return problems


def check_calibrated(records: dict, root: Path, anchor_path: Path | None = None, resimulate: bool = True) -> list[str]:
    """Every prediction of the real engine's runs, recomputed from the committed calibration and run files
    (precomputed/serve/, precomputed/serve-prefix/ and precomputed/serve-heldout/: the step models are fitted again,
    every run simulated again); without `resimulate`, only that the data each record names exists."""
    cal = {rid: rec for rid, rec in records.items() if rec.get("kind") == "calibrated"}
    if not cal:
        return []
    from scripts.realengine.analyses.comparison import compare
    from scripts.realengine.analyses.heldout_comparison import compare as compare_heldout
    from scripts.realengine.analyses.prefix_comparison import compare as compare_prefix
    from scripts.realengine.analyses.settings import comparison_settings
    from scripts.realengine.records import heldout_page_block, page_block, prefix_page_block
    from scripts.record.anchor_file import load
    from scripts.record.inputs import read_json

    named = sorted({f for rec in cal.values() for f in rec.get("data", [])})  # files and glob patterns
    files = sorted({p.relative_to(root).as_posix() for f in named for p in root.glob(f)})
    missing = [f for f in named if not any(root.glob(f))]
    if missing:
        return [f"calibrated records name data that is missing: {', '.join(missing[:3])}"]
    if not resimulate:
        return []
    anchor = load(anchor_path or root / "anchor-model.json")[0]
    config = root / "config" / "real_engine.json"
    settings = comparison_settings(read_json(config), "config/real_engine.json")
    rebuilt = {}
    # the load runs (comparison.py), the prefix-reuse runs (prefix_comparison.py) and the held-out sessions
    # (heldout_comparison.py), each from its own folder
    other = [root / f for f in files if f.startswith(("precomputed/serve/calibration/",  # the held-out's other
                                                      "precomputed/serve-archive/"))]  # calibrations
    for folder, comparing, block in (("precomputed/serve/", compare, page_block),
                                     ("precomputed/serve-prefix/", compare_prefix, prefix_page_block),
                                     ("precomputed/serve-heldout/", functools.partial(
                                         compare_heldout, other_calibrations=other), heldout_page_block)):
        mine = [f for f in files if f.startswith(folder)]
        if mine:
            calibrations = [root / f for f in mine if "/calibration/" in f]
            runs = [root / f for f in mine if "/calibration/" not in f]
            rebuilt.update(block(comparing(calibrations, runs, anchor, settings))["provenance"])
    problems = []
    for rid, rec in cal.items():
        again = rebuilt.get(rid)
        if again is None:
            problems.append(f"{rid}: not produced again from its data files")
        elif again["display"] != rec["display"]:
            problems.append(f"{rid}: recomputes to {again['display']} but shows {rec['display']}")
    return problems


def check_cited(records: dict) -> list[str]:
    """check_records' problems with cited, assumed and unknown-kind records."""
    return check_records(records).get("cited", [])


def check_manifest(manifest: dict, root: Path, data: Path | None = None) -> list[str]:
    """Every hash in the manifest against its file; outputs (precomputed/<name>) are read from `data`, the directory
    audited (precomputed/, or build/<anchor>/precomputed/ for another anchor)."""
    problems = []
    for group in ("inputs", "scripts", "outputs"):
        for name, digest in manifest.get(group, {}).items():
            path = data / name.removeprefix("precomputed/") if data and group == "outputs" else root / name
            if not path.exists():
                problems.append(f"{name}: listed in the manifest ({group}) but missing")
            elif sha256(path) != digest:
                problems.append(f"{name}: stale — its sha256 differs from precomputed/MANIFEST.json ({group})")
    return problems



def check_records(records: dict) -> dict[str, list[str]]:
    """Every record read back as its type (scripts/record/provenance.Record): a cited one names its work, version
    and place and says whether it is self-reported, an assumed one states its assumption, every kind has the
    fields of its kind and no other, and each shows its own value. Each problem is filed under its record's kind
    (a derived record whose display was tampered is a `derived` problem, issue 63); cited and assumed records,
    and records of no known kind, under `cited`."""
    problems: dict[str, list[str]] = {}
    for rid, rec in records.items():
        kind = rec.get("kind") if rec.get("kind") in CHECKS else "cited"
        try:
            if Record.from_json(rec).id != rid:
                problems.setdefault(kind, []).append(f"{rid}: the record's own id is {rec.get('id')!r}")
        except RecordError as exc:
            problems.setdefault(kind, []).append(str(exc))
    return problems



CHECKS = ("numbers", "words", "embedded", "derived", "measured", "simulated", "calibrated", "claims", "cited",
          "manifest")
