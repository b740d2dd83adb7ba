"""Mixture of experts and multi-head latent attention in the roofline (issue 64), against hand-worked cases and
published figures; the serving simulator's step cost, the technique switches and every browser twin on the MoE
anchor (anchors/qwen3-30b-a3b-h100.json), and the page's records of its expert knee. The anchor's page end to end
(built, audited, its readouts in Chromium) is tests/test_anchors.py's, in `make test-all` (each anchor's build takes
about two minutes here); the cases here, in `make test`, guard its math and its page data."""
import copy
import json
import math
from dataclasses import replace

import numpy as np
import pytest

from scripts.model import roofline as rl
from scripts.model import sizes
from scripts.record.anchor_file import load, validate
from scripts.record.inputs import InputError
from tests.conftest import ROOT

QWEN3_MOE = ROOT / "anchors" / "qwen3-30b-a3b-h100.json"


@pytest.fixture(scope="module")
def moe():
    return load(QWEN3_MOE)


def test_the_experts_a_step_touches_go_from_k_to_all_of_them(moe):
    """E (1 - (1 - k/E)^T) for E = 128, k = 8: one token reads its 8; two read 128 (1 - (15/16)^2) = 15.5; the
    knee (90 % of the experts) is the first T with (15/16)^T <= 0.1, T = 36; a large batch reads all 128."""
    a, _ = moe
    assert sizes.expected_experts_touched(a, 1) == pytest.approx(8)
    assert sizes.expected_experts_touched(a, 2) == pytest.approx(15.5)
    knee = math.ceil(math.log(0.1) / math.log(1 - 8 / 128))
    assert knee == 36
    assert sizes.expected_experts_touched(a, knee - 1) < 0.9 * 128 <= sizes.expected_experts_touched(a, knee)
    assert sizes.expected_experts_touched(a, 10_000) == pytest.approx(128)
    assert sizes.expected_experts_touched(replace(a, num_experts=0), 64) == 0


def test_qwen3_30b_a3b_has_the_model_cards_parameters(moe):
    """The model card: 30.5B parameters, 3.3B activated (the card counts the input embedding, which a token does
    not multiply by: the roofline's active parameters are the FLOPs' 3.04B)."""
    a, _ = moe
    assert sizes.total_params(a) == pytest.approx(30.5e9, rel=0.01)
    assert sizes.active_params_per_token(a) + sizes.embedding_params(a) == pytest.approx(3.3e9, rel=0.02)
    expert = 3 * 2048 * 768
    assert sizes.routed_expert_params(a) == 48 * 128 * expert


def test_a_moe_steps_weight_bytes_grow_with_its_tokens_to_all_the_experts(moe):
    a, _ = moe
    expert_bytes = 3 * 2048 * 768 * 2
    rest = sizes.weight_bytes_read_per_step(a)  # attention, routers, norms and the LM head: read by every step
    assert rl.weight_bytes_read(a, 1) == pytest.approx(rest + 48 * 8 * expert_bytes)
    everything = sizes.weight_bytes_total(a) - sizes.embedding_params(a) * a.weight_bytes  # but the input embedding
    assert rl.weight_bytes_read(a, 100_000) == pytest.approx(everything, rel=1e-9)
    steps = [rl.weight_bytes_read(a, b) for b in (1, 2, 8, 36, 128, 1024)]
    assert steps == sorted(steps) and steps[-1] <= everything
    # the FLOPs follow the active parameters, linear in the batch
    assert rl.decode_step_flops(a, 8, 0) == pytest.approx(2 * 8 * sizes.active_params_per_token(a))


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
    assert sizes.kv_bytes_per_token(shaped) == published, model


def test_mxfp4_experts_are_counted_at_their_bytes(moe):
    """gpt-oss's experts in MXFP4: 4-bit values and one 8-bit scale per 32, 4.25 bits = 0.53125 B a parameter."""
    a, _ = moe
    packed = replace(a, expert_weight_bytes=0.53125)
    routed = sizes.routed_expert_params(a)
    assert sizes.weight_bytes_total(packed) == pytest.approx((sizes.total_params(a) - routed) * 2 + routed * 0.53125)
    assert rl.weight_bytes_read(packed, 1) == pytest.approx(sizes.weight_bytes_read_per_step(a) + 48 * 8 * 3 * 2048 *
                                                            768 * 0.53125)


