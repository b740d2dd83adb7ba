"""The real-engine comparison as page records (merged into bench_medians.json by `measured`, beside the KV-cache
benchmark): measured numbers (the runs, with their run-to-run spread), the simulator's predictions of them
(`calibrated`: the serving model on step times fitted to a calibration run), the errors, the goals and the
settings the measurement ran with (`assumed`). One module per family: load.py (the load runs), prefix.py (prefix
reuse), heldout.py and repeat.py (the held-out cells and their later sessions); words.py holds what they share and
labels.json every word they say."""
from __future__ import annotations

from pathlib import Path

from scripts.realengine.records.heldout import heldout_page_block
from scripts.realengine.records.load import page_block
from scripts.realengine.records.prefix import prefix_page_block
from scripts.realengine.records.words import HELD_SHOWN, SHOWN

__all__ = ["HELD_SHOWN", "SHOWN", "heldout_page_block", "measured", "page_block", "prefix_page_block"]


def measured(records: list[Path], serve_comparison: Path, serve_prefix_comparison: Path | None = None,
             serve_heldout_comparison: Path | None = None) -> dict:
    """bench_medians.json: the KV-cache records' medians and ratios (scripts/bench/records.py), the real engine's
    runs beside the simulator's predictions (`serve_real`), its prefix-reuse runs (`serve_real_prefix`) and its
    held-out cells (`serve_real_heldout`): every measured number the page shows, in one file."""
    from scripts.bench.records import merge
    from scripts.record.inputs import read_json

    out = merge(records)
    real = page_block(read_json(serve_comparison))
    out["serve_real"] = real["engines"]
    out["provenance"].update(real["provenance"])
    if serve_prefix_comparison is not None:
        pfx = prefix_page_block(read_json(serve_prefix_comparison))
        out["serve_real_prefix"] = pfx["engines"]
        out["provenance"].update(pfx["provenance"])
    if serve_heldout_comparison is not None:
        held = heldout_page_block(read_json(serve_heldout_comparison))
        out["serve_real_heldout"] = held["engines"]
        out["provenance"].update(held["provenance"])
    return out
