"""Benchmark (not a test): how long a control move takes to update the page, and how fast the browser simulates.

  python -m scripts.bench.page_latency [--moves 200] [--out build/bench/page.json]   (part of `make bench-page`)

- Sliders that only re-score (every slider but the under-load experiment's request rate and chunk budget): --moves
  real `input` events sweep each back and forth across its range, each timed from the event to the frame that
  shows its readouts (requestAnimationFrame, then a task after the paint: what a reader waits for; the charts
  re-run once the moves pause, templates/lesson.js chartsAfterPaint). Goal: p95 within one 60 Hz frame, 16 ms.
  Beside it, a drag: the mouse held on the TTFT target and moved across it and back (real pointer events), each
  move timed to the frame that shows its readouts (`drag_ttft_slo_ms`) from the pointer event's own timestamp
  (`from_pointer`: what a reader waits for, the wait for the browser's next frame included) and from the slider's
  `input` event (`from_input`: the page's own share), and the same drag on a bare page holding one slider and one
  readout (`bare_slider_from_pointer`: the floor no page code can go under in this browser). The
  under-load targets also start a goodput search, whose probes the worker simulates: their time to settled is
  reported beside (a slider's probes wait until its moves pause, DRAG_PAUSE_MS in templates/lesson/load.js, so a
  drag's frames keep the cores: that wait is part of it).
- The request rate moved back and forth between two rates whose cells are already simulated: the re-draw alone
  (readouts, the TTFT/TPOT histograms and the 2,000-point scatter of the new cell), timed like a re-scoring slider
  (`request_rate (cells cached)`).
- Controls that re-simulate (request rate, chunk budget, GPU, step times, P/D split): each move timed from the event
  to its first readouts (the current rate's row of every schedule written), goal p95 <= 100 ms, and to settled (the
  attainment curves too); the GPU, step-time and split moves start from an empty cache (cold). Main-thread long
  tasks (> 50 ms, PerformanceObserver 'longtask') during these moves are counted: the simulation runs in a worker.
- One simulation of the workload's 2,000 requests by serving-sim.js in the page's main thread (after two warm-up
  passes over the 18 configurations, 60 runs over the three schedules and six rates): goal p95 <= 30 ms. The page
  simulates in its worker, so this copy of the code starts cold: after 10 warm-up runs a few runs still took 25-38
  ms while V8 compiled them (the same configurations: 9-12 ms a pass later). The cold cost is what the
  re-simulating controls' first readouts measure.
- The prefix-cache experiment (site/validation.html: issue 77 moved it off the lab): each of its states (both
  workloads, every rate on its slider) visited once, each move timed from the event to settled (cache off and on
  simulated in its worker, 2,000 requests each, readouts written).
- Bytes of each file of the site, raw and gzipped; the lesson page's data and code without the Vega runtime: goal <=
  150 KB gzipped (prefix-data.js, which the validation report loads, counted apart)."""
from __future__ import annotations

import argparse
import gzip
import json
import statistics
import sys
import tempfile
from pathlib import Path

from scripts.record.atomic import write_bytes_atomic

MOVE = """async ([name, value]) => {
  const el = document.querySelector(`input[data-param="${name}"]`);
  const t0 = performance.now();
  el.value = String(value);
  el.dispatchEvent(new Event('input', {bubbles: true}));
  await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));  // the frame with the readouts painted
  const shown = performance.now() - t0;
  await window.lessonPending();
  return [shown, performance.now() - t0];
}"""
DRAG = """() => { window.__drag = {pointer: [], input: []};
  if (window.__dragHooked) return;
  window.__dragHooked = true;
  let moved = 0;  // the latest pointer move's own timestamp: the slider's input event follows from it
  document.addEventListener('pointermove', (e) => { moved = e.timeStamp; }, true);
  document.addEventListener('input', (e) => { const fromPointer = moved, fromInput = e.timeStamp;
    requestAnimationFrame(() => setTimeout(() => { const t = performance.now();
      window.__drag.pointer.push(t - fromPointer); window.__drag.input.push(t - fromInput); }, 0)); }, true); }"""
