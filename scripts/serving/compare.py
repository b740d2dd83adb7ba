"""DistServe goodput per GPU of each engine preset on the default sweep's workloads and SLOs, at the roofline
bound: `python -m scripts.serving.compare [--anchor anchor-model.json] [--workloads config/workloads.json]`.

Each cell is the sweep's (same requests, seeds, rates, SLOs, attainment target); goodput is the last swept rate
whose attainment meets the target, refined by the sweep's bisection (scripts/serving/sweep.distserve_goodput).
The lesson's schedules are the presets orca (whole), sarathi (chunked) and disagg; vllm-v1 and vllm-v0 run with
the token budget and sequence cap that vLLM's engine arguments give the anchor's GPU
(scripts/serving/engine/schedulers.py).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from scripts.serving import engine, sweep
from scripts.serving.workloads.config import sweep_inputs


def goodput_table(a, workloads: dict, settings: dict, presets=engine.PRESETS) -> dict[str, dict[str, float]]:
    """workload -> preset -> DistServe goodput per GPU (req/s)."""
    table = {}
    for wid in workloads:
        for preset in presets:
            swept = {r: sweep.attainment(a, workloads, settings, wid, preset, r) for r in settings["rates_per_gpu"]}
            table.setdefault(wid, {})[preset] = sweep.distserve_goodput(a, workloads, settings, wid, preset,
                                                                        swept)["rate_per_gpu"]
    return table


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--anchor", type=Path, default=Path("anchor-model.json"))
    ap.add_argument("--workloads", type=Path, default=Path("config/workloads.json"))
    args = ap.parse_args(argv)
    a, workloads, settings = sweep_inputs(args.anchor, args.workloads)
    table = goodput_table(a, workloads, settings)
    print(f"DistServe goodput per GPU (req/s), attainment >= {settings['attainment_target']:g}, "
          f"SLO {settings['slo_ms']}, roofline bound")
    print(f"{'workload':<10}" + "".join(f"{p:>10}" for p in engine.PRESETS))
    for wid, row in table.items():
        print(f"{wid:<10}" + "".join(f"{row[p]:>10.2f}" for p in engine.PRESETS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
