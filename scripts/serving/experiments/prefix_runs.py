"""The prefix-caching experiment (issue 42; the lab page's table): config/prefix.json's two workloads, shared
system prompts and multi-turn conversations, served by one engine preset with its prefix cache off and on
(engine/kv.py `paged` and `paged+apc`) at each of the experiment's rates, on the anchor's realistic step times.
Pure but for `load` and `build` (they read the config files); the rule script scripts/simulate_prefix.py writes
what `build` returns.

Per run: the hit rates (prompt tokens served from the cache over all prompt tokens; requests with any hit), TTFT
p50 and p99, TPOT p50, E2EL p50, vLLM's request_goodput and the attainment of the sweep's SLOs (config/workloads.json
sweep.slo_ms), the mean prefill time a hit saved, and for conversations how many turns were sent before the turn
they continue had its answer (the generator does not wait: such a turn cannot hit the answer)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from scripts.model import roofline as rl
from scripts.record import provenance as pv
from scripts.record.anchor_file import load as load_anchor
from scripts.record.inputs import InputError
from scripts.record.schema import PREFIX, read_input
from scripts.serving.engine import simulate
from scripts.serving.labels import LABELS, claim
from scripts.serving.measures import metrics
from scripts.serving.workloads.config import _check_lengths
from scripts.serving.workloads.workload import (
    conversation_draws,
    conversations,
    shared_system_prompts,
    system_prompt_draws,
)

CONFIG = "config/prefix.json"
WORDS = LABELS["prefix"]  # the prefix and admission records' labels (scripts/serving/labels.json)
SCRIPT = "scripts/simulate_prefix.py"
WORKLOADS = ("system_prompt", "multi_turn")
CACHE = {"off": False, "on": True}
METRICS = (  # metric, unit, display format, whether it has a record with the cache off (shares in percent; the
    # labels: labels.json prefix.metrics)
    ("token_hit_rate", "%", "int", False),
    ("ttft_p50_ms", "ms", "int", True),
    ("ttft_p99_ms", "ms", "int", True),
    ("request_goodput", "req/s", "f2", True),
    ("saved_prefill_ms", "ms", "int", False),
    ("late_turns", "request", "int", False),
)  # the numbers the lab shows (the rows keep the rest: request hit rate, TPOT p50, attainment): the page's data
# carries every record it shows, so one it does not show would only cost bytes
PERCENT = {"token_hit_rate", "request_hit_rate", "slo_attainment"}


def load(path: Path | str = CONFIG) -> dict:
    """config/prefix.json: schemas/prefix, then min <= max and medians within range (one line per error)."""
    doc = read_input(Path(path), PREFIX)
    name = Path(path).as_posix()

    def fail(field: str, why: str):
        raise InputError(f"{name}: field {field} {why}")

    for wid, w in doc["workloads"].items():
        for key in ("user_tokens", "output_tokens", "turns"):
            if key in w:
                _check_lengths(w[key], f"workloads.{wid}.{key}", fail)
    rates = doc["experiment"]["rates"]["value"]
    if rates != sorted(set(rates)):
        fail("experiment.rates.value", "must be increasing and distinct")
    return doc


def requests_for(doc: dict, wid: str, rate: float):
    """The run's requests (and, for conversations, each one's conversation and turn)."""
    w, e = doc["workloads"][wid], doc["experiment"]
    n, seed = e["requests"]["value"], e["seed"]["value"]
    if wid == "system_prompt":
        return shared_system_prompts(w, n, rate, seed), None, None
    return conversations(w, n, rate, seed)


def late_turns(trace, conv, turn) -> int:
    """Turns sent before the turn they continue had its last token out."""
    if conv is None:
        return 0
    finish = {(int(c), int(t)): f for c, t, f in zip(conv, turn, trace.finish_s, strict=True)}
    late = 0
    for c, t, send in zip(conv, turn, trace.requests.arrival_s, strict=True):
        before = finish.get((int(c), int(t) - 1))
        late += int(before is not None and send < before)
    return late


def run(anchor, doc: dict, wid: str, rate: float, cache: str, slo_ms: dict, gpu_name: str) -> dict:
    """One run's metrics (module docstring)."""
    reqs, conv, turn = requests_for(doc, wid, rate)
    return run_requests(anchor, doc["experiment"]["schedule"]["value"], reqs, conv, turn, cache, slo_ms, gpu_name)


