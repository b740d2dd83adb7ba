"""A reproducible archive of the deployable site, and a SHA256SUMS beside it.

  python -m scripts.record.dist --check-clean                        (make dist, first: a clean working tree)
  python -m scripts.record.dist [--site site] [--out dist]          (make dist, after rendering the pages at HEAD)

An archive is named for a commit, so it holds only what that commit builds: make dist refuses a working tree with
uncommitted changes, renders the pages again at HEAD (the commit is not a rule input: a page built before the last
commit names the commit before it), and refuses a page whose stamp (data-meta="commit") is not HEAD, naming it (an
anchor's pages from an earlier `make site ANCHOR=...`, say).

dist/c13-l5-site-<short commit>.tar.gz holds every file of site/ but hidden ones and report.html (Snakemake's
report records when each job ran, so no two builds agree on it), under c13-l5-site/, in sorted order, with mtime
SOURCE_DATE_EPOCH (default: the commit's time), owner and group 0 with empty names, modes 0644/0755, and a gzip
header with no name and mtime 0: the same commit gives the same bytes. SHA256SUMS lists every file inside
and then the archive itself, as `sha256sum -c SHA256SUMS` checks them in dist/ once the archive is unpacked there.
"""
from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import os
import re
import subprocess
import sys
import tarfile
from pathlib import Path

from scripts.record.atomic import write_bytes_atomic

EXCLUDE = {"report.html"}
PREFIX = "c13-l5-site"


def git(*args: str) -> str:
    return subprocess.run(["git", *args], capture_output=True, text=True, check=True).stdout.strip()


def site_files(site: Path) -> list[Path]:
    return sorted((p for p in site.rglob("*") if p.is_file() and p.relative_to(site).as_posix() not in EXCLUDE
                   and not p.name.startswith(".")),  # e.g. Snakemake's .snakemake_timestamp markers
                  key=lambda p: p.relative_to(site).as_posix())


def archive_bytes(site: Path, epoch: int) -> bytes:
    raw = io.BytesIO()
    files = {p.relative_to(site).as_posix(): p for p in site_files(site)}
    dirs = {parent.as_posix() for name in files for parent in Path(name).parents if parent.parts}
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name in sorted(files.keys() | dirs):
            info = tarfile.TarInfo(f"{PREFIX}/{name}")
            info.mtime, info.uid, info.gid, info.uname, info.gname = epoch, 0, 0, "", ""
            if name in dirs:
                info.type, info.mode = tarfile.DIRTYPE, 0o755
                tar.addfile(info)
            else:
                data = files[name].read_bytes()
                info.size, info.mode = len(data), 0o644
                tar.addfile(info, io.BytesIO(data))
    out = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=out, mtime=0, compresslevel=9) as gz:
        gz.write(raw.getvalue())
    return out.getvalue()


def sha256sums(site: Path, archive_name: str, archive: bytes) -> str:
    lines = [f"{hashlib.sha256(p.read_bytes()).hexdigest()}  {PREFIX}/{p.relative_to(site).as_posix()}"
             for p in site_files(site)]
    lines.append(f"{hashlib.sha256(archive).hexdigest()}  {archive_name}")
    return "\n".join(lines) + "\n"


STAMP = re.compile(r'data-meta="commit">([^<]*)<')


def dirty_files() -> list[str]:
    """Tracked files with changes and untracked files git does not ignore."""
    return [line[3:] for line in git("status", "--porcelain", "--untracked-files=normal").splitlines() if line]


def stale_pages(site: Path, head: str) -> list[str]:
    """The pages whose commit stamp is not `head` (or that carry none where the others do)."""
    out = []
    for page in sorted(site.rglob("*.html")):
        stamps = STAMP.findall(page.read_text(encoding="utf-8", errors="replace"))
        if stamps and set(stamps) != {head}:
            out.append(f"{page.as_posix()} (built at {', '.join(sorted(set(stamps)))})")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--site", type=Path, default=Path("site"))
    ap.add_argument("--out", type=Path, default=Path("dist"))
    ap.add_argument("--check-clean", action="store_true", help="only check that the working tree is committed")
    args = ap.parse_args(argv)
    if dirty := dirty_files():
        print(f"error: make dist packs a commit, and the working tree has {len(dirty)} uncommitted change(s) "
              f"(first: {dirty[0]}): commit or stash them", file=sys.stderr)
        return 2
    if args.check_clean:
        return 0
    if not (args.site / "index.html").is_file():
        print(f"error: {args.site}/index.html is missing: run `make site` first", file=sys.stderr)
        return 2
    head = git("rev-parse", "--short=12", "HEAD")
    if stale := stale_pages(args.site, head):
        print(f"error: {stale[0]} is not from HEAD ({head}){f' (and {len(stale) - 1} more)' if len(stale) > 1 else ''}"
              ": rebuild it (make site, or make site ANCHOR=<its anchor>) or remove it", file=sys.stderr)
        return 2
    epoch = int(os.environ.get("SOURCE_DATE_EPOCH") or git("log", "-1", "--format=%ct"))
    name = f"{PREFIX}-{head}.tar.gz"
    data = archive_bytes(args.site, epoch)
    write_bytes_atomic(args.out / name, data)
    write_bytes_atomic(args.out / "SHA256SUMS", sha256sums(args.site, name, data).encode())
    print(f"wrote {args.out / name} ({len(data):,} bytes, {len(site_files(args.site))} files) and "
          f"{args.out / 'SHA256SUMS'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