def test_a_dense_anchors_numbers_do_not_move():
    a, _ = load(ROOT / "anchor-model.json")
    assert a.num_experts == 0 and sizes.routed_expert_params(a) == 0
    for b in (1, 8, 58, 512):
        assert rl.weight_bytes_read(a, b) == sizes.weight_bytes_read_per_step(a) == sizes.params_read_per_step(a) * 2
    assert sizes.active_params_per_token(a) == sizes.params_read_per_step(a)


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


def test_the_moe_page_marks_the_knee_and_the_weights_a_step_reads(moe, moe_page_data):
    """The page's records for Qwen3-30B-A3B at 4096 tokens on an H100: the knee at 90 % of the experts is batch 36
    (hand-worked above); one request reads the shared weights and 8 experts per layer (48 layers x 8 x 3 x 2048 x
    768 params, bf16); once every expert is read a bf16 step reads every parameter but the input embedding, 2 B each;
    memory (43 requests) reaches past the knee (36), so the page says how much less a step grows per request there."""
    a, _ = moe
    p = moe_page_data["provenance"]
    assert p["moe.knee_batch"]["value"] == 36 and p["moe.b1.experts"]["value"] == pytest.approx(8)
    assert p["moe.b1.weights_gb"]["value"] == pytest.approx(
        (sizes.weight_bytes_read_per_step(a) + 48 * 8 * 3 * 2048 * 768 * 2) / 1e9, rel=1e-12)
    assert p["moe.weights_gb_all"]["value"] == pytest.approx(sizes.params_read_per_step(a) * 2 / 1e9, rel=1e-12)
    assert p["mem.cap.c4096"]["value"] == 43 and p["moe.b43.experts"]["value"] == pytest.approx(
        128 * (1 - (15 / 16) ** 43))
    assert moe_page_data["page"]["experts"] == {"knee": 36, "percent": 90, "flattens": True, "memory_short_on": []}
    assert p["moe.after_knee.ms_per_request"]["value"] < p["moe.before_knee.ms_per_request"]["value"]
    k = moe_page_data["constants"]
    assert (k["num_experts"], k["num_experts_per_tok"], k["expert_weight_bytes"]) == (128, 8, 2)
    assert k["moe_expert_params"] == 48 * 3 * 2048 * 768 and k["routed_expert_params"] == 128 * k["moe_expert_params"]
    from scripts.record.anchors import anchor_files

    assert "anchors/qwen3-30b-a3b-h100.json" in anchor_files(ROOT).values()  # `make anchors` builds its page


@pytest.mark.parametrize("anchor", ["moe", "dense"])
def test_the_knee_setting_goes_with_experts_or_is_refused_in_one_line(anchor):
    """scenario.expert_knee_percent is required with model.num_experts and refused without it."""
    path = QWEN3_MOE if anchor == "moe" else ROOT / "anchor-model.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    if anchor == "moe":
        del doc["scenario"]["expert_knee_percent"]
    else:
        doc["scenario"]["expert_knee_percent"] = {"value": 90, "unit": "%", "assumption": "x"}
    with pytest.raises(InputError, match="x.json: field scenario.expert_knee_percent goes with model.num_experts"):
        validate(doc, "x.json", ROOT / "config" / "gpus.json")


@pytest.mark.parametrize("batch", [1, 2, 36, 256])
def test_a_simulator_iteration_of_a_mixture_is_its_roofline_step(moe, batch):
    """The serving simulator's step cost (IterationCost) reads the experts its tokens touch: a decode iteration of B
    requests is decode_step_seconds at B, a whole prompt is prefill_seconds, a chunk riding with decoders is
    mixed_step_seconds (the chunk's tokens touch experts the decoders' did not)."""
    a, _ = moe
    cost, ctx = rl.IterationCost(a), 4096
    assert cost.weights_for(batch) == rl.weight_bytes_read(a, batch)
    assert cost.seconds(batch, batch * ctx) == pytest.approx(rl.decode_step_seconds(a, batch, ctx), rel=1e-12)
    assert cost.seconds(0, 0.0, [(0, batch * 64)]) == pytest.approx(rl.prefill_seconds(a, batch * 64), rel=1e-12)
    mixed = cost.seconds(batch, batch * ctx, [(1024, 512)])
    assert mixed == pytest.approx(rl.mixed_step_seconds(a, batch, ctx, 512, 1024), rel=1e-12)
    runs = cost.decode_run(batch, np.array([batch * ctx, batch * (ctx + 1)], dtype=float))
    assert runs[0] == pytest.approx(rl.decode_step_seconds(a, batch, ctx), rel=1e-12)
    dense = replace(a, num_experts=0)  # the same model with its experts' reads left out: a constant weight term
    assert rl.IterationCost(dense).weights_for(batch) == sizes.weight_bytes_read_per_step(dense)