def run_requests(anchor, schedule: str, reqs, conv, turn, cache: str, slo_ms: dict, gpu_name: str) -> dict:
    """run() on given requests (the browser's twin reads a run the same way: templates/serving_sim/prefix_runs.js)."""
    trace = simulate(anchor, reqs, schedule, efficiency=rl.achieved(anchor), gpu_name=gpu_name,
                     prefix_caching=CACHE[cache])
    m = metrics.from_trace(trace, slo_ms)
    prompt = reqs.prompt_tokens
    cached = trace.cached_tokens if trace.cached_tokens is not None else np.zeros(len(prompt), dtype=np.int64)
    saved = trace.prefill_saved_s if trace.prefill_saved_s is not None else np.zeros(len(prompt))
    return {"token_hit_rate": float(cached.sum() / prompt.sum()),
            "request_hit_rate": float(np.mean(cached > 0)),
            "ttft_p50_ms": m["median_ttft_ms"], "ttft_p99_ms": m["p99_ttft_ms"], "tpot_p50_ms": m["median_tpot_ms"],
            "e2el_p50_ms": m["median_e2el_ms"], "request_goodput": m["request_goodput"],
            "slo_attainment": m["slo_attainment"], "saved_prefill_ms": float(saved.mean() * 1000),
            "request_throughput": m["request_throughput"], "late_turns": late_turns(trace, conv, turn),
            "requests": len(reqs), "mean_prompt_tokens": float(prompt.mean())}


def run_all(anchor, doc: dict, slo_ms: dict, gpu_name: str) -> list[dict]:
    rows = []
    for wid in WORKLOADS:
        for rate in doc["experiment"]["rates"]["value"]:
            for cache in CACHE:
                rows.append({"workload": wid, "rate": rate, "cache": cache,
                             **run(anchor, doc, wid, rate, cache, slo_ms, gpu_name)})
    return rows


def record_id(wid: str, rate: float, cache: str, metric: str) -> str:
    return f"prefix.{wid}.r{rate:g}.{cache}.{metric}"


def records(doc: dict, rows: list[dict], slo_ms: dict, slo_assumption: str) -> dict:
    """A simulated record per shown number: its workload (prefix:<id>), schedule (+apc when cached), seed, rate;
    an assumed record per rate and SLO the table is labelled with."""
    e, out = doc["experiment"], {}
    for rate in e["rates"]["value"]:
        rid = f"prefix.rate.r{rate:g}"
        out[rid] = pv.assumed(rid, WORDS["records"]["prefix.rate"], rate, "req/s", "f1" if rate != int(rate) else "int",
                              assumption=e["rates"]["assumption"], field="experiment.rates")
    out["prefix.requests"] = pv.assumed("prefix.requests", WORDS["records"]["prefix.requests"], e["requests"]["value"],
                                        "request", "int", assumption=e["requests"]["assumption"],
                                        field="experiment.requests")
    for key in ("ttft", "tpot"):
        rid = f"prefix.slo.{key}_ms"
        label = WORDS["records"][rid]
        out[rid] = pv.assumed(rid, label, slo_ms[key], "ms", "int", assumption=slo_assumption,
                              field=f"config/workloads.json sweep.slo_ms.{key}")
    schedule = e["schedule"]["value"]
    for row in rows:
        wid, cache = row["workload"], row["cache"]
        label = doc["workloads"][wid]["label"]
        for metric, unit, fmt, when_off in METRICS:
            what = WORDS["metrics"][metric]
            if cache == "off" and not when_off:
                continue
            value = row[metric] * 100 if metric in PERCENT else row[metric]
            rid = record_id(wid, row["rate"], cache, metric)
            engine_name = schedule + "+apc" if cache == "on" else schedule
            shown = WORDS["cell"].format(workload=label, rate=f"{row['rate']:g}", state=WORDS["cache"][cache],
                                         metric=what)
            out[rid] = pv.simulated(rid, shown, value, unit,
                                    fmt, workload=f"prefix:{wid}", schedule=engine_name,
                                    seed=e["seed"]["value"], requests=e["requests"]["value"], metric=metric,
                                    script=SCRIPT, rate_per_gpu=row["rate"], slo_ms=slo_ms)
    return out


