"""Mixture of experts and multi-head latent attention in the roofline (issue 64), against hand-worked cases and
published figures. The anchors under anchors/moe/ are roofline-only: the lesson page and the serving simulator
refuse them in one line until their twins price experts."""
import copy
import json
import math
from dataclasses import replace

import pytest

from scripts.model import roofline as rl
from scripts.record.anchor_file import load, validate
from scripts.record.inputs import InputError
from tests.conftest import ROOT

QWEN3_MOE = ROOT / "anchors" / "moe" / "qwen3-30b-a3b-h100.json"


@pytest.fixture(scope="module")
def moe():
    return load(QWEN3_MOE)


def test_the_experts_a_step_touches_go_from_k_to_all_of_them(moe):
    """E (1 - (1 - k/E)^T) for E = 128, k = 8: one token reads its 8; two read 128 (1 - (15/16)^2) = 15.5; the
    knee (90 % of the experts) is the first T with (15/16)^T <= 0.1, T = 36; a large batch reads all 128."""
    a, _ = moe
    assert rl.expected_experts_touched(a, 1) == pytest.approx(8)
    assert rl.expected_experts_touched(a, 2) == pytest.approx(15.5)
    knee = math.ceil(math.log(0.1) / math.log(1 - 8 / 128))
    assert knee == 36
    assert rl.expected_experts_touched(a, knee - 1) < 0.9 * 128 <= rl.expected_experts_touched(a, knee)
    assert rl.expected_experts_touched(a, 10_000) == pytest.approx(128)
    assert rl.expected_experts_touched(replace(a, num_experts=0), 64) == 0


def test_qwen3_30b_a3b_has_the_model_cards_parameters(moe):
    """The model card: 30.5B parameters, 3.3B activated (the card counts the input embedding, which a token does
    not multiply by: the roofline's active parameters are the FLOPs' 3.04B)."""
    a, _ = moe
    assert rl.total_params(a) == pytest.approx(30.5e9, rel=0.01)
    assert rl.active_params_per_token(a) + rl.embedding_params(a) == pytest.approx(3.3e9, rel=0.02)
    expert = 3 * 2048 * 768
    assert rl.routed_expert_params(a) == 48 * 128 * expert


def test_a_moe_steps_weight_bytes_grow_with_its_tokens_to_all_the_experts(moe):
    a, _ = moe
    expert_bytes = 3 * 2048 * 768 * 2
    rest = rl.weight_bytes_read_per_step(a)  # attention, routers, norms and the LM head: read by every step
    assert rl.weight_bytes_read(a, 1) == pytest.approx(rest + 48 * 8 * expert_bytes)
    everything = rl.weight_bytes_total(a) - rl.embedding_params(a) * a.weight_bytes  # but the input embedding
    assert rl.weight_bytes_read(a, 100_000) == pytest.approx(everything, rel=1e-9)
    steps = [rl.weight_bytes_read(a, b) for b in (1, 2, 8, 36, 128, 1024)]
    assert steps == sorted(steps) and steps[-1] <= everything
    # the FLOPs follow the active parameters, linear in the batch
    assert rl.decode_step_flops(a, 8, 0) == pytest.approx(2 * 8 * rl.active_params_per_token(a))


def test_per_token_a_moe_batch_pays_more_than_a_dense_one_until_every_expert_is_read(moe):
    """The behaviour the lesson will draw: the weight bytes per token fall more slowly with the batch than a dense
    model's of the same active size (which reads the same weights at every batch), then like it once all the
    experts are read."""
    a, _ = moe
    per_token = {b: rl.weight_bytes_read(a, b) / b for b in (1, 8, 36, 256, 4096)}
    dense_same_active = rl.weight_bytes_read(a, 1)
    assert per_token[1] == pytest.approx(dense_same_active)
    assert per_token[8] > dense_same_active / 8 * 3  # three times the dense model's share at batch 8
    full = rl.weight_bytes_read(a, 1e9)
    assert per_token[4096] == pytest.approx(full / 4096, rel=1e-9)


def test_the_largest_batch_under_a_target_is_the_last_that_meets_it(moe):
    a, _ = moe
    for slo_ms in (5, 10, 20, 40):
        cap = rl.max_batch_by_memory(a, 4096)
        b = rl.max_batch_under_slo(a, 4096, slo_ms / 1e3)
        assert 1 <= b <= cap
        assert rl.decode_step_seconds(a, b, 4096) <= slo_ms / 1e3
        assert b == cap or rl.decode_step_seconds(a, b + 1, 4096) > slo_ms / 1e3
    assert rl.max_batch_under_slo(a, 4096, 1e-4) == 0


