"""Rule serving_goodput: one (workload, policy)'s sweep cells -> DistServe goodput, refined by bisection."""
if "snakemake" in globals():  # run by Snakemake from scripts/: make the repo root importable
    import sys

    sys.path.insert(0, str(__import__("pathlib").Path(snakemake.scriptdir).parent))  # noqa: F821

import json
from pathlib import Path

from scripts.record.anchor_file import load
from scripts.record.atomic import write_json_atomic
from scripts.serving.config import load_workloads, sweep_settings
from scripts.serving.sweep import goodput_of

if "snakemake" in globals():
    sm = snakemake  # noqa: F821
    a, _ = load(Path(sm.input.anchor))
    doc = load_workloads(Path(sm.input.workloads))
    cells = [json.loads(Path(p).read_text(encoding="utf-8")) for p in sm.input.cells]
    w = sm.wildcards
    write_json_atomic(sm.output.json, goodput_of(a, doc["workloads"], sweep_settings(doc), w.workload, w.policy, cells))