NODE_RUN = """const S = require(process.argv[1]), fx = JSON.parse(require('fs').readFileSync(process.argv[2], 'utf8'));
console.log(JSON.stringify((%s)(S, fx)));"""  # the page-parity test's run of every case (RUN_CASES), in node


def test_the_browser_simulator_equals_the_python_on_a_mixture(moe, tmp_path):
    """The page's simulator (templates/serving_sim/, run by node as the page's worker runs it) against the Python
    engine on 12 generated configurations of the MoE anchor (scripts/serving/parity.py: schedules, presets, P/D
    splits, paged memory with small pools, both step-time sets, the GPUs of config/gpus.json), held as
    tests/test_sim_parity.py holds the dense anchor's: every request's times, preemptions and breakdown, the page's
    summary, the same refusals."""
    fx = compare_simulator_twins(moe[0], tmp_path, configurations=12)
    assert fx["model"]["num_experts"] == 128 and fx["model"]["expert_keep"] == 1 - 8 / 128


def compare_simulator_twins(a, tmp_path, configurations: int) -> dict:
    """The browser simulator against the Python engine on `configurations` generated fixtures of anchor `a`
    (most of them run, not refused); returns the fixtures."""
    import subprocess

    from scripts.page.bundles import sim_script
    from scripts.serving import aggregate, parity
    from scripts.serving.workloads import config
    from tests.test_sim_parity import RUN_CASES, assert_twin_equals_python

    _, workloads, settings = config.sweep_inputs(ROOT / "anchor-model.json", ROOT / "config" / "workloads.json")
    gpus = json.loads((ROOT / "config" / "gpus.json").read_text(encoding="utf-8"))["gpus"]
    fx = parity.fixtures(a, gpus, workloads, configurations, 64, aggregate.QUANTUM_MS, settings["slo_ms"])
    (tmp_path / "sim.js").write_text(sim_script(ROOT / "templates" / "serving_sim"), encoding="utf-8")
    (tmp_path / "fx.json").write_text(json.dumps(fx), encoding="utf-8")
    out = subprocess.run(["node", "-e", NODE_RUN % RUN_CASES, str(tmp_path / "sim.js"), str(tmp_path / "fx.json")],
                         capture_output=True, text=True, timeout=120, check=True)
    assert sum("error" not in c for c in fx["cases"]) >= configurations * 2 // 3
    assert_twin_equals_python(json.loads(out.stdout), fx)
    return fx


LESSON_TWIN = """const fs = require('fs'), [data, gpus, states] = JSON.parse(fs.readFileSync(process.argv[1], 'utf8'));
const DATA = {...data, provenance: {'cited.kimi.new_tokens': {value: 0}}, names: {lanes: {}, step_kinds: {}}};
const source = ['roofline', 'techniques', 'timeline'].map(f => fs.readFileSync(`${process.argv[2]}/${f}.js`, 'utf8'));
const names = 'decodeStepSeconds, prefillSeconds, mixedStepSeconds, maxBatchUnderSlo, maxBatchByMemory, ' +
  'withNewcomerSeconds, stepModel, techTpot, techTtft, techMaxBatch';
const lesson = (K) => new Function('K', 'DATA', source.join('') + `return {${names}};`)(K, DATA);
console.log(JSON.stringify(states.map(s => {
  const m = lesson({...DATA.constants, ...gpus[s.gpu]}), t = m.stepModel(DATA.techniques.settings[s.technique]);
  return {decode: m.decodeStepSeconds(s.batch, s.context), prefill: m.prefillSeconds(s.prompt),
    mixed: m.mixedStepSeconds(s.batch, s.context, s.chunk, s.start), slo: m.maxBatchUnderSlo(s.context, s.slo_s),
    cap: m.maxBatchByMemory(s.context), newcomer: m.withNewcomerSeconds(s.batch, s.context, s.prompt),
    tech_tpot: m.techTpot(t, s.batch, s.context), tech_ttft: m.techTtft(t, s.prompt),
    tech_cap: m.techMaxBatch(t, s.context)};
})));"""


