"""Course navigation (issue 24 item 7): every name of another lesson on the page links where config/course.json
says, a name the file leaves unset prints as plain text (never a dead link), and a bad file is one line naming
its field."""
from __future__ import annotations

import copy
import json
import re

import pytest

from scripts.audit.inputs import check_course
from scripts.page.render import course_links, render
from scripts.record.inputs import InputError
from tests.conftest import ROOT

COURSE = ROOT / "config" / "course.json"


def course_anchors(html: str) -> list[tuple[str, str | None]]:
    """(link id, href or None) for every course name the page prints."""
    found = [(m.group(2), m.group(1)) for m in re.finditer(r'<a class="course" href="([^"]*)" data-course="([^"]+)"',
                                                          html)]
    found += [(m.group(1), None) for m in re.finditer(r'<span class="course" data-course="([^"]+)"', html)]
    return found


def test_the_built_page_links_each_lesson_where_the_course_file_says():
    doc = json.loads(COURSE.read_text(encoding="utf-8"))
    html = (ROOT / "site" / "index.html").read_text(encoding="utf-8")
    shown = course_anchors(html)
    assert {lid for lid, _ in shown} >= {"C13-L1", "C13-L2", "C13-L3", "C10", "C14", "lab", "chapter"}
    for lid, href in shown:
        assert href == doc["links"][lid]["href"], lid
        assert not re.match(r"[a-zA-Z][a-zA-Z0-9+.-]*:|//|/", href or "x"), href  # relative: works from file://
    mapped = [lid for lid in doc["map"]["value"] if lid]
    evolution = re.search(r'<ol class="map">.*?</ol>', html, re.S).group(0)
    names = [lid for lid, _ in course_anchors(evolution)]
    assert names == mapped and mapped  # each generation whose lesson is named links its name there


def test_an_unset_target_prints_plain_text_never_a_dead_link(tmp_path):
    doc = course_links(COURSE)
    doc["links"]["C14"]["href"] = None
    doc["map"]["value"] = [None] * 11
    data = json.loads((ROOT / "precomputed" / "precomputed.json").read_text(encoding="utf-8"))
    html = render(data, None, None, "", ROOT / "templates", course=doc)["index.html"]
    assert 'data-course="C14"' in html and not re.search(r'<a [^>]*data-course="C14"', html)
    assert '<a class="course"' not in re.search(r'<ol class="map">.*?</ol>', html, re.S).group(0)
    assert re.search(r'<a class="course" href="\.\./C13-L1/index\.html" data-course="C13-L1"', html)
    bare = render(data, None, None, "", ROOT / "templates")["index.html"]  # no course file: every name is text
    assert '<a class="course"' not in bare


@pytest.mark.parametrize(("edit", "field"), [
    (lambda d: d["links"]["C14"].update(href="javascript:alert(1)"), "links.C14.href"),
    (lambda d: d["links"]["C14"].update(href="file:///etc/passwd"), "links.C14.href"),
    (lambda d: d["links"]["C14"].update(href="//evil.example/x"), "links.C14.href"),
    (lambda d: d["links"]["lab"].pop("source"), "links.lab"),
    (lambda d: d["map"]["value"].__setitem__(0, "C99"), "map.value[0]"),
    (lambda d: d["map"].update(value=[None] * 10), "map.value"),
])
def test_a_bad_course_file_is_one_line_naming_the_field(tmp_path, edit, field):
    doc = json.loads(COURSE.read_text(encoding="utf-8"))
    bad = copy.deepcopy(doc)
    edit(bad)
    path = tmp_path / "course.json"
    path.write_text(json.dumps(bad), encoding="utf-8")
    with pytest.raises(InputError) as err:
        course_links(path)
    assert "\n" not in str(err.value) and str(path.as_posix()) in str(err.value) and field in str(err.value)


def test_a_template_naming_an_unknown_lesson_is_caught_before_the_build(tmp_path):
    doc = json.loads(COURSE.read_text(encoding="utf-8"))
    del doc["links"]["C10"]
    path = tmp_path / "course.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(InputError, match=r"field links has no entry 'C10'"):
        check_course(path, ROOT / "templates" / "index.html.j2")


