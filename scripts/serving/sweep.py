"""The default sweep: one cell per (workload, schedule, rate per GPU), and DistServe goodput per (workload, schedule).

A cell simulates `requests` requests of one workload at one rate with one schedule; every schedule and rate of a
workload uses the workload's seed (common random numbers). Each cell is also run with `replications` - 1 further
seeds (replication r of a workload: seed + its position + r x the number of workloads), whose metrics give every
headline number a confidence interval (scripts/serving/measures/uncertainty.py); replication 0 is the cell itself, whose
requests the page shows. Pure: no I/O.
"""
from __future__ import annotations

import numpy as np

from scripts.model import roofline as rl
from scripts.model.anchor import Anchor
from scripts.serving import engine
from scripts.serving.measures import metrics, uncertainty
from scripts.serving.workloads.workload import generate

# The metrics each cell reports over its replications with an interval (the percentiles are the sweep's).
INTERVAL_METRICS = ("mean_ttft_ms", "mean_tpot_ms", "slo_attainment", "request_goodput", "request_throughput")
INTERVAL_PERCENTILE_METRICS = ("ttft", "tpot", "e2el")
INTEGER_COLUMNS = ("prompt_tokens", "output_tokens", "preemptions", "cached_tokens")  # a request's counts


def workload_seed(settings: dict, workloads: dict, wid: str, replication: int = 0) -> int:
    """The seed of a workload's requests in one replication (0: the cell the page shows)."""
    return int(settings["seed"]) + list(workloads).index(wid) + replication * len(workloads)


def replication_seeds(settings: dict, workloads: dict, wid: str, count: int) -> list[int]:
    return [workload_seed(settings, workloads, wid, r) for r in range(count)]


def interval_metrics(percentiles) -> tuple[str, ...]:
    return INTERVAL_METRICS + tuple(metrics.percentile_key(m, p) for m in INTERVAL_PERCENTILE_METRICS
                                    for p in percentiles)


def interval_values(run_metrics: dict, percentiles) -> dict:
    """The interval_metrics of one run's metrics (those it has: without an SLO, no attainment or goodput)."""
    return {k: run_metrics[k] for k in interval_metrics(percentiles) if run_metrics.get(k) is not None}


def gpus(settings: dict, schedule: str) -> int:
    return settings["prefill_gpus"] + settings["decode_gpus"] if schedule == "disagg" else 1


def simulate_cell(a: Anchor, workloads: dict, settings: dict, wid: str, schedule: str, rate_per_gpu: float,
                  efficiency: rl.Efficiency = rl.BOUND, split: tuple[int, int] | None = None, replication: int = 0):
    """The trace of one cell: the workload's requests at rate_per_gpu x (GPUs the schedule uses). `split`
    (prefill GPUs, decode GPUs) replaces the sweep's for `disagg`; `replication` picks the seed."""
    pf, dc = split or (settings["prefill_gpus"], settings["decode_gpus"])
    n_gpus = pf + dc if schedule == "disagg" else 1
    reqs = generate(workloads[wid], settings["requests"], rate_per_gpu * n_gpus,
                    workload_seed(settings, workloads, wid, replication), settings["burstiness"])
    return engine.simulate(a, reqs, schedule, chunk_tokens=settings["chunk_tokens"], prefill_gpus=pf,
                           decode_gpus=dc, first_token=settings["first_token"], efficiency=efficiency,
                           gpu_name=settings.get("gpu_name", ""),
                           memory=engine.Memory(settings["block_size"], settings["gpu_memory_utilization"]))


def requests_table(trace, detailed: bool = False) -> list[dict]:
    """One object per request, in arrival order (what `--out` holds; a cell file holds the same as columns:
    requests_columns), with where its time went (engine.PARTS, summing to its E2EL); `detailed` adds every
    inter-token gap (`itl_s`), enough to reproduce the pooled ITL percentiles exactly."""
    columns = requests_columns(trace)
    rows = [dict(zip(columns, values, strict=True)) for values in zip(*columns.values(), strict=True)]
    if detailed:
        for i, row in enumerate(rows):
            row["itl_s"] = [float(g) for g in trace.token_gaps(i)]
    return rows


