"""The browser's simulator (site/serving-sim.js, joined from templates/serving_sim/) against scripts/serving/engine/, in
Chromium: on 60 generated configurations (scripts/serving/parity.py: every schedule and engine preset, both step-time
sets, P/D splits and first-token conventions, paged memory with small pools so that requests are preempted, GPUs of
config/gpus.json) every request's admission, first-token and finish time agrees within 1e-9 relative, its
preemptions and time breakdown too, and the summary the page reads (quantised TTFT/TPOT, tail breakdown) is equal;
a configuration the engine refuses, the twin refuses. Then the page itself: its worker re-simulates every cell of
the build's sweep, whose requests equal serving.json's per_request exactly (so the opening numbers are the build's
records), and the arrival times it derives from the shipped gamma draws are workload.generate's, bit for bit."""
import json

import numpy as np
import pytest

from scripts.record.anchor_file import load_gpus
from scripts.serving import aggregate, parity, twin
from scripts.serving.workloads import config
from scripts.serving.workloads.workload import generate
from tests.browser import open_page
from tests.conftest import ROOT

pytestmark = pytest.mark.browser
FIXTURES = 60
SITE = ROOT / "site"


@pytest.fixture(scope="module")
def fixtures():
    a, workloads, settings = config.sweep_inputs(ROOT / "anchor-model.json", ROOT / "config" / "workloads.json")
    gpus = load_gpus(ROOT / "config" / "gpus.json")["gpus"]
    return parity.fixtures(a, gpus, workloads, FIXTURES, 7, aggregate.QUANTUM_MS, settings["slo_ms"])


def test_the_fixtures_cover_what_the_twin_must_do(fixtures):
    cases = fixtures["cases"]
    ran = [c for c in cases if "expected" in c]
    assert len(ran) >= 50
    kinds = {c["schedule"] for c in ran}
    assert kinds >= {"whole", "chunked", "disagg", "orca", "sarathi", "vllm-v1", "vllm-v0"}
    assert {c["step_time"] for c in ran} == {"bound", "realistic"}
    assert sum(sum(c["expected"]["preemptions"]) > 0 for c in ran) >= 3  # preemption by recompute happens
    assert {c["opts"].get("first_token") for c in ran if c["schedule"] == "disagg"} >= {"decode", "prefill"}
    assert {(c["opts"]["prefill_gpus"], c["opts"]["decode_gpus"]) for c in ran if c["schedule"] == "disagg"} - {(1, 1)}
    assert any(c["opts"].get("paged") for c in ran)  # the lesson's schedules with paged memory
    assert len({c["gpu"] for c in ran}) >= 3
    assert any("error" in c for c in cases)  # and a refusal


def test_the_shipped_gamma_draws_give_generates_arrivals_bit_for_bit():
    """What the twin's arrivalTimes does (draw x scale, cumsum, rescale to N / rate), here in numpy, is generate's."""
    _, workloads, settings = config.sweep_inputs(ROOT / "anchor-model.json", ROOT / "config" / "workloads.json")
    for seed in (1, 20261130):
        draws = twin.arrival_draws(500, seed)
        for rate in (0.5, 4.0, 4.3, 24.0):
            times = np.cumsum(draws * (1.0 / (np.full(500, rate) * 1.0)))
            times *= (500 / rate) / times[-1]
            assert np.array_equal(times, generate(workloads["chat"], 500, rate, seed).arrival_s)


# The twin's run of every fixture case, given the built simulator `S` (window.C13Sim in the page, require() in node)
RUN_CASES = """(S, fx) => {
  const out = [];
  for (const c of fx.cases) {
    const o = c.opts, gpus = c.schedule === 'disagg' ? (o.prefill_gpus || 1) + (o.decode_gpus || 1) : 1;
    const reqs = {arrival_s: S.arrivalTimes(c.trace.gamma, c.rate_per_gpu * gpus), prompt_tokens: c.trace.prompt_tokens,
                  output_tokens: c.trace.output_tokens};
    try {
      const t = S.simulate(fx.model, fx.gpus[c.gpu], reqs, c.schedule, {...o, efficiency: fx.efficiency[c.step_time]});
      const s = S.cellSummary(t, fx.quantum_ms, fx.tail_parts);
      out.push({id: c.id, admitted_s: Array.from(t.admitted_s), first_token_s: Array.from(t.first_token_s),
        finish_s: Array.from(t.finish_s), preemptions: Array.from(t.preemptions),
        breakdown: Object.fromEntries(Object.entries(t.breakdown).map(([k, v]) => [k, Array.from(v)])),
        ttft: s.ttft, tpot: s.tpot, tail_ms: s.tail_ms, duration_s: s.duration_s});
    } catch (err) {
      out.push({id: c.id, error: String(err.message)});
    }
  }
  return out;
}"""
RUN = f"async (fx) => ({RUN_CASES})(window.C13Sim, fx)"


