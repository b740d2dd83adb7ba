"""Validate every committed input before Snakemake schedules anything (the Snakefile calls `check_all`).

Each problem is one line naming the file and the field; nothing is built, nothing is touched.
"""
from __future__ import annotations

import sys
from pathlib import Path

from scripts.record.anchor_file import load
from scripts.record.inputs import InputError, check_questions, read_config

CITED_FIELDS = {"id": str, "work_id": str, "locator": str, "label": str, "value": (int, float), "unit": str,
                "format": str, "self_reported": bool}


def check_cited(path: Path) -> None:
    doc, works = read_config(path, "works")
    name = path.as_posix()
    for wid, w in works.items():
        for key in ("work", "version"):
            if not isinstance(w, dict) or not isinstance(w.get(key), str) or not w[key].strip():
                raise InputError(f"{name}: field works.{wid}.{key} must be a non-empty string")
    numbers = doc.get("numbers")
    if not isinstance(numbers, list):
        raise InputError(f"{name}: field numbers must be a list")
    seen = set()
    for i, entry in enumerate(numbers):
        for key, kind in CITED_FIELDS.items():
            value = entry.get(key) if isinstance(entry, dict) else None
            if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
                raise InputError(f"{name}: field numbers[{i}].{key} is missing or of the wrong type")
            if kind is str and not value.strip():
                raise InputError(f"{name}: field numbers[{i}].{key} must not be empty")
        if not 0 <= entry["value"] <= 1e15:
            raise InputError(f"{name}: field numbers[{i}].value must lie in [0, 1e15]")
        if entry["format"] not in ("int", "f1", "f2", "f3"):
            raise InputError(f"{name}: field numbers[{i}].format must be one of int, f1, f2, f3")
        if entry["work_id"] not in works:
            raise InputError(f"{name}: field numbers[{i}].work_id names no entry of works")
        if entry["id"] in seen:
            raise InputError(f"{name}: field numbers[{i}].id repeats {entry['id']!r}")
        seen.add(entry["id"])


def check_all(root: Path = Path(".")) -> None:
    from scripts.bench.records import read_record
    from scripts.serving.results import load_result
    from scripts.tokens.counts import load_passages
    from scripts.tokens.files import load_config

    anchor, _ = load(root / "anchor-model.json")
    check_cited(root / "precomputed" / "cited.json")
    tokenizers = load_config(root / "config" / "tokenizers.json")
    heal_tokenizer_cache(root, tokenizers)
    check_questions(root / "questions" / "C13-L5.md")
    load_passages(root / "config" / "passages.json")
    for record in sorted((root / "precomputed" / "bench").glob("*.json")):
        read_record(record, record.relative_to(root).as_posix())
    check_workloads_fit(root / "config" / "workloads.json", anchor)
    for result in sorted((root / "precomputed" / "serve").glob("*.json")):
        load_result(result)


def heal_tokenizer_cache(root: Path, tokenizers: dict) -> None:
    """A cached tokenizer file that is missing or fails its pinned sha256 invalidates its stamp, so the build
    fetches it again (rather than failing on every run until someone deletes the stamp by hand)."""
    from scripts.tokens.files import cached_file, sha256_file

    for tid, entry in tokenizers["tokenizers"].items():
        stamp = root / ".cache" / "tokenizers" / tid / "verified.json"
        for inner, digest in entry["files"].items():
            cached = root / cached_file(tid, inner)
            bad = "missing" if not cached.is_file() else ("tampered" if sha256_file(cached) != digest else None)
            if bad and stamp.exists():
                stamp.unlink()
                cached.unlink(missing_ok=True)
                print(f"note: {cached.relative_to(root).as_posix()} is {bad} (sha256 pinned in config/tokenizers.json):"
                      f" fetching {tid} again", file=sys.stderr)


def check_workloads_fit(path: Path, anchor) -> None:
    """Every workload's longest request fits the model's context and, alone, the GPU's free memory."""
    from scripts.model import roofline as rl
    from scripts.serving.config import load_workloads

    for wid, w in load_workloads(path)["workloads"].items():
        long = w.get("long_prompts", {}).get("prompt_tokens", {})
        longest = max(w["prompt_tokens"].get("max", 0), long.get("max", 0))
        total = longest + w["output_tokens"].get("max", 0)
        field = f"{path.as_posix()}: field workloads.{wid}"
        if not all("max" in spec for spec in (w["prompt_tokens"], w["output_tokens"])):
            raise InputError(f"{field}.prompt_tokens/output_tokens need a max (the simulator must bound requests)")
        if total > anchor.max_position_embeddings:
            raise InputError(f"{field}: longest request {total} tokens exceeds the model's context "
                             f"({anchor.max_position_embeddings})")
        if rl.bytes_per_request(anchor, total) > rl.free_bytes_for_requests(anchor):
            raise InputError(f"{field}: longest request ({total} tokens) does not fit the GPU's free memory")