def test_every_link_within_the_site_lands_on_something_of_its_page():
    """Each page's links into the site itself reach a file of the site, and a link with a fragment reaches an
    element with that id or the number with that record (provenance.js opens it): the lab once sent readers to
    "#prefix-real" after that section had moved to the validation report, and the provenance page sent every
    number to the lesson page, including those only the lab or the report shows. Links to other lessons
    (config/course.json, outside this site) are the course test's."""
    from urllib.parse import unquote

    site, checked = ROOT / "site", 0
    for name in ("index.html", "lab.html", "validation.html", "provenance.html"):
        html = (site / name).read_text(encoding="utf-8")
        for href in sorted(set(re.findall(r'<a [^>]*href="([^"]+)"', html))):
            if re.match(r"[a-zA-Z][a-zA-Z0-9+.-]*:|//|/|\.\./", href):
                continue  # outside the site: another lesson, or the web
            file, _, fragment = href.partition("#")
            target = site / (file or name)
            assert target.is_file(), f"{name}: {href} names no file of the site"
            if fragment:
                page = target.read_text(encoding="utf-8")
                fragment = unquote(fragment).replace("&", "&amp;")
                assert f'id="{fragment}"' in page or f'data-prov="{fragment}"' in page, f"{name}: {href} lands nowhere"
            checked += 1
    assert checked > 1000  # the provenance page links every number it lists


def test_the_provenance_page_links_and_ships_every_input_file_a_record_names():
    """Issue 80 item 8: a record's inputs are linked to the file they are read from, and the file is shipped in
    site/source/: the anchor for derived numbers, config/gpus.json for a GPU's datasheet figures, a measured run's
    file, config/lab.json for the lab's settings."""
    from scripts.page.provenance_page import input_file

    html = (ROOT / "site" / "provenance.html").read_text(encoding="utf-8")
    linked = set(re.findall(r'href="source/([^"]+)"', html))
    for wanted in ("anchor-model.json", "config/gpus.json", "config/lab.json"):
        assert wanted in linked, wanted
    assert any(p.startswith("precomputed/bench/") for p in linked)
    for rel in linked:
        assert (ROOT / "site" / "source" / rel).read_bytes() == (ROOT / rel).read_bytes(), rel
    assert input_file({"kind": "cited", "locator": "config/gpus.json gpus.h100_sxm.hbm_bytes"}, "x.json") == \
        "config/gpus.json"
    assert input_file({"kind": "derived", "derivation": "anchor"}, "anchors/none.json") is None  # not a file


def provenance_rows(html: str) -> dict[str, str]:
    """record id -> its row of the provenance page."""
    return {m.group(1): m.group(2) for m in re.finditer(r'<tr id="([^"]+)">(.*?)</tr>', html, re.S)}


def test_each_input_a_record_names_shows_its_value_where_it_is_written():
    """Issue 80 item 8: a derived record lists every input field with its value, read from the file that holds it:
    model.* from the anchor, the GPU's datasheet figures from config/gpus.json under the GPU's entry (linked), a
    cited figure from config/cited.json."""
    from scripts.record.anchor_file import load

    _, resolved = load(ROOT / "anchor-model.json")
    gid = resolved["hardware"]["gpu"]["value"]
    rows = provenance_rows((ROOT / "site" / "provenance.html").read_text(encoding="utf-8"))
    row = rows["mem.cap.c4096"]  # the requests memory holds: the model's sizes and the GPU's memory
    head_dim, hbm = resolved["model"]["head_dim"]["value"], resolved["hardware"]["hbm_bytes"]["value"]
    assert f"<code>model.head_dim</code> = {head_dim:,}" in row
    assert (f'<a href="source/config/gpus.json" title="config/gpus.json gpus.{gid}.hbm_bytes">'
            f"<code>gpus.{gid}.hbm_bytes</code></a> = {int(hbm):,}") in row
    cited = json.loads((ROOT / "config" / "cited.json").read_text(encoding="utf-8"))["numbers"]
    gpt2 = next(n for n in cited if n["id"] == "cited.course.gpt2_tokens")
    assert f"<code>cited.course.gpt2_tokens</code></a> = {gpt2['value']:,}" in rows["course.gpt2_to_anchor_ratio"]
    assert " = —" not in "".join(rows.values())  # every input resolved to a value


def test_a_number_on_both_the_lesson_and_the_lab_links_to_both():
    """Issue 80 item 8: the provenance page's "在页面中" link went to the first page only; a number the lesson and
    the lab both show now links to each."""
    from urllib.parse import quote

    from scripts.page.scan import page_numbers

    site = ROOT / "site"
    on = {name: {rid for rid, _, _ in page_numbers((site / name).read_text(encoding="utf-8"))}
          for name in ("index.html", "lab.html", "validation.html")}
    both = sorted(on["index.html"] & on["lab.html"])
    assert both, "no number is shown on both pages"
    rows = provenance_rows((site / "provenance.html").read_text(encoding="utf-8"))
    for rid in both:
        assert "在课程页面中 →" in rows[rid] and f'href="lab.html#{rid}"' in rows[rid], rid
    only = sorted(on["lab.html"] - on["index.html"] - on["validation.html"])  # shown on the lab alone
    assert only
    for rid in only:
        assert f'<a href="lab.html#{rid}">在页面中 →</a>' in rows[rid].replace(quote(rid, safe=""), rid), rid
