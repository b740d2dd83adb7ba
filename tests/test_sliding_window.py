"""Sliding-window attention in the roofline (issue 64's gpt-oss-120b), against its model card and hand-worked
cases; the serving simulator's step cost, the technique switches and every browser twin on that anchor
(anchors/gpt-oss-120b-h100.json). Its page end to end (built, audited, its readouts in Chromium) is
tests/test_anchors.py's, in `make test-all`; the cases here, in `make test`, guard its math and its page data."""
import json
from dataclasses import replace

import numpy as np
import pytest

from scripts.model import features, sizes
from scripts.model import roofline as rl
from scripts.model import techniques as tq
from scripts.record.anchor_file import load, validate
from scripts.record.inputs import InputError
from tests.conftest import ROOT

GPT_OSS = ROOT / "anchors" / "gpt-oss-120b-h100.json"
MXFP4 = (32 * 4 + 8) / 32 / 8  # bytes per parameter: 32 four-bit values share one 8-bit scale


@pytest.fixture(scope="module")
def oss():
    return load(GPT_OSS)


def test_gpt_oss_120b_has_its_model_cards_parameters_and_checkpoint(oss):
    """Model card, Table 1: 116.83B parameters (MLP 114.71B, attention 0.96B, embedding and unembedding 1.16B),
    5.13B active, a 60.8 GiB checkpoint. The roofline leaves out the biases and attention sinks (0.04B, mostly the
    experts' biases: 36 x 128 x (2 x 2880 + 2880) = 39.8M), so it counts 116.79B."""
    a, _ = oss
    expert = 3 * 2880 * 2880
    assert sizes.routed_expert_params(a) == 36 * 128 * expert == 114_661_785_600
    assert sizes.total_params(a) == pytest.approx(116.83e9, rel=0.001)
    assert sizes.total_params(a) + 36 * 128 * 3 * 2880 == pytest.approx(116.83e9, rel=0.0002)  # the biases back in
    assert sizes.active_params_per_token(a) + sizes.embedding_params(a) == pytest.approx(5.13e9 + 0.58e9, rel=0.01)
    assert sizes.active_params_per_token(a) == pytest.approx(5.13e9, rel=0.001)  # the card's active count: no input
    assert sizes.weight_bytes_total(a) / 2**30 == pytest.approx(60.8, rel=0.005)  # embedding (a lookup, not a matmul)
    assert a.expert_weight_bytes == MXFP4


def test_the_window_layers_hold_a_fixed_kv_and_a_decode_step_reads_it_once(oss):
    """18 full-attention layers cache K and V of 8 heads x 64 per token (36,864 B in bf16); the 18 window layers
    hold their last 128 tokens' (4,718,592 B per request whatever its context), read once by a decode step, where
    the DeltaNet state of the lesson's hybrid anchor is read and written (twice)."""
    a, _ = oss
    assert sizes.full_attention_layers(a) == sizes.window_attention_layers(a) == 18
    assert sizes.linear_attention_layers(a) == 0 and sizes.recurrent_state_bytes_per_request(a) == 0
    assert sizes.kv_bytes_per_token(a) == 18 * 2 * 8 * 64 * 2 == 36_864
    assert sizes.state_bytes_per_request(a) == 18 * 2 * 8 * 64 * 128 * 2 == sizes.decode_state_bytes(a) == 4_718_592
    assert rl.bytes_per_request(a, 4096) == 4096 * 36_864 + 4_718_592
    step = rl.weight_bytes_read(a, 3) + 3 * (4096 * 36_864 + 4_718_592)
    assert rl.decode_step_bytes(a, 3, 4096) == pytest.approx(step, rel=1e-15)
    hybrid, _ = load(ROOT / "anchor-model.json")
    assert sizes.window_attention_layers(hybrid) == 0
    assert sizes.decode_state_bytes(hybrid) == 2 * sizes.state_bytes_per_request(hybrid)
    assert features.features(a) == {"experts", "sliding_window"} and "sliding_window" not in features.features(hybrid)