# A page holding one slider and one readout, dragged the same way: the browser's own floor for a drag
BARE_SLIDER = ('<!doctype html><meta charset="utf-8"><body style="margin:40px"><input type="range" data-param="bare" '
               'min="0" max="1000" value="0" style="width:600px"> <output>0</output><script>'
               'const s = document.querySelector("input"), o = document.querySelector("output");'
               's.addEventListener("input", () => { o.textContent = s.value; });</script>')
RANGES = """[...document.querySelectorAll('input[data-param]')].map(e => [e.dataset.param, Number(e.min), Number(e.max),
  Number(e.step) || 1])"""
RESIMULATING_SLIDERS = ("request_rate", "load_chunk_tokens")  # the under-load experiment's: each move re-simulates
CACHED = "request_rate (cells cached)"  # moves between two rates already simulated: the re-draw alone
FIRST = """async ([kind, name, value, cold]) => {
  if (cold) window.lessonSimForget();
  const row = [...document.querySelectorAll('#exp-load tr[data-schedule-row] [data-readout^="p99_ttft_ms."]')];
  const first = () => row.every((e) => e.textContent !== '…');
  const el = kind === 'slider' ? document.querySelector(`input[data-param="${name}"]`)
    : kind === 'select' ? document.querySelector(`select[data-choice="${name}"]`)
    : document.querySelector(`input[data-choice="${name}"][value="${value}"]`);
  const t0 = performance.now();
  if (kind === 'radio') el.checked = true; else el.value = String(value);
  el.dispatchEvent(new Event(kind === 'slider' ? 'input' : 'change', {bubbles: true}));  // updates at once:
  const firstMs = await new Promise((resolve) => {  // cached cells' numbers, or '…' until the worker answers
    if (first()) return resolve(performance.now() - t0);
    const obs = new MutationObserver(() => { if (first()) { obs.disconnect(); resolve(performance.now() - t0); } });
    obs.observe(document.getElementById('exp-load'), {subtree: true, characterData: true, childList: true});
  });
  await window.lessonPending();
  return [firstMs, performance.now() - t0];
}"""
LONG_TASKS = """() => { window.__long = [];
  new PerformanceObserver((l) => window.__long.push(...l.getEntries().map((e) => e.duration)))
    .observe({type: 'longtask'});
}"""
SIM_SPEED = """() => {
  const T = window.C13_SERVING.twin, S = window.C13Sim, g = window.C13_DATA.gpus.find((x) => x.default);
  const gpu = {name: g.label, hbm_bytes: g.constants.hbm_bytes,
    hbm_bandwidth_bytes_per_s: g.constants.hbm_bandwidth_bytes_per_s, peak_bf16_flops: g.constants.peak_bf16_flops};
  const w = window.lessonState().workload, tr = T.traces[w], out = [];
  const runs = [];
  for (const sch of Object.keys(window.C13_DATA.names.schedules)) {
    for (const r of [0.5, 2, 4, 6, 9, 12]) runs.push([sch, r]);
  }
  const pd = T.settings.prefill_gpus + T.settings.decode_gpus;
  const warm = 2 * runs.length;  // two warm-up passes over every schedule and rate: V8 compiles the engine's paths
  for (let k = -warm; k < 60; k++) {
    const [sch, r] = runs[(k + warm) % runs.length], n = sch === 'disagg' ? pd : 1, t0 = performance.now();
    const reqs = {arrival_s: S.arrivalTimes(tr.gamma, r * n), prompt_tokens: tr.prompt_tokens,
      output_tokens: tr.output_tokens};
    S.cellSummary(S.simulate(T.model, gpu, reqs, sch, {chunk_tokens: T.settings.chunk_tokens,
      first_token: T.settings.first_token, memory: {block_size: T.settings.block_size,
      gpu_memory_utilization: T.settings.gpu_memory_utilization}}), T.quantum_ms,
      Object.keys(window.C13_DATA.names.tail_parts));
    if (k >= 0) out.push(performance.now() - t0);
  }
  return out;
}"""


