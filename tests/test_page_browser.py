"""The lesson page in a real browser: charts render offline, readouts equal the Python math, clicks work."""
import itertools
import json
import math
import re

import pytest

from scripts.model.readouts import readouts
from tests.browser import ARTIFACTS, CHROMIUM, FLAGS, open_page, serve, wait_ready
from tests.conftest import NEW_TOKENS, ROOT

pytestmark = pytest.mark.browser
SITE = ROOT / "site"
CHARTS = ("frontier", "timeline", "tokens", "bench_total", "bench_steps", "load_attain", "load_ttft", "load_tpot",
          "load_scatter")


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    if not (SITE / "index.html").exists():
        pytest.fail("site/index.html is missing: run `make site` first")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield b
        b.close()


@pytest.fixture(scope="module")
def lesson(browser):
    page, watch = open_page(browser, (SITE / "index.html").as_uri())
    yield page, watch
    page.close()


def set_sliders(page, **values):
    page.evaluate("v => window.lessonSet(v)", values)


def shown(page) -> dict:
    # the 0/1 readouts are words: which side of the roofline the path says holds (index.html.j2 bound_words)
    return page.evaluate("""() => Object.fromEntries([...document.querySelectorAll('[data-readout]')]
        .map(e => [e.dataset.readout, {value: Number(e.dataset.value), text: e.textContent}]).concat([
        ...document.querySelectorAll('[data-bound-of]:not([hidden])')].map(e => [e.dataset.boundOf,
        {value: Number(e.dataset.boundIs), text: e.textContent}])))""")


def test_every_chart_renders_without_errors_or_requests(lesson):
    page, watch = lesson
    views = page.evaluate("Object.keys(window.lessonViews)")
    assert sorted(views) == sorted(CHARTS)
    for chart in CHARTS:
        assert page.locator(f"#chart-{chart} svg, #chart-{chart} canvas").count() >= 1, chart
    # The renderer is the spec's (charts.py); a canvas chart's marks carry no ARIA description, which a canvas
    # never shows but Vega would re-format for every point at every redraw.
    renderers = page.evaluate("""() => Object.fromEntries(Object.entries(window.C13_SPECS).map(([id, spec]) =>
        [id, [(spec.usermeta || {}).renderer, document.querySelector(`#chart-${id} canvas`) ? 'canvas' : 'svg',
              JSON.stringify(spec.marks).includes('"description"')]]))""")
    assert renderers["load_scatter"][0] == "canvas" and renderers["tokens"][0] == "svg", renderers
    for chart, (wanted, drawn, described) in renderers.items():
        assert drawn == wanted, (chart, wanted, drawn)
        assert described == (wanted == "svg"), (chart, wanted, described)
    assert watch.errors == []
    assert [u for u in watch.requests if not u.startswith(("file://", "blob:"))] == []  # blob: the sim's worker


GRID = list(itertools.product([1024, 4096, 32768, 131072], [1, 27, 58, 512], [5, 20, 30, 100],
                              [1024, 32768, 131072], [128, 512, 16384]))[::7]


def test_readouts_equal_the_python_functions_on_a_grid(lesson, anchor):
    page, _ = lesson
    assert len(GRID) >= 60
    for k, (ctx, batch, slo, prompt, chunk) in enumerate(GRID):
        cached = k % 2 == 1  # every other state with the timeline's prefix-cache switch on
        set_sliders(page, context_tokens=ctx, batch=batch, tpot_slo_ms=slo, prompt_tokens=prompt, chunk_tokens=chunk,
                    show={"prefix_cached": cached})
        expected = readouts(anchor, batch=batch, context_tokens=ctx, tpot_slo_ms=slo, prompt_tokens=prompt,
                            chunk_tokens=chunk, new_tokens=NEW_TOKENS, prefix_cached=cached)
        got = shown(page)
        for name, want in expected.items():
            assert name in got, name
            assert got[name]["value"] == pytest.approx(want, rel=1e-6, abs=1e-9), (name, ctx, batch, slo, prompt, chunk,
                                                                                   cached)
    set_sliders(page, show={"prefix_cached": False})


