"""Gather benchmark records made by jobs (build/bench/<partition>.json) into precomputed/bench/<machine id>.json,
exactly where `make bench` puts a local one; each record is checked first, and nothing is written if one is bad.

  python -m scripts.bench.gather build/bench/*.json [--into precomputed/bench]     (what `make bench-cluster` runs)
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from scripts.bench.records import check_record
from scripts.record.atomic import write_json_atomic
from scripts.record.inputs import InputError, read_json


def gather(paths: list[Path], into: Path) -> list[Path]:
    records = [check_record(read_json(p), p.as_posix()) for p in paths]
    ids = [r["machine"]["id"] for r in records]
    if len(set(ids)) != len(ids):
        raise InputError(f"{', '.join(p.as_posix() for p in paths)}: two partitions measured the same machine id "
                         f"({sorted({i for i in ids if ids.count(i) > 1})}); keep one")
    written = []
    for rec in records:
        out = into / f"{rec['machine']['id']}.json"
        write_json_atomic(out, rec)
        written.append(out)
    return written


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("records", type=Path, nargs="+")
    ap.add_argument("--into", type=Path, default=Path("precomputed/bench"))
    args = ap.parse_args(argv)
    try:
        for out in gather(args.records, args.into):
            print(f"gathered {out}", file=sys.stderr)
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
