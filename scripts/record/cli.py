"""Run a pipeline step so that a bad input ends in one line on stderr and a non-zero exit, never a traceback."""
from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from scripts.record.inputs import InputError


def run_cleanly(step: Callable[[], None], log: str | None = None) -> None:
    """Errors go to stderr (what the maintainer sees) and to the rule's log file (what Snakemake keeps)."""
    try:
        step()
    except InputError as exc:
        line = f"error: {exc}"
        print(line, file=sys.stderr)
        if log:
            Path(log).parent.mkdir(parents=True, exist_ok=True)
            Path(log).write_text(line + "\n", encoding="utf-8")
        sys.exit(2)