def claims(doc: dict) -> list[dict]:
    """The lab's sentences as claims over the records (scripts/record/claims.py), each recorded with whether it
    holds (the page words it so; `make audit` re-checks): the shared system prompts' token hit rate within 3% of
    its value at the lowest rate at every rate; the conversations' lower at the highest rate than 0.97 x at the
    lowest; the cache never lowering request_goodput."""
    rates = doc["experiment"]["rates"]["value"]

    def rid(wid, rate, cache, metric):
        return record_id(wid, rate, cache, metric)

    flat = []
    for r in rates[1:]:
        here, first = rid("system_prompt", r, "on", "token_hit_rate"), rid("system_prompt", rates[0], "on",
                                                                            "token_hit_rate")
        flat += [[here, ">=", [first, 0.97]], [here, "<=", [first, 1.03]]]
    out = [
        claim("prefix.system_prompt_hit_flat", flat, "config/prefix.json workloads.system_prompt"),
        claim("prefix.multi_turn_hit_falls", [[rid("multi_turn", rates[-1], "on", "token_hit_rate"), "<",
                                                [rid("multi_turn", rates[0], "on", "token_hit_rate"), 0.97]]],
              "config/prefix.json workloads.multi_turn"),
        claim("prefix.cache_never_lowers_goodput",
              [[rid(w, r, "on", "request_goodput"), ">=", rid(w, r, "off", "request_goodput")]
               for w in WORKLOADS for r in rates], "config/prefix.json experiment"),
    ]
    return out


def settle(claims_list: list[dict], records_: dict) -> list[dict]:
    from scripts.record.claims import evaluate

    return [{**c, "holds": evaluate(c, records_)[0]} for c in claims_list]


# ---- admission by request class: a burst of long prompts among chat requests (config/prefix.json admission) ------
ADMISSION = ("shared", "classes")  # one shared token budget; the long prompts' share capped (schedulers.py)
ADMISSION_METRICS = (  # metric, unit, display format (labels: labels.json prefix.admission_metrics)
    ("short_ttft_p50_ms", "ms", "int"),
    ("short_ttft_p99_ms", "ms", "int"),
    ("short_ttft_max_ms", "ms", "int"),
    ("long_ttft_p50_ms", "ms", "int"),
)


def burst_requests(doc: dict, workloads: dict):
    """The chat requests of config/workloads.json at the admission rate (the experiment's seed and count), with the
    burst's long prompts added at their landing time; returns the requests (by arrival) and which are long."""
    from scripts.serving.workloads.workload import Requests, generate

    adm, e = doc["admission"], doc["experiment"]
    wid = adm["background"]["value"]
    if wid not in workloads:
        raise InputError(f"{CONFIG}: field admission.background.value ({wid!r}) names no workload of "
                         f"config/workloads.json ({', '.join(workloads)})")
    chat = generate(workloads[wid], e["requests"]["value"], adm["rate"]["value"], e["seed"]["value"])
    b = adm["burst"]["value"]
    arrival = np.concatenate([chat.arrival_s, np.full(b["count"], float(b["at_s"]))])
    prompt = np.concatenate([chat.prompt_tokens, np.full(b["count"], b["prompt_tokens"])])
    output = np.concatenate([chat.output_tokens, np.full(b["count"], b["output_tokens"])])
    long = np.concatenate([np.zeros(len(chat), dtype=bool), np.ones(b["count"], dtype=bool)])
    order = np.argsort(arrival, kind="stable")
    return Requests(arrival[order], prompt[order], output[order]), long[order]


