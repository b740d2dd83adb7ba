"""Publish a finished build: build/default/precomputed/ into the committed precomputed/, build/default/site/ in place
of site/, and each other anchor's build/<name>/site/ as site/<name>/ (scripts/record/anchors.py).

  python -m scripts.record.publish          publish (what `make site` runs, under the build lock, once every rule,
                                            render included, succeeded and a dry run found nothing left to do)
  python -m scripts.record.publish --check  rebuild the data from the committed inputs in a scratch directory and exit 1
                                            naming every committed file that differs (what `make check-stale` runs)
  python -m scripts.record.publish --check-built
                                            the same comparison against this checkout's finished build, before it is
                                            published (`make test` runs it as build_lock --fail-if-stale, between
                                            its build and its publish: its build of the checked-out inputs is the
                                            fresh build, so a stale precomputed/ fails the test run instead of being
                                            overwritten by the publish that follows)

The pair (precomputed/, site/) is switched as a whole, by directory renames under one journal:
1. staging, outside both: .publish/precomputed.new (today's precomputed/ with the build's files over it) and
   .publish/site.new (the built default site, or today's when only other anchors were built, with every anchor
   built in this run as site/<name>/ and the other anchors' pages kept), synced to disk;
2. the journal .publish/journal.json, naming the directories to switch, is written atomically: from here on the
   switch is decided;
3. for each directory it names, the live one and the new one swap places in one step (renameat2 RENAME_EXCHANGE,
   scripts/record/atomic.py exchange_paths), so neither precomputed/ nor site/ is ever missing and each is whole,
   old or new; where the file system cannot swap, the live one moves to .publish/<name>.old and the new one into
   its place (then the directory is missing between the two renames);
4. the journal goes, then .publish/ with the old versions.
A stop before 2 leaves the old pair untouched (the next run discards .publish/); a stop after 2 is rolled forward
by `recover`, which every build target runs first (scripts/record/build_lock.py, `make` targets): the journal holds
each staged directory's inode, so a step knows whether its directory is live already and can be repeated after a
stop at any point. A stop between the two swaps leaves the new precomputed/ beside the old site/ (each whole)
until that recovery. Nothing is ever staged inside precomputed/ or site/.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from scripts.record import memo
from scripts.record.anchors import DEFAULT, data_dir, site_dir
from scripts.record.atomic import exchange_paths, write_bytes_atomic

BUILD, COMMITTED = data_dir(DEFAULT), Path("precomputed")
BUILD_SITE, SITE = site_dir(DEFAULT), Path("site")
STAGE = Path(".publish")
JOURNAL = STAGE / "journal.json"
SWITCHED = (COMMITTED, SITE)  # the two directories published together
LEGACY = (Path(".publish-journal.json"), Path("site.new"), Path("site.old"))  # earlier kits' staging


STEPS = ("staging", "staged", "journal-written", "switch-0-swapped", "switch-1-swapped", "journal-removed")
TWO_RENAME_STEPS = ("staging", "staged", "journal-written", "switch-0-moved-old", "switch-0-moved-new",
                    "switch-1-moved-old", "switch-1-moved-new", "journal-removed")  # where directories cannot swap


def _step(name: str) -> None:
    """A named point in publish; C13_PUBLISH_STOP_AT=<name> ends the process there as SIGKILL would (the tests
    stop publish at every step this way; C13_PUBLISH_NO_SWAP=1 takes the two-rename path a file system without
    RENAME_EXCHANGE takes)."""
    if os.environ.get("C13_PUBLISH_STOP_AT") == name:
        os._exit(137)


def differing(build: Path = BUILD, committed: Path = COMMITTED) -> list[tuple[Path, Path]]:
    pairs = []
    for src in sorted(p for p in build.rglob("*") if p.is_file() and not p.name.startswith(".")):
        dst = committed / src.relative_to(build)
        if not dst.exists() or dst.read_bytes() != src.read_bytes():
            pairs.append((src, dst))
    return pairs


def _switch(root: Path) -> None:
    """Carry out the journal: idempotent, so a stop anywhere in it is finished by running it again."""
    journal = json.loads((root / JOURNAL).read_text(encoding="utf-8"))
    named, staged = journal.get("switch", []), journal.get("staged", {})
    for i, rel in enumerate(Path(p) for p in SWITCHED if p.as_posix() in named):
        live, new, old = root / rel, root / STAGE / f"{rel.name}.new", root / STAGE / f"{rel.name}.old"
        if rel.as_posix() in staged:  # live already the staged directory: this one is switched
            if live.exists() and live.stat().st_ino == staged[rel.as_posix()]:
                continue
        elif not new.exists():  # a journal from before the inodes were kept
            continue
        if live.exists() and os.environ.get("C13_PUBLISH_NO_SWAP") != "1" and exchange_paths(new, live):
            _step(f"switch-{i}-swapped")  # the old one is now at .new; it goes with .publish/
            continue
        if live.exists():
            os.rename(live, old)
            _step(f"switch-{i}-moved-old")
        os.rename(new, live)
        _step(f"switch-{i}-moved-new")
    (root / JOURNAL).unlink()
    _step("journal-removed")


def recover(root: Path = Path("."), announce: bool = True) -> None:
    """Finish a publish the journal says was decided, or discard staging that never got a journal."""
    stage = root / STAGE
    if (root / JOURNAL).exists():
        _switch(root)
        if announce:
            print("note: finished a publish that had been interrupted", file=sys.stderr)
    if stage.exists():
        shutil.rmtree(stage)
    for rel in LEGACY:
        legacy = root / rel
        if legacy.is_dir():
            shutil.rmtree(legacy)
        elif legacy.exists():
            legacy.unlink()


def _sync_tree(top: Path) -> None:
    for path in sorted(top.rglob("*")):
        if path.is_file():
            fd = os.open(path, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)


def _subsites(site: Path) -> list[str]:
    """The other anchors' pages in a site/: its sub-directories holding an index.html."""
    return sorted(p.name for p in site.iterdir() if (p / "index.html").is_file()) if site.is_dir() else []


