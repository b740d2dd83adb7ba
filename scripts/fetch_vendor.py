"""Rule fetch_vendor: the pinned Vega runtime -> .cache/vendor/vega.min.js (scripts/record/vendor.py)."""
if "snakemake" in globals():  # run by Snakemake from scripts/: make the repo root importable
    import sys

    sys.path.insert(0, str(__import__("pathlib").Path(snakemake.scriptdir).parent))  # noqa: F821

from pathlib import Path

from scripts.record.cli import run_cleanly
from scripts.record.vendor import fetch_vendor

if "snakemake" in globals():
    sm = snakemake  # noqa: F821
    run_cleanly(lambda: fetch_vendor("vega", Path(sm.input.config), Path(sm.output.js)), log=sm.log[0])
