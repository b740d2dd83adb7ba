"""provenance.html: every record the pages show, each with its kind, its source, a link to the input file it was
derived from (the anchor, config/gpus.json, config/lab.json or a bench run: shipped in site/source/), each input
field's value with the file and field it is read from, and a link to every page that shows it; rendered from
templates/provenance.html.j2, with the build's report beside it when asked."""

from pathlib import Path

from markupsafe import Markup

from scripts.common import names
from scripts.page.jinja import REPO, build_date, git_commit, jinja_env
from scripts.record.anchor_file import load
from scripts.record.inputs import read_json

CITED = "config/cited.json"
SHIPPED = ("config/", "precomputed/bench/", "scripts/")  # an input file shipped in site/source/ when a record names it


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


def shown_value(value) -> str:
    """An input's value as its file holds it, integers with thousands separators."""
    if isinstance(value, bool) or value is None:
        return {True: "true", False: "false", None: "—"}[value]
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer() and abs(value) < 1e18):
        return f"{int(value):,}"
    return str(value)


def input_values(rec: dict, prov: dict, shown: set, resolved: dict, anchor_file: str, cited: dict) -> list[dict]:
    """Each input a record names, with its value and where it is read from: another record, its value as displayed
    (`row`: its id where it has a row of its own, among `shown`, which gives its source); the anchor's fields (model.*,
    scenario.*) from the anchor file; its GPU's datasheet numbers (hardware.*) from config/gpus.json, entry
    gpus.<id> (the locator the anchor loader gives them); a cited figure from config/cited.json, whose
    numbers are listed by record id. `file` is None where the value is read from no shipped file."""
    out = []
    for name in rec.get("inputs") or []:
        head, _, rest = name.partition(".")
        if name in prov and head != "cited":  # a number of its own, with its own row
            other = prov[name]
            unit = names.NAMES["units"].get(other.get("unit"), other.get("unit") or "")
            value = other["display"] if "display" in other else shown_value(other.get("value"))
            out.append({"name": name, "label": name, "value": f"{value} {unit}".strip(), "field": name, "file": None,
                        "row": name if name in shown else None})
            continue
        if " " in name or "/" in head:  # a file (and a field of it, or its digest): named, its value is the file
            path, _, field = name.partition(" ")
            shipped = path.startswith(SHIPPED) and (REPO / path).is_file()
            out.append({"name": name, "label": field or path, "value": None, "field": field,
                        "file": path if shipped else None, "row": None})
            continue
        if head == "cited":  # config/cited.json holds each figure under its record id
            node = next((n for n in cited.get("numbers", []) if n.get("id") == name), None)
            where = (CITED, f"numbers[id = {name}]")
            label = name
        else:  # a field the anchor loader located in another file (its GPU's, in config/gpus.json) is named there
            node = (resolved.get(head) or {}).get(rest)
            locator = node.get("locator") if isinstance(node, dict) else None
            where = tuple(locator.split(" ", 1)) if locator else (anchor_file, name)
            label = where[1] if locator else name
        value = node.get("value") if isinstance(node, dict) else node
        out.append({"name": name, "value": shown_value(value), "field": where[1], "label": label, "row": None,
                    "file": where[0] if (REPO / where[0]).is_file() else None})
    return out


def render_provenance(pages: dict[str, str], prov: dict, templates: Path, report: bool,
                      anchor_file: str = "anchor-model.json") -> tuple[str, list[str]]:
    """One row per number on the pages (file name -> html, in the order given), in page order, each linking to
    every page that shows it; returns the page and the source files it links to. `anchor_file`: the anchor
    the numbers come from (precomputed.json anchor.source_file), which the page names."""
    from scripts.page.scan import page_numbers

    shown_on: dict[str, list[str]] = {}  # record id -> the pages that show it, in page order
    for name, html in pages.items():
        for rid, _, _ in page_numbers(html):
            if rid in prov and name not in shown_on.setdefault(rid, []):
                shown_on[rid].append(name)
    rows = [{**prov[rid], "page": on[0], "pages": on} for rid, on in shown_on.items()]
    _, resolved = load(REPO / anchor_file) if (REPO / anchor_file).is_file() else (None, {})
    cited = read_json(REPO / CITED)
    for rec in rows:
        if rec.get("formula", "").startswith("scripts."):
            rec["formula_file"] = rec["formula"].split(":")[0].replace(".", "/") + ".py"
        rec["input_file"] = input_file(rec, anchor_file)
        rec["input_values"] = input_values(rec, prov, set(shown_on), resolved, anchor_file, cited)
    sources = sorted({r[k] for r in rows for k in ("script", "formula_file", "input_file") if r.get(k)}
                     | {i["file"] for r in rows for i in r["input_values"] if i["file"]})
    page = jinja_env(templates).get_template("provenance.html.j2").render(
        rows=[{"key": None, "args": None, "inputs": None, "field": None, "script": None, "formula_file": None,
               "input_file": None,
               "unit": None, "formula": None, "rate_per_gpu": None, **r} for r in rows],
        css=Markup((templates / "lesson.css").read_text(encoding="utf-8")), commit=git_commit(),
        build_date=build_date(["anchor-model.json", "precomputed"]), report=report,
        kinds={k: v["label"] for k, v in names.NAMES["record_kinds"].items()}, units=names.NAMES["units"],
        assumptions=names.NAMES["assumptions"], anchor_file=anchor_file)
    return page, sources
