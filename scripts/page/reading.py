"""How long a page takes to read, counted from the page itself (pure: HTML in, numbers out).

The header's reading time is not a promise typed into the template: the render counts the page it made and the
build fails when the lesson overruns its frame (config/course.json `reading`). What counts:

  prose        every character but whitespace of the text a reader reads in the page's opening state: the text
               of <main> outside <table> (tables are counted apart: a reader scans them, the experiments' time
               covers them), outside the header's meta line, <footer>, <script>, <style>, <pre> (sample texts),
               chart boxes, the experiments' controls (`.controls`, `.choices`) and readouts (`.readouts`), and
               outside what is hidden in that state (`hidden`: the notes of other states, `data-when-*`, and the
               words of the other step-time setting), and outside the readers' questions (`.qa`, from
               questions/C13-L5.md: they grow with the course and are not the lesson's frame). Panels a reader
               opens with a click (the request path, the formula, the design steps) count: the lesson asks the
               reader to open them.
  experiments  the page's `.experiment` boxes; each costs `minutes_per_experiment`.
  controls     the inputs and selects inside those boxes (what a reader can move).
  run          the seconds an experiment box states it runs at most (`data-run-seconds`: the lab's experiments
               on the reader's own device; the lesson's are computed as the reader moves them and state none).
  longest      the characters the GPU-dependent sentences would add at their longest (`data-longest-extra`, set by
               scripts/page/gpu_wording.py through the page's gpu_* globals), counted where their prose counts.
               The header states the page as shown; the frame holds the page with every GPU's wording at its
               longest, so a result that moves which GPUs a claim fails on cannot push the page past it.

minutes = prose / rate + experiments x minutes_per_experiment + run / 60."""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
SKIP_TAGS = {"script", "style", "pre", "footer", "select", "table", "template"}
SKIP_CLASSES = {"meta", "controls", "readouts", "chart", "choices", "qa"}


@dataclass(frozen=True)
class Reading:
    prose: int        # characters, whitespace excluded
    tables: int       # characters inside tables
    experiments: int
    controls: int
    run_seconds: float = 0.0
    longest_extra: int = 0  # characters the GPU-dependent wordings add at their longest


class _Counter(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, bool, bool]] = []  # (tag, skipped here or above, inside a table)
        self.in_main = False
        self.prose = self.tables = self.experiments = self.controls = 0
        self.run_seconds = 0.0
        self.longest_extra = 0
        self._classes: list[set[str]] = []  # each open element's classes, beside self.stack

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        classes = set((a.get("class") or "").split())
        if tag == "main":
            self.in_main = True
        if "experiment" in classes:
            self.experiments += 1
            self.run_seconds += float(a.get("data-run-seconds") or 0)
        inside_experiment = any("experiment" in c for c in self._classes)
        if tag in ("input", "select") and (inside_experiment or "experiment" in classes) \
                and a.get("type") != "hidden":
            self.controls += 1
        if tag in VOID:
            return
        above_skip = bool(self.stack) and self.stack[-1][1]
        in_table = (bool(self.stack) and self.stack[-1][2]) or tag == "table"
        skip = above_skip or tag in SKIP_TAGS or bool(classes & SKIP_CLASSES) \
            or any(k.startswith("data-when-") for k in a) or ("hidden" in a and "panel" not in classes)
        if self.in_main and not skip and not in_table and a.get("data-longest-extra"):
            self.longest_extra += int(a["data-longest-extra"])
        self.stack.append((tag, skip, in_table))
        self._classes.append(classes)

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        if tag == "main":
            self.in_main = False
        for i in range(len(self.stack) - 1, -1, -1):  # close up to the matching tag (HTML allows omitted ends)
            if self.stack[i][0] == tag:
                del self.stack[i:]
                del self._classes[i:]
                return

    def handle_data(self, data):
        if not self.in_main:
            return
        n = len(re.sub(r"\s", "", data))
        if not n:
            return
        top = self.stack[-1] if self.stack else ("", False, False)
        if top[2]:
            self.tables += n
        elif not top[1]:
            self.prose += n


def count(html: str) -> Reading:
    """The page's prose, table characters, experiments and controls, as the module docstring defines them."""
    c = _Counter()
    c.feed(html)
    c.close()
    return Reading(c.prose, c.tables, c.experiments, c.controls, c.run_seconds, c.longest_extra)


def prose_characters(html: str) -> int:
    return count(html).prose


def experiments(html: str) -> int:
    return count(html).experiments


def run_seconds(html: str) -> float:
    return count(html).run_seconds


def longest_extra(html: str) -> int:
    return count(html).longest_extra


def minutes(prose: float, rate_chars_per_minute: float, experiment_count: float, minutes_per_experiment: float,
            run: float = 0.0) -> float:
    """Reading time in minutes: the prose at the reading rate, each experiment's stated time, and the seconds the
    experiments state they run."""
    return prose / rate_chars_per_minute + experiment_count * minutes_per_experiment + run / 60


def whole_minutes(value: float) -> int:
    """What the header prints: the time rounded up (a header that says 34 when it takes 34.2 would be short)."""
    return math.ceil(value - 1e-9)


def header_minutes(prose: float, rate_chars_per_minute: float, experiment_count: float,
                   minutes_per_experiment: float, run: float = 0.0) -> int:
    """The header's figure: minutes() rounded up."""
    return whole_minutes(minutes(prose, rate_chars_per_minute, experiment_count, minutes_per_experiment, run))


PAGES = {"lesson": "index.html", "lab": "lab.html", "validation": "validation.html"}  # page id -> its file in site/
SCRIPT = "scripts/page/reading.py"
WORDS = json.loads((Path(__file__).parent / "labels.json").read_text(encoding="utf-8"))  # the records' labels
COURSE = "config/course.json"


