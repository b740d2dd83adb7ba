"""Audit the built page: every number shown resolves to a provenance record, and every record holds up.

  python -m scripts.audit [--site site] [--data precomputed]        (what `make audit` and CI run)

Regenerates nothing. Checks, each reported with what failed and where:
  1. numbers   every number in the pages' text (the lesson, index.html; its lab, lab.html; the validation report,
               validation.html) and chart titles sits in a [data-prov] element whose record exists
  2. derived   each derived record names its derivation, formula and inputs; recomputing it as its derivation says
               gives the shown value
  2b. embedded the page's data (lesson-data.js) (what its sliders compute from) equals, byte for byte, the same
               document rebuilt from precomputed/ (a hand-edited constant in the page cannot pass)
  3. measured  each measured record names machine, date, runs and spread; its file's sha256 matches the manifest
  4. simulated each simulated record names seed, requests, workload, schedule, rate and script; re-running that
               simulation (scripts/serving/) gives the shown value; an engine preset's goodput is bracketed by two
               simulations (it meets the attainment target, its search's first miss does not)
  5. cited     every record is a well-formed record of its kind (scripts/record/provenance.Record): a cited one
               names work, version and place and says whether it is self-reported, an assumed one its assumption
  5b. claims   every qualitative claim the page makes (precomputed/*.json "claims") still holds over the records
  6. manifest  every hash in precomputed/MANIFEST.json matches its file (stale files are named)
"""
from __future__ import annotations

import argparse
import functools
import hashlib
import importlib
import json
import sys
from pathlib import Path

from scripts.audit.words import check_words
from scripts.common.display import format_number
from scripts.page.reading import PAGES as READING_PAGES
from scripts.page.scan import page_numbers, spec_titles, unregistered_numbers
from scripts.record.anchors import check_stem, data_dir
from scripts.record.inputs import InputError
from scripts.record.provenance import Derivation, Record, RecordError

CHECKS = ("numbers", "words", "embedded", "derived", "measured", "simulated", "calibrated", "claims", "cited",
          "manifest")


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def load_records(data: Path, site: Path | None = None) -> dict:
    """Every record of precomputed/, and (given the site) the records the render counted from the pages
    themselves (their reading time: lesson-data.js window.C13_PAGE_PROV)."""
    from scripts.page.render import DATA_SCRIPT, read_page_records

    records = {}
    for name in ("precomputed.json", "tokenizer_counts.json", "bench_medians.json", "measured_records.json",
                 "serving.json", "prefix.json"):
        path = data / name
        if path.exists():
            records.update(json.loads(path.read_text(encoding="utf-8")).get("provenance", {}))
    if site is not None and (site / DATA_SCRIPT).exists():
        records.update(read_page_records((site / DATA_SCRIPT).read_text(encoding="utf-8")))
    return records


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


@functools.lru_cache(maxsize=4)
def _anchor_of(path: Path, content: bytes):
    """The anchor file's (Anchor, document), loaded once per content: check_derived recomputes ~300 records from it,
    and each load validates the file against its schema (2.5 s of a 4 s audit before)."""
    from scripts.record.anchor_file import load

    return load(path)


def cached_anchor(path: Path):
    """scripts.record.anchor_file.load, cached by the file's bytes (an edited file is loaded again)."""
    return _anchor_of(Path(path), Path(path).read_bytes())


