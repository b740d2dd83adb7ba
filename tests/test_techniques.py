"""Issue 40: the earlier lessons' techniques on the frontier experiment. The model (scripts/model/techniques.py)
against hand-worked cases and the baseline roofline; lesson.js's twin held equal to it over generated states (every
technique, GPU, context, prompt, TPOT target, draft length and acceptance); the claims settled on every GPU; the
switch drawn at 1280 and 390 px with a technique on."""
import json
import math
import re

import numpy as np
import pytest

from scripts.model import roofline as rl
from scripts.model import sizes
from scripts.model import techniques as tq
from tests.browser import ARTIFACTS, open_page
from tests.conftest import ROOT

DATA = json.loads((ROOT / "precomputed" / "precomputed.json").read_text(encoding="utf-8"))
TECH = DATA["techniques"]
GPUS = {g["id"]: g for g in DATA["gpus"]}


def gpu(gid: str) -> dict:
    c = GPUS[gid]["constants"]
    return {k: c.get(k) for k in ("hbm_bytes", "hbm_bandwidth_bytes_per_s", "peak_bf16_flops", "peak_fp8_flops")}


def own_gpu(a) -> dict:
    return {"hbm_bytes": a.hbm_bytes, "hbm_bandwidth_bytes_per_s": a.hbm_bandwidth_bytes_per_s,
            "peak_bf16_flops": a.peak_bf16_flops, "peak_fp8_flops": None}


def model(a, gid=None, **t):
    return tq.TechniqueCost(a, tq.Technique(**t), tq.Gpu.of(gpu(gid) if gid else own_gpu(a)))


@pytest.mark.parametrize("context", [256, 4096, 32768, 131072])
def test_the_baseline_is_the_roofline(anchor, context):
    m = model(anchor)
    assert m.weights_read == sizes.weight_bytes_read_per_step(anchor) and m.kv == sizes.kv_bytes_per_token(anchor)
    assert m.free == rl.free_bytes_for_requests(anchor)
    assert m.max_batch(context) == rl.max_batch_by_memory(anchor, context)
    for b in (1, 7, max(1, m.max_batch(context))):
        assert m.tpot_seconds(b, context) == pytest.approx(rl.decode_step_seconds(anchor, b, context), rel=1e-12)
    for slo_ms in (5, 16, 20, 30, 100):
        assert m.max_batch_under_slo(context, slo_ms / 1e3) == rl.max_batch_under_slo(anchor, context, slo_ms / 1e3)
    assert m.ttft_seconds(context) == pytest.approx(rl.prefill_seconds(anchor, context), rel=1e-12)


def test_expected_tokens_per_verification_is_leviathans_formula(anchor):
    assert model(anchor, draft_tokens=1, acceptance=0.85, draft_cost=0.1).tokens_per_verification() == \
        pytest.approx(1.85, rel=1e-15)
    assert model(anchor, draft_tokens=3, acceptance=0.8, draft_cost=0).tokens_per_verification() == \
        pytest.approx(1 + 0.8 + 0.64 + 0.512, rel=1e-14)
    assert model(anchor, draft_tokens=4, acceptance=1.0).tokens_per_verification() == 5


def test_speculation_at_batch_one_is_nearly_free_to_verify(anchor):
    """Memory-bound at batch 1: the k + 1 tokens cost what one does, so TPOT = step x (1 + k c) / E."""
    m = model(anchor, draft_tokens=3, acceptance=0.7, draft_cost=0.1)
    step = rl.decode_step_seconds(anchor, 1, 4096)
    assert m.step_seconds(1, 4096, 4) == step
    assert m.tpot_seconds(1, 4096) == pytest.approx(step * (1 + 3 * 0.1) / (1 + 0.7 + 0.49 + 0.343), rel=1e-12)
    assert m.ttft_seconds(32768) == pytest.approx(rl.prefill_seconds(anchor, 32768) * 1.1, rel=1e-12)


def test_a_compute_bound_verification_costs_k_plus_one_times_the_compute(anchor):
    """At a large batch the verification of k + 1 tokens is compute-bound and costs k + 1 times one token's
    compute. (This anchor's single-token decode never is: each request's DeltaNet state, 302 MB read and written
    per step, outweighs its 51 GFLOP on every GPU listed; that is why speculation still pays at its memory cap.)"""
    m = model(anchor, draft_tokens=3, acceptance=0.7, draft_cost=0.0)
    b, c = 2000, 16
    compute_one = b * m.slow_flops / m.peak + b * c * m.attention / m.peak
    assert m.step_seconds(b, c) > compute_one  # one token: memory-bound
    assert m.step_seconds(b, c, 4) == pytest.approx(4 * compute_one, rel=1e-12)
    assert m.step_seconds(b, c, 4) > m.step_seconds(b, c)


