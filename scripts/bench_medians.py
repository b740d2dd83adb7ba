"""Rule bench_medians: committed precomputed/bench/*.json and the real engine's comparison -> bench_medians.json
(scripts/bench/records.py)."""
if "snakemake" in globals():  # run by Snakemake from scripts/: make the repo root importable
    import sys

    sys.path.insert(0, str(__import__("pathlib").Path(snakemake.scriptdir).parent))  # noqa: F821

from pathlib import Path

from scripts.realengine.records import measured
from scripts.record.atomic import write_json_atomic
from scripts.record.cli import run_cleanly

if "snakemake" in globals():
    sm = snakemake  # noqa: F821
    run_cleanly(lambda: write_json_atomic(sm.output.json, measured([Path(p) for p in sm.input.records],
                                                                   Path(sm.input.serve_comparison),
                                                                   Path(sm.input.serve_prefix_comparison),
                                                                   Path(sm.input.serve_heldout_comparison))),
                log=sm.log[0])