def recompute(rec: dict, records: dict, root: Path, anchor_path: Path | None = None, site: Path | None = None) \
        -> float | None:
    """The record's value recomputed as its derivation says (scripts/record/provenance.Derivation); None when it
    cannot be recomputed here (token counts: tests/test_tokenizers.py re-encodes them). A page count reads the
    audited site's page (`site`, site/ by default)."""
    how = Record.from_json(rec, check_display=False).derivation
    module, _, name = rec["formula"].partition(":")
    anchor_path = anchor_path or root / "anchor-model.json"
    if how is Derivation.ANCHOR:
        anchor, _ = cached_anchor(anchor_path)
        result = getattr(importlib.import_module(module), name)(anchor, **rec.get("args", {}))
        return (result[rec["key"]] if "key" in rec else result) * rec.get("scale", 1.0)
    if how is Derivation.FITTED:  # a workload length fitted to the model's context
        from scripts.serving.config import workloads_for

        doc = workloads_for(root / "config" / "workloads.json", cached_anchor(anchor_path)[0])
        args = rec["args"]
        for a in doc["adapted"]:
            if (a["workload"], a["field"]) == (args["workload"], args["field"]):
                return (a["now"][("min", "max").index(args["bound"])] if isinstance(a["now"], list) else a["now"])
        return float("nan")  # no longer adapted: the record is stale
    if how is Derivation.RECORDS:
        if any(i not in records for i in rec["inputs"]):
            return float("nan")  # reported: a number derived from a record that is gone
        return getattr(importlib.import_module(module), name)(*(records[i]["value"] for i in rec["inputs"]))
    if how is Derivation.PASSAGE:
        fn = {"builtins:len": len, "str.encode:utf-8": lambda t: len(t.encode("utf-8"))}[rec["formula"]]
        return _passage_value(rec, root, fn)
    if how is Derivation.PAGE:  # counted from the built page itself (scripts/page/reading.py)
        page = (site or root / "site") / Path(rec["inputs"][0]).name
        if not page.exists():
            return float("nan")
        return getattr(importlib.import_module(module), name)(page.read_text(encoding="utf-8"))
    if how is Derivation.TINYGPT:
        from scripts.bench.tinygpt import Shape, TinyGPT, param_count

        return param_count(TinyGPT(Shape(**rec["args"])))
    return None


def _passage_value(rec: dict, root: Path, fn) -> float:
    path, field = rec["inputs"][0].split(" ")
    pid = field.split(".")[1]
    return fn(json.loads((root / path).read_text(encoding="utf-8"))["passages"][pid]["text"])


def check_derived(records: dict, root: Path, anchor_path: Path | None = None, site: Path | None = None) \
        -> tuple[list[str], int]:
    problems, skipped = [], 0
    for rid, rec in records.items():
        if rec.get("kind") != "derived":
            continue
        try:
            value = recompute(rec, records, root, anchor_path, site)
        except RecordError as exc:
            problems.append(str(exc))
            continue
        if value is None:
            skipped += 1  # e.g. token counts, which need the tokenizer files (tests/test_tokenizers.py re-encodes)
            continue
        if value != value:  # NaN: recompute found no inputs to recompute from
            problems.append(f"{rid}: an input record is missing, or the number is no longer derived")
        elif format_number(value, rec["format"]) != rec["display"]:
            problems.append(f"{rid}: recomputes to {format_number(value, rec['format'])} but shows {rec['display']}")
    return problems, skipped


def check_measured(records: dict, manifest: dict, root: Path) -> list[str]:
    problems = []
    inputs = manifest.get("inputs", {})
    for rid, rec in records.items():
        if rec.get("kind") != "measured":
            continue
        missing = [k for k in ("machine", "date", "runs", "spread", "file", "file_sha256") if not rec.get(k)]
        if missing:
            problems.append(f"{rid}: measured record names no {', '.join(missing)}")
            continue
        path = root / rec["file"]
        if not path.exists():
            problems.append(f"{rid}: measured file {rec['file']} is missing")
        elif sha256(path) != rec["file_sha256"] or inputs.get(rec["file"]) != rec["file_sha256"]:
            problems.append(f"{rid}: {rec['file']} does not match the hash in the record and the manifest "
                            "(edited or re-measured without a rebuild)")
    return problems


