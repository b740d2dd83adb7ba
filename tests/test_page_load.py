"""The under-load experiment in Chromium: its readouts equal scripts/serving/load_page.py within 1e-9 relative on a
grid of settings, extreme settings show no NaN/Infinity/negatives, the controls work through real events, and the
section is screenshotted at 1280 and 390 px."""
import itertools
import json
import math

import pytest

from scripts.serving.load_page import SCHEDULES, cell_key, cell_readouts, decode_cell, experiment_data, readouts
from tests.browser import ARTIFACTS, open_page
from tests.conftest import ROOT

pytestmark = pytest.mark.browser
SITE = ROOT / "site"
SHOWN = ("mean_ttft_ms", "p50_ttft_ms", "p90_ttft_ms", "p99_ttft_ms", "mean_tpot_ms", "p99_tpot_ms", "attainment",
         "request_goodput", "goodput_rate", "goodput_gain", "tail_queueing_ms", "tail_prefill_ms",
         "tail_interference_ms", "tail_transfer_ms", "tail_decode_ms", "tail_e2el_ms")


@pytest.fixture(scope="module")
def serving():
    doc = json.loads((ROOT / "precomputed" / "serving.json").read_text(encoding="utf-8"))
    return doc, experiment_data(doc)


@pytest.fixture(scope="module")
def page(browser):
    pg, watch = open_page(browser, (SITE / "index.html").as_uri())
    yield pg, watch
    pg.close()


def shown(pg) -> dict:
    return pg.evaluate("""() => Object.fromEntries([...document.querySelectorAll('#exp-load [data-readout]')]
        .map(e => [e.dataset.readout, {value: Number(e.dataset.value), text: e.textContent}]))""")


def test_the_experiment_draws_its_four_charts_without_errors_or_requests(page):
    pg, watch = page
    assert {"load_attain", "load_ttft", "load_tpot", "load_scatter"} <= set(pg.evaluate("Object.keys(lessonViews)"))
    for chart in ("load_attain", "load_ttft", "load_tpot", "load_scatter"):
        assert pg.locator(f"#chart-{chart} canvas, #chart-{chart} svg").count() >= 1
    assert watch.errors == []
    # nothing from the network: the page's files, and the simulator's worker made from them (a blob: URL)
    assert [u for u in watch.requests if not u.startswith(("file://", "blob:"))] == []
    assert any(u.endswith("/serving-data.js") for u in watch.requests)
    assert any(u.endswith("/serving-sim.js") for u in watch.requests)
    assert sum(u.startswith("blob:") for u in watch.requests) == 1  # one worker


GRID = list(itertools.product(["chat", "chat_long"], [0.5, 2, 4, 6, 9, 12], [100, 300, 2000, 10000], [10, 20, 30, 100],
                              [0.5, 0.9, 0.99]))[::5]


def test_readouts_equal_the_python_on_a_grid(page, serving):
    pg, _ = page
    _, exp = serving
    assert len(GRID) >= 100
    for workload, rate, ttft, tpot, target in GRID:
        state = {"workload": workload, "request_rate": rate, "ttft_slo_ms": ttft, "load_tpot_slo_ms": tpot,
                 "attainment_target": target}
        pg.evaluate("s => window.lessonSet(s)", state)
        every = pg.evaluate("s => window.lessonMath.loadReadouts({...window.lessonState(), ...s})", state)
        curves = every.pop("_curves")  # the attainment-vs-rate chart: every swept rate of every schedule
        for s in SCHEDULES:
            want_curve = [cell_readouts(*decode_cell(exp["cells"][cell_key(workload, s, r)]), exp["unit_ms"],
                                        exp["cells"][cell_key(workload, s, r)]["duration_s"], ttft, tpot)["attainment"]
                          for r in exp["rates_per_gpu"]]
            assert curves[s] == pytest.approx(want_curve, rel=1e-9, abs=1e-12), (s, state)
        want = readouts(exp, workload, rate, ttft, tpot, target)
        assert set(every) == set(want)
        for name, v in want.items():
            assert every[name] == pytest.approx(v, rel=1e-9, abs=1e-12), (name, state)
        got = shown(pg)
        assert set(got) == {f"{m}.{s}" for m in SHOWN for s in SCHEDULES}
        for name, r in got.items():
            assert r["value"] == pytest.approx(want[name], rel=1e-9, abs=1e-12), (name, state)


