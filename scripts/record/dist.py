"""A reproducible archive of the deployable site, and a SHA256SUMS beside it.

  python -m scripts.record.dist [--site site] [--out dist]          (what `make dist` runs)

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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--site", type=Path, default=Path("site"))
    ap.add_argument("--out", type=Path, default=Path("dist"))
    args = ap.parse_args(argv)
    if not (args.site / "index.html").is_file():
        print(f"error: {args.site}/index.html is missing: run `make site` first", file=sys.stderr)
        return 2
    epoch = int(os.environ.get("SOURCE_DATE_EPOCH") or git("log", "-1", "--format=%ct"))
    name = f"{PREFIX}-{git('rev-parse', '--short=12', 'HEAD')}.tar.gz"
    data = archive_bytes(args.site, epoch)
    write_bytes_atomic(args.out / name, data)
    write_bytes_atomic(args.out / "SHA256SUMS", sha256sums(args.site, name, data).encode())
    print(f"wrote {args.out / name} ({len(data):,} bytes, {len(site_files(args.site))} files) and "
          f"{args.out / 'SHA256SUMS'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
