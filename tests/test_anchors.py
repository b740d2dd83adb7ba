"""Any anchor: every anchor in anchors/ builds with the default in one Snakemake run (`make anchors`: Snakemake
config, outputs under build/<name>/) into site/<name>/ and audits clean, its readouts equal the Python math for that
anchor in Chromium, and its page reads as that model's page (no linear-attention text for a dense model); one anchor
alone (`make site ANCHOR=...`) publishes only its own page; the Llama-2-7B/A100 anchor put in place of
anchor-model.json builds every section. The GPU switch on the default page moves the readouts to the Python values
for that GPU. Workloads follow the anchor: fitted to each model's context, by the numbers worked out here."""
import itertools
import json
import re
import shutil
import subprocess
from dataclasses import replace

import pytest

from scripts.audit.inputs import check_anchor
from scripts.model import sizes
from scripts.model.readouts import readouts
from scripts.record.anchor_file import load, load_gpus
from scripts.record.anchors import anchor_files, anchor_names
from scripts.record.inputs import InputError
from scripts.serving.workloads.config import fit_to_context, load_workloads, workloads_for
from tests.browser import open_page
from tests.conftest import NEW_TOKENS, ROOT, copy_of_built_kit, publishing_build

pytestmark = pytest.mark.browser
ANCHORS = anchor_names(ROOT)
SM = ["--", "--cores", "2", "--quiet", "rules"]
GRID = list(itertools.product([1024, 4096, 16384], [1, 16, 58], [10, 30], [4096, 32768], [256, 2048]))[::4]
ANCHOR_GRID = GRID[::2]  # each other anchor's page (their prompts stay within a 4,096-token model's context)
# The default's GPU switch: every (context, batch, target) with the four (prompt, chunk) pairs in turn (GRID's stride
# of 4 over the product left only prompt 4,096 and chunk 256), and a half of it in which every value still occurs
PROMPT_CHUNK = list(itertools.product([4096, 32768], [256, 2048]))
SWITCH_GRID = [(c, b, s, *PROMPT_CHUNK[i % 4])
               for i, (c, b, s) in enumerate(itertools.product([1024, 4096, 16384], [1, 16, 58], [10, 30]))]