def assert_twin_equals_python(got: list[dict], fixtures: dict) -> None:
    """Every case the twin ran (RUN_CASES) against the Python engine's answer: refused on both sides, or every
    request's admission, first-token and finish time within 1e-9 relative, its preemptions and time breakdown, and
    the summary the page reads equal."""
    got = {r["id"]: r for r in got}
    for case in fixtures["cases"]:
        mine = got[case["id"]]
        if "error" in case:
            assert "error" in mine, (case["id"], case["error"])  # refused on both sides
            continue
        assert "error" not in mine, (case["id"], mine.get("error"))
        want = case["expected"]
        for key in ("admitted_s", "first_token_s", "finish_s"):
            assert np.allclose(mine[key], want[key], rtol=1e-9, atol=0), (case["id"], key)
        assert mine["preemptions"] == want["preemptions"], case["id"]
        scale = np.maximum(1.0, np.abs(want["finish_s"]))
        for part, values in want["breakdown"].items():
            assert np.all(np.abs(np.array(mine["breakdown"][part]) - values) <= 1e-9 * scale), (case["id"], part)
        for key in ("ttft", "tpot", "tail_ms"):
            assert mine[key] == want[key], (case["id"], key)
        assert mine["duration_s"] == pytest.approx(want["duration_s"], rel=1e-12)


def test_every_request_of_60_configurations_equals_the_python_engine(sim_page, fixtures):
    assert_twin_equals_python(sim_page.evaluate(RUN, fixtures), fixtures)


@pytest.mark.parametrize("workloads", ["first", pytest.param("every", marks=pytest.mark.exhaustive)])
def test_the_page_resimulates_the_builds_sweep_exactly(browser, workloads):
    """Every cell of serving.json (make test: the first workload's, the page's opening one; make test-all: every
    workload's), simulated by the page's worker at the build's settings: the same requests (TTFT and TPOT in 0.1 ms
    units), the same tail breakdown and the same P/D memory flag as the build's sweep. A twin that drifts on another
    workload's requests fails in make test too: test_every_request_of_60_configurations_equals_the_python_engine
    draws every workload."""
    serving = json.loads((ROOT / "precomputed" / "serving.json").read_text(encoding="utf-8"))
    chosen = list(serving["workloads"])[:1] if workloads == "first" else list(serving["workloads"])
    pg, watch = open_page(browser, (SITE / "index.html").as_uri())
    try:
        checked = 0
        for wid in chosen:
            pg.evaluate("w => window.lessonSet({workload: w})", wid)  # the attainment curves need every rate's cells
            cells = pg.evaluate("""(w) => Object.fromEntries(window.C13_SERVING.twin.settings.rates_per_gpu.flatMap(
                (r) => Object.keys(window.C13_DATA.names.schedules).map((s) => {
                  const c = window.lessonMath.simCell(window.lessonMath.simJob(window.lessonState(), w, s, r).key);
                  return [`${w}/${s}/${r}`, c && {ttft: Array.from(c.ttft), tpot: Array.from(c.tpot),
                    tail_ms: c.tail_ms, prefill_over: !!c.prefill_over}];
                })))""", wid)
            for row in serving["cells"]:
                if row["workload"] != wid:
                    continue
                key = f"{wid}/{row['schedule']}/{row['rate_per_gpu']:g}"
                c = cells[key]
                assert c is not None, key
                assert c["ttft"] == serving["per_request"]["ttft"][key], key
                assert c["tpot"] == serving["per_request"]["tpot"][key], key
                tail = row["breakdown"]["tail"]
                assert c["tail_ms"] == {p: round(tail[f"{p}_s"] * 1000, 1) for p in c["tail_ms"]}, key
                memory = row["memory"]
                assert c["prefill_over"] == (memory["prefill_held_peak_bytes"] > memory["capacity_bytes"]), key
                checked += 1
        assert checked == sum(row["workload"] in chosen for row in serving["cells"]) >= 45
        assert watch.errors == []
    finally:
        pg.close()


def test_fixture_configurations_are_a_function_of_their_seed(fixtures):
    _, workloads, _ = config.sweep_inputs(ROOT / "anchor-model.json", ROOT / "config" / "workloads.json")
    gpus = list(load_gpus(ROOT / "config" / "gpus.json")["gpus"])
    again = parity.fixture_configs(FIXTURES, 7, gpus, list(workloads))
    assert again == [{k: v for k, v in c.items() if k not in ("trace", "expected", "error")} for c in fixtures["cases"]]
    assert parity.fixture_configs(FIXTURES, 8, gpus, list(workloads)) != again
