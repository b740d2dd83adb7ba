"""Rule simulate_prefix: config/prefix.json's workloads served with the prefix cache off and on, and its burst of
long prompts with one shared token budget and with admission by request class
(scripts/serving/experiments/prefix_runs.py build) -> precomputed/prefix.json (the runs, their records and claims)."""
if "snakemake" in globals():  # run by Snakemake from scripts/: make the repo root importable
    import sys

    sys.path.insert(0, str(__import__("pathlib").Path(snakemake.scriptdir).parent))  # noqa: F821

from scripts.record.atomic import write_json_atomic
from scripts.record.cli import run_cleanly
from scripts.serving.experiments.prefix_runs import build

if "snakemake" in globals():
    sm = snakemake  # noqa: F821
    run_cleanly(lambda: write_json_atomic(sm.output.json, build(sm.input.anchor, sm.input.workloads, sm.input.config)),
                log=sm.log[0])
