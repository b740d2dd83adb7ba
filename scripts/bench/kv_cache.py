"""Measure the tiny model's greedy generation with and without a KV cache on this machine (or in a Slurm job).

  python -m scripts.bench.kv_cache --out-dir precomputed/bench       (what `make bench` runs)

Batch 1, a fixed prompt. For each new_tokens setting: WARMUP untimed runs of each path, then RUNS rounds that
alternate cache and no-cache runs (so drift on a shared machine hits both alike). A run shorter than MIN_RUN_S
repeats the generation back to back and counts seconds per generation (as timeit's loops do), so an 80 ms
generation is not at the mercy of one scheduler tick. Records the median, the interquartile range (numpy's linear
quartiles), min and max, the per-step latency by position for the longest generation, and the machine as seen
from inside the process: CPU model, cores it may use, accelerator, torch version, threads and device, and the
Slurm job id and partition when it runs as a Slurm job. The device is chosen at run time: CUDA when a GPU is
visible, else the CPU. On the CPU it runs one torch thread pinned to the last core it may use (`--threads`):
measured on this 2-core machine kind, two threads on two cores spread 12-32% (IQR/median) while one pinned
thread leaves the other core to the OS and stays near or under 10%. Both paths must produce identical ids.
"""
from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import torch

from scripts.bench.tinygpt import Shape, TinyGPT, generate, param_count
from scripts.record.atomic import write_json_atomic

SCHEMA_VERSION = 2
PROMPT_TOKENS = 64
NEW_TOKENS = (32, 64, 128, 256, 512)
RUNS = 40  # 40 pairs: the paired ratio's 95 % interval within 5 % at every length (9 gave 5.4-9.8 %, 40 gave 0.9-2.4 %)
WARMUP = 2
MIN_RUN_S = 2.0
POSITION_STRIDE = 4  # keep every 4th step of the per-position trace


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def pick_device(requested: str = "auto") -> torch.device:
    if requested == "auto":
        requested = "cuda" if torch.cuda.is_available() else "cpu"
    if requested == "cuda" and not torch.cuda.is_available():
        raise SystemExit("error: --device cuda, but torch sees no GPU")
    return torch.device(requested)


def machine_record(device: torch.device) -> dict:
    commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    cpu = cpu_model()
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    accelerator = torch.cuda.get_device_name(device) if device.type == "cuda" else None
    what = accelerator or cpu
    slug = re.sub(r"[^a-z0-9]+", "-", what.lower()).strip("-")[:48]
    if device.type == "cuda":
        ident = f"cuda-{slug}-torch{torch.__version__.split('+')[0]}"
    else:
        ident = f"cpu-{slug}-{cores}c-torch{torch.get_num_threads()}t"
    return {"id": ident, "device": device.type, "cpu": cpu, "cores": cores, "accelerator": accelerator,
            "torch": torch.__version__, "torch_threads": torch.get_num_threads(), "os": platform.platform(),
            "python": platform.python_version(), "date": dt.datetime.now(dt.UTC).date().isoformat(),
            "git_commit": commit or "uncommitted", "slurm_job_id": os.environ.get("SLURM_JOB_ID"),
            "slurm_partition": os.environ.get("SLURM_JOB_PARTITION"), "hostname": platform.node()}


def summary(times: list[float]) -> dict:
    q1, median, q3 = (float(v) for v in np.percentile(times, [25, 50, 75]))
    return {"median_s": median, "q1_s": q1, "q3_s": q3, "min_s": min(times), "max_s": max(times), "runs": len(times)}


def use_threads(threads: int) -> None:
    """`threads` torch threads, pinned to the last `threads` cores this process may use."""
    torch.set_num_threads(threads)
    if hasattr(os, "sched_setaffinity"):
        allowed = sorted(os.sched_getaffinity(0))
        os.sched_setaffinity(0, allowed[-threads:])