def test_extreme_settings_show_no_nan_infinity_or_negatives(page, serving):
    pg, _ = page
    doc, _ = serving
    ranges, rates = doc["page_ranges"], doc["settings"]["rates_per_gpu"]
    names = ["ttft_slo_ms", "load_tpot_slo_ms", "attainment_target"]
    for workload, rate, *ends in itertools.product(doc["workloads"], (rates[0], rates[-1]),
                                                   *[(ranges[n]["min"], ranges[n]["max"]) for n in names]):
        state = {"workload": workload, "request_rate": rate, **dict(zip(names, ends, strict=True))}
        pg.evaluate("s => window.lessonSet(s)", state)
        for name, r in shown(pg).items():
            assert math.isfinite(r["value"]) and r["value"] >= 0, (name, workload, rate, ends)
            assert "NaN" not in r["text"] and "Infinity" not in r["text"] and "-" not in r["text"], (name, r)


def test_real_controls_move_the_readouts(page, serving):
    pg, _ = page
    _, exp = serving
    pg.evaluate("window.lessonSet({workload: 'chat', request_rate: 4, ttft_slo_ms: 2000, load_tpot_slo_ms: 30, "
                "attainment_target: 0.9, show: {whole: true, chunked: true, disagg: true}})")
    pg.locator('input[data-choice="workload"][value="chat_long"]').check()
    slider = pg.locator('input[data-param="load_tpot_slo_ms"]')
    slider.evaluate("el => { el.value = '20'; el.dispatchEvent(new Event('input', {bubbles: true})); }")
    pg.evaluate("window.lessonPending()")
    want = readouts(exp, "chat_long", 4, 2000, 20, 0.9)
    got = shown(pg)
    assert got["goodput_rate.disagg"]["value"] == pytest.approx(want["goodput_rate.disagg"], rel=1e-9)
    assert pg.locator('[data-slider-value="load_tpot_slo_ms"]').inner_text() == "20"
    rate = pg.locator('input[data-param="request_rate"]')
    rate.evaluate("el => { el.value = '0'; el.dispatchEvent(new Event('input', {bubbles: true})); }")
    assert pg.locator('[data-slider-value="request_rate"]').inner_text() == "0.5"
    pg.locator('input[data-show="disagg"]').uncheck()
    pg.evaluate("window.lessonPending()")
    assert all(row.is_hidden() for row in pg.locator('[data-schedule-row="disagg"]').all())  # both tables
    assert pg.evaluate("lessonViews.load_attain.data('load_attain').filter(d => d.schedule === 'P/D 分离').length") == 0
    pg.locator('input[data-show="disagg"]').check()
    pg.locator('input[data-choice="scatter"][value="disagg"]').check()
    pg.evaluate("window.lessonPending()")
    points = pg.evaluate("lessonViews.load_scatter.data('load_points').map(d => [d.ttft_ms, d.tpot_ms])")
    state = pg.evaluate("window.lessonState()")
    ttft, tpot = decode_cell(exp["cells"][f"chat_long/disagg/{state['request_rate']:g}"])
    unit = exp["unit_ms"]
    assert sorted(map(tuple, points)) == sorted((a * unit, b * unit) for a, b in zip(ttft, tpot, strict=True) if b > 0)
    pg.evaluate("window.lessonSet({ttft_slo_ms: 900, load_tpot_slo_ms: 24})")  # re-coloured in place
    state = pg.evaluate("window.lessonState()")
    outside = pg.evaluate("lessonViews.load_scatter.data('load_points').filter(d => d.inside === '未达标').length")
    slo_t, slo_p = state["ttft_slo_ms"], state["load_tpot_slo_ms"]
    assert outside == sum(1 for a, b in zip(ttft, tpot, strict=True) if b > 0 and not (a * unit <= slo_t and
                                                                                       b * unit <= slo_p))


@pytest.mark.parametrize("width", [1280, 390])
def test_screenshots(browser, width):
    ARTIFACTS.mkdir(exist_ok=True)
    pg, watch = open_page(browser, (SITE / "index.html").as_uri(), width=width)
    pg.locator("#load").screenshot(path=str(ARTIFACTS / f"load-{width}.png"))
    assert watch.errors == []
    pg.close()
    assert (ARTIFACTS / f"load-{width}.png").stat().st_size > 20_000
