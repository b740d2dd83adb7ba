"""Audit checks 1 and 2b: every number on the pages sits in a [data-prov] element with a record, and the data the
pages embed (lesson-data.js, serving-data.js, prefix-data.js) equals the same documents rebuilt from precomputed/
(report.py runs them)."""
from __future__ import annotations

import json
from pathlib import Path

from scripts.page.scan import page_numbers, spec_titles, unregistered_numbers


def check_numbers(html: str, records: dict, specs: str = "") -> list[str]:
    problems = []
    shown = page_numbers(html)
    for rid, text, where in shown:
        if rid not in records:
            problems.append(f"{where}: data-prov={rid!r} has no provenance record")
        elif text.strip() and text.strip() != records[rid]["display"]:
            problems.append(f"{where}: shows {text.strip()!r} but record {rid} displays {records[rid]['display']!r}")
    problems += [f"{where}: number {num!r} is not inside a [data-prov] element" for num, where in
                 unregistered_numbers(html)]
    for title, where in spec_titles(specs):
        problems += [f"{where}: chart title {title!r} contains number {num!r}" for num, _ in
                     unregistered_numbers(f"<p>{title}</p>")]
    return problems


def page_specs(site: Path) -> str:
    from scripts.page.bundles import DATA_SCRIPT, read_data_script

    path = site / DATA_SCRIPT
    return read_data_script(path.read_text(encoding="utf-8"))[1] if path.exists() else ""


def check_embedded(site: Path, data: Path) -> list[str]:
    from scripts.page.bundles import (
        DATA_SCRIPT,
        LAB_SCRIPT,
        json_for_script,
        lab_only_ids,
        lab_script,
        measured_records,
        read_data_script,
        read_page_records,
    )
    from scripts.page.render import page_data

    path = site / DATA_SCRIPT
    if not path.exists():
        return [f"{path}: missing (the page's sliders have no data)"]
    text = path.read_text(encoding="utf-8")
    found, _ = read_data_script(text)
    if not found:
        return [f"{path}: no window.C13_DATA line"]
    docs = {name: json.loads((data / f"{name}.json").read_text(encoding="utf-8")) if (data / f"{name}.json").exists()
            else None for name in ("precomputed", "tokenizer_counts", "bench_medians", "measured_records", "prefix")}
    docs["bench_medians"] = measured_records(docs["bench_medians"], docs.pop("measured_records"))  # as the render reads
    lesson = site / "index.html"
    lab_only = lab_only_ids(docs["bench_medians"], lesson.read_text(encoding="utf-8") if lesson.exists() else "")
    serving_path = data / "serving.json"
    serving = json.loads(serving_path.read_text(encoding="utf-8")) if serving_path.exists() else None
    others = {**(serving or {}).get("provenance", {}), **read_page_records(text)}
    expected = str(json_for_script(page_data(docs["precomputed"], docs["tokenizer_counts"], docs["bench_medians"],
                                             docs["prefix"], lab_only, others)))
    problems = _differs(path, found, expected)
    lab = site / LAB_SCRIPT  # the measured records only the lab shows, split off by the lesson page's numbers
    if (site / "lab.html").exists() and (not lab.exists() or lab.read_text(encoding="utf-8") != lab_script(
            docs["bench_medians"], lab_only)):
        problems.append(f"{lab}: differs from the records of precomputed/bench_medians.json and measured_records.json "
                        "the lesson page does not show (edited by hand?)")
    if serving is not None:
        problems += check_serving_data(site, serving)
    prefix_path = data / "prefix.json"
    if prefix_path.exists():
        problems += check_prefix_data(site, json.loads(prefix_path.read_text(encoding="utf-8")))
    return problems


def check_prefix_data(site: Path, prefix: dict) -> list[str]:
    """prefix-data.js (the lab's cache-off/on experiment: draws and engine inputs) equals the one rebuilt from
    prefix.json."""
    from scripts.page.bundles import PREFIX_SCRIPT, prefix_script

    if not prefix.get("page"):
        return []
    path = site / PREFIX_SCRIPT
    if not path.exists():
        return [f"{path}: missing (the lab's prefix-cache experiment has no data)"]
    return _differs(path, path.read_text(encoding="utf-8"), prefix_script(prefix))


def _differs(path: Path, found: str, expected: str) -> list[str]:
    if found == expected:
        return []
    at = next((i for i, (x, y) in enumerate(zip(found, expected, strict=False)) if x != y),
              min(len(found), len(expected)))
    return [f"{path}: the page's data differs from precomputed/ at character {at}: "
            f"{found[max(0, at - 30):at + 30]!r} (edited by hand, or built from other data)"]


def check_serving_data(site: Path, serving: dict) -> list[str]:
    """serving-data.js (the under-load experiment's requests) equals the one rebuilt from serving.json; its records
    equal serving.json's."""
    from scripts.page.bundles import (
        SERVING_PREFIX,
        SERVING_PROV_PREFIX,
        SERVING_SCRIPT,
        SIM_SCRIPT,
        SIM_SOURCE,
        json_for_script,
        read_data_script,
        sim_script,
    )
    from scripts.page.jinja import REPO
    from scripts.serving.experiments.load_page import page_experiment

    if "page_opening" not in serving:
        return []
    path = site / SERVING_SCRIPT
    if not path.exists():
        return [f"{path}: missing (the under-load experiment has no data)"]
    found, prov = read_data_script(path.read_text(encoding="utf-8"), (SERVING_PREFIX, SERVING_PROV_PREFIX))
    problems = _differs(path, found, str(json_for_script(page_experiment(serving))))
    shown = json.loads(prov or "{}")
    problems += [f"{path}: record {rid} differs from precomputed/serving.json" for rid, rec in shown.items()
                 if serving["provenance"].get(rid) != rec]
    sim, source = site / SIM_SCRIPT, REPO / "templates" / SIM_SOURCE  # the simulator that computes every readout
    if not sim.exists() or sim.read_text(encoding="utf-8") != sim_script(source):
        problems.append(f"{sim}: differs from {source.relative_to(REPO)}/ joined (the browser's simulator, edited "
                        "by hand?)")
    return problems
