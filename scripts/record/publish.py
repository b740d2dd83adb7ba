"""Copy freshly built data from build/precomputed/ into the committed precomputed/, or check it is current.

  python -m scripts.record.publish          publish changed files (each written atomically)
  python -m scripts.record.publish --check  exit 1 naming every committed file that differs from the fresh build
"""
from __future__ import annotations

import sys
from pathlib import Path

from scripts.record.atomic import write_bytes_atomic

BUILD, COMMITTED = Path("build/precomputed"), Path("precomputed")


def differing(build: Path = BUILD, committed: Path = COMMITTED) -> list[tuple[Path, Path]]:
    pairs = []
    for src in sorted(p for p in build.rglob("*") if p.is_file() and not p.name.startswith(".")):
        dst = committed / src.relative_to(build)
        if not dst.exists() or dst.read_bytes() != src.read_bytes():
            pairs.append((src, dst))
    return pairs


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not BUILD.is_dir():
        print(f"error: {BUILD} is missing: run snakemake first", file=sys.stderr)
        return 2
    stale = differing()
    if "--check" in args:
        for _, dst in stale:
            print(f"stale: {dst} differs from a fresh build (run `make site` and commit it)", file=sys.stderr)
        print(f"{len(stale)} stale file(s)" if stale else "precomputed/ is current", file=sys.stderr)
        return 1 if stale else 0
    for src, dst in stale:
        write_bytes_atomic(dst, src.read_bytes())
        print(f"published {dst}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
