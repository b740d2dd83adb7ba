"""The kit's build lock: an flock on .snakemake/c13-build.lock holding the owner's PID. The kernel drops it when the
owner dies, however it dies, so a held lock always means a live build (scripts/record/build_lock.py runs builds
under it; publish and the other anchors' subsite swap take it too)."""
from __future__ import annotations

import fcntl
import os
from pathlib import Path

LOCK = Path(".snakemake/c13-build.lock")


class Busy(Exception):
    """Another build (ours or a plain Snakemake) is running in this directory."""


def holder(path: Path = LOCK) -> str:
    try:
        return path.read_text().strip() or "unknown"
    except OSError:
        return "unknown"


def acquire(path: Path = LOCK):
    """The open, locked file; or None when another live process holds it."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fh = open(path, "a+")
    except OSError as exc:
        raise SystemExit(f"error: cannot open the build lock {path.as_posix()} ({exc.strerror}): remove whatever is "
                         "there") from None
    try:
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        fh.close()
        return None
    fh.seek(0)
    fh.truncate()
    fh.write(f"{os.getpid()}\n")
    fh.flush()
    return fh