PREFIX_MOVE = """async ([kind, value]) => {
  const el = kind === 'slider' ? document.querySelector('#prefix-try input[data-param="prefix_rate"]')
    : document.querySelector(`#prefix-try input[data-choice="prefix_workload"][value="${value}"]`);
  const t0 = performance.now();
  if (kind === 'radio') el.checked = true; else el.value = String(value);
  el.dispatchEvent(new Event(kind === 'slider' ? 'input' : 'change', {bubbles: true}));
  await window.lessonPending();
  return performance.now() - t0;
}"""


def drag_moves(page, name: str, sweeps: int = 4, steps: int = 60) -> dict[str, list[float]]:
    """A reader's drag: the mouse held on slider `name` and moved across it and back (real pointer events, as fast as
    the browser takes them), each move timed to the frame that showed its readouts (the charts re-run when the
    moves pause: templates/lesson.js chartsAfterPaint) from its pointer event (`pointer`) and from the slider's
    `input` event (`input`)."""
    page.evaluate(DRAG)
    el = page.locator(f'input[data-param="{name}"]').first
    el.scroll_into_view_if_needed()
    box = el.bounding_box()
    y = box["y"] + box["height"] / 2
    page.mouse.move(box["x"] + 5, y)
    page.mouse.down()
    for sweep in range(sweeps):
        for i in range(steps):
            f = i / (steps - 1) if sweep % 2 == 0 else 1 - i / (steps - 1)
            page.mouse.move(box["x"] + 5 + f * (box["width"] - 10), y)
    page.mouse.up()
    page.evaluate("window.lessonPending ? window.lessonPending() : null")
    return page.evaluate("window.__drag")


