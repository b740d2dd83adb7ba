"""Benchmark (not a test): how long a slider move takes to update every readout and chart on the page.

  python -m scripts.page.bench_page [--moves 200]      (what `make bench-page` runs; needs site/ and Chromium)

Each move sets one slider through a real `input` event and waits for the page's update promise
(readouts written and every Vega view re-run). Prints median and p95 in ms, and the page's bytes.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
         "--no-first-run", "--disable-sync"]

MOVE = """async ([name, value]) => {
  const el = document.querySelector(`input[data-param="${name}"]`);
  const t0 = performance.now();
  el.value = String(value);
  el.dispatchEvent(new Event('input', {bubbles: true}));
  await window.lessonPending();
  return performance.now() - t0;
}"""


def main(argv: list[str] | None = None) -> int:
    from playwright.sync_api import sync_playwright

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--site", type=Path, default=Path("site"))
    ap.add_argument("--moves", type=int, default=200)
    args = ap.parse_args(argv)
    index = args.site / "index.html"
    moves = [("batch", v) for v in range(1, 59, 3)] + [("context_tokens", v) for v in range(10, 18)] + \
            [("tpot_slo_ms", v) for v in range(5, 101, 5)] + [("prompt_tokens", v) for v in range(10, 18)] + \
            [("chunk_tokens", v) for v in range(7, 15)]
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(index.resolve().as_uri())
        page.wait_for_function("document.body.dataset.ready === '1'", timeout=30000)
        by_slider: dict[str, list[float]] = {}
        for i in range(args.moves):
            name, value = moves[i % len(moves)]
            by_slider.setdefault(name, []).append(page.evaluate(MOVE, [name, value]))
        browser.close()
    every = sorted(t for ts in by_slider.values() for t in ts)

    def p95(ts):
        return sorted(ts)[max(0, int(round(0.95 * len(ts))) - 1)]

    report = {"moves": len(every), "median_ms": round(statistics.median(every), 2), "p95_ms": round(p95(every), 2),
              "by_slider": {k: {"median_ms": round(statistics.median(v), 2), "p95_ms": round(p95(v), 2)}
                            for k, v in by_slider.items()},
              "page_bytes": {f.name: f.stat().st_size for f in sorted(args.site.glob("*.html"))}}
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
