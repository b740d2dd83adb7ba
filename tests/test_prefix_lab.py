"""The lab's cache-off/on experiment in the browser (issue 42): site/prefix-data.js ships each prefix workload's
draws (scripts/serving/workloads/workload.py *_draws), the twin builds a run's requests from them at any rate
(templates/serving_sim/workload.js) and reads a run as scripts/serving/experiments/prefix_runs.py does (prefix_runs.js).

Held equal to the Python: the draws rebuild the generator's requests bit for bit (arrival times from standard gamma
draws are workload.arrival_times's); on generated configurations (both workloads, seeds, sizes and slider rates,
cache off and on) every request, and each run's hit rates, TTFT p50/p99, goodput, saved prefill and late turns; and
on the lab page itself: the opening state's readouts are the table's records, a rate between the table's is this
browser's run (equal to the Python's at full size, no record named), a table rate names its record again, and the
conversations' late-turn sentence follows the workload switch. Screenshots: test-artifacts/lab-prefix-*.png."""
import json

import numpy as np
import pytest

from scripts.serving import twin
from scripts.serving.experiments import prefix_runs
from scripts.serving.workloads import config
from scripts.serving.workloads.workload import (
    arrival_times,
    conversation_draws,
    conversation_requests,
    streams,
    system_prompt_draws,
    system_prompt_requests,
    times_from_draws,
)
from tests.browser import ARTIFACTS, open_page
from tests.conftest import ROOT

PREFIX = json.loads((ROOT / "precomputed" / "prefix.json").read_text(encoding="utf-8"))
PAGE = PREFIX["page"]
METRICS = ("token_hit_rate", "request_hit_rate", "ttft_p50_ms", "ttft_p99_ms", "request_goodput", "saved_prefill_ms",
           "late_turns")


@pytest.mark.parametrize("seed, n, rate", [(1, 50, 0.25), (7, 400, 1.0), (20261203, 2000, 3.0), (99, 3, 17.5)])
def test_arrival_times_from_their_draws_are_the_generators_bits(seed, n, rate):
    direct = arrival_times(streams(seed)[1], n, rate)
    assert np.array_equal(times_from_draws(streams(seed)[1].standard_gamma(1.0, size=n), rate), direct)


def test_the_draws_rebuild_the_experiments_requests():
    doc = prefix_runs.load(ROOT / prefix_runs.CONFIG)
    for rate in (0.5, 1.75):
        direct, _, _ = prefix_runs.requests_for(doc, "system_prompt", rate)
        built = system_prompt_requests(PAGE["draws"]["system_prompt"], rate)
        assert np.array_equal(built.arrival_s, direct.arrival_s) and built.segments == direct.segments
        direct, conv, turn = prefix_runs.requests_for(doc, "multi_turn", rate)
        built, conv2, turn2 = conversation_requests(PAGE["draws"]["multi_turn"], rate)
        assert np.array_equal(built.arrival_s, direct.arrival_s) and built.segments == direct.segments
        assert built.answer_ids == direct.answer_ids and np.array_equal(conv, conv2) and np.array_equal(turn, turn2)


def _cases(count: int):
    """Generated configurations: workload, seed, size and a slider rate, with the Python's requests and runs."""
    anchor, _, settings = config.sweep_inputs(ROOT / "anchor-model.json", ROOT / "config" / "workloads.json")
    doc = prefix_runs.load(ROOT / prefix_runs.CONFIG)
    rng = np.random.default_rng(42)
    cases = []
    for k in range(count):
        wid = prefix_runs.WORKLOADS[k % 2]
        seed, n = int(rng.integers(1, 1 << 30)), int(rng.choice([60, 150, 300]))
        rate = float(rng.choice(PAGE["slider_rates"]))
        spec = doc["workloads"][wid]
        if wid == "system_prompt":
            draws = system_prompt_draws(spec, n, seed)
            reqs, conv, turn = system_prompt_requests(draws, rate), None, None
        else:
            draws = conversation_draws(spec, n, seed)
            reqs, conv, turn = conversation_requests(draws, rate)
        runs = {cache: prefix_runs.run_requests(anchor, PAGE["schedule"], reqs, conv, turn, cache, PAGE["slo_ms"],
                                                settings["gpu_name"]) for cache in prefix_runs.CACHE}
        cases.append({"id": f"{wid}-{k}", "workload": wid, "rate": rate, "draws": draws,
                      "arrival_s": reqs.arrival_s.tolist(), "segments": [[list(s) for s in g] for g in reqs.segments],
                      "answer_ids": list(reqs.answer_ids) if reqs.answer_ids else None, "runs": runs})
    return {"model": twin.model_constants(anchor), "gpu": twin.gpu_constants(anchor, settings["gpu_name"]),
            "efficiency": twin.efficiency_constants(anchor)["realistic"], "schedule": PAGE["schedule"],
            "slo_ms": PAGE["slo_ms"], "cases": cases}


RUN = """(fx) => {
  const S = window.C13Sim, build = {system_prompt: S.systemPromptRequests, multi_turn: S.conversationRequests};
  return fx.cases.map((c) => {
    const reqs = build[c.workload](c.draws, c.rate), runs = {};
    for (const cache of ["off", "on"]) {
      const t = S.simulate(fx.model, fx.gpu, reqs, fx.schedule,
                           {efficiency: fx.efficiency, prefix_caching: cache === "on"});
      runs[cache] = S.prefixRunSummary(t, reqs, fx.slo_ms);
    }
    return {id: c.id, arrival_s: reqs.arrival_s, segments: reqs.segments, answer_ids: reqs.answer_ids, runs};
  });
}"""