def test_a_prefix_too_short_to_save_a_request_is_said_so(lesson):
    """Issue 80: with the cached prefix too short to save one hit's time the readout said "够再服务 0 个"; the words
    for a count of zero are shown instead, and the count's again once it is positive."""
    page, _ = lesson
    try:
        for prompt, saves in ((1024, False), (131072, True)):
            set_sliders(page, prompt_tokens=prompt)
            assert (shown(page)["prefix_saved_serves"]["value"] > 0) is saves
            assert page.locator('[data-when-positive="prefix_saved_serves"]').is_visible() is saves
            assert page.locator('[data-unless-positive="prefix_saved_serves"]').is_visible() is not saves
    finally:
        set_sliders(page, prompt_tokens=32768)


def test_readout_text_is_the_rounded_value(lesson):
    page, _ = lesson
    set_sliders(page, context_tokens=4096, batch=58, tpot_slo_ms=20, prompt_tokens=32768, chunk_tokens=512)
    got = shown(page)
    assert got["max_batch_slo"]["text"] == "27"
    assert got["throughput_at_slo_tok_s"]["text"] == "1,357"
    assert got["max_batch_mem"]["text"] == "58"
    assert got["step_ms_at_batch"]["text"] == "25.2"
    assert got["whole_prefill_stall_s"]["text"] == "1.91"
    assert got["chunked_ttft_s"]["text"] == "2.11"
    assert got["running_users"]["text"] == "57"


def test_the_seeds_try_this_cases(lesson):
    page, _ = lesson
    set_sliders(page, context_tokens=4096, batch=58, tpot_slo_ms=30, prompt_tokens=32768, chunk_tokens=512)
    got = shown(page)
    assert got["max_batch_slo"]["text"] == "58" and got["per_user_tok_s_at_slo"]["text"] == "40"
    set_sliders(page, context_tokens=32768, tpot_slo_ms=20)
    got = shown(page)
    assert got["max_batch_mem"]["text"] == "10"
    assert got["throughput_at_slo_tok_s"]["value"] < 1357 / 2
    set_sliders(page, context_tokens=4096, chunk_tokens=8192)
    long_chunk = shown(page)
    assert long_chunk["chunked_max_step_ms"]["value"] > 36.2 and long_chunk["chunked_ttft_s"]["value"] < 2.1
    set_sliders(page, prompt_tokens=131072)
    assert shown(page)["whole_prefill_stall_s"]["value"] > 10


def test_extreme_sliders_never_show_nan_infinity_or_negatives(lesson):
    page, _ = lesson
    sc = json.loads((ROOT / "precomputed" / "precomputed.json").read_text(encoding="utf-8"))["scenario"]
    names = ["context_tokens", "batch", "tpot_slo_ms", "prompt_tokens", "chunk_tokens"]
    for combo in itertools.product(*[(sc[n]["min"], sc[n]["max"]) for n in names]):
        set_sliders(page, **dict(zip(names, combo, strict=True)), tok_s=200)
        got = shown(page)
        for name, r in got.items():
            assert "NaN" not in r["text"] and "Infinity" not in r["text"] and "-" not in r["text"], (name, r)
            if name.endswith("_vs_base") and math.isnan(r["value"]):  # a ratio to a baseline of zero: a dash
                base = got[f"technique.baseline.{name.split('.')[2].removesuffix('_vs_base')}"]["value"]
                assert base == 0 and r["text"] == "—", (name, combo, r)
                continue
            assert math.isfinite(r["value"]) and r["value"] >= 0, (name, combo, r)


def test_batch_slider_is_clamped_to_the_memory_cap(lesson):
    page, _ = lesson
    set_sliders(page, context_tokens=131072, batch=512)
    assert page.locator('input[data-param="batch"]').get_attribute("max") == "2"
    assert shown(page)["effective_batch"]["value"] == 2
    # the reader's batch comes back when the context allows it again (it used to stay at the cap)
    set_sliders(page, context_tokens=4096, batch=58)
    set_sliders(page, context_tokens=32768)
    assert page.locator('input[data-param="batch"]').input_value() == "10"
    set_sliders(page, context_tokens=4096)
    assert page.locator('input[data-param="batch"]').input_value() == "58"
    assert page.locator('[data-slider-value="batch"]').first.inner_text() == "58"
    assert shown(page)["effective_batch"]["value"] == 58


