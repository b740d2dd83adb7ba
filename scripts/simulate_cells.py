"""Rule simulate_cells: every swept rate of one (workload, schedule) of the default sweep, one file per cell
(scripts/serving/sweep.py run_cell). One job per curve rather than per cell: a cell simulates in about 0.7 s, about
what starting a Snakemake script job costs, so 96 one-cell jobs spent half the sweep's time starting."""
if "snakemake" in globals():  # run by Snakemake from scripts/: make the repo root importable
    import sys

    sys.path.insert(0, str(__import__("pathlib").Path(snakemake.scriptdir).parent))  # noqa: F821

from pathlib import Path

from scripts.record.atomic import write_json_atomic
from scripts.record.cli import run_cleanly
from scripts.serving.sweep import run_cell
from scripts.serving.workloads.config import rate_name, sweep_inputs

if "snakemake" in globals():
    sm = snakemake  # noqa: F821

    def cells() -> None:
        a, workloads, settings = sweep_inputs(Path(sm.input.anchor), Path(sm.input.workloads))
        w = sm.wildcards
        by_name = {Path(p).stem: p for p in sm.output.cells}  # r<rate>.json, as rules/simulated.smk names them
        for rate in settings["rates_per_gpu"]:
            write_json_atomic(by_name[f"r{rate_name(rate)}"], run_cell(a, workloads, settings, w.workload,
                                                                       w.schedule, float(rate)))

    run_cleanly(cells, log=sm.log[0])