def requests_columns(trace) -> dict[str, list]:
    """requests_table as columns (field -> one value per request, in arrival order; {} without requests): what a
    cell file holds. One object rather than 2,000 makes the sweep's aggregation read its 96 cells 3.5x faster."""
    r = trace.requests
    if not len(r):
        return {}
    columns = {"arrival_s": r.arrival_s, "first_token_s": trace.first_token_s, "finish_s": trace.finish_s,
               "prompt_tokens": r.prompt_tokens, "output_tokens": r.output_tokens, "preemptions": trace.preemptions,
               **{part: trace.breakdown[part] for part in engine.PARTS}}
    if trace.cached_tokens is not None:  # prefix caching: the prompt tokens served from the cache, what they saved
        columns.update(cached_tokens=trace.cached_tokens, prefill_saved_s=trace.prefill_saved_s)
    return {name: (np.asarray(values, dtype=np.int64) if name in INTEGER_COLUMNS else
                   np.asarray(values, dtype=float)).tolist() for name, values in columns.items()}  # int()/float()


def tail_breakdown(trace, percentile: float = 99.0) -> dict:
    """Where time went, in mean seconds per request, for all requests and for the tail (E2EL at or above its
    `percentile`): the parts of engine.PARTS, which sum to each group's mean E2EL."""
    e2el = metrics.latencies(trace)[1]
    tail = e2el >= np.percentile(e2el, percentile)
    return {"percentile": percentile, "tail_requests": int(tail.sum()),
            "all": {p: float(trace.breakdown[p].mean()) for p in engine.PARTS},
            "tail": {p: float(trace.breakdown[p][tail].mean()) for p in engine.PARTS}}


def replication_metrics(trace, slo_ms: dict | None, percentiles) -> dict:
    """interval_metrics of one replication's trace (vLLM's definitions; the pooled ITL, which no interval needs,
    is left out; without an SLO, attainment and goodput too)."""
    r = trace.requests
    ttft, e2el = metrics.latencies(trace)
    return interval_values(metrics.compute(ttft, e2el, [], r.prompt_tokens, r.output_tokens,
                                           float(trace.finish_s.max()), slo_ms, percentiles), percentiles)


def run_cell(a: Anchor, workloads: dict, settings: dict, wid: str, schedule: str, rate_per_gpu: float,
             replications: int | None = None) -> dict:
    """One cell: replication 0 in full (metrics, tail breakdown, every request), and `replications` (default: the
    sweep's) in all: each one's interval_metrics, their intervals, and each replication's SLO attainment (the
    goodput search of that replication starts from them)."""
    trace = simulate_cell(a, workloads, settings, wid, schedule, rate_per_gpu)
    cell = {"workload": wid, "schedule": schedule, "rate_per_gpu": rate_per_gpu,
            "rate": rate_per_gpu * gpus(settings, schedule), "gpus": gpus(settings, schedule),
            "seed": workload_seed(settings, workloads, wid), "requests": settings["requests"],
            "slo_ms": settings["slo_ms"],
            "metrics": metrics.from_trace(trace, settings["slo_ms"], settings["percentiles"]),
            "breakdown": tail_breakdown(trace), "per_request": requests_columns(trace),
            "memory": {"capacity_bytes": trace.capacity_bytes, "peak_bytes": trace.peak_reserved_bytes,
                       "prefill_held_peak_bytes": trace.prefill_held_peak_bytes}}
    count = settings["replications"] if replications is None else replications
    slo, pct = settings["slo_ms"], settings["percentiles"]
    runs = [interval_values(cell["metrics"], pct)]
    runs += [replication_metrics(simulate_cell(a, workloads, settings, wid, schedule, rate_per_gpu, replication=r),
                                 slo, pct) for r in range(1, count)]
    cell["replications"] = replication_block(runs, replication_seeds(settings, workloads, wid, count),
                                             settings["confidence"])
    return cell


def replication_block(runs: list[dict], seeds: list[int], confidence: float) -> dict:
    """Per metric (those of the first run), its value in each replication and the interval over them."""
    values = {k: [run[k] for run in runs] for k in runs[0]}
    return {"seeds": seeds, "values": values,
            "intervals": {k: uncertainty.interval(v, confidence) for k, v in values.items()}}


