"""The lab's in-browser model and engine (templates/lab/model/model.js, its kernel templates/lab/model/kernel.wat): one
model with TinyGPT (same weights from the seeded generator, same greedy tokens, logits within 1e-4), vLLM V1's
scheduling rule held by its invariants, and the page's metric code equal to scripts/serving/measures/metrics.py. Node
runs the built script here; tests/test_lab_page.py runs the same checks in Chromium."""
import hashlib
import json
import re
import subprocess

import numpy as np
import pytest
import torch

from scripts.bench.seeded_weights import generated, mulberry32, seeded_model
from scripts.page.bundles import sim_script
from scripts.page.lab import KERNEL_SOURCE, lab_model_script, lab_settings
from scripts.record.inputs import InputError
from scripts.serving.measures import metrics
from tests.conftest import ROOT

PROMPTS = [[1, 2, 3, 4, 5], [100, 200, 300, 400, 500, 600, 700, 800], [2047, 0, 1024]]
STEPS = 64


@pytest.fixture(scope="module")
def lab_js(tmp_path_factory):
    """lab-model.js as the build joins it, with the simulator's twin beside it (node() loads both: L and S)."""
    path = tmp_path_factory.mktemp("lab") / "lab-model.js"
    path.write_text(lab_model_script(ROOT / "templates"), encoding="utf-8")
    (path.parent / "serving-sim.js").write_text(sim_script(ROOT / "templates" / "serving_sim"), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def lab_page_js(tmp_path_factory):
    """site/lab.js as the build joins it from templates/lab/ (bundles.lab_page_script)."""
    from scripts.page.bundles import lab_page_script

    path = tmp_path_factory.mktemp("lab-page") / "lab.js"
    path.write_text(lab_page_script(ROOT / "templates"), encoding="utf-8")
    return path


def node(lab_js, body: str):
    sim = lab_js.parent / "serving-sim.js"
    code = f"const L = require({json.dumps(str(lab_js))}), S = require({json.dumps(str(sim))});\n{body}"
    out = subprocess.run(["node", "-e", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def torch_greedy(model, prompt: list[int], steps: int) -> tuple[list[int], np.ndarray]:
    """TinyGPT with its KV cache: the prompt in one step, then one token a step; each step's last logits."""
    tokens, logits = [], []
    caches, feed, start = [{} for _ in model.blocks], torch.tensor([prompt]), 0
    with torch.inference_mode():
        for k in range(steps):
            row = model(feed, caches, start)[0, -1].numpy()
            logits.append(row)
            tokens.append(int(row.argmax()))
            start, feed = len(prompt) + k, torch.tensor([[tokens[-1]]])
    return tokens, np.array(logits)


def assert_same_model(js_runs: list[dict], model) -> float:
    """Identical greedy tokens for every prompt and step; logits within 1e-4 of the largest. Returns the worst."""
    worst = 0.0
    for prompt, run in zip(PROMPTS, js_runs, strict=True):
        tokens, logits = torch_greedy(model, prompt, STEPS)
        assert run["tokens"] == tokens, prompt
        js = np.array(run["logits"])
        worst = max(worst, float(np.max(np.abs(js - logits) / np.max(np.abs(logits), axis=1, keepdims=True))))
    assert worst < 1e-4
    return worst


# Greedy runs of every prompt, each on its own slot, with each step's logits: one function, run by Node here and by
# Chromium in tests/test_lab_page.py.
GREEDY_FN = f"""(L) => {{
  const m = new L.TinyModel({{slots: 4}}), prompts = {json.dumps(PROMPTS)};
  return prompts.map((p, i) => {{
    const keep = [], tokens = L.greedy(m, p, {STEPS}, {{keep, slot: i}});
    return {{tokens, logits: keep.map((k) => Array.from(k))}};
  }});
}}"""


def scalar_mulberry32(seed: int, count: int) -> list[int]:
    """The generator one draw at a time, as its JS source reads (all arithmetic mod 2^32)."""
    a, out = seed, []
    for _ in range(count):
        a = (a + 0x6D2B79F5) & 0xFFFFFFFF
        t = ((a ^ (a >> 15)) * (a | 1)) & 0xFFFFFFFF
        t ^= (t + ((t ^ (t >> 7)) * (t | 61))) & 0xFFFFFFFF
        out.append(t ^ (t >> 14))
    return out


def test_the_vectorised_generator_is_the_sequential_one():
    """numpy's all-at-once draws equal the one-at-a-time loop, from any start (draw n's state is known)."""
    for seed in (0, 20260513, 0xFFFFFFFF):
        assert mulberry32(seed, 200).tolist() == scalar_mulberry32(seed, 200)
        assert mulberry32(seed, 5, start=195).tolist() == scalar_mulberry32(seed, 200)[195:]


def test_the_page_makes_the_same_weights_bit_for_bit(lab_js):
    digests = node(lab_js, """const w = L.generatedWeights(), crypto = require("crypto"), out = {};
const sha = (v) => crypto.createHash("sha256").update(Buffer.from(v.buffer)).digest("hex");
for (const [k, v] of Object.entries(w)) out[k] = sha(v);
console.log(JSON.stringify(out));""")
    ours = {k: hashlib.sha256(v.tobytes()).hexdigest() for k, v in generated().items()}
    assert digests == ours
    assert sum(v.size for v in generated().values()) == 3_683_840  # the benchmark's TinyGPT: the same shape


def test_the_page_model_is_tinygpt(lab_js):
    """64 greedy steps from three prompts: the same tokens, logits within 1e-4 relative (measured: ~1.1e-6)."""
    runs = node(lab_js, f"console.log(JSON.stringify(({GREEDY_FN})(L)));")
    assert_same_model(runs, seeded_model())
    assert [len(set(r["tokens"])) for r in runs] == [6, 12, 19]  # greedy wanders: the check is not one token repeated


def test_both_kernel_builds_are_tinygpt(lab_js):
    """The relaxed-SIMD build (fused multiply-adds: scripts/page/lab.py fused_kernel) and the plain one, each forced:
    the same 64 greedy steps from three prompts and logits within 1e-4 of TinyGPT's. Node 20 validates relaxed SIMD
    only behind its flag, so the plain build is what it picks by itself (the fallback a browser without relaxed SIMD
    gets); Chromium picks the fused one (tests/test_lab_page.py)."""
    greedy = GREEDY_FN.replace("{slots: 4}", "{slots: 4, kernel: K}")
    body = f"console.log(JSON.stringify({{pick: L.kernelBuild(), runs: ({greedy})(L)}}));"
    for build, flags in (("fma", ["--experimental-wasm-relaxed-simd"]), ("simd", [])):
        code = f"const L = require({json.dumps(str(lab_js))}); const K = {json.dumps(build)};\n{body}"
        out = subprocess.run(["node", *flags, "-e", code], capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        got = json.loads(out.stdout)
        assert got["pick"] == ("fma" if flags else "simd")
        assert_same_model(got["runs"], seeded_model())


def test_the_fused_build_rewrites_every_multiply_add_and_nothing_else():
    from scripts.page.lab import fused_kernel

    wat = ("(f32x4.add (local.get $a) (f32x4.mul (v128.load (local.get $p)) (local.get $v))) "
           "(f32x4.add (local.get $x) (local.get $y))")
    assert fused_kernel(wat) == ("(f32x4.relaxed_madd (v128.load (local.get $p)) (local.get $v) (local.get $a)) "
                                 "(f32x4.add (local.get $x) (local.get $y))")
    source = (ROOT / "templates" / KERNEL_SOURCE).read_text(encoding="utf-8")
    fused = fused_kernel(source)
    # the source's multiply-adds: linear's four-row block 8, two-row 4, one-row 6; gelu's polynomial 6; attend's
    # scores 4 and weighted sum 8
    assert fused.count("f32x4.relaxed_madd") == 36 and fused.count("(f32x4.mul") == source.count("(f32x4.mul") - 36


def test_without_the_cache_the_page_generates_the_same_tokens(lab_js):
    out = node(lab_js, """const m = new L.TinyModel({slots: 2});
const a = L.greedy(m, [5, 6, 7], 20, {cache: true}), b = L.greedy(m, [5, 6, 7], 20, {cache: false, slot: 1});
console.log(JSON.stringify([a, b]));""")
    assert out[0] == out[1]


ENGINE_JS = """
const m = new L.TinyModel({slots: 4, maxContext: 96, maxTokens: 48});
const e = new L.Engine(m, {maxNumSeqs: 4, maxBatchedTokens: 48, sim: S});
let a = 12345; const rand = () => { a = (a * 1103515245 + 12345) % 2147483648; return a / 2147483648; };
const reqs = Array.from({length: 14}, (_, id) => ({id, prompt: Array.from({length: 3 + Math.floor(rand() * 60)},
  (_, i) => (id * 31 + i * 7) % 2048), outputLen: 1 + Math.floor(rand() * 12), at: Math.floor(rand() * 30)}));
const steps = [], got = {};
for (let t = 0; t < 400 && (e.busy() || reqs.some((r) => r.at >= t)); t++) {
  for (const r of reqs) if (r.at === t) e.add(r);
  const running = e.running.length, s = e.step();
  steps.push({tokens: s.tokens, running: e.running.length, before: running, scheduled: s.requests});
  for (const [id, tok] of s.events) (got[id] = got[id] || []).push(tok);
}
const solo = new L.TinyModel({slots: 1, maxContext: 96, maxTokens: 96});
const alone = reqs.slice(0, 3).map((r) => L.greedy(solo, r.prompt, r.outputLen));
console.log(JSON.stringify({steps, got, admitted: e.admitted, reqs, alone}));
"""


def test_the_engine_keeps_vllm_v1s_rule(lab_js):
    """Random arrivals through a small engine (4 slots, 48 tokens a step): every step within the token budget, at
    most 4 requests running, admission first come first served, every request completes with its output length,
    and batching does not change what a request generates (three checked against generating alone)."""
    out = node(lab_js, ENGINE_JS)
    assert all(0 < s["tokens"] <= 48 for s in out["steps"] if s["scheduled"])
    assert max(s["running"] for s in out["steps"]) <= 4 and max(s["scheduled"] for s in out["steps"]) <= 4
    by_arrival = sorted(out["reqs"], key=lambda r: (r["at"], r["id"]))
    assert out["admitted"] == [r["id"] for r in by_arrival]
    assert {int(k): len(v) for k, v in out["got"].items()} == {r["id"]: r["outputLen"] for r in out["reqs"]}
    assert [out["got"][str(i)] for i in range(3)] == out["alone"]
    assert any(s["scheduled"] >= 3 for s in out["steps"])  # the engine did batch


ASYNC_ENGINE_JS = """
(async () => {
  const m = new L.TinyModel({slots: 4, maxContext: 96, maxTokens: 64}), next = L.mulberry32(5);
  const reqs = Array.from({length: 8}, (_, id) => ({id,
    prompt: Array.from({length: 8 + (next() % 40)}, () => next() % 2048), outputLen: 1 + (next() % 12)}));
  async function run(asynchronous) {
    const model = asynchronous ? {maxContext: 96, maxTokens: 64, slots: 4, async: true,
      argmax: (l, r) => m.argmax(l, r), forward: (...a) => Promise.resolve(Float32Array.from(m.forward(...a)))} : m;
    const e = new L.Engine(model, {maxNumSeqs: 4, maxBatchedTokens: 48, sim: S}), log = [];
    reqs.forEach((r) => e.add(r));
    while (e.busy()) {
      const s = asynchronous ? await e.stepAsync() : e.step();
      log.push([s.events, s.tokens, s.shape]);
    }
    return log;
  }
  console.log(JSON.stringify({sync: await run(false), async: await run(true)}));
})();
"""


def test_the_engines_async_step_is_its_step(lab_js):
    """The engine's step on a model whose forward returns a Promise (the GPU model; experiment B's device switch)
    schedules, batches and samples exactly as its step does: the same events, token counts and shapes, step by step."""
    out = node(lab_js, ASYNC_ENGINE_JS)
    assert out["sync"] == out["async"] and len(out["sync"]) > 8


def test_a_request_longer_than_the_context_is_refused(lab_js):
    out = node(lab_js, """const m = new L.TinyModel({slots: 1, maxContext: 16, maxTokens: 16});
const e = new L.Engine(m, {maxNumSeqs: 1, maxBatchedTokens: 16, sim: S});
try { e.add({id: 0, prompt: new Array(10).fill(1), outputLen: 7}); console.log(JSON.stringify("accepted")); }
catch (err) { console.log(JSON.stringify(err.message)); }""")
    assert "exceed the context (16)" in out


def synthetic_run(seed: int, n: int) -> list[dict]:
    rng = np.random.default_rng(seed)
    reqs = []
    for _ in range(n):
        send = float(rng.uniform(0, 5))
        out = int(rng.integers(1, 9))
        gaps = rng.exponential(0.01, out)
        reqs.append({"send": send, "times": (send + 0.05 + np.cumsum(gaps)).tolist(), "input": int(rng.integers(8, 64)),
                     "output": out})
    return reqs


def python_metrics(reqs: list[dict], duration: float, slo: dict) -> dict:
    ttft = [r["times"][0] - r["send"] for r in reqs]
    e2el = [r["times"][-1] - r["send"] for r in reqs]
    itl = [b - a for r in reqs for a, b in zip(r["times"], r["times"][1:], strict=False)]
    return metrics.compute(ttft, e2el, itl, [r["input"] for r in reqs], [r["output"] for r in reqs], duration, slo)


@pytest.mark.parametrize("seed", [0, 1])
def test_the_page_metrics_are_vllms(lab_js, seed):
    """The page's runMetrics against scripts/serving/metrics.compute (vLLM's calculate_metrics) on the same
    timestamps: every key within 1e-9 relative; one-token requests (TPOT left out, 0 for goodput) included."""
    reqs, slo = synthetic_run(seed, 57), {"ttft": 60.0, "tpot": 12.0}
    duration = max(r["times"][-1] for r in reqs)
    js = node(lab_js, f"console.log(JSON.stringify(L.runMetrics({json.dumps(reqs)}, {duration}, {json.dumps(slo)})));")
    py = python_metrics(reqs, duration, slo)
    keys = [k for k in py if k != "failed" and py[k] is not None]
    assert set(keys) <= set(js)
    for k in keys:
        assert js[k] == pytest.approx(py[k], rel=1e-9, abs=1e-12), k
    assert 0 < py["slo_attainment"] < 1  # the SLOs split the requests: the goodput check is not vacuous


def broken_lab(doc: dict, where: tuple, value, tmp_path):
    """config/lab.json with one field replaced (where: keys; value None deletes it), written to tmp_path."""
    bad = json.loads(json.dumps(doc))
    holder = bad
    for key in where[:-1]:
        holder = holder[key]
    if value is None:
        del holder[where[-1]]
    else:
        holder[where[-1]] = value
    path = tmp_path / "lab.json"
    path.write_text(json.dumps(bad), encoding="utf-8")
    return path


LAB_CASES = [  # (the field replaced, its new value (None: deleted), what the one line says)
    (("load", "rate"), {"value": 5, "assumption": "x"}, "field load.rate (5) is not one of load.rates"),
    (("waits", "prompt"), {"value": 300, "assumption": "x"}, "field waits.prompt (300) is not one of waits.prompts"),
    (("waits", "users"), {"value": 40, "assumption": "x"}, "field waits.users.value must be <= 15"),
    (("engine", "max_context"), {"value": 64, "assumption": "x"}, "field engine.max_context (64) is shorter"),
    (("kv", "pairs"), {"value": 3}, "field kv.pairs needs exactly one of 'source' or 'assumption'"),
    (("batch", "sizes"), {"value": [], "assumption": "x"}, "field batch.sizes.value must have at least 1 entries"),
    (("calibration", "fit_overhead_s"), {"value": [2e-3, 1e-5], "assumption": "x"},
     "field calibration.fit_overhead_s must be [low, high]"),
    (("calibration", "fit_grid_points"), {"value": [61, 1.5, 25], "assumption": "x"},
     "field calibration.fit_grid_points.value[1] must be of type integer, got 1.5"),
    (("calibration", "fit_grid_points"), {"value": [100000, 100000, 100000], "assumption": "x"},
     "field calibration.fit_grid_points.value[0] must be <= 200"),
    (("kv", "min_pairs"), {"value": 9, "assumption": "x"}, "field kv.min_pairs must be a whole number no larger"),
    (("engine", "max_num_seqs"), {"value": 16.5, "assumption": "x"}, "field engine.max_num_seqs.value must be of type "
                                                                          "integer, got 16.5"),
    (("engine", "max_num_seqs"), {"value": 1e9, "assumption": "x"}, "field engine.max_num_seqs.value must be <= 64"),
    (("engine", "max_num_seqs"), {"value": -4, "assumption": "x"}, "field engine.max_num_seqs.value must be >= 1"),
    (("batch", "samples"), {"value": 1000000000, "assumption": "x"}, "field batch.samples.value must be <= 200"),
    (("kv", "budget_s"), {"value": 1e-300, "assumption": "x"}, "field kv.budget_s.value must be >= 1"),
    (("load", "requests"), {"value": [20.5, 40], "assumption": "x"}, "field load.requests.value[0] must be of type "
                                                                         "integer"),
    (("kv", "interval_pct"), {"value": 200, "source": "x"}, "field kv.interval_pct.value must be <= 99.9"),
    (("kv", "pairs"), {"value": 3, "assumption": "   "}, "field kv.pairs.assumption must match"),
    (("kv", "pairs"), {"value": 3, "assumption": "x" * 100_000}, "field kv.pairs.assumption must have at most 2000"),
    (("kv", "colour"), {"value": 3, "assumption": "x"}, "field kv.colour is not a known field"),
    (("schema_version",), None, "field schema_version is missing"),
    (("schema_version",), 2, "field schema_version must be 1, got 2"),
    (("calibration", "burst_output_step"), {"value": 30, "assumption": "x"},
     "field calibration.burst_prompts with burst_output_step makes a request longer than engine.max_context"),
    (("experiments", 3, "run_seconds"), [["calibration.nothing"]],
     "field experiments[3].run_seconds names calibration.nothing, which is not a field of the file"),
    (("experiments", 1, "id"), "batch", "field experiments[1].id repeats 'batch'"),
    (("experiments", 0, "worker"), ["fly"], "field experiments[0].worker[0] must be one of batches, gpu, kv, serve"),
]


@pytest.mark.parametrize("where, value, message", LAB_CASES, ids=[".".join(map(str, c[0])) + f"-{k}"
                                                                   for k, c in enumerate(LAB_CASES)])
def test_the_settings_are_checked_with_the_file_and_field(tmp_path, where, value, message):
    """Each broken config/lab.json stops in one line that names the file and the field, the schema's bounds
    included (issue 80's runaways: 1e9 slots or samples, a 1e-300 s budget, a 10^15-point fit grid)."""
    doc = json.loads((ROOT / "config" / "lab.json").read_text(encoding="utf-8"))
    path = broken_lab(doc, where, value, tmp_path)
    with pytest.raises(InputError, match=re.escape(message)) as err:
        lab_settings(path)
    assert str(err.value).startswith(f"{path.as_posix()}: field ") and "\n" not in str(err.value)


def test_the_settings_file_is_read_whole():
    doc = json.loads((ROOT / "config" / "lab.json").read_text(encoding="utf-8"))
    settings = lab_settings(ROOT / "config" / "lab.json")
    assert settings["engine"]["max_num_seqs"] == doc["engine"]["max_num_seqs"]["value"]
    assert [e["id"] for e in settings["experiments"]] == ["batch", "kv", "load", "predict", "tools", "waits"]


def test_a_top_level_list_is_refused_in_one_line(tmp_path):
    path = tmp_path / "lab.json"
    path.write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(InputError, match=r"lab.json: field \(top level\) must be of type object"):
        lab_settings(path)


def test_the_input_check_reads_the_lab_settings_before_any_rule(tmp_path):
    """scripts/audit/inputs.check_all (the Snakefile calls it before scheduling anything) stops on a broken
    config/lab.json, naming it: a tree of links to the checkout with that one file replaced."""
    from scripts.audit.inputs import check_all

    for entry in ROOT.iterdir():
        if entry.name not in ("config", ".git", "build", "site", ".venv"):
            (tmp_path / entry.name).symlink_to(entry)
    (tmp_path / "config").mkdir()
    for entry in (ROOT / "config").iterdir():
        if entry.name != "lab.json":
            (tmp_path / "config" / entry.name).symlink_to(entry)
    doc = json.loads((ROOT / "config" / "lab.json").read_text(encoding="utf-8"))
    doc["batch"]["samples"]["value"] = 0
    (tmp_path / "config" / "lab.json").write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(InputError, match=r"config/lab.json: field batch.samples.value must be >= 1"):
        check_all(tmp_path)


def test_a_broken_kernel_names_its_file(tmp_path):
    from scripts.page.lab import MODEL_SOURCE

    (tmp_path / MODEL_SOURCE).parent.mkdir(parents=True)
    (tmp_path / MODEL_SOURCE).write_bytes((ROOT / "templates" / MODEL_SOURCE).read_bytes())
    (tmp_path / KERNEL_SOURCE).write_text("(module (func (export \"f\") (i32.bogus)))", encoding="utf-8")
    with pytest.raises(InputError, match=r"lab/model/kernel.wat: wat2wasm refused it"):
        lab_model_script(tmp_path)


@pytest.mark.parametrize("case, message", [
    ("ill-typed", "kernel.wat: WebAssembly refuses it: type mismatch"),
    ("latin-1", "kernel.wat: cannot be read as UTF-8 text"),
    ("deleted", "kernel.wat: cannot be read as UTF-8 text"),
])
def test_a_kernel_webassembly_refuses_is_refused_at_render_by_name(tmp_path, case, message):
    """Issue 80: wat2wasm only parses, so an ill-typed function compiled and a page shipped a kernel the browser
    refuses ("Compiling function #9 failed"); a Latin-1 byte or a deleted kernel gave a traceback. Each is one line."""
    from scripts.page.lab import MODEL_SOURCE

    (tmp_path / MODEL_SOURCE).parent.mkdir(parents=True)
    (tmp_path / MODEL_SOURCE).write_bytes((ROOT / "templates" / MODEL_SOURCE).read_bytes())
    kernel = (ROOT / "templates" / KERNEL_SOURCE).read_bytes()
    edits = {"ill-typed": kernel.replace(b"(module", b'(module (func (export "bad") (result i32) (f32.const 1))', 1),
             "latin-1": kernel.replace(b";; The lab", b";; The l\xe9b", 1), "deleted": None}
    if edits[case] is not None:
        (tmp_path / KERNEL_SOURCE).write_bytes(edits[case])
    with pytest.raises(InputError, match=message):
        lab_model_script(tmp_path)


def test_the_kv_experiment_uses_the_benchmarks_prompt():
    """config/lab.json cites the committed benchmark's prompt length: the two must agree for the rows to compare."""
    from scripts.bench.kv_cache import PROMPT_TOKENS

    assert lab_settings(ROOT / "config" / "lab.json")["kv"]["prompt_tokens"] == PROMPT_TOKENS


WORKER_KV = """
const {labWorker} = require(%s);
const posted = [], scope = {postMessage: (m) => posted.push(m)};
labWorker(L, scope, S);
scope.onmessage({data: {cmd: "init", slots: 2, maxContext: 64, maxTokens: 64}});
const prompt = Array.from({length: 16}, (_, i) => i * 5);
scope.onmessage({data: {cmd: "kv", prompt, lengths: [4, 8, 16], pairs: 4, minPairs: 3, budgetMs: %d}});
const wait = () => {
  const kv = posted.find((m) => m.type === "kv"), errors = posted.filter((m) => m.type === "error");
  if (kv || errors.length) { console.log(JSON.stringify({kv, errors})); process.exit(0); } else setTimeout(wait, 5);
};
wait();
"""


def test_the_workers_kv_command_alternates_and_keeps_its_budget(lab_js, lab_page_js):
    """Experiment A's worker side in Node on short lengths: every length gets its pairs of cache / no-cache runs
    (the two paths' tokens are checked equal inside), the no-cache runs are the slower, and a length that cannot
    fit three pairs in what is left of the budget is skipped and named, not run over time."""
    page_js = json.dumps(str(lab_page_js))
    out = node(lab_js, WORKER_KV % (page_js, 60_000))
    assert out["errors"] == [] and out["kv"]["skipped"] == []
    rows = out["kv"]["rows"]
    assert [r["newTokens"] for r in rows] == [4, 8, 16] and all(len(r["kv"]) == len(r["nokv"]) == 4 for r in rows)
    assert sorted(r["nokv"][k] / r["kv"][k] for r in rows for k in range(4))[2] > 1  # no cache costs more
    tight = node(lab_js, WORKER_KV % (page_js, 1))  # a 1 ms budget: nothing fits, everything is said skipped
    assert tight["kv"]["rows"] == [] and tight["kv"]["skipped"] == [4, 8, 16]


SCENARIO = [{"id": i, "prompt": [(i * 31 + k * 7) % 2048 for k in range(5 + (i * 13) % 40)],
             "outputLen": 1 + (i * 5) % 9, "at": (i * 3) % 11} for i in range(10)]
SCENARIO_JS = f"""
const m = new L.TinyModel({{slots: 3, maxContext: 64, maxTokens: 32}}), e = new L.Engine(m, {{maxNumSeqs: 3,
  maxBatchedTokens: 32, sim: S}}), reqs = {json.dumps(SCENARIO)}, steps = [];
for (let t = 0; t < 200 && (e.busy() || reqs.some((r) => r.at >= t)); t++) {{
  for (const r of reqs) if (r.at === t) e.add(r);
  const s = e.step();
  steps.push([s.tokens, s.events]);
}}
console.log(JSON.stringify(steps));
"""


def serve_scenario(engine, scenario: list[dict], limit: int) -> list[tuple]:
    """scripts/bench/serve_tiny.py's engine stepped over a scenario ({id, at, prompt, outputLen}: `at` is the step a
    request arrives before), at most `limit` steps: each step's events and its prefix-cache hits."""
    steps = []
    for t in range(limit):
        if not engine.busy() and all(r["at"] < t for r in scenario):
            break
        for r in scenario:
            if r["at"] == t:
                engine.add(r["id"], r["prompt"], r["outputLen"])
        steps.append((engine.step(), list(engine.hits)))
    return steps


def test_the_python_engine_is_the_pages(lab_js):
    """scripts/bench/serve_tiny.py's engine and model against the page's on one arrival pattern (3 slots, 32 tokens a
    step): the same tokens scheduled in every step and the same tokens generated, event by event."""
    from scripts.bench.serve_tiny import Engine, FlatModel

    steps = [events for events, _ in serve_scenario(Engine(FlatModel(seeded_model(), 3, 64), 3, 32), SCENARIO, 200)]
    js = node(lab_js, SCENARIO_JS)
    assert [[list(e) for e in events] for events in steps] == [events for _, events in js]
    assert sum(len(events) for events in steps) == sum(r["outputLen"] for r in SCENARIO)


def test_a_checkpoint_that_is_not_tinygpt_is_refused_by_name(tmp_path):
    from scripts.bench.serve_tiny import load_checkpoint

    junk = tmp_path / "junk.pt"
    junk.write_bytes(b"not a checkpoint")
    with pytest.raises(InputError, match="junk.pt: not a readable torch state_dict"):
        load_checkpoint(junk, 4)
    state = seeded_model().state_dict()
    del state["blocks.1.proj.bias"]
    short = tmp_path / "short.pt"
    torch.save(state, short)
    with pytest.raises(InputError, match="short.pt: field blocks.1.proj.bias is missing"):
        load_checkpoint(short, 4)
    torch.save(seeded_model().state_dict(), tmp_path / "ok.pt")
    assert load_checkpoint(tmp_path / "ok.pt", 4).s == seeded_model().s


def test_the_one_list_of_experiments_is_what_the_page_wires(lab_js, lab_page_js):
    """config/lab.json `experiments` against the page: every id has its wiring (templates/lab/experiments.js
    WIRING) and nothing else does, every box is on the built lab page with the run seconds the list gives (the
    reading time counts them), and every worker command it names is one the worker answers."""
    from scripts.page.lab import run_seconds

    settings = lab_settings(ROOT / "config" / "lab.json")
    out = subprocess.run(["node", "-e", f"""const P = require({json.dumps(str(lab_page_js))});
const L = require({json.dumps(str(lab_js))}), scope = {{postMessage() {{}}}};
console.log(JSON.stringify({{wiring: Object.keys(P.WIRING), handlers: P.labWorker(L, scope)}}));
process.exit(0);"""], capture_output=True, text=True, timeout=60, check=True)
    got = json.loads(out.stdout)
    assert got["wiring"] == [e["id"] for e in settings["experiments"]]
    html = (ROOT / "site" / "lab.html").read_text(encoding="utf-8")
    seconds = run_seconds(settings)
    for e in settings["experiments"]:
        box = re.search(rf'<div class="experiment" id="{e["element"]}"([^>]*)>', html)
        assert box, e["element"]
        shown = re.search(r'data-run-seconds="([^"]+)"', box.group(1))
        assert float(shown.group(1) if shown else 0) == seconds[e["id"]], e["id"]
        for command in e["worker"]:
            assert command in got["handlers"], command