def test_without_its_window_the_same_layers_would_be_full_attention_or_deltanet(oss):
    """The window decides what the layers between the full ones are: with it, attention with the full layers'
    projections (the parameters of 36 full-attention layers); without it, the kit's Gated DeltaNet layers."""
    a, _ = oss
    all_full = replace(a, full_attention_interval=1, sliding_window=0)
    assert sizes.total_params(a) == sizes.total_params(all_full)
    assert sizes.kv_bytes_per_token(all_full) == 2 * sizes.kv_bytes_per_token(a)
    deltanet = replace(a, sliding_window=0)
    assert sizes.linear_attention_layers(deltanet) == 18 and sizes.window_attention_layers(deltanet) == 0


def test_a_simulator_iteration_with_a_window_is_its_roofline_step(oss):
    """IterationCost (the simulator's step cost) prices decoders and chunks as roofline.py does: each decoder reads
    its window once; a prompt's first chunk writes it, a later chunk reads and writes it (state_passes)."""
    a, _ = oss
    cost = rl.iteration_cost(a)
    for batch in (1, 8, 73):
        assert cost.seconds(batch, batch * 4096) == pytest.approx(rl.decode_step_seconds(a, batch, 4096), rel=1e-12)
    mixed = rl.mixed_step_seconds(a, 8, 4096, 512, 1024)
    assert cost.seconds(8, 8 * 4096, [(1024, 512)]) == pytest.approx(mixed, rel=1e-12)
    runs = cost.decode_run(8, np.array([8 * 4096.0, 8 * 4097.0]))
    assert runs[0] == pytest.approx(rl.decode_step_seconds(a, 8, 4096), rel=1e-12)


def test_a_kv_format_shrinks_the_window_too(oss):
    """KV-cache quantization (techniques.json's FP8 KV: 1 B per element) halves every cached K/V element, the
    window layers' as well; the baseline's step is the roofline's."""
    a, _ = oss
    gpu = tq.Gpu(a.hbm_bytes, a.hbm_bandwidth_bytes_per_s, a.peak_bf16_flops)
    base, fp8 = (tq.TechniqueCost(a, tq.Technique(kv_bytes=b), gpu) for b in (None, 1))
    assert base.state == base.decode_state == 4_718_592 and fp8.state == fp8.decode_state == 4_718_592 / 2
    assert base.bytes_per_request(4096) == rl.bytes_per_request(a, 4096)
    assert base.step_seconds(16, 4096) == pytest.approx(rl.decode_step_seconds(a, 16, 4096), rel=1e-12)


@pytest.mark.parametrize(("change", "field"), [
    ({"full_attention_interval": 1}, "model.sliding_window.value"),
    ({"kv_lora_rank": 512}, "model.sliding_window.value"),
])
def test_an_impossible_window_is_refused_in_one_line_naming_the_field(change, field):
    doc = json.loads(GPT_OSS.read_text(encoding="utf-8"))
    for name, value in change.items():
        doc["model"][name] = {"value": value, "assumption": "a test's change"}
    with pytest.raises(InputError) as err:
        validate(doc, GPT_OSS.name, ROOT / "config" / "gpus.json")
    assert field in str(err.value) and "\n" not in str(err.value)


@pytest.fixture(scope="module")
def oss_page_data(oss):
    """What the gpt-oss page ships (precomputed.build): its constants, GPU switch and technique settings."""
    from tests.test_moe import page_data

    return page_data(oss, "anchors/gpt-oss-120b-h100.json")