@pytest.fixture(scope="module")
def moe_page_data(moe):
    """What the MoE anchor's page ships (precomputed.build): its constants, GPU switch and technique settings."""
    return page_data(moe, "anchors/qwen3-30b-a3b-h100.json")


def page_data(loaded: tuple, anchor_file: str) -> dict:
    """precomputed.build for a loaded (anchor, document) pair and the committed config files."""
    from scripts.lesson.precomputed import build

    a, doc = loaded
    read = lambda name: json.loads((ROOT / "config" / name).read_text(encoding="utf-8"))  # noqa: E731
    return build(a, copy.deepcopy(doc), read("cited.json"), read("gpus.json"), anchor_file,
                 read("techniques.json"), read("workloads.json"))


def test_the_lesson_pages_twins_equal_the_python_on_generated_moe_states(moe, moe_page_data, tmp_path):
    """The lesson page's roofline, technique and timeline sections (templates/lesson/*.js, run by node with the
    constants the MoE page ships, on every GPU of its switch) against scripts/model/ on 200 generated states: decode,
    prefill, a chunk riding with decoders, a newcomer joining, the memory cap, the largest batch within a TPOT target
    (a bisection on both sides), and each technique's TPOT, TTFT and memory cap."""
    assert compare_lesson_twins(moe[0], moe_page_data, tmp_path, states=200, seed=20261206) >= 20
    # the bisection's answer lies strictly inside (0, cap) in many states, not only at an end


def compare_lesson_twins(a, data, tmp_path, states: int, seed: int) -> int:
    """templates/lesson/{roofline,techniques,timeline}.js with the constants page `data` ships, against the Python on
    `states` generated states over every GPU of its switch; returns how many states' batch under the target lies
    strictly between 0 and the memory cap."""
    import random
    import subprocess

    from scripts.model import techniques as tq
    from scripts.model import timeline as tl
    from scripts.serving.twin import on_gpu

    gpus = {g["id"]: g["constants"] for g in data["gpus"]}
    settings = data["techniques"]["settings"]
    rng = random.Random(seed)
    states = [{"gpu": rng.choice(sorted(gpus)), "technique": rng.choice(sorted(settings)),
               "batch": rng.randint(1, 400), "context": 2 ** rng.randint(7, 15), "prompt": rng.randint(16, 32768),
               "chunk": rng.choice([64, 256, 512, 2048]), "start": rng.choice([0, 512, 4096]),
               "slo_s": rng.choice([0.005, 0.01, 0.02, 0.05, 0.1])} for _ in range(states)]
    shipped = {"constants": data["constants"], "techniques": data["techniques"]}
    (tmp_path / "in.json").write_text(json.dumps([shipped, gpus, states]), encoding="utf-8")
    out = subprocess.run(["node", "-e", LESSON_TWIN, str(tmp_path / "in.json"), str(ROOT / "templates" / "lesson")],
                         capture_output=True, text=True, timeout=60, check=True)
    config_gpus = json.loads((ROOT / "config" / "gpus.json").read_text(encoding="utf-8"))["gpus"]
    slo_between = 0
    for s, js in zip(states, json.loads(out.stdout), strict=True):
        g, b, c = on_gpu(a, config_gpus[s["gpu"]]), s["batch"], s["context"]
        assert js["decode"] == pytest.approx(rl.decode_step_seconds(g, b, c), rel=1e-12), s
        assert js["prefill"] == pytest.approx(rl.prefill_seconds(g, s["prompt"]), rel=1e-12), s
        assert js["mixed"] == pytest.approx(rl.mixed_step_seconds(g, b, c, s["chunk"], s["start"]), rel=1e-12), s
        assert js["newcomer"] == pytest.approx(tl.decode_step_with_newcomer_seconds(g, b, c, s["prompt"]),
                                               rel=1e-12), s
        assert js["cap"] == rl.max_batch_by_memory(g, c), s
        assert js["slo"] == rl.max_batch_under_slo(g, c, s["slo_s"]), s
        m = tq.TechniqueCost(a, tq.Technique.of(settings[s["technique"]]), tq.Gpu.of(gpus[s["gpu"]]))
        assert js["tech_tpot"] == pytest.approx(m.tpot_seconds(b, c), rel=1e-12), s
        assert js["tech_ttft"] == pytest.approx(m.ttft_seconds(s["prompt"]), rel=1e-12), s
        assert js["tech_cap"] == m.max_batch(c), s
        slo_between += 0 < js["slo"] < js["cap"]
    return slo_between