def test_weight_quantization_keeps_embeddings_and_the_head_in_bf16(anchor):
    linear = tq.linear_weight_params(anchor)
    assert 0 < linear < sizes.params_read_per_step(anchor) - sizes.embedding_params(anchor)  # the LM head is not linear
    m = model(anchor, weight_bytes=0.5)
    assert m.weights_read == (sizes.params_read_per_step(anchor) - linear) * 2 + linear * 0.5
    assert m.weights_total == (sizes.total_params(anchor) - linear) * 2 + linear * 0.5
    assert m.free == anchor.hbm_bytes - m.weights_total - anchor.runtime_reserve_bytes


def test_fp8_compute_only_where_the_datasheet_has_an_fp8_rate(anchor):
    """W8A8 halves the linear layers' compute time on the H100; the A100 has no FP8 rate: weight-only, so a
    compute-bound prefill takes as long as in bf16."""
    p = 32768
    base_h100, fp8_h100 = model(anchor, "h100_sxm"), model(anchor, "h100_sxm", weight_bytes=1, fp8_compute=True)
    base_a100, fp8_a100 = model(anchor, "a100_sxm"), model(anchor, "a100_sxm", weight_bytes=1, fp8_compute=True)
    assert fp8_h100.ttft_seconds(p) < 0.7 * base_h100.ttft_seconds(p)
    assert fp8_a100.ttft_seconds(p) == pytest.approx(base_a100.ttft_seconds(p), rel=1e-12)
    assert fp8_a100.tpot_seconds(1, 4096) < 0.6 * base_a100.tpot_seconds(1, 4096)  # fewer bytes still help decode


def test_reserved_contexts_fit_fewer_requests_and_change_no_step(anchor):
    m, base = model(anchor, reserve_tokens=9216), model(anchor)
    assert m.max_batch(4096) == math.floor(base.free / (9216 * base.kv + base.state)) < base.max_batch(4096)
    assert m.max_batch(16384) == base.max_batch(16384)  # a longer context than the reservation: its own length
    assert m.tpot_seconds(8, 4096) == base.tpot_seconds(8, 4096)


@pytest.mark.parametrize("gid", sorted(GPUS))
def test_the_bisection_finds_the_largest_batch_under_the_target(anchor, gid):
    for t in TECH["settings"].values():
        m = tq.TechniqueCost(anchor, tq.Technique.of(t), tq.Gpu.of(gpu(gid)))
        for c, slo in ((1024, 0.012), (4096, 0.02), (32768, 0.05)):
            scan = max([b for b in range(0, m.max_batch(c) + 1) if b == 0 or m.tpot_seconds(b, c) <= slo])
            assert m.max_batch_under_slo(c, slo) == scan, (t, c, slo)


def test_the_claims_are_settled_on_every_gpu_and_the_page_follows_them():
    claims = {c["id"]: c for c in DATA["claims"] if c["id"].startswith("technique.")}
    assert len(claims) == len(GPUS) * len(TECH["claims"])
    for cid in TECH["claims"]:
        fails = [g for g in GPUS if not claims[f"technique.{g}.{cid}"]["holds"]]
        assert TECH["fails_on"][cid] == fails
    # what the model says on the default anchor (the page words these): quantized weights move the whole
    # frontier everywhere; the A100 has no FP8 rate, so its FP8 TTFT does not beat INT4's
    assert TECH["fails_on"]["weights_move_frontier"] == [] and TECH["fails_on"]["spec_helps_lone_user"] == []
    assert TECH["fails_on"]["fp8_prefills_int4_decodes"] == ["a100_sxm"] == TECH["without_fp8"]
    html = (ROOT / "site" / "index.html").read_text(encoding="utf-8")
    assert re.search(r'TTFT 更短<span data-longest-extra="\d+">\(没有 FP8 算力的卡除外\)</span>', html)
    from tests.test_any_configuration import verdicts  # the table marks each claim as settled on each GPU

    assert verdicts(html) == {g: {cid: "✗" if g in TECH["fails_on"][cid] else "✓" for cid in TECH["claims"]}
                              for g in GPUS}