def check_calibrated(records: dict, root: Path, anchor_path: Path | None = None, resimulate: bool = True) -> list[str]:
    """Every prediction of the real engine's runs, recomputed from the committed calibration and run files
    (precomputed/serve/, precomputed/serve-prefix/ and precomputed/serve-heldout/: the step models are fitted again,
    every run simulated again); without `resimulate`, only that the data each record names exists."""
    cal = {rid: rec for rid, rec in records.items() if rec.get("kind") == "calibrated"}
    if not cal:
        return []
    from scripts.realengine.comparison import compare
    from scripts.realengine.heldout_comparison import compare as compare_heldout
    from scripts.realengine.prefix_comparison import compare as compare_prefix
    from scripts.realengine.records import heldout_page_block, page_block, prefix_page_block
    from scripts.realengine.settings import comparison_settings
    from scripts.record.anchor_file import load
    from scripts.record.inputs import read_json

    named = sorted({f for rec in cal.values() for f in rec.get("data", [])})  # files and glob patterns
    files = sorted({p.relative_to(root).as_posix() for f in named for p in root.glob(f)})
    missing = [f for f in named if not any(root.glob(f))]
    if missing:
        return [f"calibrated records name data that is missing: {', '.join(missing[:3])}"]
    if not resimulate:
        return []
    anchor = load(anchor_path or root / "anchor-model.json")[0]
    config = root / "config" / "real_engine.json"
    settings = comparison_settings(read_json(config), "config/real_engine.json")
    rebuilt = {}
    # the load runs (comparison.py), the prefix-reuse runs (prefix_comparison.py) and the held-out sessions
    # (heldout_comparison.py), each from its own folder
    other = [root / f for f in files if f.startswith(("precomputed/serve/calibration/",  # the held-out's other
                                                      "precomputed/serve-archive/"))]  # calibrations
    for folder, comparing, block in (("precomputed/serve/", compare, page_block),
                                     ("precomputed/serve-prefix/", compare_prefix, prefix_page_block),
                                     ("precomputed/serve-heldout/", functools.partial(
                                         compare_heldout, other_calibrations=other), heldout_page_block)):
        mine = [f for f in files if f.startswith(folder)]
        if mine:
            calibrations = [root / f for f in mine if "/calibration/" in f]
            runs = [root / f for f in mine if "/calibration/" not in f]
            rebuilt.update(block(comparing(calibrations, runs, anchor, settings))["provenance"])
    problems = []
    for rid, rec in cal.items():
        again = rebuilt.get(rid)
        if again is None:
            problems.append(f"{rid}: not produced again from its data files")
        elif again["display"] != rec["display"]:
            problems.append(f"{rid}: recomputes to {again['display']} but shows {rec['display']}")
    return problems


