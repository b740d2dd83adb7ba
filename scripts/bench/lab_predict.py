"""Experiment C as a student runs it, repeated: the lab page calibrates this device, predicts a run with the
lesson's simulator, then measures the same run, in headless Chromium at 1280 and 390 px, at 4, 16 and 64 req/s
(the lab's default lengths), each predict-then-run pair `--pairs` times.

  python -m scripts.bench.lab_predict            (make bench-lab; needs the built site/ and an idle machine)

A benchmark, not a test: it writes build/bench/lab_predict.json and prints, per width and rate, the median over the
pairs of each metric's prediction error (TTFT p50 and TPOT mean in %, TTFT p99 in %, attainment in points) and the
spread of the measured runs themselves (the smallest and largest measurement over the pairs). Issue 75's goal is
read off it: TTFT p50 and TPOT mean within 10 %, TTFT p99 within 20 %, attainment within 5 points. It samples the
machine's CPU use first (lab_steps.quiet_check) and records it.
"""
from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

from scripts.bench.kv_cache import cpu_model
from scripts.bench.lab_steps import quiet_check
from scripts.record.atomic import write_json_atomic

ROOT = Path(__file__).resolve().parents[2]
RATES = (4, 16, 64)
WIDTHS = (1280, 390)
METRICS = ("ttft_p50", "ttft_p99", "tpot_mean", "attainment")
GOALS = {"ttft_p50": 10.0, "ttft_p99": 20.0, "tpot_mean": 10.0, "attainment": 5.0}  # % or points (attainment)

# One click of experiment C at the rate given, through the page's own controls; resolves with the check it wrote.
RUN_ONCE = """async (rate) => {
  const load = document.getElementById('exp-load'), box = document.getElementById('exp-predict');
  const select = load.querySelector('[name="lab_rate"]');
  select.value = String(rate);
  select.dispatchEvent(new Event('change'));
  const before = Number(box.dataset.done || 0);
  box.querySelector('button.run-predict').click();
  const t0 = performance.now();
  while (Number(box.dataset.done || 0) === before) {
    if (performance.now() - t0 > 120000) throw new Error('experiment C did not finish in 120 s');
    if (box.dataset.error !== undefined) throw new Error(box.dataset.error);
    await new Promise((r) => setTimeout(r, 100));
  }
  return box.lastCheck.rows;
}"""


def run_pairs(pairs: int) -> tuple[list[dict], str]:
    from playwright.sync_api import sync_playwright

    from tests.browser import CHROMIUM, FLAGS

    rows, agent = [], ""
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        for width in WIDTHS:
            page = browser.new_page(viewport={"width": width, "height": 900})
            page.goto((ROOT / "site" / "lab.html").as_uri())
            page.wait_for_function("typeof c13LabModel === 'function'")
            agent = page.evaluate("navigator.userAgent")
            for rate in RATES:
                for k in range(pairs):
                    check = page.evaluate(RUN_ONCE, rate)
                    rows.append({"width": width, "rate": rate, "pair": k, **check})
                    print(f"{width:>4} px {rate:>3} req/s pair {k + 1}: " + ", ".join(
                        f"{m} {check[m]['predicted']:.2f}/{check[m]['measured']:.2f}" for m in METRICS), flush=True)
            page.close()
        browser.close()
    return rows, agent


def error(metric: str, predicted: float, measured: float) -> float:
    """Percent of the measurement, or points for the attainment (itself a percent)."""
    if metric == "attainment":
        return predicted - measured
    return 100.0 * (predicted - measured) / measured


def summary(rows: list[dict]) -> list[dict]:
    out = []
    for width in WIDTHS:
        for rate in RATES:
            mine = [r for r in rows if r["width"] == width and r["rate"] == rate]
            cell = {"width": width, "rate": rate, "pairs": len(mine)}
            for m in METRICS:
                errs = [error(m, r[m]["predicted"], r[m]["measured"]) for r in mine]
                measured = [r[m]["measured"] for r in mine]
                cell[m] = {"median_error": statistics.median(errs),
                           "median_abs_error": statistics.median(map(abs, errs)),
                           "measured_min": min(measured), "measured_max": max(measured),
                           "within_goal": abs(statistics.median(errs)) <= GOALS[m]}
            out.append(cell)
    return out


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=5, help="predict-then-run pairs per width and rate (>= 1)")
    parser.add_argument("--out", default=str(ROOT / "build" / "bench" / "lab_predict.json"))
    args = parser.parse_args(argv)
    if args.pairs < 1:
        parser.error("--pairs must be at least 1")
    busy, others = quiet_check()
    rows, agent = run_pairs(args.pairs)
    cells = summary(rows)
    record = {"machine": {"cpu": cpu_model(), "cores": os.cpu_count(), "browser": agent,
                          "cpu_busy_pct_before": busy, "busy_processes_before": others,
                          "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())},
              "goals": GOALS, "cells": cells, "rows": rows}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    write_json_atomic(Path(args.out), record)
    print(f"{'px':>4} {'req/s':>5} | median error over {args.pairs} pairs (measured min-max)")
    for c in cells:
        parts = []
        for m in METRICS:
            unit = " pt" if m == "attainment" else "%"
            e = c[m]
            parts.append(f"{m} {e['median_error']:+.1f}{unit} ({e['measured_min']:.1f}-{e['measured_max']:.1f})"
                         f"{'' if e['within_goal'] else ' !'}")
        print(f"{c['width']:>4} {c['rate']:>5} | " + "; ".join(parts))
    print(f"goals: {GOALS} (! marks a miss); machine before the run: {busy:.1f}% CPU busy; others: {others or 'none'}")
    return record


if __name__ == "__main__":
    main()
