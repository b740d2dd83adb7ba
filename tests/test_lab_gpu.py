"""The lab's model on WebGPU (templates/lab/model/gpu.js, gpu.wgsl) in headless Chromium, whose
--enable-unsafe-webgpu gives a software adapter (SwiftShader) on this GPU-less machine: the same greedy tokens as
TinyGPT for 64 steps from three prompts, logits within a float32 tolerance; the page names that adapter as software,
never as the student's GPU; without WebGPU it says so in one sentence and every CPU experiment runs as before.
Speed is the student's to measure: SwiftShader runs on the CPU (about 50-80 ms a decode step here)."""
import json
import subprocess

import pytest

from scripts.bench.seeded_weights import seeded_model
from scripts.page.lab import gpu_script
from scripts.record.inputs import InputError
from tests.browser import CHROMIUM, FLAGS, PageWatch, wait_ready
from tests.conftest import ROOT
from tests.test_lab_model import PROMPTS, STEPS, assert_same_model
from tests.test_lab_page import SETTINGS, run

pytestmark = pytest.mark.browser
SITE = ROOT / "site"
# a harness's shorter run (templates/lab/page.js C13_LAB_OVERRIDES): SwiftShader's steps are slow
SHORT = "window.C13_LAB_OVERRIDES = {batch: {samples: 2, steps_per_sample: 2}, gpu: {batch_sizes: [1, 4, 16]}};"