def check_simulated(records: dict, root: Path, resimulate: bool = True, anchor_path: Path | None = None) -> list[str]:
    """Re-run every simulated number's cell (or its goodput bisection, or the page readouts over the whole sweep)
    from the committed inputs."""
    from scripts.record.anchor_file import load
    from scripts.serving import sweep
    from scripts.serving.aggregate import aggregate
    from scripts.serving.config import sweep_settings, workloads_for

    sims = {rid: rec for rid, rec in records.items() if rec.get("kind") == "simulated"}
    prefix = {rid: rec for rid, rec in sims.items() if str(rec.get("workload", "")).startswith(("prefix:",
                                                                                              "admission:"))}
    sims = {rid: rec for rid, rec in sims.items() if rid not in prefix}
    if not sims:
        return check_prefix(prefix, root, resimulate, anchor_path)
    anchor, anchor_doc = load(anchor_path or root / "anchor-model.json")
    doc = workloads_for(root / "config" / "workloads.json", anchor)
    settings, workloads = sweep_settings(doc), doc["workloads"]
    problems, runs, rebuilt = [], {}, {}
    if resimulate:  # every cell the records need, simulated on every core first (the loop below then reads them)
        needed = _cells_needed(sims, workloads, settings)
        runs.update(zip(needed, _map_cells(anchor_path or root / "anchor-model.json", root, needed), strict=True))

    def run(workload: str, schedule: str, rate: float) -> dict:
        if (workload, schedule, rate) not in runs:
            runs[workload, schedule, rate] = sweep.run_cell(anchor, workloads, settings, workload, schedule, rate,
                                                            replications=1)
        return runs[workload, schedule, rate]

    def page_records() -> dict:  # serving.json's page readouts, rebuilt from re-run cells
        if not rebuilt:
            every = [run(w, p, r) for w in workloads for p in settings["schedules"] for r in settings["rates_per_gpu"]]
            rebuilt.update(aggregate(anchor_doc, doc, settings, every, [])["provenance"])
        return rebuilt

    for rid, rec in sims.items():
        missing = [k for k in ("seed", "requests", "workload", "schedule", "script", "metric") if rec.get(k) is None]
        if missing:
            problems.append(f"{rid}: simulated record names no {', '.join(missing)}")
            continue
        if rec["seed"] != sweep.workload_seed(settings, workloads, rec["workload"]) or \
                rec["requests"] != settings["requests"]:
            problems.append(f"{rid}: seed or request count differs from config/workloads.json (rebuild)")
            continue
        if rec.get("interval") is not None:
            problems += check_interval(rid, rec, settings, workloads)
        if not resimulate:
            continue
        if rec["metric"] == "engine_goodput":
            problems += check_engine_goodput(rid, rec, anchor, anchor_doc, workloads, settings)
            continue
        if rec.get("formula") == "scripts.serving.load_page:readouts":
            value = page_records().get(rid, {}).get("value", float("nan"))
        elif rec["metric"].startswith("distserve_goodput_"):  # the replications' mean or an interval end
            value = rec["interval"][rec["metric"].rsplit("_", 1)[1]]
        elif rec["metric"] == "distserve_goodput":
            swept = {r: run(rec["workload"], rec["schedule"], r)["metrics"]["slo_attainment"]
                     for r in settings["rates_per_gpu"]}
            value = sweep.distserve_goodput(anchor, workloads, settings, rec["workload"], rec["schedule"],
                                            swept)["rate_per_gpu"]
        else:
            value = run(rec["workload"], rec["schedule"], rec["rate_per_gpu"])["metrics"][rec["metric"]]
        if format_number(value, rec["format"]) != rec["display"]:
            problems.append(f"{rid}: re-simulates to {format_number(value, rec['format'])} but shows {rec['display']}")
    if resimulate:
        problems += check_replications(sims, anchor, workloads, settings)
    return problems + check_prefix(prefix, root, resimulate, anchor_path)


def check_prefix(sims: dict, root: Path, resimulate: bool, anchor_path: Path | None = None) -> list[str]:
    """The prefix-caching experiment's records (scripts/serving/prefix_runs.py): seed and request count as
    config/prefix.json says, and (re-simulating) each run again from config/prefix.json."""
    if not sims:
        return []
    from scripts.serving import prefix_runs
    from scripts.serving.config import sweep_doc

    anchor, workloads_doc, settings = sweep_doc(anchor_path or root / "anchor-model.json",
                                                root / "config" / "workloads.json")
    doc = prefix_runs.load(root / prefix_runs.CONFIG)
    e, problems, runs = doc["experiment"], [], {}
    for rid, rec in sorted(sims.items()):
        if rec.get("seed") != e["seed"]["value"] or rec.get("requests") != e["requests"]["value"]:
            problems.append(f"{rid}: seed or request count differs from config/prefix.json (rebuild)")
            continue
        if not resimulate:
            continue
        if rec["workload"].startswith("admission:"):
            key = "classes" if rec["schedule"].endswith("+classes") else "shared"
            if key not in runs:
                runs[key] = prefix_runs.admission_run(anchor, doc, workloads_doc["workloads"], key,
                                                      settings["gpu_name"])
        else:
            wid, cache = rec["workload"].split(":", 1)[1], "on" if rec["schedule"].endswith("+apc") else "off"
            key = (wid, rec["rate_per_gpu"], cache)
            if key not in runs:
                runs[key] = prefix_runs.run(anchor, doc, wid, rec["rate_per_gpu"], cache, settings["slo_ms"],
                                            settings["gpu_name"])
        value = runs[key][rec["metric"]] * (100 if rec["metric"] in prefix_runs.PERCENT else 1)
        if format_number(value, rec["format"]) != rec["display"]:
            problems.append(f"{rid}: re-simulates to {format_number(value, rec['format'])} but shows {rec['display']}")
    return problems


