"""Rule measured_vs_simulated_heldout: the held-out cells and their session's calibration (precomputed/serve-heldout/),
and the other committed calibrations (precomputed/serve/calibration/, precomputed/serve-archive/*/calibration/)
-> the simulator's prediction of each cell and the errors reported apart
(scripts/realengine/analyses/heldout_comparison.py), through measured_vs_simulated_load's main."""
if "snakemake" in globals():  # run by Snakemake from scripts/: make the repo root importable
    import sys

    sys.path.insert(0, str(__import__("pathlib").Path(snakemake.scriptdir).parent))  # noqa: F821

from functools import partial
from pathlib import Path

from scripts.measured_vs_simulated_load import main
from scripts.realengine.analyses.heldout_comparison import compare
from scripts.record.cli import run_cleanly

if "snakemake" in globals():
    sm = snakemake  # noqa: F821
    run_cleanly(lambda: main(sm.input.calibrations, sm.input.results, sm.input.anchor, sm.input.config,
                             sm.output.json, partial(compare, other_calibrations=[Path(p) for p in sm.input.other])),
                log=sm.log[0])
