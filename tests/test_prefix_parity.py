"""Prefix caching in the browser's simulator (templates/serving_sim/prefix.js, kv.js) against the Python engine, in
Chromium: on 30 generated configurations with the cache on (scripts/serving/parity.py prefix_fixtures: both
workloads of config/prefix.json, every paged preset, the lesson's schedules on paged memory, llama.cpp's slots,
small pools that evict and preempt) every request's cached tokens are equal and its admission, first-token and
finish times and saved prefill time agree within 1e-9 relative."""
import numpy as np
import pytest

from scripts.record.anchor_file import load_gpus
from scripts.serving import parity
from scripts.serving.experiments import prefix_runs
from scripts.serving.workloads import config
from tests.conftest import ROOT

pytestmark = pytest.mark.browser

RUN = """(fx) => {
  const S = window.C13Sim, out = [];
  for (const c of fx.cases) {
    try {
      const t = S.simulate(fx.model, fx.gpus[c.gpu], c.requests, c.schedule,
                           {...c.opts, efficiency: fx.efficiency[c.step_time]});
      out.push({id: c.id, admitted_s: Array.from(t.admitted_s), first_token_s: Array.from(t.first_token_s),
        finish_s: Array.from(t.finish_s), preemptions: Array.from(t.preemptions),
        cached_tokens: Array.from(t.cached_tokens), prefill_saved_s: Array.from(t.prefill_saved_s)});
    } catch (err) {
      out.push({id: c.id, error: String(err.message)});
    }
  }
  return out;
}"""


@pytest.fixture(scope="module")
def fixtures():
    a, _, _ = config.sweep_inputs(ROOT / "anchor-model.json", ROOT / "config" / "workloads.json")
    gpus = load_gpus(ROOT / "config" / "gpus.json")["gpus"]
    return parity.prefix_fixtures(a, gpus, prefix_runs.load(ROOT / prefix_runs.CONFIG), 30, 11)


def test_the_prefix_fixtures_hit_evict_and_preempt(fixtures):
    ran = [c for c in fixtures["cases"] if "expected" in c]
    assert len(ran) >= 25
    assert {c["schedule"] for c in ran} == set(parity.PREFIX_KINDS)
    assert all(sum(c["expected"]["cached_tokens"]) > 0 for c in ran if c["workload"] != "burst")  # every one hits
    for c in (c for c in ran if c["workload"] == "burst"):  # short requests admitted past the long ones waiting
        e, r = c["expected"], c["requests"]
        long_wait = [e["admitted_s"][i] for i, p in enumerate(r["prompt_tokens"]) if p >= 8192]
        passed = [i for i, p in enumerate(r["prompt_tokens"]) if p < 8192 and r["arrival_s"][i] > 10.0
                  and e["admitted_s"][i] < max(long_wait)]
        assert passed, c["id"]
    assert sum(sum(c["expected"]["preemptions"]) > 0 for c in ran) >= 2  # readmissions that may hit their own blocks
    assert {c["workload"] for c in ran} == {"system_prompt", "multi_turn", "burst"}
    assert {c["schedule"] for c in ran if "class_budget" in c["opts"]} == {"vllm-v1", "sarathi", "llama.cpp"}


def test_every_request_with_prefix_caching_equals_the_python_engine(sim_page, fixtures):
    got = {r["id"]: r for r in sim_page.evaluate(RUN, fixtures)}
    for case in fixtures["cases"]:
        mine = got[case["id"]]
        if "error" in case:
            assert "error" in mine, (case["id"], case["error"])
            continue
        assert "error" not in mine, (case["id"], mine.get("error"))
        want = case["expected"]
        assert mine["cached_tokens"] == want["cached_tokens"], case["id"]
        assert mine["preemptions"] == want["preemptions"], case["id"]
        for key in ("admitted_s", "first_token_s", "finish_s", "prefill_saved_s"):
            assert np.allclose(mine[key], want[key], rtol=1e-9, atol=1e-12), (case["id"], key)

