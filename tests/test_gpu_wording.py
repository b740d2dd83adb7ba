"""Issue 80: a sentence whose truth depends on the GPU names no GPU, and the reading time holds the lesson to its frame
with every such sentence at its longest. The longest form found from a few candidate sets equals the brute force over
every set of failing GPUs; the reading count adds the marked extra only where prose counts; the frame check refuses a
page that fits as shown but not at its longest; one more GPU adds a column to the table and no prose."""
import copy
import itertools
import json
import random

import pytest

from scripts.page import gpu_wording as w
from scripts.page import reading
from tests.conftest import ROOT
from tests.test_any_configuration import lesson_with, verdicts

HEDGE = "(各卡不一,见核对表)"


def gpus_of(n: int, rng: random.Random) -> list[dict]:
    return [{"id": f"g{i}", "label": "X" * rng.randint(1, 15)} for i in range(n)]


def every_set(gpus: list[dict]):
    ids = [g["id"] for g in gpus]
    return [list(c) for k in range(len(ids) + 1) for c in itertools.combinations(ids, k)]


def test_the_longest_form_equals_the_brute_force_over_every_failing_set():
    rng = random.Random(80)
    for _ in range(300):
        gpus = gpus_of(rng.randint(0, 7), rng)
        yes, no, hedge = "y" * rng.randint(0, 9), "n" * rng.randint(0, 9), "h" * rng.randint(0, 12)
        excused = [g["id"] for g in gpus if rng.random() < 0.4]
        because = "b" * rng.randint(0, 20)
        for wording, also in ((lambda f, g=gpus, y=yes, n=no, h=hedge: w.mixed(g, f, y, n, h), ()),
                              (lambda f, g=gpus, h=hedge: w.where(g, f, h), ()),
                              (lambda f, g=gpus, h=hedge, e=excused, b=because: w.where(g, f, h, e, b), [excused])):
            brute = max(w.chars(wording(s)) for s in every_set(gpus))
            assert w.longest(wording, gpus, also) == brute


def test_the_wordings_follow_the_outcomes():
    gpus = [{"id": i, "label": i.upper()} for i in ("a", "b", "c")]
    assert w.mixed(gpus, [], "Y", "N", HEDGE) == "Y"
    assert w.mixed(gpus, ["a"], "Y", "N", HEDGE) == "Y" + HEDGE  # the more GPUs hold
    assert w.mixed(gpus, ["a", "b"], "Y", "N", HEDGE) == "N" + HEDGE  # the more GPUs fail
    assert w.mixed(gpus, ["a", "b", "c", "zz"], "Y", "N", HEDGE) == "N"  # an id not on the switch is ignored
    assert w.where(gpus, [], HEDGE) == "" and w.where(gpus, ["b"], HEDGE) == HEDGE
    assert w.where(gpus, ["b"], HEDGE, excused=["b", "c"], because="(B)") == "(B)"
    assert w.where(gpus, ["a", "b"], HEDGE, excused=["b", "c"], because="(B)") == HEDGE
    assert w.extra("Y", lambda f: w.mixed(gpus, f, "Y", "NN", HEDGE), gpus) == w.chars("NN" + HEDGE) - 1


def test_the_reading_count_adds_the_extra_only_where_prose_counts():
    page = ('<main><p>一二三<span data-longest-extra="7">四</span></p>'
            '<p hidden><span data-longest-extra="100">藏</span></p>'
            '<table><tr><td><span data-longest-extra="1000">表</span></td></tr></table>'
            '<div class="readouts"><span data-longest-extra="10000">读</span></div></main>'
            '<footer><span data-longest-extra="100000">脚</span></footer>')
    c = reading.count(page)
    assert (c.prose, c.longest_extra, c.tables) == (4, 7, 1)


def records(prose: int, extra: int) -> dict:
    r = {"page.reading.frame_minutes": 35, "page.reading.rate": 255, "page.reading.minutes_per_experiment": 2.5}
    for page in ("lesson", "lab"):
        r.update({f"page.{page}.prose_chars": prose, f"page.{page}.longest_extra_chars": extra,
                  f"page.{page}.experiments": 5, f"page.{page}.run_seconds": 0})
    return {k: {"value": v} for k, v in r.items()}


def test_a_page_that_fits_as_shown_but_not_at_its_longest_is_refused():
    fits = 255 * (35 - 12.5)  # 5,737.5 characters fill the frame beside five experiments
    assert reading.frame_problem(records(5700, 37)) is None
    assert reading.spare_characters(records(5700, 37), "lesson") == pytest.approx(0.5)
    problem = reading.frame_problem(records(5700, 38))
    assert problem is not None and "\n" not in problem
    assert "templates/index.html.j2: the lesson reads in 35.002 minutes (5,738 prose characters, 38 of them the " \
           "GPU-dependent sentences at their longest" in problem
    assert "config/course.json reading.frame_minutes) by 0 characters" in problem or "by 1 characters" in problem
    assert reading.spare_characters(records(5700, 38), "lesson") == pytest.approx(fits - 5738)


def test_one_more_gpu_adds_a_column_and_no_prose(tmp_path):
    """One more GPU in the switch (an H20 beside the five), failing every claim: the sentences change their wording
    (the GPUs now disagree) but the lesson at its longest is unchanged, since no sentence names a GPU; the table has
    one more column, marked per claim."""
    def with_h20(doc):
        h20 = copy.deepcopy(doc["gpus"][-1])
        src = h20["id"]
        h20.update(id="h20", label="H20 96GB", default=False)
        doc["gpus"].append(h20)
        for rid, rec in list(doc["provenance"].items()):  # its records: the copied GPU's, renamed
            if rid.startswith(f"gpu.{src}."):
                doc["provenance"][rid.replace(src, "h20", 1)] = {**rec, "id": rid.replace(src, "h20", 1)}
        for cid in doc["techniques"]["fails_on"]:
            doc["techniques"]["fails_on"][cid].append("h20")

    before = reading.count((ROOT / "site" / "index.html").read_text(encoding="utf-8"))  # the committed data's page
    html = lesson_with(tmp_path / "six", "data", "precomputed.json", with_h20)
    after = reading.count(html)
    assert after.prose + after.longest_extra == before.prose + before.longest_extra
    assert after.prose != before.prose  # the wording did follow the new outcomes
    assert after.tables > before.tables
    claims = json.loads((ROOT / "precomputed" / "precomputed.json").read_text(encoding="utf-8"))["techniques"]["claims"]
    assert verdicts(html)["h20"] == {cid: "✗" for cid in claims}