def test_every_cell_of_the_table_has_its_record():
    prov = DATA["provenance"]
    for tid in TECH["order"]:
        for name in TECH["readouts"]:
            rec = prov[f"readout.technique.{tid}.{name}"]
            assert rec["kind"] == "derived" and rec["formula"] == "scripts.model.techniques:readouts"
            if tid != "baseline":
                assert prov[f"readout.technique.{tid}.{name}_vs_base"]["formula"] == "scripts.model.techniques:change"
    assert prov["technique.draft_cost_pct"]["kind"] == "assumed"
    assert prov["technique.acceptance"]["kind"] == "cited" and "DeepSeek-V3" in json.dumps(prov["technique.acceptance"])


def states(seed: int, n: int) -> list[dict]:
    """Every technique, GPU, context, prompt, TPOT target, k and a, drawn over the sliders' ranges."""
    rng = np.random.default_rng(seed)
    sc, sl = DATA["scenario"], TECH["sliders"]

    def log_draw(name):
        lo, hi = sc[name]["min"], sc[name]["max"]
        return int(2 ** round(rng.uniform(math.log2(lo), math.log2(hi))))

    steps = round((sl["acceptance"]["max"] - sl["acceptance"]["min"]) / sl["acceptance"]["step"])
    return [{"gpu": str(rng.choice(sorted(GPUS))), "context_tokens": log_draw("context_tokens"),
             "prompt_tokens": log_draw("prompt_tokens"),
             "tpot_slo_ms": int(rng.integers(sc["tpot_slo_ms"]["min"], sc["tpot_slo_ms"]["max"] + 1)),
             "draft_tokens": int(rng.integers(sl["draft_tokens"]["min"], sl["draft_tokens"]["max"] + 1)),
             "acceptance": round(sl["acceptance"]["min"] + sl["acceptance"]["step"] * int(rng.integers(0, steps + 1)),
                                 2),
             "technique": str(rng.choice(TECH["order"]))} for _ in range(n)]


def python_table(anchor, s: dict) -> dict:
    out, g = {}, gpu(s["gpu"])
    for tid in TECH["order"]:
        t = dict(TECH["settings"][tid])
        if tid == "speculative":
            t.update(draft_tokens=s["draft_tokens"], acceptance=s["acceptance"])
        args = {"gpu": g, "context": s["context_tokens"], "prompt": s["prompt_tokens"], "tpot_slo_ms": s["tpot_slo_ms"]}
        r = tq.readouts(anchor, t, **args)
        base = tq.readouts(anchor, TECH["settings"]["baseline"], **args)
        for name in TECH["readouts"]:
            out[f"technique.{tid}.{name}"] = r[name]
            if tid != "baseline":
                out[f"technique.{tid}.{name}_vs_base"] = r[name] / base[name] if base[name] else None
    return out


@pytest.mark.browser
@pytest.mark.parametrize("count", [20, pytest.param(200, marks=pytest.mark.exhaustive)])
def test_the_browser_twin_equals_the_python_on_generated_states(lesson_page, anchor, count):
    """`count` generated states of one seeded sequence (seed 40): 20 in make test, 200 in make test-all. The page's
    own function on each state, taken GPU by GPU (the switch sets the page's constants; the other controls are left
    alone: that the page writes this table's values as a reader moves them is tests/test_page_states.py's check, a
    technique in every state and each readout its live value)."""
    page = lesson_page
    checked = 0
    for s in sorted(states(40, count), key=lambda s: s["gpu"]):
        if page.evaluate("() => window.lessonState().gpu") != s["gpu"]:
            page.evaluate("g => window.lessonSet({gpu: g})", s["gpu"])
        got = page.evaluate("s => window.lessonMath.techniqueTable({...window.lessonState(), ...s})", s)
        want = python_table(anchor, s)
        assert set(got) == set(want)
        for k, v in want.items():
            if v is None:
                assert got[k] is None or math.isnan(got[k]), (k, s)  # NaN crosses as null: no ratio to a zero
            else:
                assert got[k] == pytest.approx(v, rel=1e-9, abs=1e-12), (k, s)
        rows = page.evaluate("s => window.lessonMath.techniqueFrontierRows({...window.lessonState(), ...s})", s)
        if s["technique"] != "baseline":
            t = dict(TECH["settings"][s["technique"]])
            if s["technique"] == "speculative":
                t.update(draft_tokens=s["draft_tokens"], acceptance=s["acceptance"])
            py = tq.TechniqueCost(anchor, tq.Technique.of(t), tq.Gpu.of(gpu(s["gpu"]))).frontier(s["context_tokens"])
            assert len(rows) == len(py), s
            for r, p in zip(rows, py, strict=True):
                assert r["step_ms"] == pytest.approx(p["step_ms"], rel=1e-9)
                assert r["throughput_tok_s"] == pytest.approx(p["throughput_tok_s"], rel=1e-9)
        else:
            assert rows == []
        checked += 1
    assert checked == count
    page.evaluate("window.lessonSet({gpu: 'h100_sxm', context_tokens: 4096, prompt_tokens: 32768, tpot_slo_ms: 20, "
                  "draft_tokens: 1, acceptance: 0.85, technique: 'baseline'})")


