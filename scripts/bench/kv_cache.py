"""Measure the tiny model's greedy generation with and without a KV cache on this machine.

  python -m scripts.bench.kv_cache --out-dir precomputed/bench       (what `make bench` runs)

Batch 1, a fixed prompt, one warm-up then RUNS timed runs per (new_tokens, kv_cache); records the median,
min and max, the per-step latency by position for the longest generation, and the machine. Both paths
must produce identical token ids, or the benchmark fails.
"""
from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

import torch

from scripts.bench.tinygpt import Shape, TinyGPT, generate, param_count
from scripts.record.atomic import write_json_atomic

SCHEMA_VERSION = 1
PROMPT_TOKENS = 64
NEW_TOKENS = (32, 64, 128, 256, 512)
RUNS = 5
POSITION_STRIDE = 4  # keep every 4th step of the per-position trace


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine_record() -> dict:
    commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    cpu = cpu_model()
    cores = os.cpu_count() or 1
    slug = re.sub(r"[^a-z0-9]+", "-", cpu.lower()).strip("-")[:48]
    return {"id": f"cpu-{slug}-{cores}c-torch{torch.get_num_threads()}t", "device": "cpu", "cpu": cpu, "cores": cores,
            "torch": torch.__version__, "torch_threads": torch.get_num_threads(), "os": platform.platform(),
            "python": platform.python_version(), "date": dt.datetime.now(dt.UTC).date().isoformat(),
            "git_commit": commit or "uncommitted"}


def measure(new_tokens=NEW_TOKENS, runs=RUNS, prompt_tokens=PROMPT_TOKENS, log=print) -> dict:
    model = TinyGPT(Shape(), seed=0).eval()
    prompt = torch.randint(0, model.s.vocab, (1, prompt_tokens), generator=torch.Generator().manual_seed(1))
    results, traces = [], {}
    for n in new_tokens:
        ids = {}
        for kv in (True, False):
            generate(model, prompt, n, kv)  # warm-up
            times, steps = [], []
            for _ in range(runs):
                step_times: list[float] = []
                t0 = time.perf_counter()
                ids[kv] = generate(model, prompt, n, kv, step_times)
                times.append(time.perf_counter() - t0)
                steps.append(step_times)
            if n == max(new_tokens):
                per_pos = [statistics.median(run[i] for run in steps) * 1e3 for i in range(n)]
                traces["kv_cache" if kv else "no_cache"] = {
                    "positions": list(range(prompt_tokens, prompt_tokens + n, POSITION_STRIDE)),
                    "median_ms": per_pos[::POSITION_STRIDE]}
            results.append({"new_tokens": n, "kv_cache": kv, "median_s": statistics.median(times), "min_s": min(times),
                            "max_s": max(times), "runs": runs})
            log(f"new_tokens={n:4d} kv_cache={kv!s:5} median {statistics.median(times) * 1e3:9.1f} ms")
        identical = bool(torch.equal(ids[True], ids[False]))
        for r in results[-2:]:
            r["tokens_identical"] = identical
        if not identical:
            raise SystemExit(f"error: cache and no-cache generations differ at new_tokens={n}")
    return {"schema_version": SCHEMA_VERSION, "kind": "measured", "machine": machine_record(),
            "model": {"params": param_count(model), "shape": model.s.as_dict(), "weights": "random init, seed 0",
                      "prompt_tokens": prompt_tokens, "batch": 1, "decoding": "greedy"},
            "results": results, "per_step": {"new_tokens": max(new_tokens), **traces}}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out-dir", type=Path, default=Path("precomputed/bench"))
    ap.add_argument("--runs", type=int, default=RUNS)
    ap.add_argument("--new-tokens", type=int, nargs="+", default=list(NEW_TOKENS))
    args = ap.parse_args(argv)
    record = measure(tuple(args.new_tokens), args.runs, log=lambda m: print(m, file=sys.stderr))
    out = args.out_dir / f"{record['machine']['id']}.json"
    write_json_atomic(out, record)
    print(f"wrote {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
