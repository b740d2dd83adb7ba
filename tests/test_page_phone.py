"""Phone first: the text needs no script to paint, the charts draw into boxes reserved for them (no layout
shift), the Vega runtime is the pinned file, and the SEO basics are in the page."""
import hashlib
import json
import re

import pytest

from tests.browser import wait_ready
from tests.conftest import ROOT

pytestmark = pytest.mark.browser
SITE = ROOT / "site"


def test_the_page_has_no_inline_script_and_names_its_three_files():
    for name, page in (("lab.html", "lab"), ("validation.html", "validation"), ("index.html", "index")):
        scripts = re.findall(r"<script\b[^>]*>", (SITE / name).read_text(encoding="utf-8"))
        # the measured records the lesson does not show (the lab and the report), and the report's prefix experiment
        lab_only = {"lab": ' data-lab="lab-data.js"',
                    "validation": ' data-lab="lab-data.js" data-prefix="prefix-data.js"'}.get(page, "")
        # the lab's own experiments: its model (and kernel) and the page's side of them
        own = ['<script defer src="serving-sim.js">', '<script defer src="lab-model.js">',
               '<script defer src="lab.js">'] if page == "lab" else []
        assert scripts == [f'<script defer src="lesson.js" data-page="{page}" data-data="lesson-data.js" '
                           'data-runtime="vega.min.js" data-serving="serving-data.js" '
                           f'data-sim="serving-sim.js"{lab_only}>', *own]
    html = (SITE / "index.html").read_text(encoding="utf-8")
    # the text, CSS and each number's provenance markup only (before the scripts were split out it was 1.13 MB); the
    # real-engine section's two tables alone carry 144 numbers, each a <span data-prov> (about 19 KB)
    assert len(html.encode()) < 140_000
    assert '<html lang="zh-CN">' in html
    assert re.search(r'<meta name="description" content="[^"]{40,}">', html)
    assert re.search(r'<link rel="icon" href="data:image/svg\+xml,', html)


def test_the_runtime_is_the_pinned_vega():
    pin = json.loads((ROOT / "config" / "vendor.json").read_text(encoding="utf-8"))["vega"]
    assert hashlib.sha256((SITE / "vega.min.js").read_bytes()).hexdigest() == pin["file_sha256"]
    assert "vegaEmbed" not in (SITE / "vega.min.js").read_text(encoding="utf-8")[:2000]


@pytest.mark.parametrize("width", [390, 1280])
def test_charts_draw_into_their_reserved_boxes_without_layout_shift(browser, width):
    page = browser.new_page(viewport={"width": width, "height": 800})
    page.add_init_script("""window.__shifts = [];
      new PerformanceObserver((l) => { for (const e of l.getEntries()) window.__shifts.push(e.value); })
        .observe({type: 'layout-shift', buffered: true});""")
    page.goto((SITE / "index.html").as_uri())
    page.wait_for_function("window.lessonDraw !== undefined")
    assert page.evaluate("Object.keys(window.lessonViews).length") == 0  # nothing drawn off screen
    wait_ready(page)
    boxes = page.evaluate("""[...document.querySelectorAll('.chart')].map(e => [e.id, parseFloat(e.style.minHeight),
        e.getBoundingClientRect().height])""")
    assert len(boxes) >= 5
    for chart, reserved, drawn in boxes:
        assert drawn == pytest.approx(reserved, abs=0.5), chart
    assert sum(page.evaluate("window.__shifts")) == 0
    # each canvas holds its whole layout (a legend that wraps on a phone is not cut off): laid out afresh, no
    # chart changes size
    page.evaluate("window.lessonPending()")
    sizes = """() => Object.fromEntries(Object.entries(window.lessonViews).map(([id, v]) =>
        [id, (v.container().querySelector('canvas, svg') || {}).clientHeight]))"""
    relayout = "Promise.all(Object.values(window.lessonViews).map(v => v.resize().runAsync())).then(() => 0)"
    before = page.evaluate(sizes)
    page.evaluate(relayout)
    assert page.evaluate(sizes) == before
    # a rate move redraws the experiment's charts without laying them out again unless their legend or axes'
    # decades changed: after moves across the range, a fresh layout still changes no chart's size
    for rate in (0.7, 6.3, 11.5, 3.1):
        page.evaluate("(r) => window.lessonSet({request_rate: r})", rate)
        page.evaluate("window.lessonPending()")
        before = page.evaluate(sizes)
        page.evaluate(relayout)
        assert page.evaluate(sizes) == before, rate
    page.close()