def _cells_needed(sims: dict, workloads: dict, settings: dict) -> list[tuple]:
    """The sweep cells the simulated records re-run from: all of them for a page readout or a goodput search, else
    only the records' own cells."""
    every = [(w, s, r) for w in workloads for s in settings["schedules"] for r in settings["rates_per_gpu"]]
    if any(rec.get("formula") == "scripts.serving.load_page:readouts" or rec.get("metric") == "distserve_goodput"
           for rec in sims.values()):
        return every
    own = {(rec.get("workload"), rec.get("schedule"), rec.get("rate_per_gpu")) for rec in sims.values()}
    return [cell for cell in every if cell in own]


def check_interval(rid: str, rec: dict, settings: dict, workloads: dict) -> list[str]:
    """A number over the sweep's replications: the seeds are the sweep's, replication 0 is the record's own value,
    and the mean and interval are what scripts/serving/uncertainty.py makes of the values (re-running a further
    replication is check_replications')."""
    from scripts.serving import sweep, uncertainty

    iv = rec["interval"]
    seeds = sweep.replication_seeds(settings, workloads, rec["workload"], settings["replications"])
    if iv.get("seeds") != seeds or len(iv.get("values") or []) != len(seeds):
        return [f"{rid}: its replications' seeds differ from config/workloads.json (rebuild)"]
    own = not rec.get("formula") and not rec["metric"].startswith("distserve_goodput_")  # a number of replication 0
    if own and format_number(iv["values"][0], rec["format"]) != rec["display"]:
        return [f"{rid}: replication 0 is {format_number(iv['values'][0], rec['format'])}, the record shows "
                f"{rec['display']}"]
    again = uncertainty.interval(iv["values"], settings["confidence"])
    if any(again[k] is None or abs(again[k] - iv[k]) > 1e-9 * max(1.0, abs(again[k])) for k in ("mean", "low", "high")):
        return [f"{rid}: its interval is not the {settings['confidence']:g} t interval of its replications' values"]
    return []


def check_replications(records: dict, anchor, workloads: dict, settings: dict) -> list[str]:
    """Re-simulate one further replication of the page's opening cells (every schedule at the page's rate): each
    record's value for that seed must be the stored one."""
    from scripts.serving import sweep

    if settings["replications"] < 2 or "page_workload" not in settings:
        return []
    problems, r, runs = [], settings["replications"] - 1, {}
    for rid, rec in records.items():
        iv = rec.get("interval")
        if rec.get("kind") != "simulated" or not iv or rec["workload"] != settings["page_workload"] \
                or rec.get("rate_per_gpu") != settings.get("page_rate") or rec.get("formula"):
            continue
        if rec["schedule"] not in runs:  # one simulation per cell, for all of its records
            trace = sweep.simulate_cell(anchor, workloads, settings, rec["workload"], rec["schedule"],
                                        rec["rate_per_gpu"], replication=r)
            runs[rec["schedule"]] = sweep.replication_metrics(trace, settings["slo_ms"], settings["percentiles"])
        value = runs[rec["schedule"]][rec["metric"]]
        now, stored = format_number(value, rec["format"]), format_number(iv["values"][r], rec["format"])
        if now != stored:
            problems.append(f"{rid}: replication {r} (seed {iv['seeds'][r]}) re-simulates to {now}, stored {stored}")
    first = settings["schedules"][0]  # and one schedule's whole goodput search in that replication
    rid = f"serving.{settings['page_workload']}.{first}.goodput_rate"
    if rid in records and records[rid].get("interval"):
        iv = records[rid]["interval"]
        value = sweep.distserve_goodput(anchor, workloads, settings, settings["page_workload"], first, {},
                                        replication=r)["rate_per_gpu"]
        if format_number(value, "f3") != format_number(iv["values"][r], "f3"):
            problems.append(f"{rid}: replication {r}'s goodput search re-simulates to {value:.3f}, stored "
                            f"{iv['values'][r]:.3f}")
    return problems


