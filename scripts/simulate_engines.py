"""Rule simulate_engines: one (workload, step times) -> DistServe goodput of every engine preset, and of every P/D
split for the page's workload (scripts/serving/sweep.py engines_goodput)."""
if "snakemake" in globals():  # run by Snakemake from scripts/: make the repo root importable
    import sys

    sys.path.insert(0, str(__import__("pathlib").Path(snakemake.scriptdir).parent))  # noqa: F821

from pathlib import Path

from scripts.record.atomic import write_json_atomic
from scripts.record.cli import run_cleanly
from scripts.record.inputs import read_json
from scripts.serving.sweep import engines_goodput
from scripts.serving.workloads.config import sweep_inputs

if "snakemake" in globals():
    sm = snakemake  # noqa: F821

    def engines() -> None:
        a, workloads, settings = sweep_inputs(Path(sm.input.anchor), Path(sm.input.workloads))
        lesson = {g["schedule"]: g["rate_per_gpu"] for g in map(read_json, map(Path, sm.input.goodput))} or None
        w = sm.wildcards
        write_json_atomic(sm.output.json, engines_goodput(a, workloads, settings, w.workload, w.step_time, lesson))

    run_cleanly(engines, log=sm.log[0])