@pytest.mark.parametrize("batch", [1, 36, 43])
def test_the_technique_baseline_of_a_mixture_is_its_roofline(moe, batch):
    """techniques.TechniqueCost with no technique prices a MoE step as roofline.py does (the experts its tokens touch,
    FLOPs by active parameters) and holds all its weights; int4 weights shrink every expert's bytes, FP8 weights too,
    and neither changes which experts a step reads."""
    from scripts.model import techniques as tq

    a, _ = moe
    gpu = tq.Gpu(a.hbm_bytes, a.hbm_bandwidth_bytes_per_s, a.peak_bf16_flops)
    base = tq.TechniqueCost(a, tq.Technique(), gpu)
    assert base.step_seconds(batch, 4096) == pytest.approx(rl.decode_step_seconds(a, batch, 4096), rel=1e-12)
    assert base.prefill_seconds(4096) == pytest.approx(rl.prefill_seconds(a, 4096), rel=1e-12)
    assert base.weights_total == pytest.approx(sizes.weight_bytes_total(a), rel=1e-12)
    int4 = tq.TechniqueCost(a, tq.Technique(weight_bytes=0.5), gpu)
    quantized = tq.linear_weight_params(a)  # attention projections and every expert; the router stays bf16
    assert quantized == 48 * (2048 * (4096 + 1024) + 4096 * 2048) + sizes.routed_expert_params(a)
    assert base.weights_total - int4.weights_total == pytest.approx(quantized * 1.5, rel=1e-12)
    touched = 48 * sizes.expected_experts_touched(a, batch) * 3 * 2048 * 768
    assert base.weights_for(batch) - int4.weights_for(batch) == pytest.approx(
        (quantized - sizes.routed_expert_params(a)) * 1.5 + touched * 1.5, rel=1e-12)


def test_a_knee_past_memory_is_worded_per_gpu(moe):
    """At 99 % of the experts the knee is batch 72 (the first B with (15/16)^B <= 0.01): past the 43 requests an
    H100 or an A100 holds at 4,096 tokens, within the H200's, B200's and MI300X's memory. The view says so per GPU
    (claims moe.<gpu>.memory_reaches_knee) and states no growth past a knee memory does not reach. Every GPU of
    config/gpus.json is checked against its own memory, so adding one needs no edit here."""
    from scripts.lesson.precomputed import GPU_FIELDS, build

    a, doc = moe
    doc = copy.deepcopy(doc)
    doc["scenario"]["expert_knee_percent"]["value"] = 99
    read = lambda name: json.loads((ROOT / "config" / name).read_text(encoding="utf-8"))  # noqa: E731
    out = build(a, doc, read("cited.json"), read("gpus.json"), "anchors/qwen3-30b-a3b-h100.json",
                read("techniques.json"), read("workloads.json"))
    assert math.ceil(math.log(0.01) / math.log(15 / 16)) == 72
    context, gpus = doc["scenario"]["context_tokens"]["value"], read("gpus.json")["gpus"]
    short = [gid for gid, g in gpus.items()
             if rl.max_batch_by_memory(replace(a, **{k: g[k]["value"] for k in GPU_FIELDS}), context) < 72]
    assert out["page"]["experts"] == {"knee": 72, "percent": 99, "flattens": False, "memory_short_on": short}
    held = {c["id"]: c["holds"] for c in out["claims"] if c["id"].endswith(".memory_reaches_knee")}
    assert held == {f"moe.{g}.memory_reaches_knee": g not in short for g in gpus}
    shipped = {"h100_sxm": True, "a100_sxm": True, "h200_sxm": False, "b200": False, "mi300x": False}  # datasheets
    assert all((gid in short) is is_short for gid, is_short in shipped.items() if gid in gpus)
    assert "moe.after_knee.ms_per_request" not in out["provenance"]