def publish(root: Path = Path("."), with_site: bool = True, default: bool = True,
            anchors: tuple[str, ...] = ()) -> list[Path]:
    """Publish the default anchor's data (and with `with_site` its page) when `default`, and the page of every
    anchor named in `anchors` as site/<name>/."""
    recover(root)
    stage = root / STAGE
    pairs = differing(root / BUILD, root / COMMITTED) if default else []
    site_ready = with_site and default and (root / BUILD_SITE / "index.html").is_file()
    built = [name for name in anchors if (root / site_dir(name) / "index.html").is_file()]
    if missing := sorted(set(anchors) - set(built)):
        raise SystemExit(f"error: build/{missing[0]}/site/index.html is missing: nothing published")
    if not pairs and not site_ready and not built:
        return []
    stage.mkdir()
    _step("staging")
    switch = []
    if pairs:
        new_data = stage / f"{COMMITTED.name}.new"
        shutil.copytree(root / COMMITTED, new_data)
        for src, dst in pairs:
            target = new_data / dst.relative_to(root / COMMITTED)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, target)
            os.chmod(target, 0o644)
        switch.append(COMMITTED)
    if site_ready or built:
        new_site = stage / f"{SITE.name}.new"
        if site_ready:  # the new default page; the other anchors' pages (site/<name>/) stay
            shutil.copytree(root / BUILD_SITE, new_site)
            for name in _subsites(root / SITE):
                shutil.copytree(root / SITE / name, new_site / name)
        else:  # only other anchors were built: today's site/ with their pages replaced
            shutil.copytree(root / SITE, new_site) if (root / SITE).is_dir() else new_site.mkdir()
        for name in built:
            if (new_site / name).exists():
                shutil.rmtree(new_site / name)
            shutil.copytree(root / site_dir(name), new_site / name,
                            ignore=shutil.ignore_patterns("report.html"))
        switch.append(SITE)
    _sync_tree(stage)
    _step("staged")
    staged = {p.as_posix(): (stage / f"{p.name}.new").stat().st_ino for p in switch}
    write_bytes_atomic(root / JOURNAL, json.dumps({"switch": [p.as_posix() for p in switch],
                                                   "staged": staged}).encode("utf-8"))
    _step("journal-written")
    _switch(root)
    shutil.rmtree(stage)
    for _, dst in pairs:
        print(f"published {dst.relative_to(root)}", file=sys.stderr)
    if site_ready:
        print(f"published {SITE}/ ({sum(1 for p in (root / SITE).rglob('*') if p.is_file())} files)", file=sys.stderr)
    for name in built:
        print(f"published {SITE}/{name}/", file=sys.stderr)
    return [dst for _, dst in pairs]