def bare_slider_drag(browser, work: Path) -> list[float]:
    """drag_moves on BARE_SLIDER's page (from the pointer event): the floor of a drag's wait in this browser."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    (work / "bare.html").write_text(BARE_SLIDER, encoding="utf-8")
    page.goto((work / "bare.html").resolve().as_uri())
    moves = drag_moves(page, "bare")["pointer"]
    page.close()
    return moves


def prefix_moves(page, report: Path) -> list[float]:
    """Every state of the prefix-cache experiment (the validation report's) once: ms from the event to settled."""
    from tests.browser import wait_ready

    page.goto(report.resolve().as_uri())
    wait_ready(page)
    page.locator("#prefix-try").scroll_into_view_if_needed()
    page.evaluate("window.lessonPending()")
    slider = page.locator("#prefix-try input[data-param=prefix_rate]")
    positions = range(int(slider.get_attribute("min")), int(slider.get_attribute("max")) + 1)
    out = []
    for workload in page.evaluate("[...document.querySelectorAll('#prefix-try input[data-choice=prefix_workload]')]"
                                  ".map((e) => e.value)"):
        out.append(page.evaluate(PREFIX_MOVE, ["radio", workload]))
        for k in positions:
            out.append(page.evaluate(PREFIX_MOVE, ["slider", k]))
    return out


def summary(ts: list[float]) -> dict:
    return {"moves": len(ts), "median_ms": round(statistics.median(ts), 2), "p95_ms": round(p95(ts), 2),
            "max_ms": round(max(ts), 2)}


def p95(ts: list[float]) -> float:
    return sorted(ts)[max(0, int(round(0.95 * len(ts))) - 1)]


def positions(lo: float, hi: float, step: float, moves: int) -> list[float]:
    """Back and forth across the range, one step or more per move, `moves` positions."""
    n = int(round((hi - lo) / step))
    stride = max(1, n // 20)
    ladder = [lo + step * k for k in range(0, n + 1, stride)]
    cycle = ladder + ladder[-2:0:-1] or [lo]
    return [round(cycle[i % len(cycle)], 6) for i in range(moves)]


def measure(page, site: Path, moves_per_slider: int) -> dict:
    """Every measurement on an open lesson page (the module docstring): per re-scoring slider, per re-simulating
    control, the cached rate pair, the drag, the long tasks, one simulation's time and the prefix experiment's
    states."""
    by_slider: dict[str, list[float]] = {}
    first: dict[str, list[float]] = {}
    settled: dict[str, list[float]] = {}
    moves = []  # (kind, name, values, cold)
    for name, lo, hi, step in page.evaluate(RANGES):
        if name in RESIMULATING_SLIDERS:
            moves.append(("slider", name, positions(lo, hi, step, moves_per_slider // 2), False))
            continue
        for value in positions(lo, hi, step, moves_per_slider):
            shown, done = page.evaluate(MOVE, [name, value])
            by_slider.setdefault(name, []).append(shown)
            settled.setdefault(name, []).append(done)
    gpus = page.evaluate("[...document.querySelectorAll('select[data-choice=\"gpu\"] option')].map(o => o.value)")
    splits = page.evaluate("[...document.querySelectorAll('select[data-choice=\"pd_split\"] option')]"
                           ".map(o => o.value)")
    moves += [("select", "gpu", (gpus[1:] + gpus[:1]) * 4, True),
              ("radio", "step_time", ["realistic", "bound"] * 10, True),
              ("select", "pd_split", (splits[1:] + splits[:1]) * 4, True)]
    for kind, name, values, cold in moves:
        for value in values:
            f, s = page.evaluate(FIRST, [kind, name, value, cold])
            first.setdefault(name, []).append(f)
            settled.setdefault(name, []).append(s)
    pair = [3.0, 3.1]  # both simulated by the first two moves; then every move finds its cells cached
    for k in range(moves_per_slider + 2):
        shown, done = page.evaluate(MOVE, ["request_rate", pair[k % 2]])
        if k >= 2:
            by_slider.setdefault(CACHED, []).append(shown)
            settled.setdefault(CACHED, []).append(done)
    drag = drag_moves(page, "ttft_slo_ms")
    return {"by_slider": by_slider, "first": first, "settled": settled, "drag": drag,
            "long_tasks": page.evaluate("window.__long"), "sim": page.evaluate(SIM_SPEED),
            "prefix": prefix_moves(page, site / "validation.html")}


def report_of(m: dict, site: Path) -> dict:
    """The measurements as build/bench/page.json holds them, with the site's bytes and the goals beside."""
    by_slider, settled = m["by_slider"], m["settled"]
    every = [t for ts in by_slider.values() for t in ts]
    files = {f.name: f for f in sorted(site.glob("*")) if f.is_file()}
    gz = {name: len(gzip.compress(f.read_bytes(), 9, mtime=0)) for name, f in files.items()}
    # what the lesson page loads besides the Vega runtime (index.html's script and the data and simulator it adds);
    # every other script is the lab's (lab.html: its model, its page, its records) or the validation report's
    # (the prefix-cache experiment's draws)
    lesson = {"lesson.js", "lesson-data.js", "serving-data.js", "serving-sim.js"}
    named = {k for k in gz if k.endswith(".js") and k in (site / "index.html").read_text(encoding="utf-8")}
    if named != lesson | {"vega.min.js"}:
        raise SystemExit(f"page_latency: site/index.html loads {sorted(named)}, not the lesson's {sorted(lesson)}")
    lab_only = {k for k in gz if k.endswith(".js") and k != "vega.min.js"} - lesson
    page_data = sum(gz.get(k, 0) for k in lesson)
    return {"moves": len(every), "median_ms": round(statistics.median(every), 2), "p95_ms": round(p95(every), 2),
            "goal_p95_ms": 16.0, "by_slider": {k: summary(v) for k, v in by_slider.items()},
            "drag_ttft_slo_ms": {"from_pointer": summary(m["drag"]["pointer"]),
                                 "from_input": summary(m["drag"]["input"]),
                                 "bare_slider_from_pointer": summary(m["bare_drag"]), "goal_p95_ms": 16.0},
            "resimulating": {"goal_first_p95_ms": 100.0,
                             "first_readout": {k: summary(v) for k, v in m["first"].items()},
                             "settled": {k: summary(v) for k, v in settled.items() if k not in by_slider},
                             "targets_goodput_search_settled": {k: summary(v) for k, v in settled.items()
                                                                if k in by_slider and k.endswith(("slo_ms",
                                                                                                  "target"))},
                             "main_thread_long_tasks": {"count": len(m["long_tasks"]),
                                                        "max_ms": round(max(m["long_tasks"], default=0.0), 1)}},
            "simulation_2000_requests": {**summary(m["sim"]), "goal_p95_ms": 30.0},
            "lab_prefix_experiment_settled": summary(m["prefix"]),
            "site_bytes": {name: f.stat().st_size for name, f in files.items()}, "site_gzip_bytes": gz,
            "page_js_gzip_bytes_without_vega": page_data, "goal_page_js_gzip_bytes": 150_000,
            "lab_only_js_gzip_bytes": sum(gz.get(k, 0) for k in lab_only)}


def print_report(report: dict, settled: dict, out: Path) -> None:
    print(f"{'slider (re-scores)':<20} {'moves':>6} {'median ms':>10} {'p95 ms':>8} {'max ms':>8}")
    for name, r in report["by_slider"].items():
        print(f"{name:<20} {r['moves']:>6} {r['median_ms']:>10} {r['p95_ms']:>8} {r['max_ms']:>8}"
              f"{'' if r['p95_ms'] <= 16 else '  (p95 over one frame)'}")
    print(f"all {report['moves']} moves: median {report['median_ms']} ms, p95 {report['p95_ms']} ms")
    d = report["drag_ttft_slo_ms"]
    for key, what in (("from_pointer", "pointer move"), ("from_input", "input event"),
                      ("bare_slider_from_pointer", "pointer move, a bare page's one slider")):
        print(f"a drag across the TTFT target ({d[key]['moves']} moves), {what} to its readouts on screen: median "
              f"{d[key]['median_ms']} ms, p95 {d[key]['p95_ms']} ms (goal 16)")
    for name in ("ttft_slo_ms", "load_tpot_slo_ms", "attainment_target"):
        if name in settled:
            st = summary(settled[name])
            print(f"  {name}: goodput search settled median {st['median_ms']} ms, p95 {st['p95_ms']} ms")
    print(f"{'control (re-simulates)':<24} {'moves':>6} {'first p95':>10} {'settled p50':>12} {'settled p95':>12}")
    for name, r in report["resimulating"]["first_readout"].items():
        st = summary(settled[name])
        print(f"{name:<24} {r['moves']:>6} {r['p95_ms']:>10} {st['median_ms']:>12} {st['p95_ms']:>12}"
              f"{'' if r['p95_ms'] <= 100 else '  (first readout over 100 ms)'}")
    lt = report["resimulating"]["main_thread_long_tasks"]
    print(f"main-thread long tasks during those moves: {lt['count']} (longest {lt['max_ms']} ms)")
    s = report["simulation_2000_requests"]
    print(f"one simulation of 2,000 requests: median {s['median_ms']} ms, p95 {s['p95_ms']} ms (goal 30)")
    s = report["lab_prefix_experiment_settled"]
    print(f"prefix-cache experiment (validation report), {s['moves']} states (2 runs of 2,000 requests each): "
          f"settled median {s['median_ms']} ms, p95 {s['p95_ms']} ms")
    print(f"lesson page js gzipped without Vega: {report['page_js_gzip_bytes_without_vega']:,} B (goal 150,000); "
          f"the lab's own: {report['lab_only_js_gzip_bytes']:,} B more; report: {out}")


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
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(index.resolve().as_uri())
        wait_ready(page)
        page.evaluate("window.lessonPending()")
        page.evaluate(LONG_TASKS)
        measured = measure(page, args.site, args.moves)
        with tempfile.TemporaryDirectory() as work:
            measured["bare_drag"] = bare_slider_drag(browser, Path(work))
        browser.close()
    report = report_of(measured, args.site)
    write_bytes_atomic(args.out, (json.dumps(report, indent=1) + "\n").encode())
    print_report(report, measured["settled"], args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