def _cell(args: tuple) -> dict:
    """One sweep cell, in a worker process (check_simulated's pool), from the inputs every sweep rule reads."""
    from scripts.serving import sweep
    from scripts.serving.config import sweep_inputs

    anchor_path, root, (workload, schedule, rate) = args
    anchor, workloads, settings = sweep_inputs(anchor_path, root / "config" / "workloads.json")
    return sweep.run_cell(anchor, workloads, settings, workload, schedule, rate, replications=1)


def _map_cells(anchor_path: Path, root: Path, cells: list[tuple]) -> list[dict]:
    import os
    from concurrent.futures import ProcessPoolExecutor

    workers = max(1, min(os.cpu_count() or 1, 8))
    if workers == 1:
        return [_cell((anchor_path, root, c)) for c in cells]
    with ProcessPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(_cell, [(anchor_path, root, c) for c in cells], chunksize=4))


def check_engine_goodput(rid: str, rec: dict, anchor, anchor_doc: dict, workloads: dict, settings: dict) -> list[str]:
    """An engine preset's goodput, by two simulations instead of its whole search: at the recorded rate the SLO
    attainment meets the target, and at the search's last missing rate (args.miss_rate) it does not."""
    from scripts.model import roofline as rl
    from scripts.serving import sweep

    args = rec.get("args") or {}
    if args.get("first_token") != settings["first_token"] or args.get("step_time") not in ("bound", "realistic"):
        return [f"{rid}: first-token convention or step times differ from config/workloads.json (rebuild)"]
    eff = rl.BOUND if args["step_time"] == "bound" else rl.achieved(anchor)
    split = tuple(args["split"]) if args.get("split") else None
    run_settings = {**settings, "gpu_name": anchor_doc["hardware"]["name"]["value"]}
    target, problems = settings["attainment_target"], []

    def attainment(rate: float) -> float:
        return sweep.attainment(anchor, workloads, run_settings, rec["workload"], rec["schedule"], rate, eff, split)

    if rec["value"] > 0 and attainment(rec["value"]) < target:
        problems.append(f"{rid}: at {rec['display']} req/s per GPU the attainment re-simulates below {target:g}")
    if args.get("miss_rate") is not None and attainment(args["miss_rate"]) >= target:
        problems.append(f"{rid}: at {args['miss_rate']:g} req/s per GPU (the search's first miss) the attainment "
                        f"re-simulates to at least {target:g}: the goodput is higher than shown")
    return problems


def page_specs(site: Path) -> str:
    from scripts.page.render import DATA_SCRIPT, read_data_script

    path = site / DATA_SCRIPT
    return read_data_script(path.read_text(encoding="utf-8"))[1] if path.exists() else ""


