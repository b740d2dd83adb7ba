"""Benchmark (not a test): how long a slider move takes to update every readout and chart on the page.

  python -m scripts.bench.page_latency [--moves 200] [--out build/bench/page.json]   (part of `make bench-page`)

For every slider on the page, --moves real `input` events sweep it back and forth across its range; each is timed
from the event to the page's update promise (readouts written, every affected Vega view re-run). Prints and writes
median and p95 per slider (goal: p95 within one 60 Hz frame, 16 ms), and the bytes of each file of the site."""
from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

from scripts.record.atomic import write_bytes_atomic

MOVE = """async ([name, value]) => {
  const el = document.querySelector(`input[data-param="${name}"]`);
  const t0 = performance.now();
  el.value = String(value);
  el.dispatchEvent(new Event('input', {bubbles: true}));
  await window.lessonPending();
  return performance.now() - t0;
}"""
RANGES = """[...document.querySelectorAll('input[data-param]')].map(e => [e.dataset.param, Number(e.min), Number(e.max),
  Number(e.step) || 1])"""


def p95(ts: list[float]) -> float:
    return sorted(ts)[max(0, int(round(0.95 * len(ts))) - 1)]


def positions(lo: float, hi: float, step: float, moves: int) -> list[float]:
    """Back and forth across the range, one step or more per move, `moves` positions."""
    n = int(round((hi - lo) / step))
    stride = max(1, n // 20)
    ladder = [lo + step * k for k in range(0, n + 1, stride)]
    cycle = ladder + ladder[-2:0:-1] or [lo]
    return [round(cycle[i % len(cycle)], 6) for i in range(moves)]


def main(argv: list[str] | None = None) -> int:
    from playwright.sync_api import sync_playwright

    from tests.browser import CHROMIUM, FLAGS, wait_ready

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--site", type=Path, default=Path("site"))
    ap.add_argument("--moves", type=int, default=200, help="input events per slider")
    ap.add_argument("--out", type=Path, default=Path("build/bench/page.json"))
    args = ap.parse_args(argv)
    index = args.site / "index.html"
    if not index.is_file():
        print(f"error: {index} is missing: run `make site` first", file=sys.stderr)
        return 1
    by_slider: dict[str, list[float]] = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(index.resolve().as_uri())
        wait_ready(page)
        for name, lo, hi, step in page.evaluate(RANGES):
            for value in positions(lo, hi, step, args.moves):
                by_slider.setdefault(name, []).append(page.evaluate(MOVE, [name, value]))
        browser.close()
    every = [t for ts in by_slider.values() for t in ts]
    report = {"moves": len(every), "median_ms": round(statistics.median(every), 2), "p95_ms": round(p95(every), 2),
              "goal_p95_ms": 16.0,
              "by_slider": {k: {"moves": len(v), "median_ms": round(statistics.median(v), 2),
                                "p95_ms": round(p95(v), 2), "max_ms": round(max(v), 2)} for k, v in by_slider.items()},
              "site_bytes": {f.name: f.stat().st_size for f in sorted(args.site.glob("*")) if f.is_file()}}
    write_bytes_atomic(args.out, (json.dumps(report, indent=1) + "\n").encode())
    print(f"{'slider':<20} {'moves':>6} {'median ms':>10} {'p95 ms':>8} {'max ms':>8}")
    for name, r in report["by_slider"].items():
        print(f"{name:<20} {r['moves']:>6} {r['median_ms']:>10} {r['p95_ms']:>8} {r['max_ms']:>8}"
              f"{'' if r['p95_ms'] <= 16 else '  (p95 over one frame)'}")
    print(f"all {report['moves']} moves: median {report['median_ms']} ms, p95 {report['p95_ms']} ms; "
          f"report: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