SWITCH_HALF = [g for i, g in enumerate(SWITCH_GRID) if (i + i // 6) % 2 == 0]


def shown(page) -> dict:
    # the 0/1 readouts are words: which side of the roofline the path says holds (index.html.j2 bound_words)
    return page.evaluate("""() => Object.fromEntries([...document.querySelectorAll('[data-readout]')]
        .map(e => [e.dataset.readout, Number(e.dataset.value)]).concat([...document.querySelectorAll(
        '[data-bound-of]:not([hidden])')].map(e => [e.dataset.boundOf, Number(e.dataset.boundIs)])))""")


def check_grid(page, anchor, grid=GRID):
    for ctx, batch, slo, prompt, chunk in grid:
        page.evaluate("s => window.lessonSet(s)", {"context_tokens": ctx, "batch": batch, "tpot_slo_ms": slo,
                                                   "prompt_tokens": prompt, "chunk_tokens": chunk})
        want = readouts(anchor, batch=batch, context_tokens=ctx, tpot_slo_ms=slo, prompt_tokens=prompt,
                        chunk_tokens=chunk, new_tokens=NEW_TOKENS)
        got = shown(page)
        for name, v in want.items():
            assert got[name] == pytest.approx(v, rel=1e-6, abs=1e-9), (name, ctx, batch, slo, prompt, chunk)


def test_there_are_at_least_two_more_anchors():
    assert len(ANCHORS) >= 2
    gpus = {json.loads((ROOT / "anchors" / f"{a}.json").read_text(encoding="utf-8"))["hardware"]["gpu"]["value"]
            for a in ANCHORS}
    assert len(gpus - {load(ROOT / "anchor-model.json")[1]["hardware"]["gpu"]["value"]}) >= 2  # other GPUs


def sections(html: str) -> list[str]:
    return re.findall(r'<section id="([^"]+)"', html)


@pytest.fixture(scope="module")
def every_anchor(built_kit, tmp_path_factory):
    """`make anchors` in a copy of the shared kit: the default and every anchors/*.json in one Snakemake run."""
    kit, python = built_kit
    work = copy_of_built_kit(kit, tmp_path_factory.mktemp("anchors"))
    before = {p: (work / p).read_bytes() for p in ("site/index.html", "precomputed/precomputed.json")}
    run = subprocess.run([python, "-m", "scripts.record.build_lock", "--all-anchors", "--publish", *SM], cwd=work,
                         capture_output=True, text=True, timeout=1200)
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stderr.count("Building DAG of jobs") <= 2  # one run (and the completeness dry run), not one per anchor
    return work, python, before


@pytest.mark.exhaustive  # `make test` builds the default anchor; `make test-all` every other one, end to end
@pytest.mark.parametrize("name", ANCHORS)
def test_every_anchor_builds_audits_and_computes_its_own_numbers(name, every_anchor, browser):
    work, python, before = every_anchor
    # every check of `make anchors`' audit but the re-run of its 96 simulated cells (~20 s an anchor): the test
    # that builds Llama-2-7B as the default below audits a second model's simulations in full
    audit = subprocess.run([python, "-m", "scripts.audit", "--anchor", f"anchors/{name}.json", "--no-resimulate"],
                           cwd=work, capture_output=True, text=True)
    assert audit.returncode == 0, audit.stdout[-3000:]
    site = work / "site" / name
    anchor, doc = load(work / "anchors" / f"{name}.json")
    html = (site / "index.html").read_text(encoding="utf-8")
    assert doc["model"]["display_name"]["value"] in html and doc["hardware"]["name"]["value"] in html
    assert sections(html) == sections((work / "site" / "index.html").read_text(encoding="utf-8"))
    hybrid = sizes.linear_attention_layers(anchor) > 0  # Gated DeltaNet layers, not sliding-window ones
    assert ("DeltaNet" in html) is hybrid and ("线性注意力状态" in html) is hybrid
    assert ("滑动窗口" in html) is bool(anchor.sliding_window)  # window text only where the model has one
    assert ("专家拐点" in html) is bool(anchor.num_experts)  # expert text only on a mixture of experts' page
    data = json.loads((work / "build" / name / "precomputed" / "precomputed.json").read_text("utf-8"))
    assert data["claims"] and all(c["numbers"] for c in data["claims"])
    for path, old in before.items():  # the default's page and data, rebuilt in the same run, are unchanged
        assert (work / path).read_bytes() == old, path
    page, watch = open_page(browser, (site / "index.html").as_uri())
    check_grid(page, anchor, ANCHOR_GRID)
    assert watch.errors == []
    assert [u for u in watch.requests if not u.startswith(("file://", "blob:"))] == []  # blob: the sim's workers
    page.close()


@pytest.mark.exhaustive
def test_one_anchor_alone_publishes_only_its_page(every_anchor):
    """`make site ANCHOR=<file outside anchors/, in a folder with a space>`: site/<name>/ appears; precomputed/ and
    the default page stay byte for byte, and nothing of the default is rebuilt."""
    work, python, _ = every_anchor
    (work / "my anchors").mkdir()
    shutil.copy(ROOT / "anchors" / "llama-2-7b-a100.json", work / "my anchors" / "l2.json")
    keep = {p.relative_to(work): p.read_bytes() for p in [*(work / "precomputed").rglob("*"),
                                                         *(work / "site").glob("*")] if p.is_file()}
    default_times = {p: p.stat().st_mtime_ns for p in (work / "build" / "default").rglob("*") if p.is_file()}
    run = subprocess.run([python, "-m", "scripts.record.build_lock", "--anchor", "my anchors/l2.json", "--publish",
                          *SM], cwd=work, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-3000:]
    assert (work / "site" / "l2" / "index.html").is_file()
    assert "Llama-2-7B" in (work / "site" / "l2" / "index.html").read_text(encoding="utf-8")
    assert {rel: (work / rel).read_bytes() for rel in keep} == keep
    assert {p: p.stat().st_mtime_ns for p in default_times} == default_times  # nothing of the default was rebuilt
    bad = subprocess.run([python, "-m", "scripts.record.build_lock", "--anchor", "my anchors/shared.json", "--publish",
                          *SM], cwd=work, capture_output=True, text=True)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "shared" in bad.stderr


@pytest.mark.exhaustive
def test_llama2_7b_a100_in_place_of_the_default_builds_every_section(built_kit, tmp_path):
    """The issue's user: a dense model with a 4,096-token context put into anchor-model.json, no workloads file."""
    kit, python = built_kit
    work = copy_of_built_kit(kit, tmp_path)
    default_sections = sections((work / "site" / "index.html").read_text(encoding="utf-8"))
    shutil.copy(ROOT / "anchors" / "llama-2-7b-a100.json", work / "anchor-model.json")
    run = subprocess.run(publishing_build(python), cwd=work, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-3000:]
    html = (work / "site" / "index.html").read_text(encoding="utf-8")
    assert sections(html) == default_sections and "Llama-2-7B" in html and "A100" in html
    report = (work / "site" / "validation.html").read_text(encoding="utf-8")  # the simulator's workloads live there
    assert "截到" in report and "按比例缩到" in report  # it says what was fitted to the 4,096 positions
    audit = subprocess.run([python, "-m", "scripts.audit"], cwd=work, capture_output=True, text=True)
    assert audit.returncode == 0, audit.stdout[-3000:]


def test_workloads_follow_the_anchor():
    """fit_to_context against numbers worked out by hand from config/workloads.json (outputs at most 1,024)."""
    doc = load_workloads(ROOT / "config" / "workloads.json")
    out_max = doc["workloads"]["chat"]["output_tokens"]["max"]
    long = doc["workloads"]["chat_long"]["long_prompts"]["prompt_tokens"]
    assert (out_max, long["min"], long["max"]) == (1024, 24576, 49152)  # what the numbers below assume
    fitted, adapted = fit_to_context(doc["workloads"], 4096)
    assert fitted["chat"]["prompt_tokens"]["max"] == 4096 - 1024
    assert fitted["chat"]["prompt_tokens"]["median"] == 1024  # the typical prompt is kept
    assert fitted["chat_long"]["long_prompts"]["prompt_tokens"] == {**long, "min": 24576 * 3072 // 49152, "max": 3072}
    assert [(a["workload"], a["field"]) for a in adapted] == [("chat", "prompt_tokens.max"),
                                                               ("chat_long", "prompt_tokens.max"),
                                                               ("chat_long", "long_prompts.prompt_tokens")]
    fitted, adapted = fit_to_context(doc["workloads"], 40960)  # Qwen3-32B: only the long prompts move
    assert fitted["chat_long"]["long_prompts"]["prompt_tokens"]["max"] == 40960 - 1024
    assert fitted["chat_long"]["long_prompts"]["prompt_tokens"]["min"] == int(24576 * 39936 / 49152)
    assert len(adapted) == 1
    assert fit_to_context(doc["workloads"], 262144) == (doc["workloads"], [])  # the default anchor: as written
    assert doc["workloads"]["chat"]["prompt_tokens"]["max"] == 8192  # the input is left as it was
    with pytest.raises(InputError, match="output_tokens.max"):
        fit_to_context(doc["workloads"], 1536)  # 512 positions for a prompt whose median is 1,024
    for name, path in anchor_files(ROOT).items():  # every shipped anchor builds with the one workloads file
        check_anchor(ROOT / path, ROOT)
        anchor, _ = load(ROOT / path)
        for w in workloads_for(ROOT / "config" / "workloads.json", anchor)["workloads"].values():
            longest = max(w["prompt_tokens"]["max"], w.get("long_prompts", {}).get("prompt_tokens", {}).get("max", 0))
            assert longest + w["output_tokens"]["max"] <= anchor.max_position_embeddings, name


@pytest.mark.parametrize("grid", [pytest.param(SWITCH_HALF, id="half"),
                                  pytest.param(SWITCH_GRID, id="whole", marks=pytest.mark.exhaustive)])
def test_switching_the_gpu_moves_the_readouts_to_that_gpus_python(browser, grid):
    """Every GPU of the switch, on half the grid in `make test` (9 states a GPU in which every context, batch,
    target, prompt and chunk occurs) and on the whole grid (18) in `make test-all`."""
    assert all(len({g[k] for g in grid}) == len({g[k] for g in SWITCH_GRID}) for k in range(5))
    anchor, _ = load(ROOT / "anchor-model.json")
    gpus = load_gpus(ROOT / "config" / "gpus.json")["gpus"]
    page, watch = open_page(browser, (ROOT / "site" / "index.html").as_uri())
    for gid, g in gpus.items():
        on_gpu = replace(anchor, **{k: g[k]["value"] for k in ("hbm_bytes", "hbm_bandwidth_bytes_per_s",
                                                                  "peak_bf16_flops")})
        page.locator('select[data-choice="gpu"]').select_option(gid)
        assert page.evaluate("window.lessonState().gpu") == gid
        check_grid(page, on_gpu, grid)
        page.evaluate("window.lessonPending()")
        live = page.locator("[data-when-sim-live]").first  # the under-load numbers are simulated here for this GPU
        assert live.is_visible() is (gid != "h100_sxm"), gid
    page.locator('select[data-choice="gpu"]').select_option("h100_sxm")
    assert watch.errors == []
    page.close()
