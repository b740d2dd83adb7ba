"""The seconds each test module of `make test` took, from a pytest JUnit XML report, written to
tests/module_seconds.json: conftest.py hands the longest modules to pytest-xdist's workers first (longest processing
time first), so that no long module starts last while the other worker sits idle. Refresh after a tier changes:
`make test-seconds`. A module missing from the file is scheduled after every measured one; nothing else reads it."""
from __future__ import annotations

import argparse
import collections
import os
import platform
import xml.etree.ElementTree as ET
from pathlib import Path

from scripts.record.atomic import write_json_atomic


def module_seconds(junit_xml: Path) -> dict[str, float]:
    """Each test module's total (setup, call and teardown of its cases), in seconds, to 0.1 s."""
    totals: collections.Counter = collections.Counter()
    for case in ET.parse(junit_xml).iter("testcase"):
        module = case.get("classname", "").split(".")
        if len(module) >= 2 and module[0] == "tests":
            totals[module[1]] += float(case.get("time") or 0.0)
    return {name: round(seconds, 1) for name, seconds in sorted(totals.items())}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("junit_xml", type=Path)
    parser.add_argument("--out", type=Path, default=Path("tests/module_seconds.json"))
    args = parser.parse_args(argv)
    seconds = module_seconds(args.junit_xml)
    if not seconds:
        raise SystemExit(f"{args.junit_xml}: no test case of a tests/ module in it")
    machine = f"{platform.machine()}, {len(os.sched_getaffinity(0))} cores"
    write_json_atomic(args.out, {"measured_on": machine, "seconds": seconds})


if __name__ == "__main__":
    main()
