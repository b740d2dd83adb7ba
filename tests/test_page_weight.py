"""The lesson page's weight (issue 80, item 10): what index.html loads besides the Vega runtime is at most 150 KB
gzipped (scripts/bench/page_latency.py reports the same sum). It got there by three changes, each held here: the
arrival draws travel as packed float64 (exact), the embedded records carry no input lists (provenance.html lists
them with their values), and only the assumptions some page's script shows are translated in lesson-data.js."""
import base64
import gzip
import json
import re

import numpy as np

from scripts.page.bundles import read_data_script, read_page_records
from scripts.serving.experiments.load_page import packed_draws
from tests.conftest import ROOT

SITE = ROOT / "site"
LESSON_SCRIPTS = ("lesson.js", "lesson-data.js", "serving-data.js", "serving-sim.js")
GOAL_BYTES = 150_000


def test_the_lesson_page_loads_at_most_150_kb_gzipped_besides_vega():
    html = (SITE / "index.html").read_text(encoding="utf-8")
    loaded = {p.name for p in SITE.glob("*.js") if p.name in html}
    assert loaded == {*LESSON_SCRIPTS, "vega.min.js"}, loaded
    size = sum(len(gzip.compress((SITE / name).read_bytes(), 9, mtime=0)) for name in LESSON_SCRIPTS)
    assert size <= GOAL_BYTES, f"the lesson page's scripts are {size:,} B gzipped (goal {GOAL_BYTES:,})"


def test_packed_draws_hold_the_same_doubles():
    draws = [0.1, 1 / 3, 2.0 ** -1074, 1e308, 0.0, 7.25]
    raw = base64.b64decode(packed_draws(draws))
    assert np.frombuffer(raw, dtype="<f8").tolist() == draws
    text = (SITE / "serving-data.js").read_text(encoding="utf-8")
    serving = json.loads((ROOT / "precomputed" / "serving.json").read_text(encoding="utf-8"))
    for workload, trace in serving["twin"]["traces"].items():
        assert packed_draws(trace["gamma"]) in text, workload


def test_every_assumed_record_a_page_script_carries_has_its_translation():
    """lesson-data.js keeps the Chinese of exactly the assumptions some page's script shows: each assumed record of
    lesson-data.js, lab-data.js, prefix-data.js and serving-data.js whose sentence names.json translates finds it."""
    names = json.loads((ROOT / "scripts" / "common" / "names.json").read_text(encoding="utf-8"))["assumptions"]
    data_text = (SITE / "lesson-data.js").read_text(encoding="utf-8")
    embedded = json.loads(read_data_script(data_text)[0])
    kept = embedded["names"]["assumptions"]
    carried = set()
    for name in ("lesson-data.js", "lab-data.js", "prefix-data.js", "serving-data.js"):
        carried |= set(re.findall(r'"assumption":"((?:[^"\\]|\\.)*)"', (SITE / name).read_text(encoding="utf-8")))
    carried = {json.loads(f'"{a}"') for a in carried}
    assert {a for a in carried if a in names} == set(kept)
    assert read_page_records(data_text)  # the pages' own records are among those carried
    assert len(kept) < len(names)  # the others stay in names.json, for the provenance page
