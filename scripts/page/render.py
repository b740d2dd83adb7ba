"""Render the lesson page and its provenance page from the JSON, the Jinja templates and the Vega-Lite specs.

Phone first: index.html carries the text, its numbers and the CSS, so it paints before any script runs. Beside it
(plain <script defer src>, which works from file:// where fetch() does not): the Vega runtime alone (npm vega's
vega.min.js, pinned in config/vendor.json; the specs are compiled from Vega-Lite to Vega here, so no Vega-Lite
compiler ships), the data and specs the charts need, and the
page's own script. The CSP allows scripts from the page's own origin only ('self': CSP has no way to name a file
without a host, and Subresource Integrity refuses file:// scripts), and no remote origin at all. connect-src is
'self' rather than 'none' only because crawlers' audits (Lighthouse) fetch /robots.txt from inside the page; the
page's own script fetches nothing."""

import base64
import hashlib
import json
import math
import os
import re
import subprocess
from pathlib import Path

import vl_convert
from jinja2 import Environment, FileSystemBytecodeCache, FileSystemLoader, StrictUndefined, select_autoescape
from markdown_it import MarkdownIt
from markupsafe import Markup

from scripts.common import names
from scripts.common.display import chinese_number
from scripts.page import charts, lab, reading
from scripts.record import memo
from scripts.record.inputs import InputError

REPO = Path(__file__).resolve().parents[2]


