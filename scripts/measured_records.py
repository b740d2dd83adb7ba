"""Rule measured_records: the real engine's three comparisons -> measured_records.json, the pages' records of them
(scripts/realengine/records/)."""
if "snakemake" in globals():  # run by Snakemake from scripts/: make the repo root importable
    import sys

    sys.path.insert(0, str(__import__("pathlib").Path(snakemake.scriptdir).parent))  # noqa: F821

from pathlib import Path

from scripts.realengine.records import real_engine
from scripts.record.atomic import write_json_atomic
from scripts.record.cli import run_cleanly

if "snakemake" in globals():
    sm = snakemake  # noqa: F821
    run_cleanly(lambda: write_json_atomic(sm.output.json, real_engine(Path(sm.input.load), Path(sm.input.prefix),
                                                                      Path(sm.input.heldout))), log=sm.log[0])
