"""The under-load experiment in Chromium: its readouts equal scripts/serving/experiments/load_page.py within 1e-9
relative on a grid of settings, extreme settings show no NaN/Infinity/negatives, the controls work through real events,
and the section is screenshotted at 1280 and 390 px."""
import itertools
import json
import math

import pytest

from scripts.serving.experiments.load_page import (
    SCHEDULES,
    cell_key,
    cell_readouts,
    decode_cell,
    experiment_data,
    readouts,
)
from tests.browser import ARTIFACTS, open_page
from tests.conftest import ROOT

pytestmark = pytest.mark.browser
SITE = ROOT / "site"
SHOWN = ("mean_ttft_ms", "p50_ttft_ms", "p90_ttft_ms", "p99_ttft_ms", "mean_tpot_ms", "p99_tpot_ms", "attainment",
         "goodput_rate", "goodput_gain", "tail_queueing_ms", "tail_prefill_ms",
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
    assert len({u for u in watch.requests if u.startswith("blob:")}) == 1  # the workers' one script


GRID = list(itertools.product(["chat", "chat_long"], [0.5, 2, 4, 6, 9, 12], [100, 300, 2000, 10000], [10, 20, 30, 100],
                              [0.5, 0.9, 0.99]))[::5]


@pytest.fixture(scope="module")
def probes():
    """probe(schedule, rate) for a workload and targets: the Python's attainment of one simulation at that rate (what
    the goodput search asks between the swept rates), memoised per targets."""
    from scripts.record.anchor_file import load
    from scripts.serving.aggregate import attainment_probe
    from scripts.serving.workloads.config import sweep_settings, workloads_for

    anchor, anchor_doc = load(ROOT / "anchor-model.json")
    doc = workloads_for(ROOT / "config" / "workloads.json", anchor)
    made = {}

    def probe_for(workload, ttft, tpot):
        if (workload, ttft, tpot) not in made:
            made[workload, ttft, tpot] = attainment_probe(anchor_doc, doc["workloads"], sweep_settings(doc), workload,
                                                          {"ttft": ttft, "tpot": tpot})
        return made[workload, ttft, tpot]
    return probe_for


GOODPUT_CHECKED = 1  # states whose goodput search the Python repeats (its probes simulate: ~3 s a state; every
# state's in make test-all)


@pytest.mark.parametrize("grid", [GRID[::7], pytest.param(GRID, marks=pytest.mark.exhaustive)])
def test_readouts_equal_the_python_on_a_grid(page, serving, probes, grid):
    """Every readout, the goodput search's included (in the first GOODPUT_CHECKED states with a goodput to find;
    every state in make test-all), equals the Python's."""
    pg, _ = page
    _, exp = serving
    assert len(grid) >= 15
    searched = 0
    for workload, rate, ttft, tpot, target in grid:
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
        search = len(grid) == len(GRID) or (searched < GOODPUT_CHECKED and every["goodput_rate.whole"] > 0)
        want = readouts(exp, workload, rate, ttft, tpot, target, probes(workload, ttft, tpot) if search else None)
        searched += search
        assert set(want) <= set(every) and all(every[k] is not None for k in every), state
        for name, v in want.items():
            assert every[name] == pytest.approx(v, rel=1e-9, abs=1e-12), (name, state)
        got = shown(pg)
        assert set(got) == {f"{m}.{s}" for m in SHOWN for s in SCHEDULES}
        for name, r in got.items():
            assert r["value"] == pytest.approx(every[name], rel=1e-9, abs=1e-12), (name, state)
    assert searched >= min(GOODPUT_CHECKED, len(grid))


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


def test_real_controls_move_the_readouts(page, serving, probes):
    pg, _ = page
    _, exp = serving
    pg.evaluate("window.lessonSet({workload: 'chat', request_rate: 4, ttft_slo_ms: 2000, load_tpot_slo_ms: 30, "
                "attainment_target: 0.9, show: {whole: true, chunked: true, disagg: true}})")
    pg.locator('input[data-choice="workload"][value="chat_long"]').check()
    slider = pg.locator('input[data-param="load_tpot_slo_ms"]')
    slider.evaluate("el => { el.value = '20'; el.dispatchEvent(new Event('input', {bubbles: true})); }")
    pg.evaluate("window.lessonPending()")
    want = readouts(exp, "chat_long", 4, 2000, 20, 0.9, probes("chat_long", 2000, 20))
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
    unit = exp["unit_ms"]
    for rate in (None, 2.0, 1.5):  # a rate move keeps the workload: the points' numbers change in place
        if rate is not None:
            pg.evaluate(f"window.lessonSet({{request_rate: {rate}}})")
        state = pg.evaluate("window.lessonState()")
        ttft, tpot = decode_cell(exp["cells"][f"chat_long/disagg/{state['request_rate']:g}"])  # sorted by TTFT
        points = pg.evaluate("lessonViews.load_scatter.data('load_points').map(d => [d.i, d.ttft_ms, d.tpot_ms, "
                             "d.inside])")
        slo_t, slo_p = state["ttft_slo_ms"], state["load_tpot_slo_ms"]
        assert sorted(tuple(p[1:]) for p in points) == sorted(
            (a * unit, b * unit, "都达标" if a * unit <= slo_t and b * unit <= slo_p else "未达标")
            for a, b in zip(ttft, tpot, strict=True) if b > 0), rate
        assert len({p[0] for p in points}) == len(points)  # one point per request
    pg.evaluate("window.lessonSet({ttft_slo_ms: 900, load_tpot_slo_ms: 24})")  # re-coloured in place
    state = pg.evaluate("window.lessonState()")
    outside = pg.evaluate("lessonViews.load_scatter.data('load_points').filter(d => d.inside === '未达标').length")
    slo_t, slo_p = state["ttft_slo_ms"], state["load_tpot_slo_ms"]
    assert outside == sum(1 for a, b in zip(ttft, tpot, strict=True) if b > 0 and not (a * unit <= slo_t and
                                                                                       b * unit <= slo_p))


def test_engine_controls_through_real_events_give_the_python_engines_numbers(page):
    """GPU, step times, chunk budget and P/D split moved with their own controls, at a rate between the sweep's: the
    table's readouts are the Python engine's for exactly those settings (same requests, same seed)."""
    from scripts.model import roofline as rl
    from scripts.record.anchor_file import load_gpus
    from scripts.serving import engine, parity, sweep, twin
    from scripts.serving.workloads import config
    from scripts.serving.workloads.workload import generate

    pg, _ = page
    pg.evaluate("window.lessonSet({workload: 'chat', ttft_slo_ms: 2000, load_tpot_slo_ms: 30, attainment_target: 0.9})")
    pg.locator('select[data-choice="gpu"]').select_option("mi300x")
    more = pg.locator("#exp-load details.more-settings")
    assert more.get_attribute("open") is None  # the engine settings start folded (issue 39): a reader opens them
    more.locator("summary").click()
    pg.locator('input[data-choice="step_time"][value="realistic"]').check()
    chunk = pg.locator('input[data-param="load_chunk_tokens"]')
    values = json.loads(chunk.get_attribute("data-values"))
    chunk.evaluate("(el, i) => { el.value = String(i); el.dispatchEvent(new Event('input', {bubbles: true})); }",
                   values.index(2048))
    pg.locator('select[data-choice="pd_split"]').select_option("2:2")
    pg.locator('input[data-param="request_rate"]').evaluate(
        "el => { el.value = '4.3'; el.dispatchEvent(new Event('input', {bubbles: true})); }")
    pg.evaluate("window.lessonPending()")
    assert pg.locator("[data-when-sim-live]").first.is_visible()
    assert pg.locator('[data-step-words="realistic"]').first.is_visible()
    got = shown(pg)
    a, workloads, settings = config.sweep_inputs(ROOT / "anchor-model.json", ROOT / "config" / "workloads.json")
    gpu = load_gpus(ROOT / "config" / "gpus.json")["gpus"]["mi300x"]
    for schedule, gpus in (("whole", 1), ("chunked", 1), ("disagg", 4)):
        reqs = generate(workloads["chat"], settings["requests"], 4.3 * gpus, sweep.workload_seed(settings, workloads,
                                                                                                  "chat"))
        trace = engine.simulate(twin.on_gpu(a, gpu), reqs, schedule, chunk_tokens=2048, prefill_gpus=2, decode_gpus=2,
                                first_token=settings["first_token"], efficiency=rl.achieved(a),
                                memory=engine.Memory(settings["block_size"], settings["gpu_memory_utilization"]))
        want = parity.summary(trace, 0.1, settings["slo_ms"])
        for name, value in want["readouts"].items():
            if f"{name}.{schedule}" in got:
                assert got[f"{name}.{schedule}"]["value"] == pytest.approx(value, rel=1e-9, abs=1e-12), (schedule, name)
        for part, value in want["tail_ms"].items():
            assert got[f"tail_{part}_ms.{schedule}"]["value"] == value, (schedule, part)
    pg.evaluate("window.lessonSet({gpu: 'h100_sxm', step_time: 'bound', load_chunk_tokens: 512, pd_split: '1:1', "
                "request_rate: 4})")
    pg.locator('input[data-choice="step_time"][value="bound"]').check()
    more.locator("summary").click()
    pg.evaluate("window.lessonPending()")
    assert pg.locator("[data-when-sim-live]").first.is_hidden()


@pytest.mark.exhaustive
@pytest.mark.parametrize("width", [1280, 390])
def test_screenshots(browser, width):
    """The section as opened, then on two GPUs with two chunk budgets (test artifacts load-<gpu>-c<budget>-<width>.png):
    each state's numbers differ from the others', every readout filled in, nothing wider than the screen. make
    test-all's (6.7 s of make test at 1280 px). Guarded in make test by
    test_engine_controls_through_real_events_give_the_python_engines_numbers (the MI300X and a 2,048-token budget
    through their own controls: every schedule's readouts the Python engine's) and by
    test_page_browser.py::test_nothing_is_wider_than_its_box_or_it_says_it_scrolls[index-1280] and [index-390] (they
    scroll #exp-load into view and measure every .experiment, at 1280 px on the MI300X too)."""
    ARTIFACTS.mkdir(exist_ok=True)
    pg, watch = open_page(browser, (SITE / "index.html").as_uri(), width=width)
    pg.locator("#load").screenshot(path=str(ARTIFACTS / f"load-{width}.png"))
    assert (ARTIFACTS / f"load-{width}.png").stat().st_size > 20_000
    seen = set()
    for gpu in ("h100_sxm", "mi300x"):
        for budget in (512, 2048):
            pg.evaluate("s => window.lessonSet(s)", {"gpu": gpu, "load_chunk_tokens": budget})
            texts = pg.evaluate("[...document.querySelectorAll('#exp-load [data-readout]')].map(e => e.textContent)")
            why = pg.locator("[data-when-sim-error]").inner_text()
            assert "…" not in texts and "—" not in texts, (gpu, budget, why)
            seen.add(tuple(texts))
            right = pg.evaluate("document.getElementById('exp-load').getBoundingClientRect().right")
            assert right <= width + 1, (gpu, budget, right)
            pg.locator("#exp-load").screenshot(path=str(ARTIFACTS / f"load-{gpu}-c{budget}-{width}.png"))
    assert len(seen) == 4  # the GPU and the budget both reach the numbers
    pg.evaluate("window.lessonSet({gpu: 'h100_sxm', load_chunk_tokens: 512})")
    assert watch.errors == []
    pg.close()
