"""Build the lesson for another anchor: `make site ANCHOR=anchors/<name>.json` -> site/<name>/.

  python -m scripts.record.anchor_site anchors/<name>.json [--audit]

The same pipeline as `make site`, every rule and its publish step, in a checkout of its own (build/anchors/<name>/:
the committed files, the verified downloads, and the anchor in place of anchor-model.json), so the default's
precomputed/ and site/ are never touched; `--audit` then audits that checkout as `make audit` does. An anchor whose
model cannot take config/workloads.json's requests has its own in anchors/workloads/<name>.json. Only when every
step succeeded is its site swapped in as site/<name>/ (staged beside it, then renamed); a failed build names the
failing step in one line and leaves site/<name>/ as it was."""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from scripts.record.anchor_file import load
from scripts.record.inputs import InputError
from scripts.record.lock import LOCK, acquire, holder
from scripts.record.publish import recover, scratch_checkout

ROOT = Path(__file__).resolve().parents[2]


# Names the default site uses at its top level (scripts/page/render.py, the Snakefile's render_site outputs) or
# that publish stages: an anchor stem equal to one would overwrite part of the default page.
SITE_NAMES = {"index.html", "lesson.js", "lesson-data.js", "serving-data.js", "vega.min.js", "robots.txt",
              "provenance.html", "source", "report.html"}
STEM = re.compile(r"^[a-z0-9](?:[a-z0-9-]|\.(?=[a-z0-9]))*$")


def check_stem(anchor: Path) -> str:
    """The anchor's file stem, which names site/<stem>/: lower-case letters, digits, '-' and inner '.', not a name
    the default site uses, not ending in a web file's extension."""
    stem = anchor.stem
    if anchor.suffix != ".json" or not STEM.match(stem) or len(stem) > 64:
        raise InputError(f"{anchor}: an anchor file is <name>.json with <name> of lower-case letters, digits, '-' and "
                         "inner '.' (it names site/<name>/)")
    if stem in SITE_NAMES or stem.endswith((".html", ".js", ".json", ".txt", ".css", ".new", ".old")):
        raise InputError(f"{anchor}: the name {stem!r} would replace the default site's own {stem}; rename the file")
    return stem


def anchor_names(root: Path = ROOT) -> list[str]:
    return sorted(p.stem for p in (root / "anchors").glob("*.json"))


def build(anchor: Path, root: Path = ROOT, audit: bool = False) -> Path:
    name = check_stem(anchor)
    load(anchor)  # a bad anchor stops here, in one line, before anything runs
    work = root / "build" / "anchors" / name
    work.mkdir(parents=True, exist_ok=True)
    scratch_checkout(root, work)  # refreshes the sources; keeps work/build and .snakemake for incremental reruns
    shutil.copy2(anchor, work / "anchor-model.json")
    workloads = anchor.parent / "workloads" / anchor.name  # optional: the serving sweep's workloads for this anchor
    shutil.copy2(workloads if workloads.is_file() else root / "config" / "workloads.json",
                 work / "config" / "workloads.json")
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    steps = [[sys.executable, "-m", "snakemake", "--cores", str(min(2, os.cpu_count() or 1)), "--rerun-incomplete",
              "--scheduler", "greedy", "--quiet", "rules", "all"],
             [sys.executable, "-m", "scripts.record.publish"]]  # inside that checkout: its precomputed/ and site/
    if audit:
        steps.append([sys.executable, "-m", "scripts.audit"])
    for cmd in steps:
        run = subprocess.run(cmd, cwd=work, capture_output=True, text=True, env=env)
        if run.returncode != 0:
            lines = [ln for ln in (run.stderr + run.stdout).splitlines() if ln.startswith("error:")] or \
                (run.stderr or run.stdout).strip().splitlines()[-1:] or ["(no output)"]
            raise InputError(f"{anchor}: {' '.join(cmd[2:4])} failed: {lines[0]}")
    return work / "site"


def publish_subsite(built: Path, name: str, root: Path = ROOT) -> Path:
    dest, new, old = root / "site" / name, root / "site" / f"{name}.new", root / "site" / f"{name}.old"
    for stale in (new, old):
        if stale.exists():
            shutil.rmtree(stale)
    dest.parent.mkdir(exist_ok=True)
    shutil.copytree(built, new, ignore=shutil.ignore_patterns("report.html"))
    if dest.exists():
        os.rename(dest, old)
    os.rename(new, dest)
    if old.exists():
        shutil.rmtree(old)
    return dest


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("anchor", type=Path)
    ap.add_argument("--audit", action="store_true", help="also run the audit on that build")
    args = ap.parse_args(argv)
    try:
        if not args.anchor.is_file():
            raise InputError(f"{args.anchor}: no such anchor file (the anchors are in anchors/)")
        check_stem(args.anchor)
        built = build(args.anchor.resolve(), audit=args.audit)
        lock = acquire(ROOT / LOCK)  # site/ is shared with the default build: swap the subsite under its lock
        if lock is None:
            raise InputError(f"another build is running in {ROOT} (PID {holder(ROOT / LOCK)}); "
                             f"site/{args.anchor.stem}/ was built but not published: run this again when it is done")
        recover(ROOT)
        dest = publish_subsite(built, args.anchor.stem)
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"published {dest.relative_to(ROOT)}/ for {args.anchor}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
