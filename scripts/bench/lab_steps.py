"""The lab page's model against PyTorch, side by side on this machine: one decode step of the course's tiny model
at batch 1, 2, 4, 8 and 16 (each request with 64 cached positions), in headless Chromium (site/lab-model.js, its
WebAssembly kernel in both builds: plain SIMD and fused multiply-add) and in PyTorch eager on one thread two ways
(TinyGPT's own decode, which concatenates its cache every step, and scripts/bench/lean_step.py's step with a cache
allocated once and precomputed RoPE tables; the same seeded weights); each as ms and GFLOP/s.

  python -m scripts.bench.lab_steps [--baseline OLD/lab-model.js]   (make bench-lab; the built site/, an idle machine)

--baseline times an earlier build of the page's model (its plain kernel) in a second page, interleaved with this
one batch by batch, so "the current kernel" of an issue can be measured in the same sitting.
A benchmark, not a test: it writes build/bench/lab_steps.json and prints the table; goals are read off it. Before it
starts it samples the machine's CPU use for 2 s and records it with the processes that used more than 5 % of a core: a
figure taken while something else ran says so.
"""
from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

import torch

from scripts.bench.kv_cache import cpu_model
from scripts.bench.seeded_weights import seeded_model
from scripts.record.atomic import write_json_atomic

BATCHES = (1, 2, 4, 8, 16)
POSITION = 64
SAMPLES, STEPS_PER_SAMPLE = 40, 5
ROOT = Path(__file__).resolve().parents[2]

PAGE_SETUP = """([position, builds]) => {
  // the page's model (one kernel build), every slot holding the same prompt's cache
  const L = c13LabModel(), prompt = Array.from({length: position}, (_, i) => (i * 37 + 11) % 2048);
  const models = builds.map((kernel) => new L.TinyModel({slots: 16, kernel}));
  for (const m of models) {
    for (let s = 0; s < 16; s++) m.forward(prompt, prompt.map(() => s), prompt.map((_, i) => i), [position - 1]);
  }
  window.benchModels = models;
  return {agent: navigator.userAgent, kernels: models.map((m) => m.kernel), picked: L.kernelBuild()};
}"""
# `samples` timings of one batch size per model of the page; each sample is `per` steps back to back, after one
# untimed sample.
PAGE_SAMPLES = """([B, position, samples, per]) => {
  const models = window.benchModels, ids = Array.from({length: B}, (_, i) => i), pos = ids.map(() => position);
  const times = models.map(() => []);
  for (let k = 0; k < 1 + samples; k++) {
    models.forEach((m, j) => {
      const t0 = performance.now();
      for (let r = 0; r < per; r++) m.forward(ids, ids, pos, ids);
      if (k) times[j].push((performance.now() - t0) / per);
    });
  }
  return times;
}"""
ROUNDS = 4  # each batch size's samples in this many rounds, the pages in turn


KERNEL_BUILDS = ("simd", "fma")  # the plain WebAssembly SIMD kernel and its fused multiply-add build (lab.py)


def gflops(batch: int, ms: float) -> float:
    """A decode step's matrix work (2 FLOPs per parameter per token: tinygpt's linear layers and its tied head) per
    second; attention over 64 positions adds about 1 %."""
    from scripts.bench.seeded_weights import param_total

    return 2 * param_total() * batch / (ms / 1000) / 1e9


def browser_steps(baseline: Path | None, scratch: Path) -> dict:
    """Median ms per batch size for each kernel build of site/lab-model.js ("simd", "fma") and, with `baseline`, for
    that older script's plain build ("baseline"): one page per model, each set up once, sampled round-robin so that
    every model follows the others alike (a page holding two models ran its second one colder)."""
    from playwright.sync_api import sync_playwright

    from tests.browser import CHROMIUM, FLAGS

    current = ROOT / "site" / "lab-model.js"
    timed = [(build, current, build) for build in KERNEL_BUILDS]
    if baseline is not None:
        timed.append(("baseline", baseline.resolve(), "simd"))
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        pages, info = {}, {}
        for label, script, build in timed:
            html = scratch / f"lab-steps-{label}.html"
            html.write_text(f'<!doctype html><script src="{script.as_uri()}"></script>', encoding="utf-8")
            pages[label] = browser.new_page()
            pages[label].goto(html.as_uri())
            info[label] = pages[label].evaluate(PAGE_SETUP, [POSITION, [build]])
        rows = []
        for b in BATCHES:
            times: dict[str, list[float]] = {label: [] for label, _, _ in timed}
            for _ in range(ROUNDS):
                for label, _, _ in timed:
                    times[label] += pages[label].evaluate(PAGE_SAMPLES, [b, POSITION, SAMPLES // ROUNDS,
                                                                         STEPS_PER_SAMPLE])[0]
            rows.append({"batch": b, **{k: statistics.median(v) for k, v in times.items()}})
        browser.close()
    return {"rows": rows, "agent": info["simd"]["agent"], "kernels": [info[k]["kernels"][0] for k in KERNEL_BUILDS],
            "picked": info["simd"]["picked"]}


