"""Benchmark (not a test): how fast the simulator runs, and how long the default sweep takes.

  python -m scripts.serving.bench [--no-sweep]        (what `make bench-serving` runs)

1. Vidur's published comparison point: 2,000 Poisson requests of 1,024 prompt / 256 output tokens at 0.5-2 req/s,
   a vLLM-like schedule (`whole`) and Sarathi (`chunked`), on the anchor; simulated requests and tokens per wall
   second (median of 3 runs each).
2. The default sweep, cold, through Snakemake with 2 cores: every cell with its replications (config/workloads.json
   sweep.replications seeds), every goodput search (each replication's), the engine presets at both sets of step
   times (bound and realistic) and the aggregate forced to rerun; the issue's goal is 60 s.
Prints a table and writes build/bench/serving.json.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from scripts.record.anchor_file import load
from scripts.record.atomic import write_json_atomic
from scripts.serving import engine
from scripts.serving.workloads.workload import Requests, arrival_times

N, PROMPT, OUTPUT = 2000, 1024, 256
SWEEP_GOAL_S = 60  # issue 23: the default sweep with seeds and both factor sets, cold, on 2 cores


def simulator_speed(a) -> list[dict]:
    rows = []
    for schedule in ("whole", "chunked"):
        for rate in (0.5, 1.0, 1.5, 2.0):
            reqs = Requests(arrival_times(np.random.default_rng(0), N, rate), np.full(N, PROMPT), np.full(N, OUTPUT))
            times = []
            for _ in range(3):
                t0 = time.perf_counter()
                engine.simulate(a, reqs, schedule)
                times.append(time.perf_counter() - t0)
            wall = statistics.median(times)
            rows.append({"schedule": schedule, "rate": rate, "wall_s": wall, "requests_per_s": N / wall,
                         "tokens_per_s": N * (PROMPT + OUTPUT) / wall})
    return rows


def sweep_wall_seconds() -> float:
    cmd = [sys.executable, "-m", "snakemake", "--cores", "2", "--quiet", "all", "--scheduler", "greedy", "--forcerun",
           "simulate_cells", "simulate_goodput", "simulate_engines",
           "simulate_sweep", "--", "build/default/precomputed/serving.json"]
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True)
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--no-sweep", action="store_true")
    args = ap.parse_args(argv)
    a, _ = load(Path("anchor-model.json"))
    rows = simulator_speed(a)
    print(f"{'schedule':<8} {'req/s':>6} {'wall s':>7} {'sim req/s':>10} {'sim tok/s':>11}")
    for r in rows:
        print(f"{r['schedule']:<8} {r['rate']:>6g} {r['wall_s']:>7.3f} {r['requests_per_s']:>10,.0f} "
              f"{r['tokens_per_s']:>11,.0f}")
    report = {"machine": {"cpu": platform.processor() or platform.machine(), "cores": os.cpu_count(),
                          "python": platform.python_version()},
              "workload": {"requests": N, "prompt_tokens": PROMPT, "output_tokens": OUTPUT, "arrivals": "Poisson"},
              "simulator": rows}
    if not args.no_sweep:
        report["default_sweep_wall_s"] = sweep_wall_seconds()
        print(f"default sweep with its replications and both step-time sets, cold, 2 cores: "
              f"{report['default_sweep_wall_s']:.1f} s (goal: {SWEEP_GOAL_S} s)")
        report["default_sweep_goal_s"] = SWEEP_GOAL_S
    write_json_atomic(Path("build/bench/serving.json"), report)
    print("wrote build/bench/serving.json", file=sys.stderr)
    print(json.dumps({"min_sim_req_per_s": min(r["requests_per_s"] for r in rows)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