def test_the_page_records_the_window_and_words_its_kv_for_it(oss_page_data):
    """The page ships the window's constants and records (18 window layers, 128 tokens, 4.7 MB per request), and
    labels its weights as in two formats."""
    data = oss_page_data
    prov = data["provenance"]
    assert data["page"]["window_layers"] == 18 and data["page"]["linear_layers"] == 0
    assert prov["model.window_layers"]["value"] == 18 and prov["model.sliding_window"]["value"] == 128
    assert prov["model.state_mb"]["value"] == pytest.approx(4.718592)
    assert "滑动窗口" in prov["model.state_mb"]["label"] and "专家" in prov["model.weights_gb"]["label"]
    assert data["constants"]["decode_state_bytes"] == 4_718_592
    assert data["constants"]["window_kv_elements_per_request"] == 18 * 2 * 8 * 64 * 128


def test_the_lesson_pages_twins_equal_the_python_with_a_window(oss, oss_page_data, tmp_path):
    """The lesson page's roofline, technique and timeline sections against scripts/model/ on the window anchor's
    generated states (test_moe's comparison, 100 states)."""
    from tests.test_moe import compare_lesson_twins

    assert compare_lesson_twins(oss[0], oss_page_data, tmp_path, states=100, seed=20261207) >= 5


def test_the_browser_simulator_equals_the_python_with_a_window(oss, tmp_path):
    """The page's simulator against the Python engine on 8 generated configurations of the window anchor."""
    from tests.test_moe import compare_simulator_twins

    fx = compare_simulator_twins(oss[0], tmp_path, configurations=8)
    assert fx["model"]["window_kv_bytes"] == 4_718_592 and fx["model"]["recurrent_state_bytes_per_request"] == 0


@pytest.mark.browser
def test_the_gpt_oss_lesson_page_reads_true_and_computes_its_own_numbers(oss, browser, tmp_path):
    """A mixture-of-experts anchor's page in make test's time (issue 64: one MoE anchor in the fast tier): gpt-oss's
    lesson data (the precomputed rule's own code) rendered into the lesson page, the simulator's data staying the
    default's (the anchor built end to end, every page audited, is tests/test_anchors.py's make-test-all case). Every
    number on it resolves to its record and each derived record recomputes from the anchor file; the words check
    finds nothing (expert and window text, no DeltaNet); in Chromium its readouts equal the Python on the anchors'
    grid of states."""
    from scripts.audit.embedded import check_numbers
    from scripts.audit.recompute import check_derived
    from scripts.audit.words import check_words
    from scripts.page.bundles import DATA_SCRIPT, read_page_records
    from scripts.page.scan import page_text
    from tests.browser import open_page
    from tests.test_anchors import ANCHOR_GRID, check_grid
    from tests.test_record_reliability3 import render_anchor_lesson

    page = render_anchor_lesson(GPT_OSS, tmp_path)
    html = page.read_text(encoding="utf-8")
    records = json.loads((tmp_path / "lesson.json").read_text(encoding="utf-8"))["provenance"]
    defaults = {}  # the default's token counts, benchmark and simulations, as the page shows them
    for name in ("tokenizer_counts.json", "bench_medians.json", "serving.json", "measured_records.json"):
        defaults.update(json.loads((ROOT / "precomputed" / name).read_text(encoding="utf-8"))["provenance"])
    script = (tmp_path / "site" / DATA_SCRIPT).read_text(encoding="utf-8")
    every = {**defaults, **records, **read_page_records(script)}  # and the page's own (its reading time)
    assert check_numbers(html, every) == []
    lesson = {rid: rec for rid, rec in every.items() if rid in records or rec["kind"] != "derived"}
    assert check_derived(lesson, ROOT, GPT_OSS)[0] == []  # the lesson's derived records, from the anchor file
    assert check_words([page], oss[0], "gpt-oss-120b", ROOT) == []
    text = page_text(html)
    assert "滑动窗口" in text and "专家拐点" in text and "DeltaNet" not in text and "gpt-oss-120b" in text
    assert "基线(bf16" not in text  # its experts are MXFP4: the technique table's baseline names the model's format
    shown, watch = open_page(browser, page.as_uri())
    check_grid(shown, oss[0], ANCHOR_GRID)
    assert watch.errors == []
    shown.close()
