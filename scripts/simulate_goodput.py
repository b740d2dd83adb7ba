"""Rule simulate_goodput: one (workload, schedule)'s sweep cells -> DistServe goodput, refined by bisection, and the
probes of the page's own goodput searches on that workload (sweep.page_search_probes)."""
if "snakemake" in globals():  # run by Snakemake from scripts/: make the repo root importable
    import sys

    sys.path.insert(0, str(__import__("pathlib").Path(snakemake.scriptdir).parent))  # noqa: F821

import json
from pathlib import Path

from scripts.record.atomic import write_json_atomic
from scripts.record.cli import run_cleanly
from scripts.serving.sweep import goodput_of, page_search_probes, page_searches
from scripts.serving.workloads.config import sweep_doc

if "snakemake" in globals():
    sm = snakemake  # noqa: F821

    def goodput() -> None:
        a, doc, settings = sweep_doc(Path(sm.input.anchor), Path(sm.input.workloads))
        workloads = doc["workloads"]
        cells = [json.loads(Path(p).read_text(encoding="utf-8")) for p in sm.input.cells]
        w = sm.wildcards
        searches = page_searches(doc, settings)
        write_json_atomic(sm.output.json, goodput_of(a, workloads, settings, w.workload, w.schedule, cells) | {
            "page_searches": page_search_probes(a, workloads, settings, w.workload, w.schedule, cells, searches)})

    run_cleanly(goodput, log=sm.log[0])
