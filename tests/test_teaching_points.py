"""Issue 39: the lesson keeps every teaching point of its design (tests/teaching_points.py) in the place the list
names, and its header's reading time is counted from the page and held to the lesson's frame."""
from __future__ import annotations

import json
import re
from html.parser import HTMLParser

import pytest

from scripts.page import reading
from tests.conftest import ROOT
from tests.teaching_points import POINTS

SITE = ROOT / "site"


class _Sections(HTMLParser):
    """Per <section id> (and "top" for the header): its text without whitespace and its data-prov ids."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.current, self.depth, self.text, self.prov = None, 0, {}, {}

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag in ("section", "header") and self.current is None:
            self.current = a.get("id") if tag == "section" else "top"
            self.depth = 0
        if self.current is not None and tag in ("section", "header"):
            self.depth += 1
        if self.current is not None and "data-prov" in a:
            self.prov.setdefault(self.current, set()).add(a["data-prov"])

    def handle_endtag(self, tag):
        if self.current is not None and tag in ("section", "header"):
            self.depth -= 1
            if self.depth == 0:
                self.current = None

    def handle_data(self, data):
        if self.current is not None:
            self.text[self.current] = self.text.get(self.current, "") + re.sub(r"\s", "", data)


def sections(html: str) -> _Sections:
    s = _Sections()
    s.feed(html)
    return s


def missing_points(html: str) -> list[str]:
    """Each point whose section lacks one of its records or phrases, with what is missing."""
    s, out = sections(html), []
    for p in POINTS:
        text, prov = s.text.get(p["section"], ""), s.prov.get(p["section"], set())
        lost = [r for r in p.get("records", []) if r not in prov] + [t for t in p.get("text", []) if t not in text]
        if lost:
            out.append(f"{p['section']}: {p['point']} (missing {lost})")
    return out


@pytest.fixture(scope="module")
def lesson_html():
    return (SITE / "index.html").read_text(encoding="utf-8")


def test_every_teaching_point_of_the_design_is_on_the_lesson_page(lesson_html):
    assert len(POINTS) >= 25
    assert missing_points(lesson_html) == []


def test_a_point_moved_off_the_lesson_page_fails(lesson_html):
    cut = re.sub(r'<section id="misconceptions">.*?</section>', "", lesson_html, flags=re.S)
    lost = missing_points(cut)
    assert len(lost) == 4 and all(x.startswith("misconceptions:") for x in lost)
    renamed = lesson_html.replace("可以停在这里", "到此为止")
    assert [x for x in missing_points(renamed) if "可以停在这里" in x]


def page_records() -> dict:
    from scripts.page.bundles import read_page_records

    return read_page_records((SITE / "lesson-data.js").read_text(encoding="utf-8"))


def test_the_header_states_the_time_counted_from_the_page_within_the_frame(lesson_html):
    rec = page_records()
    count = reading.count(lesson_html)
    course = json.loads((ROOT / "config" / "course.json").read_text(encoding="utf-8"))["reading"]
    assert rec["page.lesson.prose_chars"]["value"] == count.prose
    assert rec["page.lesson.experiments"]["value"] == count.experiments == 5
    expected = count.prose / course["rate_chars_per_minute"]["value"] + \
        count.experiments * course["minutes_per_experiment"]["value"]
    assert rec["page.lesson.minutes"]["value"] == pytest.approx(expected, abs=1.0)
    assert rec["page.lesson.minutes"]["value"] >= expected  # rounded up, never down
    assert expected <= course["frame_minutes"]["value"]  # the one budget: config/course.json, as the render checks
    header = re.search(r'<div class="meta">.*?</div>', lesson_html, re.S).group(0)
    assert 'data-prov="page.lesson.minutes"' in header and 'data-prov="page.lesson.experiments"' in header
    assert f'>{rec["page.lesson.minutes"]["display"]}<' in header
    for page, file in (("lab", "lab.html"), ("validation", "validation.html")):  # each page counts its own time
        html = (SITE / file).read_text(encoding="utf-8")
        assert rec[f"page.{page}.prose_chars"]["value"] == reading.count(html).prose
        assert f'data-prov="page.{page}.minutes"' in html


def test_the_build_refuses_a_lesson_longer_than_its_frame():
    from scripts.page.render import TemplateProblem, course_links, render

    doc = course_links(ROOT / "config" / "course.json")
    doc["reading"]["frame_minutes"]["value"] = 20
    data = json.loads((ROOT / "precomputed" / "precomputed.json").read_text(encoding="utf-8"))
    with pytest.raises(TemplateProblem, match=r"config/course\.json reading\.frame_minutes") as exc:
        render(data, None, None, "", ROOT / "templates", course=doc)
    assert "over its frame of 20 minutes" in str(exc.value) and "\n" not in str(exc.value)


def test_the_count_reads_what_a_reader_reads():
    html = """<main><header><div class="meta"><span>十个字的元信息不计入</span></div><h1>标题四字</h1></header>
      <p>正文 六个字。</p><table><tr><td>表格里的字</td></tr></table>
      <div class="experiment"><div class="controls"><label>滑块<input type="range"></label></div>
        <p class="aside" data-when-x hidden>某个状态下才出现</p><div class="panel" hidden><p>点开的面板</p></div>
        <select><option>选项</option></select><div class="readouts"><span>读数</span></div></div>
      <pre>样例文本</pre><footer>页脚</footer></main><p>main 之外</p>"""
    c = reading.count(html)
    assert c.prose == len("标题四字") + len("正文六个字。") + len("点开的面板")
    assert c.tables == len("表格里的字") and c.experiments == 1 and c.controls == 2
    assert reading.header_minutes(5100, 255, 5, 2.5) == 33  # 20 + 12.5 = 32.5, rounded up
    assert reading.header_minutes(5100, 255, 6, 2.5) == 35


def test_no_record_cites_a_file_outside_the_repository():
    from scripts.audit.report import load_records

    records = load_records(ROOT / "precomputed", SITE)
    for rid, rec in records.items():
        text = json.dumps({k: v for k, v in rec.items() if k not in ("value", "display")}, ensure_ascii=False)
        assert "../" not in text and "shared/spec" not in text and "shared/seed" not in text, rid
