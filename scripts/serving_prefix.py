"""Rule serving_prefix: config/prefix.json's workloads served with the prefix cache off and on
(scripts/serving/prefix_runs.py) -> precomputed/prefix.json (the runs and their records)."""
if "snakemake" in globals():  # run by Snakemake from scripts/: make the repo root importable
    import sys

    sys.path.insert(0, str(__import__("pathlib").Path(snakemake.scriptdir).parent))  # noqa: F821

from pathlib import Path

from scripts.record.atomic import write_json_atomic
from scripts.record.cli import run_cleanly
from scripts.serving import prefix_runs
from scripts.serving.config import sweep_doc


def build(anchor_path, workloads_path, config_path) -> dict:
    anchor, workloads_doc, settings = sweep_doc(Path(anchor_path), Path(workloads_path))
    doc = prefix_runs.load(config_path)
    rows = prefix_runs.run_all(anchor, doc, settings["slo_ms"], settings["gpu_name"])
    records = prefix_runs.records(doc, rows, settings["slo_ms"], workloads_doc["sweep"]["slo_ms"]["assumption"])
    return {"config": prefix_runs.CONFIG, "schedule": doc["experiment"]["schedule"]["value"],
            "slo_ms": settings["slo_ms"], "workloads": {w: doc["workloads"][w]["label"] for w in prefix_runs.WORKLOADS},
            "rates": doc["experiment"]["rates"]["value"], "rows": rows,
            "claims": prefix_runs.settle(prefix_runs.claims(doc), records), "provenance": records}


if "snakemake" in globals():
    sm = snakemake  # noqa: F821
    run_cleanly(lambda: write_json_atomic(sm.output.json, build(sm.input.anchor, sm.input.workloads, sm.input.config)),
                log=sm.log[0])
