"""Rule measured_results: precomputed/serve/*.json (vllm bench serve results) -> their metrics (scripts/serving/)."""
if "snakemake" in globals():  # run by Snakemake from scripts/: make the repo root importable
    import sys

    sys.path.insert(0, str(__import__("pathlib").Path(snakemake.scriptdir).parent))  # noqa: F821

from pathlib import Path

from scripts.record.atomic import write_json_atomic
from scripts.record.cli import run_cleanly
from scripts.serving.measures.results import summarize

if "snakemake" in globals():
    sm = snakemake  # noqa: F821
    run_cleanly(lambda: write_json_atomic(sm.output.json, summarize([Path(p) for p in sm.input.results])),
                log=sm.log[0])
