"""Rule simulate_sweep: every cell, goodput and engine comparison -> precomputed/serving.json (scripts/serving/)."""
if "snakemake" in globals():  # run by Snakemake from scripts/: make the repo root importable
    import sys

    sys.path.insert(0, str(__import__("pathlib").Path(snakemake.scriptdir).parent))  # noqa: F821

import json
from pathlib import Path

from scripts.record.anchor_file import load
from scripts.record.atomic import write_bytes_atomic
from scripts.record.cli import run_cleanly
from scripts.record.inputs import read_json
from scripts.serving.aggregate import aggregate
from scripts.serving.workloads.config import sweep_settings, workloads_for

if "snakemake" in globals():
    sm = snakemake  # noqa: F821

    def sweep() -> None:
        anchor, anchor_doc = load(Path(sm.input.anchor))
        doc = workloads_for(Path(sm.input.workloads), anchor)
        cells, goodputs, engines = ([read_json(Path(p)) for p in paths] for paths in
                                    (sm.input.cells, sm.input.goodput, sm.input.engines))
        out = aggregate(anchor_doc, doc, sweep_settings(doc), cells, goodputs, Path(sm.input.anchor).as_posix(),
                        engines)
        text = json.dumps(out, ensure_ascii=False, separators=(",", ":"), allow_nan=False)  # compact: 192k numbers
        write_bytes_atomic(sm.output.json, (text + "\n").encode("utf-8"))

    run_cleanly(sweep, log=sm.log[0])