def admission_run(anchor, doc: dict, workloads: dict, budgeting: str, gpu_name: str) -> dict:
    reqs, long = burst_requests(doc, workloads)
    adm = doc["admission"]
    classes = (adm["threshold"]["value"], adm["long_tokens"]["value"]) if budgeting == "classes" else None
    trace = simulate(anchor, reqs, doc["experiment"]["schedule"]["value"], efficiency=rl.achieved(anchor),
                     gpu_name=gpu_name, class_budget=classes)
    ttft = (trace.first_token_s - trace.requests.arrival_s) * 1000
    short = ttft[~long]
    return {"short_ttft_p50_ms": float(np.percentile(short, 50)), "short_ttft_p99_ms": float(np.percentile(short, 99)),
            "short_ttft_max_ms": float(short.max()), "long_ttft_p50_ms": float(np.percentile(ttft[long], 50)),
            "requests": len(reqs), "long_requests": int(long.sum())}


def admission_rows(anchor, doc: dict, workloads: dict, gpu_name: str) -> list[dict]:
    return [{"budgeting": p, **admission_run(anchor, doc, workloads, p, gpu_name)} for p in ADMISSION]


def admission_records(doc: dict, rows: list[dict]) -> dict:
    """A simulated record per shown number (workload admission:<background>, schedule +classes when capped), and an
    assumed one per setting the table is labelled with."""
    adm, e, out = doc["admission"], doc["experiment"], {}
    schedule = e["schedule"]["value"]
    for key, unit in (("threshold", "token"), ("long_tokens", "token"), ("rate", "req/s")):
        rid = f"admission.{key}"
        label = WORDS["records"][rid]
        out[rid] = pv.assumed(rid, label, adm[key]["value"], unit, "int" if float(adm[key]["value"]).is_integer()
                              else "f1", assumption=adm[key]["assumption"], field=f"admission.{key}")
    for key in ("count", "prompt_tokens", "at_s"):
        rid = f"admission.burst.{key}"
        label = WORDS["records"][rid]
        out[rid] = pv.assumed(rid, label, adm["burst"]["value"][key], "s" if key == "at_s" else "token"
                              if key == "prompt_tokens" else "request", "int", assumption=adm["burst"]["assumption"],
                              field=f"admission.burst.value.{key}")
    for row in rows:
        budgeting = row["budgeting"]
        for metric, unit, fmt in ADMISSION_METRICS:
            what = WORDS["admission_metrics"][metric]
            rid = f"admission.{budgeting}.{metric}"
            shown = WORDS["admission_cell"].format(budgeting=WORDS["budgeting"][budgeting], metric=what)
            out[rid] = pv.simulated(rid, shown, row[metric], unit, fmt,
                                    workload=f"admission:{adm['background']['value']}",
                                    schedule=schedule + ("+classes" if budgeting == "classes" else ""),
                                    seed=e["seed"]["value"], requests=e["requests"]["value"], metric=metric,
                                    script=SCRIPT, rate_per_gpu=adm["rate"]["value"])
    return out


def admission_claims() -> list[dict]:
    """The lab's sentences: capping the long prompts' share cuts the short requests' TTFT p99; the long prompts pay
    for it (their TTFT p50 grows by more than a tenth) or hardly notice (within a tenth either way)."""
    return [claim("admission.classes_cut_short_p99",
                  [["admission.classes.short_ttft_p99_ms", "<", "admission.shared.short_ttft_p99_ms"]],
                  "config/prefix.json admission"),
            claim("admission.long_pay",
                  [["admission.classes.long_ttft_p50_ms", ">", ["admission.shared.long_ttft_p50_ms", 1.1]]],
                  "config/prefix.json admission"),
            claim("admission.long_about_same",
                  [["admission.classes.long_ttft_p50_ms", "<=", ["admission.shared.long_ttft_p50_ms", 1.1]],
                   ["admission.classes.long_ttft_p50_ms", ">=", ["admission.shared.long_ttft_p50_ms", 0.9]]],
                  "config/prefix.json admission")]


# ---- the lab's own runs: the same experiment simulated in the browser at any rate (site/prefix-data.js) ------------
PAGE_RATES = (0.25, 3.0, 0.25)  # the lab's rate slider: lowest, highest, step (req/s); it holds every table rate


