"""Static-site safety: text from the JSON renders as text, the CSP allows no remote origin, and a setting
where nothing fits in memory says so plainly instead of showing nonsense numbers."""
import copy
import json
import math
import re

import pytest

from scripts.lesson.precomputed import build
from scripts.model.anchor import anchor_from
from scripts.page.bundles import measured_records
from scripts.page.render import render
from scripts.record.anchor_file import validate
from tests.browser import open_page
from tests.conftest import ROOT

pytestmark = pytest.mark.browser


def load(name):
    return json.loads((ROOT / "precomputed" / name).read_text(encoding="utf-8"))


def render_to(tmp_path, data, tokens=None, bench=None, questions=""):
    files = render(data, tokens, bench, questions, ROOT / "templates")
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    return tmp_path / "index.html", files["index.html"]


def test_csp_allows_no_remote_origin():
    html = (ROOT / "site" / "index.html").read_text(encoding="utf-8")
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', html).group(1)
    assert "default-src 'none'" in csp and "script-src 'self' 'unsafe-eval';" in csp
    assert "connect-src 'self';" in csp  # same origin only: Lighthouse reads /robots.txt from the page
    assert not re.search(r"https?:|\*|data: 'unsafe|blob:", csp.replace("img-src data:", "").replace(
        "font-src data:", "").replace("worker-src blob:", ""))  # blob: only for the simulator's worker
    assert not re.search(r'(src|href)="https?://', html)


def test_planted_script_in_json_renders_as_text(tmp_path, browser):
    tokens = load("tokenizer_counts.json")
    tokens = copy.deepcopy(tokens)
    tokens["passages"]["zh"] = "<script>window.__pwned = 1</script><img src=x onerror=window.__pwned=2>"
    tokens["passage_titles"]["zh"] = "<b>标题</b>"
    questions = "## <script>window.__pwned = 3</script>\n\n回答 <i>x</i>"
    measured = measured_records(load("bench_medians.json"), load("measured_records.json"))  # as the render reads them
    out, html = render_to(tmp_path, load("precomputed.json"), tokens, measured, questions)
    assert "&lt;script&gt;window.__pwned = 1&lt;/script&gt;" in html
    page, watch = open_page(browser, out.as_uri())
    assert page.evaluate("window.__pwned") is None
    passages = page.locator("pre.passage").all_text_contents()  # inside a closed <details>: text, not layout
    assert any(t.startswith("<script>window.__pwned = 1</script><img src=x") for t in passages)
    assert "<script>window.__pwned = 3</script>" in page.locator("#questions").inner_text()
    assert [u for u in watch.requests if not u.startswith("file://")] == []
    page.close()


def test_when_nothing_fits_the_page_says_so(tmp_path, browser):
    doc = json.loads((ROOT / "anchor-model.json").read_text(encoding="utf-8"))
    gpus = json.loads((ROOT / "config" / "gpus.json").read_text(encoding="utf-8"))
    gpus["gpus"][doc["hardware"]["gpu"]["value"]]["hbm_bytes"]["value"] = 60e9  # weights fit; a 131,072 request not
    (tmp_path / "gpus.json").write_text(json.dumps(gpus), encoding="utf-8")
    doc["scenario"]["try_tpot_slo_ms"]["value"] = [17, 30]  # at 60 GB, 20 ms no longer binds: the claim says so
    doc = validate(doc, gpus_path=tmp_path / "gpus.json")
    data = build(anchor_from(doc), doc, json.loads((ROOT / "config" / "cited.json").read_text(encoding="utf-8")), gpus)
    out, _ = render_to(tmp_path, data)
    page, watch = open_page(browser, out.as_uri())
    page.evaluate("window.lessonSet({context_tokens: 131072, batch: 1})")
    assert page.locator("[data-when-nothing-fits]").first.is_visible()
    values = page.evaluate("[...document.querySelectorAll('[data-readout]')].map(e => Number(e.dataset.value))")
    assert all(math.isfinite(v) and v >= 0 for v in values)
    assert page.locator('[data-readout="max_batch_mem"]').first.inner_text() == "0"
    page.evaluate("window.lessonSet({context_tokens: 4096})")
    assert not page.locator("[data-when-nothing-fits]").first.is_visible()
    assert watch.errors == []
    page.close()


def test_jinja_autoescape_is_on():
    from scripts.page.jinja import jinja_env

    env = jinja_env(ROOT / "templates")
    assert env.from_string("{{ x }}").render(x="<script>") == "&lt;script&gt;"
    from scripts.page.bundles import json_for_script

    assert json_for_script({"x": "</script><b>"}) == '{"x":"\\u003c/script\\u003e\\u003cb\\u003e"}'


def test_questions_log_is_markdown_with_raw_html_off():
    from scripts.page.jinja import markdown

    html = str(markdown("<!-- note -->\n## 为什么看 *p99*?\n\n见 [文档](https://example.org/x) 与 `vllm bench serve`。"
                        "<b>粗</b>\n\n[坏](javascript:alert(1))"))
    assert "<h4>为什么看 <em>p99</em>?</h4>" in html
    assert '<a href="https://example.org/x">文档</a>' in html and "<code>vllm bench serve</code>" in html
    assert "&lt;b&gt;粗&lt;/b&gt;" in html and "javascript:" not in html.replace("[坏](javascript:alert(1))", "")
    assert "note" not in html
