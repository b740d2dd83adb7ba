"""Rule serving_cell: one (workload, schedule, rate per GPU) cell of the default sweep (scripts/serving/sweep.py)."""
if "snakemake" in globals():  # run by Snakemake from scripts/: make the repo root importable
    import sys

    sys.path.insert(0, str(__import__("pathlib").Path(snakemake.scriptdir).parent))  # noqa: F821

from pathlib import Path

from scripts.record.atomic import write_json_atomic
from scripts.record.cli import run_cleanly
from scripts.serving.config import sweep_inputs
from scripts.serving.sweep import run_cell

if "snakemake" in globals():
    sm = snakemake  # noqa: F821

    def cell() -> None:
        a, workloads, settings = sweep_inputs(Path(sm.input.anchor), Path(sm.input.workloads))
        w = sm.wildcards
        write_json_atomic(sm.output.json, run_cell(a, workloads, settings, w.workload, w.schedule, float(w.rate)))

    run_cleanly(cell, log=sm.log[0])