def test_real_slider_input_updates_readouts(lesson):
    page, _ = lesson
    set_sliders(page, context_tokens=4096, batch=58, tpot_slo_ms=20)
    slider = page.locator('input[data-param="tpot_slo_ms"]')
    slider.focus()
    for _ in range(10):
        page.keyboard.press("ArrowRight")
    assert page.evaluate("window.lessonState().tpot_slo_ms") == 30
    assert shown(page)["max_batch_slo"]["text"] == "58"


def test_the_prefix_cache_switch_moves_the_timeline(lesson, anchor):
    """A click on 前缀已缓存: the lanes' TTFTs become the cached prompt's (all but the cited 4,000 new tokens), the
    hit/miss readouts stay what they are; a second click gives the whole prompt back."""
    from scripts.model import timeline as tl

    page, _ = lesson
    set_sliders(page, context_tokens=4096, prompt_tokens=131072, chunk_tokens=512, show={"prefix_cached": False})
    before = shown(page)
    box = page.locator('input[data-show="prefix_cached"]')
    box.click()
    after = shown(page)
    cached = 131072 - NEW_TOKENS
    assert after["whole_ttft_s"]["value"] == pytest.approx(tl.whole_ttft_s(anchor, 4096, 131072, cached), rel=1e-9)
    assert after["whole_ttft_s"]["text"] == after["prefix_hit_ttft_s"]["text"] == "0.42"
    assert before["whole_ttft_s"]["text"] == after["prefix_miss_ttft_s"]["text"] == "10.21"
    assert after["chunked_ttft_s"]["value"] < before["chunked_ttft_s"]["value"] / 10
    assert after["prefix_saved_serves"]["value"] == tl.prefix_saved_serves(anchor, 4096, 131072, NEW_TOKENS)
    page.evaluate("window.lessonDrawn()")  # the charts re-run once the moves pause (lesson.js chartsAfterPaint)
    chunks = page.evaluate("() => window.lessonViews.timeline.data('timeline').filter(b => b.kind === 'chunk').length")
    assert chunks == 8  # the chart redrawn: the chunked lane is ceil(4,000 / 512) chunks, not 131,072 / 512
    box.click()
    assert shown(page)["whole_ttft_s"]["text"] == "10.21"


def test_token_slider_converts_to_characters_per_second(lesson):
    page, _ = lesson
    counts = json.loads((ROOT / "precomputed" / "tokenizer_counts.json").read_text(encoding="utf-8"))
    set_sliders(page, tok_s=100)
    got = shown(page)
    for row in counts["rows"]:
        if row["passage_id"] == counts["chars_passage"]:
            want = 100 * row["chars"] / row["tokens"]
            assert got[f"chars_per_s.{row['tokenizer_id']}"]["value"] == pytest.approx(want, rel=1e-9)


def test_clicking_a_number_shows_its_provenance(lesson):
    page, _ = lesson
    page.locator('[data-prov="frontier.c4096.b58.throughput_tok_s"]').first.click()
    pop = page.locator("#prov-pop")
    assert pop.is_visible()
    assert "推导" in pop.inner_text() and "derived" not in pop.inner_text()  # the kind in words a student reads
    assert "scripts.model.roofline:decode_throughput_tok_s" not in pop.inner_text()  # machinery: behind a toggle
    pop.locator("summary").click()
    assert "frontier.c4096.b58.throughput_tok_s" in pop.inner_text()
    assert "scripts.model.roofline:decode_throughput_tok_s" in pop.inner_text()
    page.keyboard.press("Escape")
    assert not pop.is_visible()


def opens_its_record(page, *rids: str) -> None:
    """Each number's pop-over opens on a click and names its record id under its details."""
    for rid in rids:
        page.locator(f'[data-prov="{rid}"]').first.click()
        pop = page.locator("#prov-pop")
        assert pop.is_visible(), rid
        pop.locator("summary").click()
        assert rid in pop.inner_text()
        page.keyboard.press("Escape")


def test_the_lab_page_shows_provenance_and_leads_back_to_the_lesson(browser):
    """Issue 39: the lab shares the lesson's data and pop-overs: its header's counts and lab settings
    (config/lab.json) open their provenance (the prefix-cache numbers moved to the validation report with their
    section: tests/test_prefix_lab.py opens them there); the lab links back to the lesson, and the lesson to the
    lab."""
    page, watch = open_page(browser, (SITE / "lab.html").as_uri())
    try:
        opens_its_record(page, "page.lab.minutes", "page.lab.experiments", "lab.model.params",
                         "lab.engine.max_num_seqs", "lab.waits.users")
        assert page.locator('a[href="index.html"]').count() >= 1
    finally:
        page.close()
    assert watch.errors == []
    lesson_html = (SITE / "index.html").read_text(encoding="utf-8")
    assert re.search(r'<a class="course" href="lab\.html" data-course="lab">', lesson_html)