def measure(new_tokens=NEW_TOKENS, runs=RUNS, prompt_tokens=PROMPT_TOKENS, warmup=WARMUP, device="auto",
            log=print, min_run_s: float = MIN_RUN_S) -> dict:
    dev = pick_device(device)
    sync = torch.cuda.synchronize if dev.type == "cuda" else None
    model = TinyGPT(Shape(), seed=0).eval().to(dev)
    prompt = torch.randint(0, model.s.vocab, (1, prompt_tokens), generator=torch.Generator().manual_seed(1)).to(dev)
    results, traces = [], {}
    for n in new_tokens:
        loops = {True: 1, False: 1}
        for _ in range(warmup):
            for kv in (True, False):
                t0 = time.perf_counter()
                generate(model, prompt, n, kv, sync=sync)
                loops[kv] = max(1, int(np.ceil(min_run_s / (time.perf_counter() - t0))))
        times, steps, ids = {True: [], False: []}, {True: [], False: []}, {}
        for _ in range(runs):
            for kv in (True, False):  # interleaved: both paths see the same machine state
                step_times: list[float] = []
                t0 = time.perf_counter()
                ids[kv] = generate(model, prompt, n, kv, step_times, sync=sync)
                for _ in range(loops[kv] - 1):
                    generate(model, prompt, n, kv, sync=sync)
                times[kv].append((time.perf_counter() - t0) / loops[kv])
                steps[kv].append(step_times)
        identical = bool(torch.equal(ids[True].cpu(), ids[False].cpu()))
        if not identical:
            raise SystemExit(f"error: cache and no-cache generations differ at new_tokens={n}")
        for kv in (True, False):
            results.append({"new_tokens": n, "kv_cache": kv, **summary(times[kv]), "loops": loops[kv],
                            "tokens_identical": identical, "times_s": times[kv]})
            s = results[-1]
            log(f"new_tokens={n:4d} kv_cache={kv!s:5} median {s['median_s'] * 1e3:9.1f} ms  "
                f"IQR/median {(s['q3_s'] - s['q1_s']) / s['median_s']:6.1%}")
            if n == max(new_tokens):
                per_pos = np.median(np.array(steps[kv]), axis=0) * 1e3
                traces["kv_cache" if kv else "no_cache"] = {
                    "positions": list(range(prompt_tokens, prompt_tokens + n, POSITION_STRIDE)),
                    "median_ms": [float(v) for v in per_pos[::POSITION_STRIDE]]}
    return {"schema_version": SCHEMA_VERSION, "kind": "measured", "machine": machine_record(dev),
            "model": {"params": param_count(model), "shape": model.s.as_dict(), "weights": "random init, seed 0",
                      "prompt_tokens": prompt_tokens, "batch": 1, "decoding": "greedy"},
            "method": {"warmup_runs": warmup, "timed_runs": runs, "order": "cache and no-cache alternate",
                       "min_run_s": min_run_s, "loops": "a run repeats the generation until it lasts min_run_s; "
                       "its time is seconds per generation", "quartiles": "numpy.percentile, linear"},
            "results": results, "per_step": {"new_tokens": max(new_tokens), **traces}}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out-dir", type=Path, default=Path("precomputed/bench"))
    ap.add_argument("--out", type=Path, help="write exactly this file instead of <out-dir>/<machine id>.json")
    ap.add_argument("--runs", type=int, default=RUNS)
    ap.add_argument("--warmup", type=int, default=WARMUP)
    ap.add_argument("--new-tokens", type=int, nargs="+", default=list(NEW_TOKENS))
    ap.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto")
    ap.add_argument("--threads", type=int, default=1, help="torch threads, pinned to the last cores (default 1)")
    args = ap.parse_args(argv)
    if args.runs < 1 or args.warmup < 0 or min(args.new_tokens) < 1 or args.threads < 1:
        ap.error("--runs >= 1, --warmup >= 0, --new-tokens >= 1 and --threads >= 1")
    use_threads(args.threads)
    record = measure(tuple(args.new_tokens), args.runs, warmup=args.warmup, device=args.device,
                     log=lambda m: print(m, file=sys.stderr))
    out = args.out or args.out_dir / f"{record['machine']['id']}.json"
    write_json_atomic(out, record)
    print(f"wrote {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
