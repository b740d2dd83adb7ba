"""Rule serving_cell: one (workload, policy, rate per GPU) cell of the default sweep (scripts/serving/sweep.py)."""
if "snakemake" in globals():  # run by Snakemake from scripts/: make the repo root importable
    import sys

    sys.path.insert(0, str(__import__("pathlib").Path(snakemake.scriptdir).parent))  # noqa: F821

from pathlib import Path

from scripts.record.anchor_file import load
from scripts.record.atomic import write_json_atomic
from scripts.serving.config import load_workloads, sweep_settings
from scripts.serving.sweep import run_cell

if "snakemake" in globals():
    sm = snakemake  # noqa: F821
    a, _ = load(Path(sm.input.anchor))
    doc = load_workloads(Path(sm.input.workloads))
    w = sm.wildcards
    cell = run_cell(a, doc["workloads"], sweep_settings(doc), w.workload, w.policy, float(w.rate))
    write_json_atomic(sm.output.json, cell)
