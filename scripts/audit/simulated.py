"""Audit check 4: each simulated record re-simulated as it says (seed, requests, workload, schedule, rate), its
replications and intervals, an engine preset's goodput bracketed by two simulations (report.py runs it)."""
from __future__ import annotations

from pathlib import Path

from scripts.common.display import format_number


def check_simulated(records: dict, root: Path, resimulate: bool = True, anchor_path: Path | None = None) -> list[str]:
    """Re-run every simulated number's cell (or its goodput bisection, or the page readouts over the whole sweep)
    from the committed inputs."""
    from scripts.record.anchor_file import load
    from scripts.serving import sweep
    from scripts.serving.aggregate import aggregate
    from scripts.serving.workloads.config import sweep_settings, workloads_for

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
        if rec.get("formula") == "scripts.serving.experiments.load_page:readouts":
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
    """The prefix-caching experiment's records (scripts/serving/experiments/prefix_runs.py): seed and request count as
    config/prefix.json says, and (re-simulating) each run again from config/prefix.json."""
    if not sims:
        return []
    from scripts.serving.experiments import prefix_runs
    from scripts.serving.workloads.config import sweep_doc

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
    readouts = "scripts.serving.experiments.load_page:readouts"
    if any(rec.get("formula") == readouts or rec.get("metric") == "distserve_goodput" for rec in sims.values()):
        return every
    own = {(rec.get("workload"), rec.get("schedule"), rec.get("rate_per_gpu")) for rec in sims.values()}
    return [cell for cell in every if cell in own]


def check_interval(rid: str, rec: dict, settings: dict, workloads: dict) -> list[str]:
    """A number over the sweep's replications: the seeds are the sweep's, replication 0 is the record's own value,
    and the mean and interval are what scripts/serving/measures/uncertainty.py makes of the values (re-running a further
    replication is check_replications')."""
    from scripts.serving import sweep
    from scripts.serving.measures import uncertainty

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
    from scripts.serving.workloads.config import sweep_inputs

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