def check_embedded(site: Path, data: Path) -> list[str]:
    from scripts.page.render import (
        DATA_SCRIPT,
        LAB_SCRIPT,
        json_for_script,
        lab_only_ids,
        lab_script,
        measured_records,
        page_data,
        read_data_script,
    )

    path = site / DATA_SCRIPT
    if not path.exists():
        return [f"{path}: missing (the page's sliders have no data)"]
    found, _ = read_data_script(path.read_text(encoding="utf-8"))
    if not found:
        return [f"{path}: no window.C13_DATA line"]
    docs = {name: json.loads((data / f"{name}.json").read_text(encoding="utf-8")) if (data / f"{name}.json").exists()
            else None for name in ("precomputed", "tokenizer_counts", "bench_medians", "measured_records", "prefix")}
    docs["bench_medians"] = measured_records(docs["bench_medians"], docs.pop("measured_records"))  # as the render reads
    lesson = site / "index.html"
    lab_only = lab_only_ids(docs["bench_medians"], lesson.read_text(encoding="utf-8") if lesson.exists() else "")
    expected = str(json_for_script(page_data(docs["precomputed"], docs["tokenizer_counts"], docs["bench_medians"],
                                             docs["prefix"], lab_only)))
    problems = _differs(path, found, expected)
    lab = site / LAB_SCRIPT  # the measured records only the lab shows, split off by the lesson page's numbers
    if (site / "lab.html").exists() and (not lab.exists() or lab.read_text(encoding="utf-8") != lab_script(
            docs["bench_medians"], lab_only)):
        problems.append(f"{lab}: differs from the records of precomputed/bench_medians.json and measured_records.json "
                        "the lesson page does not show (edited by hand?)")
    serving_path = data / "serving.json"
    if serving_path.exists():
        problems += check_serving_data(site, json.loads(serving_path.read_text(encoding="utf-8")))
    prefix_path = data / "prefix.json"
    if prefix_path.exists():
        problems += check_prefix_data(site, json.loads(prefix_path.read_text(encoding="utf-8")))
    return problems


def check_prefix_data(site: Path, prefix: dict) -> list[str]:
    """prefix-data.js (the lab's cache-off/on experiment: draws and engine inputs) equals the one rebuilt from
    prefix.json."""
    from scripts.page.render import PREFIX_SCRIPT, prefix_script

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
    from scripts.page.render import (
        REPO,
        SERVING_PREFIX,
        SERVING_PROV_PREFIX,
        SERVING_SCRIPT,
        SIM_SCRIPT,
        SIM_SOURCE,
        json_for_script,
        read_data_script,
        sim_script,
    )
    from scripts.serving.load_page import page_experiment

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


