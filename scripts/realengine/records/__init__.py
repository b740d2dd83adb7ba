"""The real-engine comparison as page records (measured_records.json, rule measured_records; the pages read it beside
the KV-cache benchmark's bench_medians.json): measured numbers (the runs, with their run-to-run spread), the
simulator's predictions of them (`calibrated`: the serving model on step times fitted to a calibration run), the
errors, the goals and the settings the measurement ran with (`assumed`). One module per family: load.py (the load
runs), prefix.py (prefix reuse), heldout.py and repeat.py (the held-out cells and their later sessions); words.py
holds what they share, verdicts.py the claims their sentences turn on, and labels.json every word they say."""
from __future__ import annotations

from pathlib import Path

from scripts.realengine.records.heldout import heldout_page_block
from scripts.realengine.records.load import page_block
from scripts.realengine.records.prefix import prefix_page_block
from scripts.realengine.records.words import HELD_SHOWN, SHOWN

__all__ = ["HELD_SHOWN", "SHOWN", "heldout_page_block", "page_block", "prefix_page_block", "real_engine"]


def real_engine(load: Path, prefix: Path, heldout: Path) -> dict:
    """measured_records.json (rule measured_records) from the three comparisons' files (measured_vs_simulated_*.json):
    the real engine's runs beside the simulator's predictions (`load`), its prefix-reuse runs (`prefix`) and its
    held-out cells (`heldout`), each a list of engine + machine views, with every record the pages show of them
    and the claims their sentences turn on (`claims`, settled). The pages' templates read it as `realengine`."""
    from scripts.record.claims import settle
    from scripts.record.inputs import read_json

    out: dict = {"schema_version": 1, "provenance": {}}
    claims: list[dict] = []
    for key, block, path in (("load", page_block, load), ("prefix", prefix_page_block, prefix),
                             ("heldout", heldout_page_block, heldout)):
        made = block(read_json(path))
        out[key] = made["engines"]
        out["provenance"].update(made["provenance"])
        claims += made["claims"]
    out["claims"] = settle(claims, out["provenance"])  # the pages word each sentence by its outcome (audit: claims)
    return out