def config_records(reading: dict, commands: list[dict]) -> dict[str, dict]:
    """config/course.json's reading settings and the lab's command durations as records (cited or assumed)."""
    from scripts.record.provenance import assumed, cited_record

    def one(rid, label, entry, unit, fmt, field):
        if "source" in entry:
            return cited_record(rid, label, entry["value"], unit, fmt, work=entry["source"],
                                version=f"as recorded in {COURSE}", locator=f"{COURSE} {field}", self_reported=False,
                                field=field)
        return assumed(rid, label, entry["value"], unit, fmt, assumption=entry["assumption"], field=field)

    out = {rid: one(rid, WORDS[rid], reading[key], unit, fmt, f"reading.{key}")
           for rid, key, unit, fmt in (("page.reading.frame_minutes", "frame_minutes", "min", "int"),
                                       ("page.reading.rate", "rate_chars_per_minute", "char/min", "int"),
                                       ("page.reading.minutes_per_experiment", "minutes_per_experiment", "min", "f1"))}
    for i, c in enumerate(commands):
        rid = f"lab.command.{c['id']}.minutes"
        label = WORDS["lab.command.minutes"].format(command=c["command"].split(" --")[0])
        out[rid] = one(rid, label, c["minutes"], "min", "int", f"lab_commands[{i}].minutes")
    return out


def page_records(pages: dict[str, str], settings: dict[str, dict]) -> dict[str, dict]:
    """Per page (id -> its HTML): its prose characters and experiments (counted from the page) and its reading
    time (derived from them and the reading settings' records, `settings`)."""
    from scripts.record.provenance import Derivation, derived

    out = {}
    for page, html in pages.items():
        c, file = count(html), PAGES[page]
        pre = f"page.{page}"
        out[f"{pre}.prose_chars"] = derived(
            f"{pre}.prose_chars", WORDS["page.prose_chars"].format(file=file), c.prose, "char", "int",
            derivation=Derivation.PAGE, formula="scripts.page.reading:prose_characters", inputs=[f"site/{file}"],
            script=SCRIPT)
        out[f"{pre}.experiments"] = derived(
            f"{pre}.experiments", WORDS["page.experiments"].format(file=file), c.experiments, WORDS["experiments_unit"],
            "int", derivation=Derivation.PAGE,
            formula="scripts.page.reading:experiments", inputs=[f"site/{file}"], script=SCRIPT)
        out[f"{pre}.run_seconds"] = derived(
            f"{pre}.run_seconds", WORDS["page.run_seconds"].format(file=file), c.run_seconds, "s", "int",
            derivation=Derivation.PAGE, formula="scripts.page.reading:run_seconds", inputs=[f"site/{file}"],
            script=SCRIPT)
        out[f"{pre}.longest_extra_chars"] = derived(
            f"{pre}.longest_extra_chars", WORDS["page.longest_extra_chars"].format(file=file), c.longest_extra,
            "char", "int", derivation=Derivation.PAGE, formula="scripts.page.reading:longest_extra",
            inputs=[f"site/{file}"], script=SCRIPT)
        inputs = [f"{pre}.prose_chars", "page.reading.rate", f"{pre}.experiments",
                  "page.reading.minutes_per_experiment", f"{pre}.run_seconds"]
        value = header_minutes(*(({**out, **settings})[i]["value"] for i in inputs))
        out[f"{pre}.minutes"] = derived(
            f"{pre}.minutes", WORDS["page.minutes"].format(file=file), value, "min", "int",
            derivation=Derivation.RECORDS, formula="scripts.page.reading:header_minutes", inputs=inputs,
            script=SCRIPT)
    return out


def _longest(records: dict[str, dict], page: str) -> tuple[dict, float]:
    """The page's counts and its minutes with every GPU-dependent sentence at its longest."""
    r = {k: records[f"page.{page}.{k}"]["value"]
         for k in ("prose_chars", "longest_extra_chars", "experiments", "run_seconds")}
    rate, per = records["page.reading.rate"]["value"], records["page.reading.minutes_per_experiment"]["value"]
    return r, minutes(r["prose_chars"] + r["longest_extra_chars"], rate, r["experiments"], per, r["run_seconds"])


def spare_characters(records: dict[str, dict], page: str) -> float:
    """How many prose characters the page could still take, with every GPU-dependent sentence at its longest,
    before it reads past its frame (negative: over it)."""
    took = _longest(records, page)[1]
    return (records["page.reading.frame_minutes"]["value"] - took) * records["page.reading.rate"]["value"]


def frame_problem(records: dict[str, dict]) -> str | None:
    """One line when the lesson or the lab, with every GPU-dependent sentence at its longest, reads past the frame,
    naming the template, the config field and the counts; else None."""
    frame = records["page.reading.frame_minutes"]["value"]
    rate, per = records["page.reading.rate"]["value"], records["page.reading.minutes_per_experiment"]["value"]
    for page, template, advice in (("lesson", "index.html.j2", "move depth to the lab page"),
                                   ("lab", "lab.html.j2", "move the simulator's depth to the validation report")):
        r, took = _longest(records, page)
        if took > frame:
            return (f"templates/{template}: the {page} reads in {took:.3f} minutes "
                    f"({r['prose_chars'] + r['longest_extra_chars']:,} prose characters, {r['longest_extra_chars']:,} "
                    f"of them the GPU-dependent sentences at their longest, at {rate:g}/min + {r['experiments']} "
                    f"experiments x {per:g} min + {r['run_seconds']:g} s of running), over its frame of {frame:g} "
                    f"minutes ({COURSE} reading.frame_minutes) by {-spare_characters(records, page):,.0f} "
                    f"characters: {advice}")
    return None
