"""Rule measured_vs_simulated_load: the real engine's calibration and load runs (precomputed/serve/) -> the simulator's
prediction of each run and its error (scripts/realengine/analyses/comparison.py)."""
if "snakemake" in globals():  # run by Snakemake from scripts/: make the repo root importable
    import sys

    sys.path.insert(0, str(__import__("pathlib").Path(snakemake.scriptdir).parent))  # noqa: F821

from pathlib import Path

from scripts.realengine.analyses.comparison import compare
from scripts.realengine.analyses.settings import comparison_settings
from scripts.record.anchor_file import load
from scripts.record.atomic import write_json_atomic
from scripts.record.cli import run_cleanly
from scripts.record.inputs import read_json


def main(calibrations, results, anchor_path, config_path, out, comparing=compare):
    """`comparing`: comparison.compare (load runs) or prefix_comparison.compare (measured_vs_simulated_prefix)."""
    # The simulated engine's memory is unbounded (predict.py): the anchor only fills the simulator's bookkeeping.
    anchor = load(Path(anchor_path))[0]
    settings = comparison_settings(read_json(Path(config_path)), Path(config_path).as_posix())
    write_json_atomic(out, comparing([Path(p) for p in calibrations], [Path(p) for p in results], anchor, settings))


if "snakemake" in globals():
    sm = snakemake  # noqa: F821
    run_cleanly(lambda: main(sm.input.calibrations, sm.input.results, sm.input.anchor, sm.input.config,
                             sm.output.json),
                log=sm.log[0])