@pytest.fixture(scope="module")
def browsers():
    """Chromium with the flag (a WebGPU adapter: SwiftShader) and without it (no adapter), from one Playwright."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        both = {"webgpu": p.chromium.launch(executable_path=CHROMIUM, args=[*FLAGS, "--enable-unsafe-webgpu"]),
                "plain": p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)}
        yield both
        for b in both.values():
            b.close()


@pytest.fixture(scope="module")
def webgpu_browser(browsers):
    return browsers["webgpu"]


@pytest.fixture(scope="module")
def browser(browsers):
    return browsers["plain"]


# Each prompt's 64 greedy steps on its own slot with each step's logits, on the GPU model (gpu.js GpuModel), the
# three prompts batched in one step (vLLM's flat layout: each token its slot and position; one wanted row each), so
# the batched forward is checked too and SwiftShader runs 64 steps, not 192.
GPU_GREEDY_FN = f"""async () => {{
  const L = self.C13Lab, found = await L.gpuAdapter(), prompts = {json.dumps(PROMPTS)}, v = L.SHAPE.vocab;
  const m = await L.GpuModel.create({{adapter: found.adapter, slots: 4, maxContext: 256, maxTokens: 128}});
  const feeds = prompts.map((p) => p.slice()), starts = prompts.map(() => 0);
  const runs = prompts.map(() => ({{tokens: [], logits: []}}));
  for (let k = 0; k < {STEPS}; k++) {{
    const ids = [], slots = [], pos = [], wanted = [];
    feeds.forEach((f, i) => {{
      f.forEach((t, j) => {{ ids.push(t); slots.push(i); pos.push(starts[i] + j); }});
      wanted.push(ids.length - 1);
    }});
    const logits = await m.forward(ids, slots, pos, wanted);
    feeds.forEach((f, i) => {{
      const next = m.argmax(logits, i);
      runs[i].logits.push(Array.from(logits.subarray(i * v, (i + 1) * v)));
      runs[i].tokens.push(next);
      starts[i] += f.length;
      feeds[i] = [next];
    }});
  }}
  return {{info: found.info, runs}};
}}"""


def test_the_gpu_model_is_tinygpt_on_the_software_adapter(webgpu_browser, tmp_path):
    """64 greedy steps from three prompts, batched, through WebGPU: the same tokens as TinyGPT, logits within 1e-4 of
    the largest (measured 1.3e-6); the adapter reports itself as a fallback (SwiftShader), which the page names so."""
    page = webgpu_browser.new_page()
    watch = PageWatch(page)
    html = tmp_path / "gpu.html"
    html.write_text(f'<!doctype html><script src="{(SITE / "lab-model.js").as_uri()}"></script>', encoding="utf-8")
    page.goto(html.as_uri())
    got = page.evaluate(GPU_GREEDY_FN)
    page.close()
    assert got["info"]["fallback"] is True and got["info"]["architecture"] == "swiftshader"
    worst = assert_same_model(got["runs"], seeded_model())
    assert worst < 1e-4
    assert watch.errors == []


def gpu_state(page) -> str:
    page.wait_for_function("document.body.dataset.gpu !== undefined", timeout=30000)
    return page.evaluate("document.body.dataset.gpu")


def test_the_software_adapter_is_named_and_the_gpu_batch_runs_on_a_phone(webgpu_browser):
    """At 390 px with SwiftShader: the page says the adapter is software, the GPU batch run fills its table with
    the run's own rows and chooses its words from them, all within the page's width and with no console error."""
    page = webgpu_browser.new_page(viewport={"width": 390, "height": 844})
    page.add_init_script(SHORT)
    watch = PageWatch(page)
    page.goto((SITE / "lab.html").as_uri())
    wait_ready(page)
    assert gpu_state(page) == "fallback"
    note = page.locator("#exp-batch .gpu-note").inner_text()
    assert "软件模拟" in note and "不是你的显卡" in note
    assert run(page, "exp-batch", button=1, timeout_s=90) < 90
    last = page.evaluate("document.getElementById('exp-batch').lastGpu")
    assert [r["batch"] for r in last["rows"]] + last["skipped"] == [1, 4, 16]
    for r in last["rows"]:  # the run's rows are written (the table lists the page's sizes; the harness ran three)
        cell = page.locator(f'#exp-batch .gpu-table tr[data-batch="{r["batch"]}"] td.ms').inner_text()
        assert float(cell) == pytest.approx(r["ms"], abs=0.006)
    status = page.locator("#exp-batch .status").inner_text()
    assert status.startswith("完成(软件模拟的 GPU")
    growth = page.evaluate("([rows, flat]) => { const g = gpuGrowth(rows, flat); return g.grown && g.grown.batch; }",
                           [last["rows"], SETTINGS["gpu"]["flat_ratio"]])
    assert (f"batch {growth} 的一步是" in status) if growth else ("不到" in status)
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    assert watch.errors == []
    page.close()


def test_experiment_b_serves_on_the_gpu_with_the_same_rule(webgpu_browser):
    """Experiment B's device switch at 1280 px on SwiftShader: the smallest run the page offers goes through the same
    engine (its async step) on the GPU model; every request completes and the run's row says GPU."""
    page = webgpu_browser.new_page(viewport={"width": 1280, "height": 900})
    page.add_init_script(SHORT)  # 16 slots, not 128: SwiftShader sets the caches up faster
    watch = PageWatch(page)
    page.goto((SITE / "lab.html").as_uri())
    wait_ready(page)
    assert gpu_state(page) == "fallback"
    load = SETTINGS["load"]
    picks = (("lab_device", "gpu"), ("lab_requests", min(load["requests"])), ("lab_rate", max(load["rates"])),
             ("lab_prompt", min(load["prompt_tokens"])), ("lab_output", min(load["output_tokens"])))
    for name, value in picks:
        page.select_option(f'#exp-load select[name="{name}"]', str(value))
    run(page, "exp-load", timeout_s=120)
    last = page.evaluate("document.getElementById('exp-load').lastRun")
    assert len(last["requests"]) == min(load["requests"]), page.locator("#exp-load .status").inner_text()
    assert all(len(r["times"]) == min(load["output_tokens"]) for r in last["requests"])
    assert page.locator("#exp-load .runs tbody tr td").first.inner_text().endswith("(GPU)")
    assert watch.errors == []
    page.close()


@pytest.mark.parametrize("hide", [False, True])
def test_without_webgpu_one_sentence_says_so_and_the_cpu_runs(browser, hide):
    """Chromium without the flag offers navigator.gpu but no adapter; with navigator.gpu removed (a browser without
    WebGPU) the page says that instead. Either way: one sentence, no GPU button or table, the CPU run as before."""
    page = browser.new_page(viewport={"width": 390, "height": 844})
    if hide:
        page.add_init_script("Object.defineProperty(Navigator.prototype, 'gpu', {get: () => undefined});")
    watch = PageWatch(page)
    page.goto((SITE / "lab.html").as_uri())
    wait_ready(page)
    state = "no-webgpu" if hide else "no-adapter"
    assert gpu_state(page) == state
    words = page.evaluate("GPU_WORDS")[state]
    assert page.locator("#exp-batch .gpu-note").inner_text() == words
    assert page.locator(".gpu-run:visible, .gpu-table:visible").count() == 0
    assert run(page, "exp-batch") < 30
    assert len([c for c in page.locator("#exp-batch .cpu-table td.ms").all_inner_texts() if c != "—"]) == \
        len(SETTINGS["batch"]["sizes"])
    assert watch.errors == []
    page.close()