def test_the_validation_report_opens_its_records_and_the_lesson_and_lab_lead_to_it(browser):
    """Issue 60: the simulator's validation is its own page (validation.html): a measured real-engine number there
    opens its record (lab-data.js, as on the lab), the sessions are one table, and the lesson's evidence row and
    the lab link to it; the lab keeps a short pointer, not the campaign."""
    page, watch = open_page(browser, (SITE / "validation.html").as_uri())
    try:
        rid = page.locator('#heldout-real ~ .table-wrap [data-prov^="realengine.heldout."]').first \
            .get_attribute("data-prov")
        prefix_number = page.locator('#prefix-cache .prefix-table [data-prov^="prefix."]').first \
            .get_attribute("data-prov")  # the simulated prefix-cache section moved here from the lab (issue 77)
        opens_its_record(page, "page.validation.minutes", rid, prefix_number)
        rows = page.locator(".heldout-sessions-table tbody tr").count()
        assert rows == len(list((ROOT / "precomputed" / "serve-heldout").glob("session-*")))
    finally:
        page.close()
    assert watch.errors == []
    link = r'<a class="course" href="validation\.html" data-course="validation">'
    evidence = (SITE / "index.html").read_text(encoding="utf-8").split('id="evidence"', 1)[1].split("</section>")[0]
    assert re.search(link, evidence)
    lab = (SITE / "lab.html").read_text(encoding="utf-8")
    assert re.search(link, lab) and 'id="heldout-real"' not in lab and 'id="load-real"' not in lab


@pytest.mark.parametrize("group, button, panel", [
    ("path", "decode", "decode"), ("path", "kvcache", "kvcache"), ("path", "tokenize", "tokenize"),
    ("formula", "tpot", "tpot"), ("formula", "n", "n"), ("formula", "e2e", "e2e"),
    ("design", "fails", "fails"), ("design", "fix", "fix"), ("design", "naive", "naive"),
])
def test_teaching_widgets_switch_panels(lesson, group, button, panel):
    page, _ = lesson
    page.locator(f'button[data-group="{group}"][data-explain="{button}"]').click()
    panels = page.locator(f'[data-panel-group="{group}"]')
    visible = [panels.nth(i).get_attribute("data-panel") for i in range(panels.count()) if panels.nth(i).is_visible()]
    assert visible == [panel]
    pressed = page.locator(f'button[data-group="{group}"][data-explain="{button}"]').get_attribute("aria-pressed")
    assert pressed == "true"


def test_request_path_shows_live_anchor_quantities(lesson):
    page, _ = lesson
    set_sliders(page, context_tokens=4096, batch=58, prompt_tokens=32768)
    page.locator('button[data-group="path"][data-explain="decode"]').click()
    text = page.locator('[data-panel="decode"]').inner_text()
    assert "25.2" in text  # the step time at batch 58, context 4,096


def test_served_over_http_makes_no_foreign_request(browser):
    with serve(SITE) as base:
        page, watch = open_page(browser, f"{base}/index.html")
        page.close()
    assert watch.errors == []
    assert [u for u in watch.requests if not u.startswith((base, f"blob:{base}"))] == []  # blob: the sim's worker


