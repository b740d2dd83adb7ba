"""The tiny model, its KV cache, the benchmark record schema and the merge (the full benchmark is not a test)."""
import copy
import json
import re

import pytest
import torch

from scripts.bench.kv_cache import measure
from scripts.bench.records import check_record, merge
from scripts.bench.tinygpt import Shape, TinyGPT, generate, param_count
from scripts.record.inputs import InputError
from tests.conftest import ROOT

RECORDS = sorted((ROOT / "precomputed" / "bench").glob("*.json"))


@pytest.fixture(scope="module")
def model():
    return TinyGPT(Shape(), seed=0).eval()


def test_parameter_count(model):
    s = Shape()
    per_layer = 4 * s.d_model + 3 * s.d_model * (s.d_model + 1) + s.d_model * (s.d_model + 1) \
        + s.d_model * s.d_ff + s.d_ff + s.d_ff * s.d_model + s.d_model
    assert param_count(model) == s.vocab * s.d_model + s.n_layer * per_layer + 2 * s.d_model == 3_683_840


def test_cache_and_no_cache_give_identical_ids(model):
    prompt = torch.randint(0, 2048, (1, 16), generator=torch.Generator().manual_seed(3))
    assert torch.equal(generate(model, prompt, 48, kv_cache=True), generate(model, prompt, 48, kv_cache=False))