def test_the_growth_point_is_the_first_batch_past_the_flat_ratio(tmp_path):
    """gpuGrowth on made-up rows: a flat curve has no growth point; a curve that doubles at 64 grows there."""
    script = (SITE / "lab.js").as_posix()
    code = f"""const G = require({json.dumps(script)}).gpuGrowth;
const flat = [[1, 2.0], [4, 2.1], [16, 2.2], [64, 2.9]].map(([batch, ms]) => ({{batch, ms}}));
const grows = [[1, 2.0], [4, 2.1], [16, 2.4], [64, 4.0], [128, 8.0]].map(([batch, ms]) => ({{batch, ms}}));
console.log(JSON.stringify([G(flat, 1.5), G(grows, 1.5)]));"""
    out = subprocess.run(["node", "-e", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    flat, grows = json.loads(out.stdout)
    assert flat["grown"] is None and flat["gain"] == pytest.approx(64 / 2.9 / (1 / 2.0))
    assert grows["grown"]["batch"] == 64 and grows["last"]["batch"] == 128


def test_the_gpu_words_follow_the_measured_curve():
    """The batch run's sentence on a flat curve (overhead-bound: the roofline does not hold) and on a growing one
    (names the batch where the step starts to grow), and experiment A's on each side of little_ratio."""
    script = (SITE / "lab.js").as_posix()
    code = f"""const M = require({json.dumps(script)});
const P = {{settings: {{gpu: {{flat_ratio: 1.5, little_ratio: 1.5}}}}, fmt: (x, d) => x.toFixed(d)}};
const rows = (pairs) => pairs.map(([batch, ms]) => ({{batch, ms}}));
console.log(JSON.stringify([
  M.gpuBatchWords(P, rows([[1, 2.0], [16, 2.2], [128, 2.9]]), [], false),
  M.gpuBatchWords(P, rows([[1, 2.0], [16, 2.4], [64, 4.0]]), [128], true),
  M.gpuKvWords(P, 1.2, false), M.gpuKvWords(P, 4.0, false)]));"""
    out = subprocess.run(["node", "-e", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    flat, grows, little, large = json.loads(out.stdout)
    assert "一步只从 2.00 涨到 2.90 ms(不到 1.5 倍)" in flat and "是 batch 1 的 88 倍" in flat
    assert "屋顶线在这个规模不成立" in flat
    assert grows.startswith("完成(软件模拟的 GPU") and "没量到 batch 128" in grows
    assert "batch 64 的一步是 batch 1 的 2.0 倍" in grows
    assert "只快 1.20 倍" in little and "M5 Max" in little and "快 4.0 倍" in large


def test_the_shaders_are_read_with_their_file_named(tmp_path):
    """gpu.wgsl missing or not UTF-8, or gpu.js without its placeholder: one line naming the file."""
    lab = tmp_path / "lab" / "model"
    lab.mkdir(parents=True)
    (lab / "gpu.js").write_text('const WGSL = "@GPU_WGSL@";', encoding="utf-8")
    with pytest.raises(InputError, match="gpu.wgsl: cannot be read"):
        gpu_script(tmp_path)
    (lab / "gpu.wgsl").write_bytes(b"fn f() {}\xe9")
    with pytest.raises(InputError, match="gpu.wgsl: cannot be read as UTF-8"):
        gpu_script(tmp_path)
    (lab / "gpu.wgsl").write_text("fn f() {}", encoding="utf-8")
    assert 'const WGSL = "fn f() {}";' in gpu_script(tmp_path)
    (lab / "gpu.js").write_text("const WGSL = 1;", encoding="utf-8")
    with pytest.raises(InputError, match="gpu.js: needs the placeholder"):
        gpu_script(tmp_path)


@pytest.mark.exhaustive
def test_experiment_a_runs_on_the_software_adapter(webgpu_browser):
    """Experiment A on SwiftShader with a budget that fits it (about 2 minutes): rows for every length, the same
    tokens with and without the cache (the worker checks), the words chosen from the measured ratio."""
    page = webgpu_browser.new_page(viewport={"width": 1280, "height": 900})
    page.add_init_script("window.C13_LAB_OVERRIDES = {kv: {pairs: 3}, gpu: {kv_budget_s: 400}};")
    watch = PageWatch(page)
    page.goto((SITE / "lab.html").as_uri())
    wait_ready(page)
    assert gpu_state(page) == "fallback"
    run(page, "exp-kv", button=1, timeout_s=600)
    last = page.evaluate("document.getElementById('exp-kv').lastGpu")
    assert [r["newTokens"] for r in last["rows"]] == SETTINGS["kv"]["new_tokens"]
    assert last["ratio"] > 1
    assert watch.errors == []
    page.close()