def scratch_checkout(root: Path, work: Path) -> Path:
    """The files a fresh clone would have (tracked and not ignored), plus the verified tokenizer cache and the
    content-keyed memos (scripts/record/memo.py: they change no output, only the time), in `work`."""
    out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=root,
                         capture_output=True, text=True, check=True).stdout
    for name in out.splitlines():
        if name and (root / name).is_file():
            (work / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(root / name, work / name)
    if (root / ".cache").is_dir():  # verified downloads; the build re-checks their hashes
        shutil.copytree(root / ".cache", work / ".cache", dirs_exist_ok=True)
    memos = root / memo.MEMO.relative_to(memo.ROOT)
    if memos.is_dir():
        shutil.copytree(memos, work / memos.relative_to(root), dirs_exist_ok=True)
    return work


def fresh_build(root: Path, work: Path) -> Path:
    """The data rebuilt from the committed inputs alone (plus the verified tokenizer cache) in `work`."""
    scratch_checkout(root, work)
    run = subprocess.run([sys.executable, "-m", "snakemake", "--cores", str(os.cpu_count() or 1), "--quiet", "all",
                          "--", "data"], cwd=work, capture_output=True, text=True)
    if run.returncode != 0:
        raise SystemExit(f"error: the scratch rebuild failed: {first_error(run.stderr + run.stdout)}")
    return work / BUILD


def first_error(output: str) -> str:
    """The line of a failed run that says why: the kit's own `error:` line, else Snakemake's exception and the
    line after it, else the last line."""
    lines = [ln.strip() for ln in output.splitlines() if ln.strip()]
    for ln in lines:
        if ln.startswith("error:"):
            return ln[len("error:"):].strip()
    for i, ln in enumerate(lines):
        if "Exception" in ln or ln.startswith("Error"):
            return " ".join(lines[i:i + 2])[:300]
    return lines[-1][:300] if lines else "(no output)"


def check_built() -> int:
    """1 naming every committed file that differs from this checkout's finished build, else 0 (a stale precomputed/
    must fail before a publish would overwrite it)."""
    stale = differing(BUILD, COMMITTED)
    for _, dst in stale:
        print(f"stale: {dst} differs from the build of the checked-out inputs ({BUILD}); run `make site` and "
              "commit it", file=sys.stderr)
    print(f"{len(stale)} stale file(s)" if stale else f"precomputed/ is current (equals {BUILD})", file=sys.stderr)
    return 1 if stale else 0


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if "--check" in args:
        with tempfile.TemporaryDirectory(prefix="c13-check-stale-") as tmp:
            stale = differing(fresh_build(Path("."), Path(tmp)), COMMITTED)
            for _, dst in stale:
                print(f"stale: {dst} differs from a fresh build of the committed inputs (run `make site` and commit "
                      "it)", file=sys.stderr)
        print(f"{len(stale)} stale file(s)" if stale else "precomputed/ is current (rebuilt from scratch)",
              file=sys.stderr)
        return 1 if stale else 0
    if not BUILD.is_dir():
        print(f"error: {BUILD} is missing: run snakemake first", file=sys.stderr)
        return 2
    if "--check-built" in args:
        return check_built()
    from scripts.record.lock import acquire, holder

    lock = acquire()
    if lock is None:
        print(f"error: a build is running in this directory (PID {holder()}): publish after it", file=sys.stderr)
        return 75
    publish(with_site="--data-only" not in args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
