"""Rule measured_vs_simulated_prefix: the real engine's prefix-reuse runs and their session's calibration
(precomputed/serve-prefix/) -> the simulator's prediction of each run, reuse per request and error
(scripts/realengine/analyses/prefix_comparison.py), through measured_vs_simulated_load's main."""
if "snakemake" in globals():  # run by Snakemake from scripts/: make the repo root importable
    import sys

    sys.path.insert(0, str(__import__("pathlib").Path(snakemake.scriptdir).parent))  # noqa: F821

from scripts.measured_vs_simulated_load import main
from scripts.realengine.analyses.prefix_comparison import compare
from scripts.record.cli import run_cleanly

if "snakemake" in globals():
    sm = snakemake  # noqa: F821
    run_cleanly(lambda: main(sm.input.calibrations, sm.input.results, sm.input.anchor, sm.input.config,
                             sm.output.json, compare),
                log=sm.log[0])
