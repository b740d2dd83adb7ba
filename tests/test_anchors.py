"""Any anchor: every anchor in anchors/ builds end to end (data, page, audit) into site/<name>/, its readouts equal
the Python math for that anchor in Chromium, and its page reads as that model's page (no linear-attention text for
a dense model). The GPU switch on the default page moves the readouts to the Python values for that GPU."""
import itertools
import json
from dataclasses import replace

import pytest

from scripts.model.readouts import readouts
from scripts.record import anchor_site
from scripts.record.anchor_file import load, load_gpus
from tests.browser import open_page
from tests.conftest import ROOT

pytestmark = pytest.mark.browser
ANCHORS = anchor_site.anchor_names()
GRID = list(itertools.product([1024, 4096, 16384], [1, 16, 58], [10, 30], [4096, 32768], [256, 2048]))[::4]


def shown(page) -> dict:
    return page.evaluate("""() => Object.fromEntries([...document.querySelectorAll('[data-readout]')]
        .map(e => [e.dataset.readout, Number(e.dataset.value)]))""")


def check_grid(page, anchor):
    for ctx, batch, slo, prompt, chunk in GRID:
        page.evaluate("s => window.lessonSet(s)", {"context_tokens": ctx, "batch": batch, "tpot_slo_ms": slo,
                                                   "prompt_tokens": prompt, "chunk_tokens": chunk})
        want = readouts(anchor, batch=batch, context_tokens=ctx, tpot_slo_ms=slo, prompt_tokens=prompt,
                        chunk_tokens=chunk)
        got = shown(page)
        for name, v in want.items():
            assert got[name] == pytest.approx(v, rel=1e-6, abs=1e-9), (name, ctx, batch, slo, prompt, chunk)


def test_there_are_at_least_two_more_anchors():
    assert len(ANCHORS) >= 2
    names = {json.loads((ROOT / "anchors" / f"{a}.json").read_text(encoding="utf-8"))["hardware"]["name"]["value"]
             for a in ANCHORS}
    assert len(names) >= 2  # on other GPUs than the default's


@pytest.mark.exhaustive  # `make test` builds the default anchor; `make test-all` every other one, end to end
@pytest.mark.parametrize("name", ANCHORS)
def test_every_anchor_builds_audits_and_computes_its_own_numbers(name, browser):
    assert anchor_site.main([str(ROOT / "anchors" / f"{name}.json"), "--audit"]) == 0
    site = ROOT / "site" / name
    anchor, doc = load(ROOT / "anchors" / f"{name}.json")
    html = (site / "index.html").read_text(encoding="utf-8")
    assert doc["model"]["display_name"]["value"] in html and doc["hardware"]["name"]["value"] in html
    dense = doc["model"]["full_attention_interval"]["value"] == 1
    assert ("DeltaNet" in html) is not dense and ("线性注意力状态" in html) is not dense
    data = json.loads((ROOT / "build" / "anchors" / name / "precomputed" / "precomputed.json").read_text("utf-8"))
    assert data["claims"] and all(c["numbers"] for c in data["claims"])
    page, watch = open_page(browser, (site / "index.html").as_uri())
    check_grid(page, anchor)
    assert watch.errors == []
    assert [u for u in watch.requests if not u.startswith("file://")] == []
    page.close()


def test_the_default_page_is_left_alone_by_an_anchor_build():
    index = (ROOT / "site" / "index.html").read_bytes()
    assert b"Qwen3.8-27B" in index  # the shipped anchor's page, whatever anchors were built beside it


def test_switching_the_gpu_moves_the_readouts_to_that_gpus_python(browser):
    anchor, _ = load(ROOT / "anchor-model.json")
    gpus = load_gpus(ROOT / "config" / "gpus.json")["gpus"]
    page, watch = open_page(browser, (ROOT / "site" / "index.html").as_uri())
    for gid, g in gpus.items():
        on_gpu = replace(anchor, **{k: g[k]["value"] for k in ("hbm_bytes", "hbm_bandwidth_bytes_per_s",
                                                                  "peak_bf16_flops")})
        page.locator('select[data-choice="gpu"]').select_option(gid)
        assert page.evaluate("window.lessonState().gpu") == gid
        check_grid(page, on_gpu)
        other = page.locator("[data-when-other-gpu]").first
        assert other.is_visible() is (gid != "h100_sxm"), gid
    page.locator('select[data-choice="gpu"]').select_option("h100_sxm")
    assert watch.errors == []
    page.close()
