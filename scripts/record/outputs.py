"""Where a command may write its --out: never over a folder, a file the repository keeps, one of the command's own
inputs, or a place it cannot write (tried with a temp file before any work is done, so a long run does not end in an
error). One rule for every command that takes --out (scripts/bench/serve_tiny.py,
scripts/realengine/analyses/predict.py)."""
from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

from scripts.record.inputs import InputError

ROOT = Path(__file__).resolve().parents[2]
KEPT_FOLDERS = ("precomputed", "config", "templates", "scripts", "site", "tests", "anchors")


def tracked(path: Path) -> bool:
    """Whether the repository keeps this file (git ls-files; without git, anything under its kept folders)."""
    try:
        rel = path.resolve().relative_to(ROOT)
    except ValueError:
        return False
    try:
        out = subprocess.run(["git", "-C", str(ROOT), "ls-files", "--error-unmatch", str(rel)], capture_output=True)
        return out.returncode == 0
    except OSError:
        return bool(rel.parts) and rel.parts[0] in KEPT_FOLDERS


def check_output(out: Path, inputs: dict[str, Path | None] | None = None, flag: str = "--out") -> None:
    """Refuse `out` in one line naming the flag; `inputs`: the command's own input files by the flag that names them."""
    shown = out.as_posix()
    if out.is_dir():
        raise InputError(f"{flag} {shown}: is a folder; name a file to write")
    for name, path in (inputs or {}).items():
        if path is not None and out.resolve() == Path(path).resolve():
            raise InputError(f"{flag} {shown}: is the {name}; the output would write over it (name another file)")
    if out.exists() and tracked(out):
        raise InputError(f"{flag} {shown}: the repository keeps this file; write to a new name (or under build/)")
    parent = out.parent if str(out.parent) else Path(".")
    try:
        parent.mkdir(parents=True, exist_ok=True)
        tempfile.NamedTemporaryFile(dir=parent, prefix=f".{out.name}.", suffix=".probe").close()
    except OSError as exc:
        raise InputError(f"{flag} {shown}: cannot be written there ({exc.strerror or exc})") from None