@pytest.mark.exhaustive
@pytest.mark.parametrize("width,shots", [(1280, ("default", "mi300x")), (390, ("default", "mi300x"))])
def test_screenshots_of_each_section_on_two_gpus(browser, width, shots):
    """Every section, in the default state and with the GPU switched to the MI300X, as a reader sees it (test
    artifacts: section-<id>-<gpu>-<width>.png, for the GPUs in `shots`); no section wider than the screen on either
    GPU, no console error. make test-all's (7.7 s of make test at 1280 px): a section wider than the screen is caught
    in make test by test_nothing_is_wider_than_its_box_or_it_says_it_scrolls[index-1280] (every table, chart and
    experiment, and the page itself, on the default GPU and on the MI300X) and [index-390]."""
    ARTIFACTS.mkdir(exist_ok=True)
    page, watch = open_page(browser, (SITE / "index.html").as_uri(), width=width)
    sections = page.evaluate("[...document.querySelectorAll('main section[id], body section[id]')].map(s => s.id)")
    assert len(sections) >= 8
    for gpu in ("default", "mi300x"):
        if gpu != "default":
            page.evaluate("g => window.lessonSet({gpu: g})", gpu)
        for sid in sections:
            box = page.locator(f"section#{sid}")
            box.scroll_into_view_if_needed()
            page.evaluate("window.lessonPending()")
            right = page.evaluate("id => document.getElementById(id).getBoundingClientRect().right", sid)
            assert right <= width + 1, (sid, gpu, right)
            if gpu in shots:
                box.screenshot(path=str(ARTIFACTS / f"section-{sid}-{gpu}-{width}.png"))
    page.close()
    assert watch.errors == []


def test_provenance_page_links_both_ways(browser):
    page = browser.new_page()
    page.goto((SITE / "provenance.html").as_uri())
    row = page.locator('tr[id="frontier.c4096.b58.throughput_tok_s"]')
    assert row.count() == 1
    assert "2,304" in row.inner_text() and "scripts.model.roofline:decode_throughput_tok_s" in row.inner_text()
    assert "hardware.hbm_bandwidth_bytes_per_s" in row.inner_text()
    source = row.locator('a[href^="source/"]').first.get_attribute("href")
    assert (SITE / source).is_file()
    row.locator('a[href^="index.html#"]').click()
    wait_ready(page)
    target = page.locator(".prov-target")
    assert target.count() == 1 and target.get_attribute("data-prov") == "frontier.c4096.b58.throughput_tok_s"
    target.click()
    page.locator("#prov-pop a").click()
    assert page.url.endswith("provenance.html#frontier.c4096.b58.throughput_tok_s")
    page.close()


def test_every_number_on_the_rendered_page_is_registered(lesson):
    """The audit reads the static HTML; this reads what the browser shows after the scripts ran."""
    from scripts.page.scan import numbers_in

    page, _ = lesson
    loose = page.evaluate("""() => {
      const out = [], walk = document.createTreeWalker(document.querySelector('main'), NodeFilter.SHOW_TEXT);
      while (walk.nextNode()) {
        const n = walk.currentNode, el = n.parentElement;
        if (el.closest('[data-prov], [data-formula], [data-meta], [data-choice], script, style, .vega-embed')) continue;
        if (n.textContent.trim()) out.push(n.textContent);
      }
      return out;
    }""")
    assert [t for t in loose if numbers_in(t)] == []


@pytest.mark.parametrize(("param", "value", "text"), [("context_tokens", 8192, "8,192"), ("prompt_tokens", 65536,
                                                                                           "65,536")])
def test_every_label_of_a_slider_follows_it(lesson, param, value, text):
    page, _ = lesson
    page.evaluate("""([name, value]) => {
        const el = document.querySelector(`input[data-param="${name}"]`);
        el.value = String(Math.log2(value)); el.dispatchEvent(new Event('input', {bubbles: true}));
        return window.lessonPending(); }""", [param, value])
    labels = page.locator(f'[data-slider-value="{param}"]').all_text_contents()
    assert len(labels) >= 2 and all(label == text for label in labels), labels


def test_words_and_numbers_that_name_the_gpu_follow_the_switch(lesson):
    """Issue 24 item 1: on another GPU the captions name that GPU and the memory the KV panel packs into is that
    GPU's (its record too); the 'try this' boxes say which GPU and settings their numbers hold for."""
    page, _ = lesson
    data = json.loads((ROOT / "precomputed" / "precomputed.json").read_text(encoding="utf-8"))
    gpus = {g["id"]: g for g in data["gpus"]}
    default = next(g for g in data["gpus"] if g["default"])
    hbm = page.locator("[data-gpu-field=hbm_bytes]")
    try:
        page.locator('select[data-choice="gpu"]').select_option("mi300x")
        labels = page.locator("[data-gpu-label]").all_inner_texts()
        assert len(labels) >= 4 and set(labels) == {gpus["mi300x"]["name"]}  # the full name, as the default shows
        assert hbm.get_attribute("data-prov") == "gpu.mi300x.hbm_bytes"
        assert hbm.inner_text() == data["provenance"]["gpu.mi300x.hbm_bytes"]["display"]
    finally:
        page.locator('select[data-choice="gpu"]').select_option(default["id"])
    assert set(page.locator("[data-gpu-label]").all_inner_texts()) == {data["anchor"]["hardware"]}
    assert hbm.get_attribute("data-prov") == "hw.hbm_bytes"
    notes = page.locator(".try .state-note").all_inner_texts()
    assert len(notes) == 3 and all(default["label"] in n and "默认设置" in n for n in notes)