@pytest.mark.browser
def test_the_table_shows_the_records_at_the_default_state(lesson_page):
    page = lesson_page
    page.evaluate("window.lessonSet({gpu: 'h100_sxm', context_tokens: 4096, prompt_tokens: 32768, tpot_slo_ms: 20, "
                  "draft_tokens: 1, acceptance: 0.85, technique: 'baseline'})")
    prov = DATA["provenance"]
    cells = page.evaluate("""() => [...document.querySelectorAll('#techniques [data-readout^="technique."]')]
        .map(e => [e.dataset.prov, e.textContent])""")
    assert len(cells) == len(TECH["order"]) * len(TECH["readouts"]) * 2 - len(TECH["readouts"])
    for rid, text in cells:
        assert text == prov[rid]["display"], rid


@pytest.mark.browser
@pytest.mark.parametrize("width", [1280, 390])
def test_a_technique_switched_on_draws_its_frontier_and_marks_its_row(browser, width):
    ARTIFACTS.mkdir(exist_ok=True)
    page, watch = open_page(browser, (ROOT / "site" / "index.html").as_uri(), width=width)
    try:
        page.locator('#techniques input[data-choice="technique"][value="weights_int4"]').check()
        page.evaluate("window.lessonPending()")
        drawn = page.evaluate("window.lessonViews.frontier.data('frontier_technique').length")
        assert drawn == DATA["provenance"]["readout.technique.weights_int4.max_batch"]["value"]
        assert page.locator('tr[data-technique-row="weights_int4"]').get_attribute("class") == "chosen"
        slider = page.locator('input[data-param="draft_tokens"]')
        slider.evaluate("el => { el.value = '4'; el.dispatchEvent(new Event('input', {bubbles: true})); }")
        page.evaluate("window.lessonPending()")
        assert page.locator('[data-slider-value="draft_tokens"]').first.inner_text() == "4"
        page.locator("#exp-frontier").screenshot(path=str(ARTIFACTS / f"frontier-techniques-{width}.png"))
        assert page.evaluate("document.documentElement.scrollWidth") <= width
    finally:
        page.close()
    assert watch.errors == []


@pytest.mark.parametrize(("edit", "field"), [
    (lambda d: d["speculative"]["acceptance"].update(value=0.99), "speculative.acceptance"),  # past the slider
    (lambda d: d["speculative"]["draft_tokens"].update(value=0), "speculative.draft_tokens.value"),
    (lambda d: d["reserved"]["reserve_from_workload"].update(value="chatty"), "reserved.reserve_from_workload"),
    (lambda d: d["weights"]["int4"]["bytes_per_weight"].update(value=3), "weights.int4.bytes_per_weight.value"),
    (lambda d: d["speculative"]["draft_cost"].pop("assumption"), "speculative.draft_cost"),
    (lambda d: d["weights"]["fp8"].update(label="8"), "weights.fp8.label"),
])
def test_a_bad_techniques_file_is_refused_in_one_line_naming_the_field(tmp_path, edit, field):
    from scripts.record.anchor_file import load_techniques
    from scripts.record.inputs import InputError

    doc = json.loads((ROOT / "config" / "techniques.json").read_text(encoding="utf-8"))
    edit(doc)
    path = tmp_path / "techniques.json"
    path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    with pytest.raises(InputError) as err:
        load_techniques(path, ROOT / "config" / "workloads.json")
    assert "\n" not in str(err.value) and path.as_posix() in str(err.value) and field in str(err.value), err.value
