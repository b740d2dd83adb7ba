"""Content-keyed memos of pure, slow computations the build repeats with the same input (issue 61): the imports of a
module (deps.py), a schema's metaschema check (schema.py), a chart's Vega-Lite compilation and its drawn height
(scripts/page/render.py), Jinja's compiled templates (render.py's bytecode cache).

A memo is a file named by the sha256 of everything its value depends on (the input's text and the converter's
version), under build/.memo/<kind>/. Its value is what the computation returns for that input, so reading it can
change no output, only the time: a missing, unreadable or malformed memo is computed again, a read-only checkout
just computes every time, and deleting the folder only costs the next build. Copies of the kit made for a scratch
build (scripts/record/publish.py scratch_checkout) take the folder with them."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

from scripts.record.atomic import write_json_atomic

ROOT = Path(__file__).resolve().parents[2]
MEMO = ROOT / "build" / ".memo"  # relative to the repository: `make clean` removes it with build/


def folder(kind: str) -> Path:
    return MEMO / kind


def key(*parts: str) -> str:
    """The sha256 of the parts, each length-prefixed (so no two lists of parts share a key)."""
    digest = hashlib.sha256()
    for part in parts:
        data = part.encode("utf-8")
        digest.update(f"{len(data)}:".encode())
        digest.update(data)
    return digest.hexdigest()


def read(kind: str, name: str):
    """The memo's JSON value, or None when there is none to trust (absent, unreadable, not JSON)."""
    try:
        return json.loads((folder(kind) / name).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def write(kind: str, name: str, value) -> None:
    """Whole or absent (an atomic rename); a checkout that cannot be written keeps no memo."""
    try:
        write_json_atomic(folder(kind) / name, value)
    except OSError:
        pass


def mark(kind: str, name: str) -> None:
    """An empty memo: `name` has passed (schema.py's metaschema check)."""
    try:
        folder(kind).mkdir(parents=True, exist_ok=True)
        (folder(kind) / name).touch()
    except OSError:
        pass


def marked(kind: str, name: str) -> bool:
    return (folder(kind) / name).is_file()