WIDER_THAN_ITS_BOX = """() => {
  const vw = document.documentElement.clientWidth, out = [];
  for (const e of document.querySelectorAll('table, .chart, .experiment, .controls, .pipeline, pre')) {
    const r = e.getBoundingClientRect(), wrap = e.closest('.table-wrap');
    if (wrap) {
      const w = wrap.getBoundingClientRect();
      if (w.right > vw + 0.5) out.push(['wrap', e.className, w.right]);
      if (wrap.scrollWidth > wrap.clientWidth + 1 && !wrap.classList.contains('scrolls'))
        out.push(['no cue', e.className, r.right]);
    } else if (r.right > vw + 0.5) out.push(['wide', e.tagName + '.' + e.className, r.right]);
  }
  return out; }"""


@pytest.mark.parametrize("width", [390, 1280])
@pytest.mark.parametrize("name", ["index", "lab", "validation"])
def test_nothing_is_wider_than_its_box_or_it_says_it_scrolls(browser, width, name):
    """Issue 24 item 5, on every page (issues 39, 60): every table, chart and experiment ends inside the viewport; a
    table wider than its box scrolls inside a .table-wrap that says so (class `scrolls`, a visible cue) and itself
    fits. At 1280 px the lesson's load table fits its box with no scroll at all, and the lesson is measured again
    with the GPU switched to the MI300X (its labels and numbers in every section). The page's one browser pass at
    this width: it also leaves the full-page screenshot (test artifacts <page>-<width>.png) and no console error."""
    ARTIFACTS.mkdir(exist_ok=True)
    page, watch = open_page(browser, (SITE / f"{name}.html").as_uri(), width=width)
    try:
        page.screenshot(path=str(ARTIFACTS / f"{'lesson' if name == 'index' else name}-{width}.png"), full_page=True)
        if name == "index":
            page.locator("#exp-load").scroll_into_view_if_needed()
        if name != "validation":  # the report shows no serving.json record, so it loads no serving-data.js
            page.wait_for_function("() => !!window.C13_SERVING")
        page.wait_for_timeout(300)
        if name == "index" and width == 1280:
            wrap = page.locator("#exp-load .table-wrap:has(table.load-table:not(.tail-table))")
            assert wrap.evaluate("w => w.scrollWidth <= w.clientWidth + 1"), "the load table scrolls at 1280 px"
        assert page.evaluate(WIDER_THAN_ITS_BOX) == []
        assert page.evaluate("document.documentElement.scrollWidth") <= width  # no sideways scroll of the page
        if name == "index" and width == 1280:  # another GPU's labels and numbers (guards the sections' screenshots)
            page.evaluate("window.lessonSet({gpu: 'mi300x'})")
            assert page.evaluate(WIDER_THAN_ITS_BOX) == [], "mi300x"
            assert page.evaluate("document.documentElement.scrollWidth") <= width, "mi300x"
    finally:
        page.close()
    assert watch.errors == []


@pytest.mark.parametrize("width", [390, 1280])
def test_the_provenance_table_is_readable_at_both_widths(browser, width):
    """Issue 24 item 6: the table fits the viewport (cards on a phone, columns on a laptop), kinds in Chinese."""
    page = browser.new_page(viewport={"width": width, "height": 900})
    page.goto((SITE / "provenance.html").as_uri())
    try:
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        assert page.evaluate("document.querySelector('table.prov').getBoundingClientRect().right") <= width
        first = page.locator("table.prov tbody tr").first
        assert first.locator("td").nth(2).inner_text() in {"推导", "引用", "实测", "模拟", "假设", "校准"}
        date_box = first.locator("td").nth(6).bounding_box()
        assert date_box is not None and date_box["x"] + date_box["width"] <= width  # the date column is on screen
    finally:
        page.close()