@torch.inference_mode()
def test_cached_logits_match_full_recompute(model):
    ids = torch.randint(0, 2048, (1, 40), generator=torch.Generator().manual_seed(4))
    full = model(ids)
    caches = [{} for _ in model.blocks]
    first = model(ids[:, :24], caches, 0)
    steps = [model(ids[:, t:t + 1], caches, t) for t in range(24, 40)]
    torch.testing.assert_close(first, full[:, :24], rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(torch.cat(steps, dim=1), full[:, 24:], rtol=1e-4, atol=1e-4)


def test_weights_are_seeded():
    a, b = TinyGPT(Shape(), seed=0), TinyGPT(Shape(), seed=0)
    assert all(torch.equal(x, y) for x, y in zip(a.parameters(), b.parameters(), strict=True))


def test_quick_measurement_makes_a_valid_record():
    rec = measure(new_tokens=(4, 8), runs=3, prompt_tokens=8, warmup=1, device="cpu", log=lambda _: None,
                  min_run_s=0.05)  # the loop-until-it-lasts logic runs; `make bench` keeps its own minimum
    check_record(json.loads(json.dumps(rec)), "quick.json")
    assert {r["new_tokens"] for r in rec["results"]} == {4, 8}
    assert all(r["tokens_identical"] and r["runs"] == 3 and len(r["times_s"]) == 3 for r in rec["results"])
    assert all(r["min_s"] <= r["q1_s"] <= r["median_s"] <= r["q3_s"] <= r["max_s"] for r in rec["results"])
    assert rec["machine"]["device"] == "cpu" and rec["machine"]["accelerator"] is None
    assert len(rec["per_step"]["kv_cache"]["positions"]) == len(rec["per_step"]["kv_cache"]["median_ms"])


@pytest.mark.skipif(not RECORDS, reason="no committed benchmark record yet")
def test_committed_records_pass_the_schema_and_merge():
    merged = merge(RECORDS)
    assert len(merged["machines"]) == len(RECORDS)
    for m in merged["machines"]:
        assert {r["new_tokens"] for r in m["rows"]} == {32, 64, 128, 256, 512}
        for r in m["rows"]:
            if r["paired"]:  # the median of the pairs' ratios, inside its bootstrap interval
                assert r["paired"]["low"] <= r["ratio"] <= r["paired"]["high"]
                assert r["ratio"] == pytest.approx(r["paired"]["median"])
            else:
                assert r["ratio"] == pytest.approx(r["nokv_median_s"] / r["kv_median_s"])
            rec = merged["provenance"][f"bench.{m['id']}.n{r['new_tokens']}.ratio"]
            assert rec["kind"] == "measured" and rec["runs"] >= 9 and rec["machine"] and rec["date"]
            assert "IQR" in merged["provenance"][f"bench.{m['id']}.n{r['new_tokens']}.kv.median_ms"]["spread"]


@pytest.mark.skipif(not RECORDS, reason="no committed benchmark record yet")
@pytest.mark.parametrize("mutate, field", [
    (lambda r: r.update(schema_version=1), "schema_version"),
    (lambda r: r["results"][0].update(runs=-3), "results[0].runs"),
    (lambda r: r["results"][0].update(runs=2.5), "results[0].runs"),
    (lambda r: r["results"][0].update(new_tokens=0), "results[0].new_tokens"),
    (lambda r: r["results"][0].update(q1_s=r["results"][0]["max_s"] * 2), "results[0].median_s"),
    (lambda r: r["machine"].update(id="../../etc/passwd"), "machine.id"),
    (lambda r: r["machine"].update(date="yesterday"), "machine.date"),
    (lambda r: r["machine"].update(device="tpu"), "machine.device"),
    (lambda r: r["results"].append(dict(r["results"][0])), "results[10]"),
    (lambda r: r["machine"].pop("cpu"), "machine.cpu"),
    (lambda r: r["results"][0].update(median_s=-1), "results[0].median_s"),
    (lambda r: r["results"][1].update(tokens_identical=False), "results[1].tokens_identical"),
    (lambda r: r["results"][0].update(min_s=99.0), "results[0].median_s"),
    (lambda r: r.pop("results"), "results"),
    (lambda r: r["model"].update(params="3.7M"), "model.params"),
])
def test_bad_records_name_the_field(mutate, field):
    rec = copy.deepcopy(json.loads(RECORDS[0].read_text(encoding="utf-8")))
    mutate(rec)
    with pytest.raises(InputError, match=re.escape(f"bad.json: field {field} ")):
        check_record(rec, "bad.json")


def test_paired_ratio_and_its_bootstrap_interval():
    from scripts.bench.records import paired_ratio

    kv = {"times_s": [1.0, 2.0, 1.5, 1.2, 0.9]}
    exact = paired_ratio(kv, {"times_s": [3 * t for t in kv["times_s"]]})  # drift cancels within each pair
    assert exact["median"] == pytest.approx(3.0) and exact["low"] == pytest.approx(3.0)
    assert exact["high"] == pytest.approx(3.0) and exact["half_width_pct"] == pytest.approx(0.0)
    noisy = paired_ratio(kv, {"times_s": [2.0, 6.4, 4.5, 3.0, 3.6]})  # ratios 2, 3.2, 3, 2.5, 4
    assert noisy["median"] == pytest.approx(3.0) and noisy["pairs"] == 5
    assert 2.0 <= noisy["low"] < 3.0 < noisy["high"] <= 4.0
    assert paired_ratio({"times_s": None}, {"times_s": None}) is None
    assert paired_ratio(kv, {"times_s": [2.0, 6.4, 4.5, 3.0, 3.6]}) == noisy  # seeded: the same every time


@pytest.mark.skipif(not RECORDS, reason="no committed benchmark record yet")
def test_raw_times_must_match_runs_and_come_in_pairs():
    rec = copy.deepcopy(json.loads(RECORDS[0].read_text(encoding="utf-8")))
    for r in rec["results"]:
        r.setdefault("times_s", [r["median_s"]] * r["runs"])
    check_record(copy.deepcopy(rec), "ok.json")
    short = copy.deepcopy(rec)
    short["results"][0]["times_s"] = short["results"][0]["times_s"][:-1]
    with pytest.raises(InputError, match=re.escape("bad.json: field results[0].times_s has")):
        check_record(short, "bad.json")
    one_sided = copy.deepcopy(rec)
    one_sided["results"][0].pop("times_s")
    with pytest.raises(InputError, match=re.escape("bad.json: field results[0].times_s must be given for both")):
        check_record(one_sided, "bad.json")
