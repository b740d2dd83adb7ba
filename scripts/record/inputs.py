"""Reading JSON inputs so that every failure is one line naming the file and the field (InputError)."""
from __future__ import annotations

import json
from pathlib import Path


class InputError(Exception):
    """A bad input file: the message is one line, naming file and field."""


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
