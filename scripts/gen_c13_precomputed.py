"""Rule precomputed: anchor + cited.json + config/gpus.json + config/techniques.json (+ config/workloads.json, the
reserving workload's lengths) -> precomputed.json (scripts/lesson/precomputed.py)."""
if "snakemake" in globals():  # run by Snakemake from scripts/: make the repo root importable
    import sys

    sys.path.insert(0, str(__import__("pathlib").Path(snakemake.scriptdir).parent))  # noqa: F821

from pathlib import Path

from scripts.lesson.precomputed import build
from scripts.record.anchor_file import load, load_gpus, load_techniques
from scripts.record.atomic import write_json_atomic
from scripts.record.cli import run_cleanly
from scripts.record.inputs import read_json


def main(inputs, output) -> None:
    a, doc = load(Path(inputs.anchor))
    write_json_atomic(output.json, build(a, doc, read_json(Path(inputs.cited)), load_gpus(Path(inputs.gpus)),
                                         Path(inputs.anchor).as_posix(),
                                         load_techniques(Path(inputs.techniques), Path(inputs.workloads)),
                                         read_json(Path(inputs.workloads))))


if "snakemake" in globals():
    run_cleanly(lambda: main(snakemake.input, snakemake.output), log=snakemake.log[0])  # noqa: F821
