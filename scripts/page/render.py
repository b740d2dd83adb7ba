"""Render the lesson page and its provenance page from the JSON, the Jinja templates and the Vega-Lite specs.

One self-contained file: the Vega bundle and the page's JS are inlined and pinned by sha256 in a
Content-Security-Policy that allows no remote origin, so the page works offline and from file://."""

import base64
import hashlib
import json
import os
import re
import subprocess
from pathlib import Path

import vl_convert
from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape
from markdown_it import MarkdownIt
from markupsafe import Markup

from scripts.page import charts

REPO = Path(__file__).resolve().parents[2]


def csp_hash(script: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode() + "'"


def json_for_script(obj: object) -> Markup:
    """JSON that cannot close its <script> element early."""
    text = json.dumps(obj, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return Markup(text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026"))


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


def jinja_env(templates: Path) -> Environment:
    """Autoescaping everywhere: text from the JSON is inserted as text, never as HTML."""
    env = Environment(loader=FileSystemLoader(templates), autoescape=select_autoescape(default=True,
                      default_for_string=True), undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters["log2"] = lambda v: int(v).bit_length() - 1
    return env


def load_optional(path: str | None):
    return json.loads(Path(path).read_text(encoding="utf-8")) if path and Path(path).exists() else None


def merged_provenance(data: dict, tokens: dict | None, bench: dict | None) -> dict:
    return {**data["provenance"], **(tokens or {}).get("provenance", {}), **(bench or {}).get("provenance", {})}


def page_data(data: dict, tokens: dict | None, bench: dict | None) -> dict:
    """What the page embeds as #lesson-data: the constants and scenario its math reads, every provenance record,
    the token rows. The audit rebuilds it from precomputed/ and compares the page's copy byte for byte."""
    return {"constants": data["constants"], "scenario": data["scenario"],
            "provenance": merged_provenance(data, tokens, bench),
            "tokens": {k: tokens[k] for k in ("rows", "chars_passage")} if tokens else None}


def render(data: dict, tokens: dict | None, bench: dict | None, questions_md: str, templates: Path) -> str:
    prov = merged_provenance(data, tokens, bench)
    env = jinja_env(templates)

    def num(rid: str, suffix: str = "") -> Markup:
        rec = prov[rid]  # a KeyError here is a template naming a number that has no provenance
        return Markup('<span class="num" tabindex="0" data-prov="{}" title="{}">{}{}</span>').format(
            rid, f"{rec['kind']} · 点击查看出处", rec["display"], suffix)

    def readout(name: str) -> Markup:
        rec = prov[f"readout.{name}"]
        return Markup('<output class="num readout" tabindex="0" data-readout="{}" data-format="{}" data-prov="{}" '
                      'data-value="{}">{}</output>').format(name, rec["format"], rec["id"], repr(rec["value"]),
                                                           rec["display"])

    sc = data["scenario"]
    specs = {"frontier": charts.frontier(sc["batch"]["value"], sc["context_tokens"]["value"],
                                         sc["tpot_slo_ms"]["value"]),
             "timeline": charts.timeline(sc["prompt_tokens"]["value"], sc["chunk_tokens"]["value"])}
    if tokens:
        specs["tokens"] = charts.tokens(tokens)
    if bench:
        specs.update(charts.bench(bench))
    lesson_js = (templates / "lesson.js").read_text(encoding="utf-8")
    bundle = vl_convert.javascript_bundle()
    scripts = [bundle, lesson_js]
    return env.get_template("index.html.j2").render(
        d=data, P=prov, num=num, readout=readout, tokens=tokens, bench=bench,
        css=Markup((templates / "lesson.css").read_text(encoding="utf-8")),
        vega_bundle=Markup(bundle), lesson_js=Markup(lesson_js),
        lesson_data=json_for_script(page_data(data, tokens, bench)), lesson_specs=json_for_script(specs),
        csp=Markup("; ".join([
            "default-src 'none'", "script-src " + " ".join(csp_hash(s) for s in scripts) + " 'unsafe-eval'",
            "style-src 'unsafe-inline'", "img-src data:", "font-src data:", "connect-src 'none'",
            "base-uri 'none'", "form-action 'none'"])),
        questions=markdown(questions_md), build_date=build_date(["anchor-model.json", "precomputed"]),
        commit=git_commit(),
    )


def render_provenance(html: str, prov: dict, templates: Path, report: bool) -> tuple[str, list[str]]:
    """One row per number on the page, in page order; returns the page and the source files it links to."""
    from scripts.page.scan import page_numbers

    seen, rows = set(), []
    for rid, _, _ in page_numbers(html):
        if rid in prov and rid not in seen:
            seen.add(rid)
            rec = dict(prov[rid])
            if rec.get("formula", "").startswith("scripts."):
                rec["formula_file"] = rec["formula"].split(":")[0].replace(".", "/") + ".py"
            rows.append(rec)
    sources = sorted({r[k] for r in rows for k in ("script", "formula_file") if r.get(k)})
    page = jinja_env(templates).get_template("provenance.html.j2").render(
        rows=[{"key": None, "args": None, "inputs": None, "field": None, "script": None, "formula_file": None,
               "unit": None, **r} for r in rows],
        css=Markup((templates / "lesson.css").read_text(encoding="utf-8")), commit=git_commit(),
        build_date=build_date(["anchor-model.json", "precomputed"]), report=report)
    return page, sources


def site_files(data_path: str, tokens_path: str | None, bench_path: str | None, questions_md: str,
               templates: Path) -> dict[str, bytes]:
    """Every file of the built site, by its path relative to site/: the page, the provenance page, the sources."""
    data, tokens, bench = (json.loads(Path(data_path).read_text(encoding="utf-8")), load_optional(tokens_path),
                           load_optional(bench_path))
    html = render(data, tokens, bench, questions_md, templates)
    page, sources = render_provenance(html, merged_provenance(data, tokens, bench), templates, report=True)
    files = {f"source/{src}": (REPO / src).read_bytes() for src in sources}  # the scripts behind the numbers
    files["provenance.html"] = page.encode("utf-8")
    files["index.html"] = html.encode("utf-8")
    return files
