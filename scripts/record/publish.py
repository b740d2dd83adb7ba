"""Publish a finished build: build/precomputed/ into the committed precomputed/, build/site/ in place of site/.

  python -m scripts.record.publish          publish (what `make site` runs once every rule, render included, succeeded)
  python -m scripts.record.publish --check  rebuild the data from the committed inputs in a scratch directory and exit 1
                                            naming every committed file that differs (what `make check-stale` runs)

Nothing published is ever half old, half new, whatever interrupts it: every new file is first written beside its
target, then a journal naming the pending renames is written (atomically), then the renames run and the site
directory is swapped (site/ -> site.old/, site.new/ -> site/). A run that finds a journal finishes it first;
staged files without a journal (a stop while staging) are discarded, leaving the previous version in place.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from scripts.record.atomic import write_bytes_atomic

BUILD, COMMITTED = Path("build/precomputed"), Path("precomputed")
BUILD_SITE, SITE = Path("build/site"), Path("site")
JOURNAL = Path(".publish-journal.json")
STAGED = ".publishing"  # suffix of staged files


def _fsync_write(path: Path, data: bytes) -> None:
    with open(path, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    os.chmod(path, 0o644)


def differing(build: Path = BUILD, committed: Path = COMMITTED) -> list[tuple[Path, Path]]:
    pairs = []
    for src in sorted(p for p in build.rglob("*") if p.is_file() and not p.name.startswith(".")):
        dst = committed / src.relative_to(build)
        if not dst.exists() or dst.read_bytes() != src.read_bytes():
            pairs.append((src, dst))
    return pairs


def recover(root: Path = Path("."), announce: bool = True) -> None:
    """Finish a publish the journal says was under way, or discard staging that never got a journal."""
    journal = root / JOURNAL
    site, new, old = root / SITE, root / f"{SITE}.new", root / f"{SITE}.old"
    if journal.exists():
        plan = json.loads(journal.read_text(encoding="utf-8"))
        for staged, dst in plan["renames"]:
            if (root / staged).exists():
                os.replace(root / staged, root / dst)
        if plan["site"] and new.exists():
            if site.exists() and not old.exists():
                os.rename(site, old)
            if site.exists():
                shutil.rmtree(site)
            os.rename(new, site)
        journal.unlink()
        if announce:
            print("note: finished a publish that had been interrupted", file=sys.stderr)
    else:
        for staged in root.glob(f"{COMMITTED}/**/*{STAGED}"):
            staged.unlink()
        if new.exists():
            shutil.rmtree(new)
    if old.exists():
        shutil.rmtree(old)


def publish(root: Path = Path("."), with_site: bool = True) -> list[Path]:
    recover(root)
    pairs = differing(root / BUILD, root / COMMITTED)
    renames = []
    for src, dst in pairs:
        dst.parent.mkdir(parents=True, exist_ok=True)
        staged = dst.with_name(dst.name + STAGED)
        _fsync_write(staged, src.read_bytes())
        renames.append((staged.relative_to(root).as_posix(), dst.relative_to(root).as_posix()))
    site_ready = with_site and (root / BUILD_SITE / "index.html").is_file()
    if site_ready:
        shutil.copytree(root / BUILD_SITE, root / f"{SITE}.new")
        for sub in sorted((root / "anchors").glob("*.json")):  # other anchors' pages (site/<name>/) stay
            if (root / SITE / sub.stem / "index.html").is_file():
                shutil.copytree(root / SITE / sub.stem, root / f"{SITE}.new" / sub.stem)
    write_bytes_atomic(root / JOURNAL, json.dumps({"renames": renames, "site": site_ready}).encode("utf-8"))
    recover(root, announce=False)  # the journal is complete: carry it out as the next run would
    for _, dst in pairs:
        print(f"published {dst.relative_to(root)}", file=sys.stderr)
    if site_ready:
        print(f"published {SITE}/ ({sum(1 for p in (root / SITE).rglob('*') if p.is_file())} files)", file=sys.stderr)
    return [dst for _, dst in pairs]


def scratch_checkout(root: Path, work: Path) -> Path:
    """The files a fresh clone would have (tracked and not ignored), plus the verified tokenizer cache, in `work`."""
    out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=root,
                         capture_output=True, text=True, check=True).stdout
    for name in out.splitlines():
        if name and (root / name).is_file():
            (work / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(root / name, work / name)
    if (root / ".cache").is_dir():  # verified downloads; the build re-checks their hashes
        shutil.copytree(root / ".cache", work / ".cache", dirs_exist_ok=True)
    return work


def fresh_build(root: Path, work: Path) -> Path:
    """The data rebuilt from the committed inputs alone (plus the verified tokenizer cache) in `work`."""
    scratch_checkout(root, work)
    run = subprocess.run([sys.executable, "-m", "snakemake", "--cores", str(os.cpu_count() or 1), "--quiet", "all",
                          "--", "data"], cwd=work, capture_output=True, text=True)
    if run.returncode != 0:
        tail = (run.stderr or run.stdout).strip().splitlines()[-1:] or ["(no output)"]
        raise SystemExit(f"error: the scratch rebuild failed: {tail[0]}")
    return work / BUILD


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
    publish(with_site="--data-only" not in args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