def page_experiment(anchor, doc: dict, slo_ms: dict, gpu_name: str) -> dict:
    """What prefix-data.js carries: each workload's draws (workload.*_draws; the twin builds a run's requests from
    them at any rate, templates/serving_sim/workload.js), the engine's inputs (the anchor's roofline constants, the
    GPU, the realistic step times, vLLM's memory defaults), the SLOs, the slider's rates and the opening state. The
    browser's runs at the table's rates equal the table's records (tests/test_prefix_lab.py)."""
    from scripts.serving import twin

    e = doc["experiment"]
    n, seed = e["requests"]["value"], e["seed"]["value"]
    low, high, step = PAGE_RATES
    slider = [round(low + k * step, 6) for k in range(int(round((high - low) / step)) + 1)]
    missing = [r for r in e["rates"]["value"] if r not in slider]
    if missing:
        raise InputError(f"{CONFIG}: field experiment.rates.value: {missing} not on the lab's rate slider "
                         f"({low:g} to {high:g} req/s in steps of {step:g})")
    w = doc["workloads"]
    return {"schedule": e["schedule"]["value"], "slo_ms": slo_ms, "requests": n, "seed": seed,
            "rates": e["rates"]["value"], "slider_rates": slider,
            # the table's second rate (1 req/s as committed): busy enough that the cache shows in the tail
            "opening": {"workload": WORKLOADS[0], "rate": e["rates"]["value"][min(1, len(e["rates"]["value"]) - 1)]},
            "model": twin.model_constants(anchor), "gpu": twin.gpu_constants(anchor, gpu_name),
            "efficiency": twin.efficiency_constants(anchor)["realistic"],
            "draws": {"system_prompt": system_prompt_draws(w["system_prompt"], n, seed),
                      "multi_turn": conversation_draws(w["multi_turn"], n, seed)}}


def build(anchor_path, workloads_path, config_path) -> dict:
    """precomputed/prefix.json: the cache runs, the burst runs, their records and settled claims (rule
    simulate_prefix)."""
    from scripts.serving.workloads.config import sweep_doc

    anchor, workloads_doc, settings = sweep_doc(Path(anchor_path), Path(workloads_path))
    doc = load(config_path)
    name = Path(config_path).as_posix()
    burst = doc["admission"]["burst"]["value"]
    # a burst the anchor's context cannot hold is not run (the report says so, with both lengths): shrunk to fit,
    # the long prompts would no longer be long beside the chat prompts, and the experiment would show nothing
    runs_burst = burst["prompt_tokens"] + burst["output_tokens"] <= anchor.max_position_embeddings
    try:
        rows = run_all(anchor, doc, settings["slo_ms"], settings["gpu_name"])
        admission = admission_rows(anchor, doc, workloads_doc["workloads"], settings["gpu_name"]) if runs_burst \
            else None
    except ValueError as exc:  # the engine's own refusal (a request larger than the GPU's free memory): say where
        raise InputError(f"{name}: the simulation refused these lengths on {settings['gpu_name']}: {exc} (fields "
                         "workloads.*.*_tokens and admission.burst.value)") from None
    recs = records(doc, rows, settings["slo_ms"], workloads_doc["sweep"]["slo_ms"]["assumption"])
    recs.update(admission_records(doc, admission or []))
    if admission is None:
        anchor_doc = load_anchor(Path(anchor_path))[1]
        recs["admission.model_context"] = pv.from_anchor(Path(anchor_path).as_posix(), anchor_doc, "model",
                                                         "max_position_embeddings", unit="token", fmt="int",
                                                         label=WORDS["records"]["admission.model_context"],
                                                         rid="admission.model_context")
    page = page_experiment(anchor, doc, settings["slo_ms"], settings["gpu_name"])
    # the lab slider's opening rate, shown with two decimals as the slider shows every rate it reaches
    recs["prefix.opening.rate"] = pv.assumed(
        "prefix.opening.rate", WORDS["records"]["prefix.opening.rate"], page["opening"]["rate"], "req/s", "f2",
        assumption=doc["experiment"]["rates"]["assumption"], field="experiment.rates (the table's second rate)")
    return {"config": CONFIG, "schedule": doc["experiment"]["schedule"]["value"], "slo_ms": settings["slo_ms"],
            "workloads": {w: doc["workloads"][w]["label"] for w in WORKLOADS},
            "rates": doc["experiment"]["rates"]["value"], "rows": rows, "admission": admission,
            "claims": settle(claims(doc) + (admission_claims() if admission else []), recs), "provenance": recs,
            "page": page}
