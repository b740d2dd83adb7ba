"""provenance.html: every record the pages show, each with its kind, its source and a link to the input file it was
derived from (the anchor, config/gpus.json, config/lab.json or a bench run: shipped in site/source/), rendered from
templates/provenance.html.j2; with the build's report beside it when asked."""

from pathlib import Path

from markupsafe import Markup

from scripts.common import names
from scripts.page.jinja import REPO, build_date, git_commit, jinja_env


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