@pytest.mark.parametrize(("model", "layers", "kv_lora_rank", "rope", "kv_heads", "published"), [
    ("DeepSeek-V3 (MLA)", 61, 512, 64, 0, 70_272),
    ("Qwen-2.5 72B (GQA)", 80, 0, 0, 8, 327_680),
    ("LLaMA-3.1 405B (GQA)", 126, 0, 0, 8, 516_096),
])
def test_kv_bytes_per_token_equal_the_published_figures(moe, model, layers, kv_lora_rank, rope, kv_heads, published):
    """Zhao et al., "Insights into DeepSeek-V3" (ISCA 2025, arXiv:2505.09343), Table 1, KV cache per token in BF16:
    70.272 KB for DeepSeek-V3's MLA ((512 + 64) x 61 layers), 327.680 KB and 516.096 KB for two GQA models."""
    a, _ = moe
    shaped = replace(a, num_hidden_layers=layers, full_attention_interval=1, kv_lora_rank=kv_lora_rank,
                     qk_rope_head_dim=rope, num_key_value_heads=kv_heads or a.num_key_value_heads, head_dim=128,
                     kv_cache_bytes=2)
    assert rl.kv_bytes_per_token(shaped) == published, model


def test_mxfp4_experts_are_counted_at_their_bytes(moe):
    """gpt-oss's experts in MXFP4: 4-bit values and one 8-bit scale per 32, 4.25 bits = 0.53125 B a parameter."""
    a, _ = moe
    packed = replace(a, expert_weight_bytes=0.53125)
    routed = rl.routed_expert_params(a)
    assert rl.weight_bytes_total(packed) == pytest.approx((rl.total_params(a) - routed) * 2 + routed * 0.53125)
    assert rl.weight_bytes_read(packed, 1) == pytest.approx(rl.weight_bytes_read_per_step(a) + 48 * 8 * 3 * 2048 *
                                                            768 * 0.53125)


def test_a_dense_anchors_numbers_do_not_move():
    a, _ = load(ROOT / "anchor-model.json")
    assert a.num_experts == 0 and rl.routed_expert_params(a) == 0
    for b in (1, 8, 58, 512):
        assert rl.weight_bytes_read(a, b) == rl.weight_bytes_read_per_step(a) == rl.params_read_per_step(a) * 2
    assert rl.active_params_per_token(a) == rl.params_read_per_step(a)


def moe_doc() -> dict:
    return json.loads(QWEN3_MOE.read_text(encoding="utf-8"))


@pytest.mark.parametrize(("change", "field"), [
    (lambda m: m["num_experts_per_tok"].update(value=129), "model.num_experts_per_tok.value"),
    (lambda m: m.pop("expert_routing"), "model.expert_routing"),
    (lambda m: m.pop("moe_intermediate_size"), "model.moe_intermediate_size.value"),
    (lambda m: m["num_experts"].update(value=0), "model.num_experts_per_tok.value"),
    (lambda m: m.update(first_dense_layers={"value": 48, "source": "x"}), "model.first_dense_layers.value"),
    (lambda m: m.update(qk_rope_head_dim={"value": 64, "source": "x"}), "model.qk_rope_head_dim.value"),
    (lambda m: m["expert_routing"].update(value="skewed"), "model.expert_routing.value"),
])
def test_an_inconsistent_mixture_is_refused_in_one_line_naming_the_field(change, field):
    doc = moe_doc()
    change(doc["model"])
    with pytest.raises(InputError) as err:
        validate(doc, "qwen3-30b-a3b-h100.json")
    message = str(err.value)
    assert "\n" not in message and message.startswith("qwen3-30b-a3b-h100.json: field ") and field in message, message


def test_the_page_and_the_simulator_refuse_a_mixture_until_they_price_experts(moe):
    from scripts.lesson.precomputed import build

    a, doc = moe
    gpus = json.loads((ROOT / "config" / "gpus.json").read_text(encoding="utf-8"))
    cited = json.loads((ROOT / "config" / "cited.json").read_text(encoding="utf-8"))
    with pytest.raises(InputError, match="field model.num_experts: the lesson page cannot draw a mixture") as err:
        build(a, copy.deepcopy(doc), cited, gpus, anchor_file="anchors/moe/qwen3-30b-a3b-h100.json")
    assert "\n" not in str(err.value) and str(err.value).startswith("anchors/moe/qwen3-30b-a3b-h100.json")
    with pytest.raises(ValueError, match="issue 64"):
        rl.IterationCost(a)
    from scripts.record.anchors import anchor_files

    assert not [f for f in anchor_files(ROOT).values() if "moe" in f]  # not among the anchors `make anchors` builds