@torch.inference_mode()
def torch_steps() -> list[dict]:
    """Median ms per batch size of TinyGPT's own decode step ("torch": its cache concatenated, its RoPE angles built,
    every step) and of the lean step ("lean": lean_step.LeanDecoder), one thread, interleaved sample by sample."""
    from scripts.bench.lean_step import LeanDecoder

    torch.set_num_threads(1)
    model, rows = seeded_model(), []
    for b in BATCHES:
        ids = torch.arange(POSITION).repeat(b, 1) % 2048
        caches, lean = [{} for _ in model.blocks], LeanDecoder(model, b, max_context=POSITION + 1)
        model(ids, caches, 0)
        lean.forward(ids, 0)
        nxt = torch.zeros(b, 1, dtype=torch.long)
        steps = {"torch": lambda nxt=nxt, caches=caches: model(  # the cache as it stands, concatenated each step
                     nxt, [{"k": c["k"], "v": c["v"]} for c in caches], POSITION),
                 "lean": lambda nxt=nxt, lean=lean: lean.forward(nxt, POSITION)}
        times: dict[str, list[float]] = {k: [] for k in steps}
        for k in range(1 + SAMPLES):
            for name, step in steps.items():
                t0 = time.perf_counter()
                for _ in range(STEPS_PER_SAMPLE):
                    step()
                if k:
                    times[name].append((time.perf_counter() - t0) / STEPS_PER_SAMPLE * 1000)
        rows.append({"batch": b, **{name: statistics.median(v) for name, v in times.items()}})
    return rows


def quiet_check() -> tuple[float, list[str]]:
    """The whole machine's CPU use over 2 s (percent of all cores) and the other processes above 5 % of a core."""
    import psutil

    procs = [p for p in psutil.process_iter(["pid", "name"]) if p.pid != os.getpid()]
    for p in procs:
        try:
            p.cpu_percent(None)
        except psutil.Error:
            pass
    busy = psutil.cpu_percent(interval=2.0)
    others = []
    for p in procs:
        try:
            if p.cpu_percent(None) > 5:
                others.append(f"{p.info['name']} ({p.pid})")
        except psutil.Error:
            pass
    return busy, others


def table_rows(page: dict, eager: list[dict]) -> list[dict]:
    """Each batch size's ms and GFLOP/s for every timed step, and the ratios the goals read."""
    rows = []
    for k, e in enumerate(eager):
        b, timed = e["batch"], {**page["rows"][k], "torch": e["torch"], "lean": e["lean"]}
        row = {"batch": b}
        for name in ("simd", "fma", "baseline", "torch", "lean"):
            if name in timed:
                row.update({f"{name}_ms": timed[name], f"{name}_gflop_s": gflops(b, timed[name])})
        row["fma_speedup"] = row["simd_ms"] / row["fma_ms"]
        row["fma_over_lean"] = row["lean_ms"] / row["fma_ms"]  # above 1: the page's step is faster
        if "baseline_ms" in row:
            row["fma_over_baseline"] = row["baseline_ms"] / row["fma_ms"]
        rows.append(row)
    return rows


def print_table(rows: list[dict]) -> None:
    names = [n for n in ("simd", "fma", "baseline", "torch", "lean") if f"{n}_ms" in rows[0]]
    print(f"{'batch':>5} " + " ".join(f"{n + ' ms':>11} {'GF/s':>5}" for n in names) + f" {'fma/simd':>8}"
          + f" {'fma/lean':>8}" + (f" {'fma/base':>8}" if "baseline" in names else ""))
    for r in rows:
        print(f"{r['batch']:>5} " + " ".join(f"{r[n + '_ms']:>11.3f} {r[n + '_gflop_s']:>5.1f}" for n in names)
              + f" {r['fma_speedup']:>8.2f} {r['fma_over_lean']:>8.2f}"
              + (f" {r['fma_over_baseline']:>8.2f}" if "baseline" in names else ""))


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(ROOT / "build" / "bench" / "lab_steps.json"))
    parser.add_argument("--baseline", type=Path, default=None,
                        help="an earlier build's lab-model.js, its plain kernel timed beside this one")
    args = parser.parse_args(argv)
    if args.baseline is not None and not args.baseline.is_file():
        parser.error(f"--baseline {args.baseline}: no such file (an earlier build's site/lab-model.js)")
    busy, others = quiet_check()
    scratch = Path(args.out).parent
    scratch.mkdir(parents=True, exist_ok=True)
    page, eager = browser_steps(args.baseline, scratch), torch_steps()
    rows = table_rows(page, eager)
    record = {"machine": {"cpu": cpu_model(), "cores": os.cpu_count(), "torch": torch.__version__, "torch_threads": 1,
                          "browser": page["agent"], "kernel_picked": page["picked"], "kernels": page["kernels"],
                          "cpu_busy_pct_before": busy, "busy_processes_before": others,
                          "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())},
              "baseline": str(args.baseline) if args.baseline else None,
              "position": POSITION, "samples": SAMPLES, "steps_per_sample": STEPS_PER_SAMPLE, "rows": rows}
    write_json_atomic(Path(args.out), record)
    print_table(rows)
    print(f"machine before the run: {busy:.1f}% CPU busy; other processes above 5%: {others or 'none'}")
    if busy > 10:
        print("warning: something else was running: these figures are not from an idle machine")
    return record


if __name__ == "__main__":
    main()
