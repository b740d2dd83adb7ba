"""Render the lesson, lab and validation pages and their provenance page from the JSON and the Jinja templates, with
the data scripts and JS bundles (bundles.py), the compiled charts (vega.py) and the provenance page
(provenance_page.py) beside them.

Phone first: index.html carries the text, its numbers and the CSS, so it paints before any script runs. Beside it
(plain <script defer src>, which works from file:// where fetch() does not): the Vega runtime alone (npm vega's
vega.min.js, pinned in config/vendor.json; the specs are compiled from Vega-Lite to Vega here, so no Vega-Lite
compiler ships), the data and specs the charts need, and the
page's own script. The CSP allows scripts from the page's own origin only ('self': CSP has no way to name a file
without a host, and Subresource Integrity refuses file:// scripts), and no remote origin at all. connect-src is
'self' rather than 'none' only because crawlers' audits (Lighthouse) fetch /robots.txt from inside the page; the
page's own script fetches nothing."""

import json
from pathlib import Path

from markupsafe import Markup

from scripts.common import names
from scripts.page import lab, reading
from scripts.page.bundles import (
    DATA_SCRIPT,
    LAB_MODEL_SCRIPT,
    LAB_PAGE_SCRIPT,
    LAB_SCRIPT,
    PREFIX_SCRIPT,
    REAL_ENGINE_FAMILIES,
    RUNTIME,
    SCRIPT,
    SERVING_SCRIPT,
    SIM_SCRIPT,
    SIM_SOURCE,
    data_script,
    lab_only_ids,
    lab_page_script,
    lab_script,
    lesson_script,
    measured_records,
    prefix_script,
    read_page_records,
    serving_records_on_page,
    serving_script,
    sim_script,
)
from scripts.page.jinja import REPO, build_date, git_commit, jinja_env, markdown
from scripts.page.provenance_page import render_provenance
from scripts.page.vega import chart_boxes, chart_specs, compile_specs, default_chart_data, default_load_data
from scripts.record.inputs import InputError

PAGES = {"index.html": "index.html.j2", "lab.html": "lab.html.j2",  # the lesson, its lab and the simulator's
         "validation.html": "validation.html.j2"}  # validation report: one build, one frame (page_base.html.j2)


RUNTIME_CACHE = REPO / ".cache" / "vendor" / RUNTIME  # fetched and checked by the fetch_vendor rule






































def load_optional(path: str | None):
    return json.loads(Path(path).read_text(encoding="utf-8")) if path and Path(path).exists() else None


def merged_provenance(data: dict, tokens: dict | None, bench: dict | None, serving: dict | None = None,
                      prefix: dict | None = None) -> dict:
    return {**data["provenance"], **(tokens or {}).get("provenance", {}), **(bench or {}).get("provenance", {}),
            **(prefix or {}).get("provenance", {}), **(serving or {}).get("provenance", {})}


def page_data(data: dict, tokens: dict | None, bench: dict | None, prefix: dict | None = None,
              lab_only: frozenset[str] = frozenset(), other_records: dict | None = None) -> dict:
    """What the page embeds as #lesson-data: the constants and scenario its math reads, every provenance record
    but the per-GPU technique records the claims alone read (technique.<gpu>.*: no number on the page is one; they
    stay in precomputed.json, where the audit re-checks the claims) and the measured records only the lab shows
    (`lab_only`: lab-data.js), each without its input list (provenance.html lists the inputs with their values), the
    token rows, and the names lesson.js labels things with (scripts/common/names.json),
    the assumptions' Chinese only for the assumed records some page's script carries: these, lab-data.js's,
    prefix-data.js's and `other_records` (serving-data.js's, the pages' own counts). The audit rebuilds it from
    precomputed/ and compares the page's copy byte for byte."""
    claims_only = tuple(f"technique.{g['id']}." for g in data.get("gpus", []))
    merged = merged_provenance(data, tokens, bench, None, prefix)
    assumed = {rec.get("assumption") for rec in [*merged.values(), *(other_records or {}).values()]
               if isinstance(rec, dict)}
    shown_names = names.page_names()
    shown_names["assumptions"] = {k: v for k, v in shown_names.get("assumptions", {}).items() if k in assumed}
    return {"constants": data["constants"], "gpus": data.get("gpus", []), "scenario": data["scenario"],
            "techniques": data.get("techniques"),
            "names": shown_names,
            "provenance": {rid: {k: v for k, v in rec.items() if k != "inputs"}
                           for rid, rec in merged.items()
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

    doc = schema.read_input(path, schema.COURSE)
    for i, lid in enumerate(doc["map"]["value"]):
        if lid is not None and lid not in doc["links"]:
            raise InputError(f"{Path(path).as_posix()}: field map.value[{i}] ({lid!r}) names no entry of links")
    return doc


def render(data: dict, tokens: dict | None, bench: dict | None, questions_md: str, templates: Path,
           runtime: Path = RUNTIME_CACHE, load: dict | None = None, course: dict | None = None,
           prefix: dict | None = None) -> dict[str, str]:
    """index.html and the scripts beside it, by file name. `load` is scripts.serving.experiments.load_page.page_bundle's
    (serving.json, the experiment's data, its opening readouts), or None for a page without that experiment.
    A template naming what the data lacks raises TemplateProblem (one line), never a bare traceback. `course`
    (course_links): where the names of other lessons link; without it they print as plain text."""
    from jinja2 import TemplateError

    try:
        return _render(data, tokens, bench, questions_md, templates, runtime, load, course, prefix)
    except (TemplateError, KeyError, OverflowError) as exc:  # OverflowError: the sandbox's range limit
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
                   for k in ("minutes", "experiments", "prose_chars", "run_seconds", "longest_extra_chars")}
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
             DATA_SCRIPT: data_script(page_data(data, tokens, bench, prefix, lab_only,
                                                {**(serving or {}).get("provenance", {}), **page_prov}),
                                      compiled, page_prov),
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
    except (TemplateError, KeyError, OverflowError) as exc:  # OverflowError: the sandbox's range limit
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