def check_claims(data: Path, records: dict) -> list[str]:
    from scripts.record.claims import failures

    claims = []
    for path in sorted(data.glob("*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        claims += doc.get("claims", []) if isinstance(doc, dict) else []
    return failures(claims, records)


def check_records(records: dict) -> dict[str, list[str]]:
    """Every record read back as its type (scripts/record/provenance.Record): a cited one names its work, version
    and place and says whether it is self-reported, an assumed one states its assumption, every kind has the
    fields of its kind and no other, and each shows its own value. Each problem is filed under its record's kind
    (a derived record whose display was tampered is a `derived` problem, issue 63); cited and assumed records,
    and records of no known kind, under `cited`."""
    problems: dict[str, list[str]] = {}
    for rid, rec in records.items():
        kind = rec.get("kind") if rec.get("kind") in CHECKS else "cited"
        try:
            if Record.from_json(rec).id != rid:
                problems.setdefault(kind, []).append(f"{rid}: the record's own id is {rec.get('id')!r}")
        except RecordError as exc:
            problems.setdefault(kind, []).append(str(exc))
    return problems


def check_cited(records: dict) -> list[str]:
    """check_records' problems with cited, assumed and unknown-kind records."""
    return check_records(records).get("cited", [])


def check_manifest(manifest: dict, root: Path, data: Path | None = None) -> list[str]:
    """Every hash in the manifest against its file; outputs (precomputed/<name>) are read from `data`, the directory
    audited (precomputed/, or build/<anchor>/precomputed/ for another anchor)."""
    problems = []
    for group in ("inputs", "scripts", "outputs"):
        for name, digest in manifest.get(group, {}).items():
            path = data / name.removeprefix("precomputed/") if data and group == "outputs" else root / name
            if not path.exists():
                problems.append(f"{name}: listed in the manifest ({group}) but missing")
            elif sha256(path) != digest:
                problems.append(f"{name}: stale — its sha256 differs from precomputed/MANIFEST.json ({group})")
    return problems


def audit(site: Path, data: Path, root: Path, resimulate: bool = True, anchor: Path | None = None) \
        -> dict[str, list[str]]:
    """Every check over one anchor's page (`site`) and data (`data`); `anchor` is its file (anchor-model.json by
    default)."""
    anchor = anchor or root / "anchor-model.json"
    index = site / "index.html"
    if not index.exists():
        return {"numbers": [f"{index} is missing: run `make site` first"]}
    records = load_records(data, site)
    manifest_path = data / "MANIFEST.json"
    manifest = json.loads(manifest_path.read_text(encoding="utf-8")) if manifest_path.exists() else {}
    derived, skipped = check_derived(records, root, anchor, site)
    pages = [index, *(site / name for name in READING_PAGES.values() if name != index.name)]
    missing = [f"{p} is missing: run `make site` first" for p in pages if not p.exists()]
    numbers = missing + [f"{p.name} {problem}" for p in pages if p.exists() for problem in
                         check_numbers(p.read_text(encoding="utf-8"), records, page_specs(site) if p == index else "")]
    results = {
        "numbers": numbers,
        "words": check_words(pages, cached_anchor(anchor)[0], cached_anchor(anchor)[1]["model"]["name"]["value"],
                             root),
        "embedded": check_embedded(site, data),
        "derived": derived,
        "measured": check_measured(records, manifest, root),
        "simulated": check_simulated(records, root, resimulate, anchor),
        "calibrated": check_calibrated(records, root, anchor, resimulate),
        "claims": check_claims(data, records),
        "cited": [],
        "manifest": check_manifest(manifest, root, data) if manifest else [f"{manifest_path} is missing"],
    }
    for kind, found in check_records(records).items():
        results[kind] = results[kind] + found
    results["_counts"] = {"records": len(records), "derived_not_recomputed": skipped,
                          "numbers_on_page": sum(len(page_numbers(p.read_text(encoding="utf-8"))) for p in pages
                                                 if p.exists())}
    return results


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--site", type=Path, default=None, help="default: site/, or site/<name>/ with --anchor")
    ap.add_argument("--data", type=Path, default=None,
                    help="default: precomputed/, or build/<name>/precomputed/ with --anchor")
    ap.add_argument("--root", type=Path, default=Path("."))
    ap.add_argument("--no-resimulate", action="store_true",
                    help="check simulated records' fields and seeds but do not re-run their simulations (~20 s)")
    ap.add_argument("--anchor", type=Path, default=None,
                    help="another anchor's file (anchors/<name>.json): audits its page site/<name>/ and its data")
    args = ap.parse_args(argv)
    try:
        name = check_stem(args.anchor) if args.anchor else None
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    args.site = args.site or (args.root / "site" / name if name else args.root / "site")
    args.data = args.data or (args.root / data_dir(name) if name else args.root / "precomputed")
    results = audit(args.site, args.data, args.root, resimulate=not args.no_resimulate, anchor=args.anchor)
    counts = results.pop("_counts", {})
    print(f"{'check':<10} {'result':<8} problems")
    for check in CHECKS:
        problems = results.get(check, [])
        print(f"{check:<10} {'ok' if not problems else 'FAIL':<8} {len(problems)}")
    if counts:
        print(f"({counts['numbers_on_page']} numbers on the pages, {counts['records']} provenance records, "
              f"{counts['derived_not_recomputed']} derived records checked by the tokenizer tests instead)")
    failed = [(c, p) for c in CHECKS for p in results.get(c, [])]
    for check, problem in failed[:50]:
        print(f"  {check}: {problem}")
    if len(failed) > 50:
        print(f"  … and {len(failed) - 50} more")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
