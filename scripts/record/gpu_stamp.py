"""Each anchor's GPU entry of config/gpus.json as a file of its own, build/<anchor>/gpu-entry.json, rewritten only
when its bytes change (issue 80): the rules that use no GPU but the anchor's (the serving sweep, the real-engine
comparisons) take it as their input instead of config/gpus.json, so adding a GPU, or editing one the anchor does not
run on, reruns only the rules that read every GPU (the lesson's data, the records, the pages), not the simulations.

Snakemake reruns a rule whose input is newer than its output (mtime), so the stamp must keep its mtime while its
content holds: it is compared before it is written. The rules' scripts still read the GPU from config/gpus.json
(their provenance names that file); the stamp only says when that entry changed. Written by rules/common.smk
after the input check, before any rule is scheduled; a cluster job that parses the workflow again finds it equal
and leaves it."""
from __future__ import annotations

from pathlib import Path

from scripts.record.anchor_file import gpus_file_of, load_gpus
from scripts.record.anchors import data_dir
from scripts.record.atomic import dumps_json, write_bytes_atomic
from scripts.record.inputs import read_json

STAMP = "gpu-entry.json"


def stamp_path(name: str) -> Path:
    """build/<anchor>/gpu-entry.json: beside the anchor's precomputed/ (data_dir's parent)."""
    return data_dir(name).parent / STAMP


def entry_of(anchor_path: Path) -> dict:
    """The anchor's GPU id and its entry, as config/gpus.json holds it (both files already checked)."""
    gid = read_json(anchor_path)["hardware"]["gpu"]["value"]
    gpus_path = gpus_file_of(Path(anchor_path))
    return {"gpu": gid, "source": f"config/{gpus_path.name} gpus.{gid}", "entry": load_gpus(gpus_path)["gpus"][gid]}


def write_stamp(name: str, anchor_path: Path, root: Path = Path(".")) -> Path:
    """build/<name>/gpu-entry.json for the anchor at `anchor_path`, written only when its bytes differ from the
    file's (so its mtime moves only when the anchor's GPU entry does). Returns its path (relative to `root`)."""
    path = stamp_path(name)
    data = dumps_json(entry_of(root / anchor_path)).encode("utf-8")
    target = root / path
    try:
        if target.read_bytes() == data:
            return path
    except OSError:
        pass
    write_bytes_atomic(target, data)
    return path