def csp_hash(script: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode() + "'"


def json_for_script(obj: object) -> Markup:
    """JSON that cannot close its <script> element early."""
    text = json.dumps(obj, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return Markup(text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026"))


RUNTIME, SCRIPT, DATA_SCRIPT, SERVING_SCRIPT = "vega.min.js", "lesson.js", "lesson-data.js", "serving-data.js"
SIM_SCRIPT, SIM_SOURCE = "serving-sim.js", "serving_sim"  # the browser's twin of scripts/serving/engine/ (a folder)
LAB_PARTS = "lab"  # templates/lab/: lab.js's parts (the page's experiments), the model in lab/model/
LESSON_PARTS = "lesson"  # templates/lesson/: lesson.js's sections, joined into it (lesson_script)
INCLUDE = re.compile(r"^  // @include ((?:[a-z_]+\.js ?)+)$", re.M)  # a wrapper names its parts, in order
DATA_PREFIX, SPECS_PREFIX, PAGE_PROV_PREFIX = "window.C13_DATA=", "window.C13_SPECS=", "window.C13_PAGE_PROV="
PAGES = {"index.html": "index.html.j2", "lab.html": "lab.html.j2",  # the lesson, its lab and the simulator's
         "validation.html": "validation.html.j2"}  # validation report: one build, one frame (page_base.html.j2)
SERVING_PREFIX, SERVING_PROV_PREFIX = "window.C13_SERVING=", "window.C13_SERVING_PROV="
PREFIX_SCRIPT, PREFIX_DATA_PREFIX = "prefix-data.js", "window.C13_PREFIX="  # the lab's prefix-cache experiment
LAB_SCRIPT, LAB_PROV_PREFIX = "lab-data.js", "window.C13_LAB_PROV="  # measured records only the lab page shows
LAB_MODEL_SCRIPT, LAB_PAGE_SCRIPT = "lab-model.js", "lab.js"  # the lab's in-browser model and its experiments


RUNTIME_CACHE = REPO / ".cache" / "vendor" / RUNTIME  # fetched and checked by the fetch_vendor rule


# vl-convert's answers kept by the sha256 of the spec and its version (scripts/record/memo.py): compiling the nine
# charts and drawing them to size their boxes took about 1.5 s of each render, the same specs every time
CONVERTED = "charts"


def _converted(kind: str, spec: dict, convert):
    name = memo.key(kind, vl_convert.__version__, json.dumps(spec, sort_keys=True, ensure_ascii=False))
    found = memo.read(CONVERTED, name)
    if found is not None and set(found) == {"value"}:
        return found["value"]
    value = convert(spec)
    memo.write(CONVERTED, name, {"value": value})
    return value


def compile_specs(specs: dict[str, dict]) -> dict[str, dict]:
    """Vega-Lite -> Vega at build time; the $schema URL is dropped (the page names no remote address)."""
    out = {}
    for chart_id, spec in specs.items():
        vega = _converted("vegalite_to_vega", spec, vl_convert.vegalite_to_vega)
        vega.pop("$schema", None)
        out[chart_id] = vega
    return out


def data_script(data: dict, specs: dict, page_prov: dict | None = None) -> str:
    """lesson-data.js: the page's data and chart specs, one assignment per line (the audit reads them back), and
    the records counted from the pages themselves (their reading time: scripts/page/reading.py)."""
    out = f"{DATA_PREFIX}{json_for_script(data)};\n{SPECS_PREFIX}{json_for_script(specs)};\n"
    return out + (f"{PAGE_PROV_PREFIX}{json_for_script(page_prov)};\n" if page_prov is not None else "")


def read_page_records(text: str) -> dict:
    """The page-counted records of a lesson-data.js ({} when it has none)."""
    found, _ = read_data_script(text, (PAGE_PROV_PREFIX, SPECS_PREFIX))
    return json.loads(found) if found else {}


def serving_script(experiment: dict, records: dict) -> str:
    """serving-data.js: the under-load experiment's requests (loaded when its section comes near the screen) and
    the records of the serving numbers the page shows."""
    return f"{SERVING_PREFIX}{json_for_script(experiment)};\n{SERVING_PROV_PREFIX}{json_for_script(records)};\n"


def prefix_script(prefix: dict) -> str:
    """prefix-data.js: the lab's cache-off/on experiment (prefix.json `page`: the workloads' draws and the engine's
    inputs; the lab loads it with serving-sim.js when the section comes near the screen)."""
    return f"{PREFIX_DATA_PREFIX}{json_for_script(prefix['page'])};\n"


REAL_ENGINE_FAMILIES = ("load", "prefix", "heldout")  # measured_records.json's views, the templates' `realengine`


def measured_records(bench: dict | None, real: dict | None) -> dict | None:
    """The measured data the pages read: the KV-cache benchmark's medians (bench_medians.json, the templates'
    `bench`) with the real engine's records (measured_records.json, rule measured_records) beside them under
    `realengine` (its families' views, REAL_ENGINE_FAMILIES) and `claims`; one provenance, the benchmark's first."""
    if bench is None and real is None:
        return None
    b, r = bench or {}, real or {}
    return {**b, "realengine": {k: r.get(k) for k in REAL_ENGINE_FAMILIES}, "claims": r.get("claims", []),
            "provenance": {**b.get("provenance", {}), **r.get("provenance", {})}}


def lab_only_ids(bench: dict | None, lesson_html: str) -> frozenset[str]:
    """The measured records (bench_medians.json and measured_records.json: the KV-cache benchmark and the real engine)
    that the lesson page does not show: they travel in lab-data.js, which only the lab page loads, so the lesson
    page does not carry the lab's tables (page weight: scripts/bench/page_latency.py)."""
    from scripts.page.scan import page_numbers

    shown = {rid for rid, _, _ in page_numbers(lesson_html)}
    return frozenset(rid for rid in (bench or {}).get("provenance", {}) if rid not in shown)


def lab_script(bench: dict | None, lab_only: frozenset[str]) -> str:
    """lab-data.js: the records of lab_only_ids, for the lab page's pop-overs."""
    records = {rid: rec for rid, rec in (bench or {}).get("provenance", {}).items() if rid in lab_only}
    return f"{LAB_PROV_PREFIX}{json_for_script(records)};\n"


def read_data_script(text: str, prefixes: tuple[str, str] = (DATA_PREFIX, SPECS_PREFIX)) -> tuple[str, str]:
    """The two JSON lines of a data script (lesson-data.js by default), empty strings when one is missing."""
    found = {p: "" for p in prefixes}
    for line in text.splitlines():
        for prefix in found:
            if line.startswith(prefix) and line.endswith(";"):
                found[prefix] = line[len(prefix):-1]
    return found[prefixes[0]], found[prefixes[1]]


def serving_records_on_page(html: str | list[str], serving: dict) -> dict:
    """The serving.json records the pages show (its other thousand stay in serving.json and provenance.html)."""
    from scripts.page.scan import page_numbers

    shown = {rid for page in ([html] if isinstance(html, str) else html) for rid, _, _ in page_numbers(page)}
    return {rid: rec for rid, rec in serving["provenance"].items() if rid in shown}


def build_date(paths: list[str]) -> str:
    """Last commit that touched the inputs; SOURCE_DATE_EPOCH when set; never the wall clock."""
    if os.environ.get("SOURCE_DATE_EPOCH"):
        import datetime as dt
        return dt.datetime.fromtimestamp(int(os.environ["SOURCE_DATE_EPOCH"]), dt.UTC).date().isoformat()
    out = subprocess.run(["git", "log", "-1", "--format=%cs", "--", *paths], capture_output=True, text=True, cwd=REPO)
    return out.stdout.strip() or "未提交"


def git_commit() -> str:
    out = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True, cwd=REPO)
    return out.stdout.strip() or "uncommitted"


def markdown(text: str) -> Markup:
    """The questions log as CommonMark (links, emphasis, code, lists) with raw HTML off: any tag in the file is shown
    as text. Headings move down two levels (## -> h4) to sit under the section's own h2. HTML comments are the
    maintainers' notes and are dropped."""
    md = MarkdownIt("commonmark", {"html": False})
    tokens = md.parse(re.sub(r"<!--.*?-->", "", text, flags=re.S))
    for token in tokens:
        if token.type in ("heading_open", "heading_close"):
            token.tag = f"h{min(6, int(token.tag[1]) + 2)}"
    return Markup(md.renderer.render(tokens, md.options, {}))


def template_memo() -> FileSystemBytecodeCache | None:
    """Jinja's compiled templates, each checked against its source's checksum before use (Jinja's own bucket check;
    compiling the sixteen took about 0.6 s of each render), beside the other memos (scripts/record/memo.py)."""
    where = memo.folder("jinja")
    try:
        where.mkdir(parents=True, exist_ok=True)
    except OSError:  # a read-only checkout compiles every time
        return None
    return FileSystemBytecodeCache(str(where))


def jinja_env(templates: Path) -> Environment:
    """Autoescaping everywhere: text from the JSON is inserted as text, never as HTML."""
    env = Environment(loader=FileSystemLoader(templates), autoescape=select_autoescape(default=True,
                      default_for_string=True), undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                      bytecode_cache=template_memo())
    env.filters["log2"] = lambda v: int(v).bit_length() - 1
    env.filters["cn_number"] = chinese_number
    return env


def load_optional(path: str | None):
    return json.loads(Path(path).read_text(encoding="utf-8")) if path and Path(path).exists() else None


def merged_provenance(data: dict, tokens: dict | None, bench: dict | None, serving: dict | None = None,
                      prefix: dict | None = None) -> dict:
    return {**data["provenance"], **(tokens or {}).get("provenance", {}), **(bench or {}).get("provenance", {}),
            **(prefix or {}).get("provenance", {}), **(serving or {}).get("provenance", {})}


def page_data(data: dict, tokens: dict | None, bench: dict | None, prefix: dict | None = None,
              lab_only: frozenset[str] = frozenset()) -> dict:
    """What the page embeds as #lesson-data: the constants and scenario its math reads, every provenance record
    but the per-GPU technique records the claims alone read (technique.<gpu>.*: no number on the page is one; they
    stay in precomputed.json, where the audit re-checks the claims) and the measured records only the lab shows
    (`lab_only`: lab-data.js), the token rows, and the names lesson.js labels things with (scripts/common/names.json).
    The audit rebuilds it from precomputed/ and compares the page's copy byte for byte."""
    claims_only = tuple(f"technique.{g['id']}." for g in data.get("gpus", []))
    return {"constants": data["constants"], "gpus": data.get("gpus", []), "scenario": data["scenario"],
            "techniques": data.get("techniques"),
            "names": names.page_names(),
            "provenance": {rid: rec for rid, rec in merged_provenance(data, tokens, bench, None, prefix).items()
                           if not rid.startswith(claims_only) and rid not in lab_only},
            "tokens": {k: tokens[k] for k in ("rows", "chars_passage")} if tokens else None}


class TemplateProblem(ValueError):
    """A template names something the data does not have: one line, naming the template, its line and the name."""


def template_problem(exc: Exception) -> TemplateProblem:
    import traceback

    from jinja2 import TemplateSyntaxError

    if isinstance(exc, TemplateSyntaxError):
        return TemplateProblem(f"templates/{exc.name}: line {exc.lineno}: {exc.message}")
    where = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename.endswith(".j2")]
    place = f"templates/{Path(where[-1].filename).name}: line {where[-1].lineno}" if where else "templates"
    what = f"names the number {exc.args[0]!r}, which has no provenance record" if isinstance(exc, KeyError) \
        else str(exc)
    return TemplateProblem(f"{place}: {what}")


def claim_outcomes(*docs: dict | None) -> dict[str, bool]:
    """Claim id -> whether it holds, over the claims of each data file given (precomputed.json, serving.json,
    prefix.json, the measured records of measured_records.json): what the templates word each sentence by (a claim the
    build checks, rather than settles, always holds). A claim id given twice is a build error."""
    outcomes: dict[str, bool] = {}
    for doc in docs:
        for c in (doc or {}).get("claims") or []:
            if c["id"] in outcomes:
                raise TemplateProblem(f"precomputed/: claim {c['id']!r} is made by two data files")
            outcomes[c["id"]] = c.get("holds", True)
    return outcomes


MAP_GENERATIONS = 11  # the evolution map's entries (templates/index.html.j2; course.schema.json map.value)


def course_links(path: Path) -> dict:
    """config/course.json, checked (scripts/record/schemas/course.schema.json, and every map entry naming a link):
    what the page's `link(id)` prints for each id."""
    from scripts.record import schema
    from scripts.record.inputs import InputError

    doc = schema.read_input(path, schema.COURSE)
    for i, lid in enumerate(doc["map"]["value"]):
        if lid is not None and lid not in doc["links"]:
            raise InputError(f"{Path(path).as_posix()}: field map.value[{i}] ({lid!r}) names no entry of links")
    return doc


def render(data: dict, tokens: dict | None, bench: dict | None, questions_md: str, templates: Path,
           runtime: Path = RUNTIME_CACHE, load: dict | None = None, course: dict | None = None,
           prefix: dict | None = None) -> dict[str, str]:
    """index.html and the scripts beside it, by file name. `load` is scripts.serving.load_page.page_bundle's
    (serving.json, the experiment's data, its opening readouts), or None for a page without that experiment.
    A template naming what the data lacks raises TemplateProblem (one line), never a bare traceback. `course`
    (course_links): where the names of other lessons link; without it they print as plain text."""
    from jinja2 import TemplateError

    try:
        return _render(data, tokens, bench, questions_md, templates, runtime, load, course, prefix)
    except (TemplateError, KeyError) as exc:
        raise template_problem(exc) from None


def page_helpers(prov: dict, course: dict | None) -> dict:
    """The templates' number, readout and course-link helpers over the merged records."""
    def num(rid: str, suffix: str = "", gpu_field: str | None = None) -> Markup:
        """A number and its record; `gpu_field`: the GPU switch swaps in record gpu.<id>.<gpu_field> (lesson.js)."""
        rec = prov[rid]  # a KeyError here is a template naming a number that has no provenance
        follow = Markup(' data-gpu-field="{}"').format(gpu_field) if gpu_field else ""
        return Markup('<span class="num" data-prov="{}"{}>{}{}</span>').format(
            rid, follow, rec["display"], suffix)  # a click or Enter opens the popup, which names the kind

    links = (course or {}).get("links", {})

    def link(lid: str, text: str | None = None) -> Markup:
        """A course link by its id in config/course.json; its label (or `text`) as plain text when unset."""
        entry = links.get(lid, {})
        shown = text if text is not None else entry.get("label", lid)
        if entry.get("href"):
            return Markup('<a class="course" href="{}" data-course="{}">{}</a>').format(entry["href"], lid, shown)
        return Markup('<span class="course" data-course="{}">{}</span>').format(lid, shown)

    def readout(name: str) -> Markup:
        rec = prov[f"readout.{name}"]
        return Markup('<output class="num readout" data-readout="{}" data-format="{}" data-prov="{}" '
                      'data-value="{}">{}</output>').format(name, rec["format"], rec["id"], repr(rec["value"]),
                                                           rec["display"])

    def readout_flag(name: str) -> bool:
        """Whether a readout is non-zero at the opening state (bound_words in templates/index.html.j2; the words a
        count of zero needs)."""
        return bool(prov[f"readout.{name}"]["value"])

    return {"num": num, "readout": readout, "link": link, "readout_flag": readout_flag}


def chart_specs(data: dict, tokens: dict | None, bench: dict | None, serving: dict | None) -> dict:
    """Every chart's Vega-Lite spec at the page's opening state (charts.py)."""
    sc = data["scenario"]
    specs = {"frontier": charts.frontier(sc["batch"]["value"], sc["context_tokens"]["value"],
                                         sc["tpot_slo_ms"]["value"]),
             "timeline": charts.timeline(sc["prompt_tokens"]["value"], sc["chunk_tokens"]["value"])}
    if tokens:
        specs["tokens"] = charts.tokens(tokens)
    if bench:
        specs.update(charts.bench(bench))
    if serving:
        o = serving["page_opening"]
        specs.update({"load_attain": charts.load_attainment(o["attainment_target"], o["request_rate"]),
                      "load_ttft": charts.load_distribution("ttft", "ttft_slo_ms", o["ttft_slo_ms"]),
                      "load_tpot": charts.load_distribution("tpot", "load_tpot_slo_ms", o["load_tpot_slo_ms"]),
                      "load_scatter": charts.load_scatter(o["ttft_slo_ms"], o["load_tpot_slo_ms"])})
    return specs


CSP = "; ".join(["default-src 'none'", "script-src 'self' 'unsafe-eval'", "worker-src blob:",
                 "style-src 'unsafe-inline'", "img-src data:", "font-src data:", "connect-src 'self'",
                 "base-uri 'none'", "form-action 'none'"])


def render_twice(env, context: dict, prov: dict, settings: dict) -> tuple[dict[str, str], dict]:
    """The pages, rendered twice: the header's reading time is counted from the page it heads. The first pass
    renders with placeholder counts (the header's meta line is not counted, so the second pass counts the same
    page). Returns the pages and the counts' records."""
    def pages() -> dict[str, str]:
        return {name: env.get_template(template).render(page_name=name.removesuffix(".html"), **context)
                for name, template in PAGES.items()}

    placeholder = {f"page.{p}.{k}": {"id": f"page.{p}.{k}", "display": "0"} for p in reading.PAGES
                   for k in ("minutes", "experiments", "prose_chars", "run_seconds")}
    prov.update({**settings, **placeholder})
    first = pages()
    page_prov = {**settings, **reading.page_records({p: first[f] for p, f in reading.PAGES.items()}, settings)}
    problem = reading.frame_problem(page_prov)
    if problem:
        raise TemplateProblem(problem)
    prov.update(page_prov)
    html_pages = pages()
    again = reading.page_records({p: html_pages[f] for p, f in reading.PAGES.items()}, settings)
    if any(again[k] != page_prov[k] for k in again):  # a template that counts differently once the numbers are in
        raise TemplateProblem("templates: the pages' reading counts changed between the two render passes")
    return html_pages, page_prov


def _render(data: dict, tokens: dict | None, bench: dict | None, questions_md: str, templates: Path,
            runtime: Path, load: dict | None, course: dict | None = None, prefix: dict | None = None) -> dict[str, str]:
    serving = load["serving"] if load else None
    prov = merged_provenance(data, tokens, bench, serving, prefix)
    compiled = compile_specs(chart_specs(data, tokens, bench, serving))
    commands = course_section(course, "lab_commands")
    lab_doc, lab_conf = lab.read_lab(REPO / lab.LAB_CONFIG)  # read and checked once: records, settings, run times
    settings = {**reading.config_records(course_section(course, "reading"), commands),
                **lab.lab_records(lab_doc, lab_conf)}
    context = dict(
        d=data, P=prov, **page_helpers(prov, course), holds=claim_outcomes(data, serving, prefix, bench),
        course_map=(course or {}).get("map", {}).get("value") or [None] * MAP_GENERATIONS,
        tokens=tokens, tok=tokenizer_roles(tokens, data["anchor"]["name"]), bench=bench, serving=serving,
        realengine=(bench or {}).get("realengine") or dict.fromkeys(REAL_ENGINE_FAMILIES),
        prefix=prefix, lab_commands=commands,
        cmd=lambda cid: command_code(commands, cid),
        lab_settings=lab_conf, lab_run_seconds=lab.run_seconds(lab_conf),
        schedule_labels=names.SCHEDULE_LABELS, tail_part_labels=names.TAIL_PART_LABELS,
        css=Markup((templates / "lesson.css").read_text(encoding="utf-8")),
        scripts={"page": SCRIPT, "data": DATA_SCRIPT, "runtime": RUNTIME, "serving": SERVING_SCRIPT, "sim": SIM_SCRIPT,
                 "lab": LAB_SCRIPT, "lab_model": LAB_MODEL_SCRIPT, "lab_page": LAB_PAGE_SCRIPT,
                 "prefix": PREFIX_SCRIPT if prefix and prefix.get("page") else ""},
        chart_boxes=chart_boxes(compiled, {**default_chart_data(data), **(default_load_data(
            load["opening"], serving["settings"]["rates_per_gpu"]) if load else {})}),
        csp=Markup(CSP),
        questions=markdown(questions_md), build_date=build_date(["anchor-model.json", "precomputed"]),
        commit=git_commit(),
    )
    html_pages, page_prov = render_twice(jinja_env(templates), context, prov, settings)
    lab_only = lab_only_ids(bench, html_pages["index.html"])
    files = {**html_pages, RUNTIME: runtime.read_text(encoding="utf-8"), SCRIPT: lesson_script(templates),
             DATA_SCRIPT: data_script(page_data(data, tokens, bench, prefix, lab_only), compiled, page_prov),
             LAB_SCRIPT: lab_script(bench, lab_only), LAB_MODEL_SCRIPT: lab.lab_model_script(templates),
             LAB_PAGE_SCRIPT: lab_page_script(templates)}
    if serving:
        files[SERVING_SCRIPT] = serving_script(load["experiment"], serving_records_on_page(list(html_pages.values()),
                                                                                          serving))
        files[SIM_SCRIPT] = sim_script(templates / SIM_SOURCE)
    if prefix and prefix.get("page"):
        files[PREFIX_SCRIPT] = prefix_script(prefix)
        files.setdefault(SIM_SCRIPT, sim_script(templates / SIM_SOURCE))
    return files


def command_code(commands: list[dict], cid: str) -> Markup:
    """A lab command by its id in config/course.json lab_commands, as code (exempt from the number audit)."""
    for c in commands:
        if c["id"] == cid:
            return Markup('<code data-meta="command">{}</code>').format(c["command"])
    raise TemplateProblem(f"config/course.json: field lab_commands has no entry with id {cid!r} (templates/lab.html.j2 "
                          "names it)")


def _committed_course() -> dict:
    return json.loads((REPO / "config" / "course.json").read_text(encoding="utf-8"))


def course_section(course: dict | None, key: str):
    """config/course.json's `key` (`reading`: the reading-time settings; `lab_commands`: what the lab lists), the
    given course's, or the committed file's when the caller passes none (or one without it)."""
    return course[key] if course and key in course else _committed_course()[key]


def sim_script(folder: Path) -> str:
    """site/serving-sim.js: the twin's wrapper (twin.js) with its parts joined in (joined_script), so that the page
    (and its worker, from the function's source) gets one function."""
    return joined_script(folder / "twin.js", folder)


def lesson_script(templates: Path) -> str:
    """site/lesson.js: templates/lesson.js (the page's function and its loader) with its sections joined in from
    templates/lesson/ (roofline, techniques, timeline, ..., charts: joined_script)."""
    return joined_script(templates / SCRIPT, templates / LESSON_PARTS)


def lab_page_script(templates: Path) -> str:
    """site/lab.js: the lab's wrapper (templates/lab/lab.js) with its experiments' parts joined in (joined_script)."""
    return joined_script(templates / LAB_PARTS / LAB_PAGE_SCRIPT, templates / LAB_PARTS)


def joined_script(wrapper_path: Path, folder: Path) -> str:
    """`wrapper_path` with its one `// @include a.js b.js ...` line replaced by those files of `folder`, in that
    order. A part named but missing, or a file of the folder that is not named, is an error naming both."""
    wrapper = wrapper_path.read_text(encoding="utf-8")
    found = INCLUDE.findall(wrapper)
    if len(found) != 1:
        raise InputError(f"{wrapper_path.as_posix()}: needs exactly one '  // @include a.js b.js ...' line")
    parts = found[0].split()
    present = sorted(p.name for p in folder.glob("*.js") if p != wrapper_path)
    if sorted(parts) != present:
        raise InputError(f"{wrapper_path.as_posix()}: its @include names {', '.join(parts)} but "
                         f"{folder.as_posix()} holds {', '.join(present)}")
    body = "\n".join((folder / p).read_text(encoding="utf-8").rstrip("\n") for p in parts)
    return INCLUDE.sub(lambda _: body, wrapper)


def chart_boxes(compiled: dict[str, dict], samples: dict[str, dict[str, list]]) -> dict[str, int]:
    """Each chart's height in px, reserved before it renders so that nothing below it moves (no layout shift):
    the chart drawn once here by vl-convert with its default data, as the page will first draw it."""
    boxes = {}
    for chart_id, spec in compiled.items():
        data = [{**d, "values": samples[chart_id][d["name"]]} if d["name"] in samples.get(chart_id, {}) else d
                for d in spec.get("data", [])]
        boxes[chart_id] = _converted("drawn_height", {**spec, "data": data, "autosize": {"type": "pad"}, "width": 400},
                                     _drawn_height)
    return boxes


def _drawn_height(spec: dict) -> int:
    svg = vl_convert.vega_to_svg(spec)
    return math.ceil(float(re.search(r'<svg[^>]*\bheight="([0-9.]+)"', svg).group(1)))


def default_chart_data(data: dict) -> dict[str, dict[str, list]]:
    """The rows the page's script first draws the computed charts with (frontier at the default context and SLO;
    the default timeline), here only to size their boxes."""
    sc, ctx = data["scenario"], data["scenario"]["context_tokens"]["value"]
    rows = [r for r in data["frontier"]["rows"] if r["context"] == ctx and r["fits"]]
    cap = max((r["batch"] for r in rows), default=0)
    met, missed = names.CHART_VALUES["slo_met"], names.CHART_VALUES["slo_missed"]
    frontier = [{**r, "slo_status": met if r["step_ms"] <= sc["tpot_slo_ms"]["value"] else missed,
                 "is_cap": r["batch"] == cap} for r in rows]
    bars = [{**b, "lane_label": b["lane"], "kind_label": b["kind"]} for b in data["timeline_default"]["bars"]]
    return {"frontier": {"frontier": frontier}, "timeline": {"timeline": bars}}


def default_load_data(readouts: dict, rates: list[float]) -> dict[str, dict[str, list]]:
    """Rows shaped like the under-load charts' first draw (every schedule, every statistic, both sides of the
    SLO box), from the opening readouts, here only to size the charts' boxes."""
    labels = list(names.SCHEDULE_LABELS.items())
    attain = [{"schedule": label, "rate": r, "attainment": 1.0 if r < 5 else 0.0} for _, label in labels for r in rates]
    goodput = [{"schedule": label, "goodput_rate": readouts[f"goodput_rate.{s}"], "target": 0.9} for s, label in labels]
    out = {"load_attain": {"load_attain": attain, "load_goodput": goodput}}
    for metric in ("ttft", "tpot"):
        curve, stats = [], []
        for s, label in labels:
            lo, hi = readouts[f"p50_{metric}_ms.{s}"] / 2, readouts[f"p99_{metric}_ms.{s}"]
            curve += [{"schedule": label, "ms": lo, "share": 0.0}, {"schedule": label, "ms": hi, "share": 1.0}]
            stats += [{"schedule": label, "stat": st, "ms": hi, "share": 0.5}
                      for st in (names.CHART_VALUES["mean"], "p50", "p90", "p99")]
        out[f"load_{metric}"] = {f"load_{metric}_curve": curve, f"load_{metric}_stats": stats}
    points = [{"ttft_ms": readouts[f"{q}_ttft_ms.whole"], "tpot_ms": readouts[f"{q}_tpot_ms.whole"], "inside": inside}
              for q, inside in (("p50", names.CHART_VALUES["both_met"]), ("p99", names.CHART_VALUES["not_both"]))]
    out["load_scatter"] = {"load_points": points, "load_box": [{"x1": 10, "y1": 10}]}
    return out


def input_file(rec: dict, anchor_file: str) -> str | None:
    """The repository file a record's inputs are read from, shipped beside the scripts (site/source/): a measured
    record's run file, a cited record's config file (its locator's path), a number derived from the anchor or one of
    its fields, the anchor file; None when the record names none that exists."""
    field = rec.get("field") or ""
    if rec.get("kind") == "measured":
        path = rec.get("file")
    elif rec.get("kind") == "cited" and str(rec.get("locator", "")).startswith("config/"):
        path = rec["locator"].split()[0]
    elif rec.get("derivation") == "anchor" or field.startswith(("model.", "hardware.", "scenario.")):
        path = anchor_file
    else:
        path = None
    return path if path and (REPO / path).is_file() else None


def render_provenance(pages: dict[str, str], prov: dict, templates: Path, report: bool,
                      anchor_file: str = "anchor-model.json") -> tuple[str, list[str]]:
    """One row per number on the pages (file name -> html, in the order given), in page order, each linking to
    the first page that shows it; returns the page and the source files it links to. `anchor_file`: the anchor
    the numbers come from (precomputed.json anchor.source_file), which the page names."""
    from scripts.page.scan import page_numbers

    seen, rows = set(), []
    for name, html in pages.items():
        for rid, _, _ in page_numbers(html):
            if rid in prov and rid not in seen:
                seen.add(rid)
                rows.append({**prov[rid], "page": name})
    for rec in rows:
        if rec.get("formula", "").startswith("scripts."):
            rec["formula_file"] = rec["formula"].split(":")[0].replace(".", "/") + ".py"
        rec["input_file"] = input_file(rec, anchor_file)
    sources = sorted({r[k] for r in rows for k in ("script", "formula_file", "input_file") if r.get(k)})
    page = jinja_env(templates).get_template("provenance.html.j2").render(
        rows=[{"key": None, "args": None, "inputs": None, "field": None, "script": None, "formula_file": None,
               "input_file": None,
               "unit": None, "formula": None, "rate_per_gpu": None, **r} for r in rows],
        css=Markup((templates / "lesson.css").read_text(encoding="utf-8")), commit=git_commit(),
        build_date=build_date(["anchor-model.json", "precomputed"]), report=report,
        kinds={k: v["label"] for k, v in names.NAMES["record_kinds"].items()}, units=names.NAMES["units"],
        assumptions=names.NAMES["assumptions"], anchor_file=anchor_file)
    return page, sources


def site_files(data_path: str, tokens_path: str | None, bench_path: str | None, questions_md: str,
               templates: Path, runtime: Path = RUNTIME_CACHE, load: dict | None = None,
               course: dict | None = None, prefix_path: str | None = None,
               real_path: str | None = None) -> dict[str, bytes]:
    """Every file of the built site, by its path relative to site/: the page, the provenance page, the sources."""
    data, tokens, bench = (json.loads(Path(data_path).read_text(encoding="utf-8")), load_optional(tokens_path),
                           measured_records(load_optional(bench_path), load_optional(real_path)))
    from jinja2 import TemplateError

    prefix = load_optional(prefix_path)
    files = render(data, tokens, bench, questions_md, templates, runtime, load, course, prefix)
    for name, template in PAGES.items():  # an emptied or cut template renders no page at all
        if "<html" not in files[name][:4096].lower():
            raise TemplateProblem(f"templates/{template}: renders no page ({len(files[name])} characters, no "
                                  "<html> element): restore the template")
    prov = {**merged_provenance(data, tokens, bench, load["serving"] if load else None, prefix),
            **read_page_records(files[DATA_SCRIPT])}
    try:  # one provenance page for every page: the lesson's numbers, then the lab's, then the report's
        page, sources = render_provenance({name: files[name] for name in PAGES}, prov, templates, report=True,
                                          anchor_file=data["anchor"].get("source_file", "anchor-model.json"))
    except (TemplateError, KeyError) as exc:
        raise template_problem(exc) from None
    out = {f"source/{src}": (REPO / src).read_bytes() for src in sources}  # the scripts behind the numbers
    out["provenance.html"] = page.encode("utf-8")
    out.update({name: text.encode("utf-8") for name, text in files.items()})
    out["robots.txt"] = b"User-agent: *\nAllow: /\n"  # a static lesson: crawlers welcome
    return out


def tokenizer_roles(tokens: dict | None, anchor_name: str) -> dict:
    """Who is who among the counted tokenizers, for templates/tokenizer_names.html.j2 (which words it): `anchor`,
    the one whose `models` (config/tokenizers.json) include the anchor's model name, or None; `own`, whether that is
    the course anchor's tokenizer the ratios are against (`anchor_tokenizer`); `reference_label`, that one's label.
    A Llama anchor's page must not call Qwen3.5's vocabulary its own."""
    if not tokens:
        return {"anchor": None, "own": True, "reference_label": ""}
    meta, ref = tokens["tokenizers"], tokens["anchor_tokenizer"]
    mine = next((tid for tid, e in meta.items() if anchor_name in e.get("models", ())), None)
    return {"anchor": mine, "own": mine == ref, "reference_label": meta[ref]["label"]}
