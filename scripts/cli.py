"""Run a pipeline step so that a bad input ends in one line on stderr and a non-zero exit, never a traceback."""
from __future__ import annotations

import sys
from collections.abc import Callable

from scripts.anchor import InputError


def run_cleanly(step: Callable[[], None]) -> None:
    try:
        step()
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
