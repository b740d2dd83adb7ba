"""Experiment D's table on the command line: any client's file (a vLLM result, an aiperf profile_export.jsonl, a
GuideLLM benchmarks.json: clients.read_any) read under the five tools' definitions (tool_metrics), printed as the
page prints it (milliseconds, tokens and requests per second, percent), or as JSON. One line naming the file and
the field on a bad file; nothing is written.

  python -m scripts.serving.experiments.tool_table run.json [--benchmark K] [--tpot-slo-ms 20] [--json]
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from scripts.record.inputs import InputError
from scripts.serving.experiments.tool_metrics import KEYS, TOOLS, tool_metrics
from scripts.serving.measures.clients import read_any

MARKS = {"chunks_unknown": "<=", "response_end": "~", "window_assumed": "~"}  # the page's bound marks


def scale(key: str) -> tuple[float, int]:
    if key in ("output_throughput",):
        return 1.0, 0
    if key in ("request_throughput", "goodput"):
        return 1.0, 2
    return (100.0, 1) if key == "attainment" else (1000.0, 2)


def lines(table: dict) -> list[str]:
    out = [f"{'metric':<20}" + "".join(f"{t:>16}" for t in TOOLS)]
    for key in KEYS:
        k, digits = scale(key)
        row = []
        for t in TOOLS:
            v, note = table["cells"][t][key], table["notes"][t].get(key)
            row.append(f"{'-' if v is None else MARKS.get(note, '') + f'{v * k:.{digits}f}':>16}")
        out.append(f"{key:<20}" + "".join(row))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m scripts.serving.experiments.tool_table",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("result", type=Path)
    ap.add_argument("--benchmark", type=int, help="GuideLLM: which benchmark of the report (its index)")
    ap.add_argument("--tpot-slo-ms", type=float, default=20.0)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    try:
        table = tool_metrics(read_any(args.result, args.benchmark), args.tpot_slo_ms)
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(table, indent=1) if args.json else "\n".join(lines(table)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