@pytest.mark.browser
def test_the_twin_builds_and_reads_the_same_runs_as_the_python(sim_page):
    fx = _cases(8)
    got = {r["id"]: r for r in sim_page.evaluate(RUN, fx)}
    hits = 0
    for case in fx["cases"]:
        mine = got[case["id"]]
        assert mine["arrival_s"] == case["arrival_s"], case["id"]  # the same bits
        assert mine["segments"] == case["segments"] and mine["answer_ids"] == case["answer_ids"], case["id"]
        for cache, want in case["runs"].items():
            for m in METRICS:
                assert mine["runs"][cache][m] == pytest.approx(want[m], rel=1e-9, abs=1e-12), (case["id"], cache, m)
        hits += case["runs"]["on"]["token_hit_rate"] > 0.5
    assert hits == len(fx["cases"])  # every workload hits when the cache is on
    assert sum(c["runs"]["on"]["late_turns"] > 0 for c in fx["cases"]) >= 1


READ = """() => Object.fromEntries([...document.querySelectorAll('#prefix-try [data-readout]')].map((e) =>
  [e.dataset.readout, {text: e.textContent, value: e.dataset.value === undefined ? null : Number(e.dataset.value),
                       prov: e.dataset.prov || null}]))"""


@pytest.fixture(scope="module")
def lab(browser):
    page, watch = open_page(browser, (ROOT / "site" / "validation.html").as_uri(), width=1280)
    page.locator("#prefix-try").scroll_into_view_if_needed()
    page.wait_for_function("window.C13_PREFIX !== undefined && window.C13Sim !== undefined", timeout=30000)
    page.evaluate("window.lessonPending()")
    yield page
    assert watch.errors == []
    page.close()


def test_the_lab_opens_on_the_tables_records(lab):
    o = PAGE["opening"]
    shown = lab.evaluate(READ)
    both = ("ttft_p50_ms", "ttft_p99_ms", "request_goodput")
    assert set(shown) == {f"prefix.{c}.{m}" for c in ("off", "on") for m in both} | {
        f"prefix.on.{m}" for m in ("token_hit_rate", "saved_prefill_ms", "late_turns")}
    for rid, got in shown.items():
        cache, metric = rid.split(".")[1:]
        record = prefix_runs.record_id(o["workload"], o["rate"], cache, metric)
        assert got["prov"] == record
        assert got["text"] == PREFIX["provenance"][record]["display"]


def test_a_rate_between_the_tables_is_this_browsers_run_and_equals_the_python(lab):
    rate = next(r for r in PAGE["slider_rates"] if r not in PAGE["rates"] and r > 1)
    lab.evaluate(f"window.lessonSet({{prefix_workload: 'multi_turn', prefix_rate: {rate}}})")
    shown = lab.evaluate(READ)
    anchor, _, settings = config.sweep_inputs(ROOT / "anchor-model.json", ROOT / "config" / "workloads.json")
    doc = prefix_runs.load(ROOT / prefix_runs.CONFIG)
    for cache in prefix_runs.CACHE:
        want = prefix_runs.run(anchor, doc, "multi_turn", rate, cache, PAGE["slo_ms"], settings["gpu_name"])
        for metric in ("ttft_p50_ms", "ttft_p99_ms", "request_goodput") + (
                ("token_hit_rate", "saved_prefill_ms", "late_turns") if cache == "on" else ()):
            got = shown[f"prefix.{cache}.{metric}"]
            scale = 100 if metric == "token_hit_rate" else 1
            assert got["value"] == pytest.approx(want[metric] * scale, rel=1e-9), (cache, metric)
            assert got["prov"] is None  # no record holds this rate's numbers
    assert lab.locator("[data-when-prefix-workload=multi_turn]").is_visible()
    lab.locator("#prefix-try").screenshot(path=str(ARTIFACTS / "lab-prefix-between.png"))


def test_a_table_rate_names_its_records_again_and_the_switch_hides_the_turns(lab):
    rate = PAGE["rates"][-1]
    lab.evaluate(f"window.lessonSet({{prefix_workload: 'system_prompt', prefix_rate: {rate}}})")
    for rid, got in lab.evaluate(READ).items():
        cache, metric = rid.split(".")[1:]
        record = prefix_runs.record_id("system_prompt", rate, cache, metric)
        assert got["prov"] == record and got["text"] == PREFIX["provenance"][record]["display"]
    assert not lab.locator("[data-when-prefix-workload=multi_turn]").is_visible()


def test_the_slider_and_switch_work_by_hand_on_a_phone(browser):
    page, watch = open_page(browser, (ROOT / "site" / "validation.html").as_uri(), width=390, height=844)
    box = page.locator("#prefix-try")
    box.scroll_into_view_if_needed()
    page.wait_for_function("window.C13_PREFIX !== undefined", timeout=30000)
    page.locator("#prefix-try input[value=multi_turn]").check()
    slider = page.locator("#prefix-try input[data-param=prefix_rate]")
    slider.focus()
    page.keyboard.press("ArrowRight")  # one step up the slider, as a reader's thumb does
    page.evaluate("window.lessonPending()")
    state = page.evaluate("window.lessonState()")
    assert state["prefix_workload"] == "multi_turn" and state["prefix_rate"] > PAGE["opening"]["rate"]
    values = page.evaluate(READ)
    assert all(v["value"] is not None and v["text"] not in ("…", "—") for v in values.values())
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    box.screenshot(path=str(ARTIFACTS / "lab-prefix-phone.png"))
    assert watch.errors == []
    page.close()
