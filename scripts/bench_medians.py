"""Rule bench_medians: committed precomputed/bench/*.json (the KV-cache benchmark) -> bench_medians.json
(scripts/bench/records.py)."""
if "snakemake" in globals():  # run by Snakemake from scripts/: make the repo root importable
    import sys

    sys.path.insert(0, str(__import__("pathlib").Path(snakemake.scriptdir).parent))  # noqa: F821

from pathlib import Path

from scripts.bench.records import merge
from scripts.record.atomic import write_json_atomic
from scripts.record.cli import run_cleanly

if "snakemake" in globals():
    sm = snakemake  # noqa: F821
    run_cleanly(lambda: write_json_atomic(sm.output.json, merge([Path(p) for p in sm.input.records])),
                log=sm.log[0])