def per_request_metrics(cell: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """TTFT, TPOT (vLLM's all_tpots) and E2EL in seconds, from a cell's own per-request columns."""
    columns = cell["per_request"]
    arrival = np.array(columns["arrival_s"], dtype=float)
    ttft = np.array(columns["first_token_s"], dtype=float) - arrival
    e2el = np.array(columns["finish_s"], dtype=float) - arrival
    return ttft, metrics.per_request_tpot(ttft, e2el, np.array(columns["output_tokens"])), e2el


def attainment(a: Anchor, workloads: dict, settings: dict, wid: str, schedule: str, rate: float,
               efficiency: rl.Efficiency = rl.BOUND, split: tuple[int, int] | None = None,
               replication: int = 0) -> float:
    """SLO attainment of one run (vLLM's rule: TTFT and per-request TPOT within the sweep's targets)."""
    return slo_attainment(run_latencies(a, workloads, settings, wid, schedule, rate, efficiency, split, replication),
                          settings["slo_ms"])


def run_latencies(a: Anchor, workloads: dict, settings: dict, wid: str, schedule: str, rate: float,
                  efficiency: rl.Efficiency = rl.BOUND, split: tuple[int, int] | None = None,
                  replication: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per request TTFT, TPOT (per request, as vLLM) and E2EL in seconds of one run (simulate_cell)."""
    trace = simulate_cell(a, workloads, settings, wid, schedule, rate, efficiency, split, replication)
    ttft, e2el = metrics.latencies(trace)
    return ttft, metrics.per_request_tpot(ttft, e2el, trace.requests.output_tokens), e2el


def slo_attainment(latencies: tuple[np.ndarray, np.ndarray, np.ndarray], slo_ms: dict) -> float:
    """The share of requests whose TTFT and TPOT (and E2EL, where targeted) meet `slo_ms`."""
    ttft, tpot, e2el = latencies
    return float(metrics.meets_slo(ttft, tpot, e2el, slo_ms).mean())


def goodput_search(attainment_at, rates: list[float], target: float, steps: int) -> dict:
    """DistServe goodput per GPU: the swept rates in increasing order up to the first whose SLO attainment misses
    `target`, then `steps` bisections between the last rate that met it (0 when none did) and that one. The one
    goodput of the kit (page, table, claims): attainment falls with load, so the first miss bounds the answer
    (every sweep of the lesson's workloads is monotone). `attainment_at(rate)` gives a rate's attainment.
    `miss_rate`: the lowest rate found to miss the target (the bracket's upper end; None when none missed)."""
    lo, hi = 0.0, None
    for r in sorted(rates):
        if attainment_at(r) < target:
            hi = r
            break
        lo = r
    if hi is None:
        return {"rate_per_gpu": lo, "bounded_by_sweep": True, "probes": [], "miss_rate": None}
    probes = []
    for _ in range(steps):
        mid = (lo + hi) / 2
        att = attainment_at(mid)
        probes.append({"rate_per_gpu": mid, "slo_attainment": att})
        lo, hi = (mid, hi) if att >= target else (lo, mid)
    return {"rate_per_gpu": lo, "bounded_by_sweep": False, "probes": probes, "miss_rate": hi}


def distserve_goodput(a: Anchor, workloads: dict, settings: dict, wid: str, schedule: str,
                      swept: dict[float, float], efficiency: rl.Efficiency = rl.BOUND,
                      split: tuple[int, int] | None = None, replication: int = 0) -> dict:
    """goodput_search over the sweep's rates, reading a swept rate's attainment from `swept` where given (the sweep's
    cells) and simulating any other."""
    def attainment_at(rate: float) -> float:
        if rate in swept:
            return swept[rate]
        return attainment(a, workloads, settings, wid, schedule, rate, efficiency, split, replication)
    return goodput_search(attainment_at, settings["rates_per_gpu"], settings["attainment_target"],
                          settings["bisection_steps"])


def goodput_of(a: Anchor, workloads: dict, settings: dict, wid: str, schedule: str, cells: list[dict]) -> dict:
    """DistServe goodput of one (workload, schedule) from its sweep cells (plus bisection runs)."""
    mine = [c for c in cells if c["workload"] == wid and c["schedule"] == schedule]
    swept = {c["rate_per_gpu"]: c["metrics"]["slo_attainment"] for c in mine}
    out = {"workload": wid, "schedule": schedule, **distserve_goodput(a, workloads, settings, wid, schedule, swept)}
    rates = [out["rate_per_gpu"]]
    for r in range(1, settings["replications"]):
        swept_r = {c["rate_per_gpu"]: c["replications"]["values"]["slo_attainment"][r] for c in mine}
        rates.append(distserve_goodput(a, workloads, settings, wid, schedule, swept_r, replication=r)["rate_per_gpu"])
    out["replications"] = {"seeds": replication_seeds(settings, workloads, wid, settings["replications"]),
                           "rates_per_gpu": rates, "interval": uncertainty.interval(rates, settings["confidence"])}
    return out


def page_states(workloads_doc: dict, settings: dict) -> tuple[dict, dict[str, dict]]:
    """The page's opening state (workload, rate and targets) and each "try this" step's state: the opening with
    the step's changes. Read by the goodput rule (the searches to probe) and aggregate.add_page_opening (the
    records): one construction for both."""
    page = workloads_doc["page"]
    opening = {"workload": page["workload"]["value"], "request_rate": page["request_rate"]["value"],
               "ttft_slo_ms": settings["slo_ms"]["ttft"], "load_tpot_slo_ms": settings["slo_ms"]["tpot"],
               "attainment_target": settings["attainment_target"]}
    return opening, {tid: {**opening, **step} for tid, step in page["try"]["value"].items()}


def search_of(state: dict) -> dict:
    """A page state's goodput search: its workload and targets."""
    return {"workload": state["workload"], "slo_ms": {"ttft": state["ttft_slo_ms"], "tpot": state["load_tpot_slo_ms"]},
            "attainment_target": state["attainment_target"]}


def page_searches(workloads_doc: dict, settings: dict) -> list[dict]:
    """The goodput searches the page's opening and its "try this" steps show."""
    opening, steps = page_states(workloads_doc, settings)
    return [search_of(opening), *(search_of(state) for state in steps.values())]


def page_search_probes(a: Anchor, workloads: dict, settings: dict, wid: str, schedule: str, cells: list[dict],
                       searches: list[dict]) -> list[dict]:
    """For each of `searches` (page_searches) on workload `wid`: the goodput search of `schedule` under its targets,
    over the cells' own per-request latencies and simulations between the swept rates. The page's search for the
    same targets visits the same rates; its build (aggregate.add_page_opening) reads these probes rather than
    simulating them again, here where the curves run in parallel, not in the one job that gathers them."""
    latencies = {c["rate_per_gpu"]: per_request_metrics(c) for c in cells
                 if c["workload"] == wid and c["schedule"] == schedule}
    out = []
    for search in searches:
        if search["workload"] != wid:
            continue
        at = {**settings, "slo_ms": search["slo_ms"]}

        def attainment_at(rate: float, at=at) -> float:
            if rate in latencies:
                return slo_attainment(latencies[rate], at["slo_ms"])
            return attainment(a, workloads, at, wid, schedule, rate)
        found = goodput_search(attainment_at, settings["rates_per_gpu"], search["attainment_target"],
                               settings["bisection_steps"])
        out.append({**search, "probes": found["probes"]})
    return out


def engines_goodput(a: Anchor, workloads: dict, settings: dict, wid: str, step_time: str,
                    lesson_goodput: dict[str, float] | None = None) -> dict:
    """DistServe goodput of every engine preset (settings["presets"]) for one workload at one set of step times
    (`bound` or the anchor's `realistic`), and, for the page's workload, of every P/D split of
    settings["pd_split_gpus"] GPUs. `lesson_goodput` (schedule -> rate): the sweep's own goodput of the lesson's
    schedules, the same simulations at the bound, reused rather than rerun."""
    eff = rl.BOUND if step_time == "bound" else rl.achieved(a)
    lesson = {preset: name for name, preset in engine.LESSON_PRESETS.items()}
    out = {"workload": wid, "step_time": step_time, "efficiency": eff.__dict__, "presets": {}}
    for preset in settings["presets"]:
        if lesson_goodput is not None and preset in lesson and lesson[preset] in lesson_goodput:
            out["presets"][preset] = {"rate_per_gpu": lesson_goodput[lesson[preset]], "from_sweep": lesson[preset]}
            continue
        out["presets"][preset] = distserve_goodput(a, workloads, settings, wid, preset, {}, eff)
    if wid == settings.get("page_workload"):
        total = settings["pd_split_gpus"]
        out["pd_splits"] = {f"{p}:{total - p}": distserve_goodput(a, workloads, settings, wid, "disagg", {}, eff,
                                                                   (p, total - p)) for p in range(1, total)}
    return out
