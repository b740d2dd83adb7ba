"""Fixtures that hold the browser's simulator (templates/serving_sim/) to scripts/serving/engine/: generated
configurations, each with what the Python engine gives for it. Pure: no I/O (tests/test_sim_parity.py writes them
and runs them in Chromium).

A configuration: GPU (config/gpus.json), workload, rate per GPU, schedule or engine preset, chunk and token budgets,
P/D split and first-token convention, paged memory (and small pools, so that preemption and backpressure happen),
step times (bound or the anchor's realistic set). The answer: every request's admission, first-token and finish
times, preemptions and time breakdown, and the cell summary the page reads (quantised TTFT/TPOT, the tail
breakdown, the under-load readouts). A configuration simulate() refuses keeps its error: the twin must refuse too.
"""
from __future__ import annotations

import numpy as np

from scripts.common.names import TAIL_PARTS
from scripts.model import roofline as rl
from scripts.model.anchor import Anchor
from scripts.serving import aggregate, engine, sweep, twin
from scripts.serving.experiments import load_page
from scripts.serving.measures import metrics
from scripts.serving.workloads.workload import Requests, generate

STEP_TIMES = ("bound", "realistic")


def summary(trace, quantum_ms: float, slo_ms: dict) -> dict:
    """What the page reads of one run (load_page.cell_readouts over aggregate.quantize_ms, the tail breakdown)."""
    ttft, e2el = (np.asarray(x) for x in metrics.latencies(trace))
    tpot = metrics.per_request_tpot(ttft, e2el, trace.requests.output_tokens)
    ttft_u, tpot_u = aggregate.quantize_ms(ttft), aggregate.quantize_ms(tpot)
    duration = float(trace.finish_s.max())
    tail = sweep.tail_breakdown(trace)["tail"]
    return {"ttft": ttft_u, "tpot": tpot_u, "duration_s": duration,
            "tail_ms": {p: round(tail[f"{p}_s"] * 1000, 1) for p in TAIL_PARTS},
            "readouts": load_page.cell_readouts(ttft_u, tpot_u, quantum_ms, duration, slo_ms["ttft"], slo_ms["tpot"])}


def fixture_configs(count: int, seed: int, gpu_ids: list[str], workload_ids: list[str]) -> list[dict]:
    """`count` configurations drawn so that every schedule and preset, both step-time sets, P/D splits up to 3:3, both
    first-token conventions and paged memory on the lesson's schedules all occur (the first ones cycle through the
    schedules so each appears)."""
    rng = np.random.default_rng(seed)
    kinds = list(dict.fromkeys(list(engine.LESSON_PRESETS) + list(engine.LESSON_PRESETS.values())
                               + list(engine.PAGED_PRESETS)))
    out = []
    for k in range(count):
        schedule = kinds[k % len(kinds)] if k < 2 * len(kinds) else kinds[int(rng.integers(len(kinds)))]
        c = {"id": f"fixture-{k:02d}", "gpu": gpu_ids[int(rng.integers(len(gpu_ids)))],
             "workload": workload_ids[int(rng.integers(len(workload_ids)))], "schedule": schedule,
             "rate_per_gpu": float(rng.choice([0.5, 1.0, 2.0, 3.0, 4.0, 5.5, 7.0, 9.0, 12.0])),
             "requests": int(rng.choice([200, 400, 800])), "seed": int(rng.integers(1, 1 << 30)),
             "step_time": STEP_TIMES[int(rng.integers(2))], "opts": {}}
        o = c["opts"]
        if schedule in ("chunked", "sarathi"):
            o["chunk_tokens"] = int(rng.choice([64, 256, 512, 2048, 8192]))
        if schedule == "vllm-v1" and rng.random() < 0.6:
            o["max_num_batched_tokens"] = int(rng.choice([512, 1024, 2048, 8192]))
        if schedule in ("disagg",):
            o["prefill_gpus"], o["decode_gpus"] = int(rng.integers(1, 4)), int(rng.integers(1, 4))
            o["first_token"] = engine.FIRST_TOKEN[int(rng.integers(2))]
        if schedule not in engine.PAGED_PRESETS and rng.random() < 0.3:
            o["paged"] = True
        if rng.random() < 0.25:  # small pools: preemption and backpressure happen
            o["memory"] = {"block_size": int(rng.choice([16, 32])),
                           "gpu_memory_utilization": float(rng.choice([0.5, 0.6]))}
        out.append(c)
    return out


def requests_of(c: dict, workloads: dict) -> Requests:
    gpus = c["opts"].get("prefill_gpus", 1) + c["opts"].get("decode_gpus", 1) if c["schedule"] == "disagg" else 1
    return generate(workloads[c["workload"]], c["requests"], c["rate_per_gpu"] * gpus, c["seed"])


def expected(a: Anchor, gpus: dict, workloads: dict, c: dict, quantum_ms: float, slo_ms: dict) -> dict:
    """The Python engine's answer for one configuration (raises as simulate() does for an impossible one)."""
    gpu = gpus[c["gpu"]]
    on = twin.on_gpu(a, gpu)
    o = dict(c["opts"])
    if "memory" in o:
        o["memory"] = engine.Memory(**o["memory"])
    eff = rl.BOUND if c["step_time"] == "bound" else rl.achieved(a)
    trace = engine.simulate(on, requests_of(c, workloads), c["schedule"], efficiency=eff, gpu_name=gpu["label"], **o)
    return {"admitted_s": trace.admitted_s.tolist(), "first_token_s": trace.first_token_s.tolist(),
            "finish_s": trace.finish_s.tolist(), "preemptions": trace.preemptions.tolist(),
            "breakdown": {p: trace.breakdown[p].tolist() for p in engine.PARTS},
            "prefill_held_peak_bytes": trace.prefill_held_peak_bytes, "capacity_bytes": trace.capacity_bytes,
            **summary(trace, quantum_ms, slo_ms)}


def fixtures(a: Anchor, gpus: dict, workloads: dict, count: int, seed: int, quantum_ms: float, slo_ms: dict) -> dict:
    """Everything the browser needs to rerun the configurations, and the Python's answers; a configuration that
    simulate() refuses (a request too big for the GPU's memory) is kept with its error, which the twin must raise
    too."""
    cases = []
    for c in fixture_configs(count, seed, list(gpus), list(workloads)):
        case = {**c, "trace": twin.workload_trace(workloads[c["workload"]], c["requests"], c["seed"])}
        try:
            case["expected"] = expected(a, gpus, workloads, c, quantum_ms, slo_ms)
        except ValueError as err:
            case["error"] = str(err)
        cases.append(case)
    return {"model": twin.model_constants(a), "efficiency": twin.efficiency_constants(a), "quantum_ms": quantum_ms,
            "slo_ms": slo_ms, "tail_parts": list(TAIL_PARTS),
            "gpus": {gid: twin.gpu_constants(twin.on_gpu(a, g), g["label"]) for gid, g in gpus.items()}, "cases": cases}


PREFIX_KINDS = ("vllm-v1", "vllm-v0", "sarathi", "orca", "llama.cpp")  # the last three: paged, paged, slots


def _prefix_case(a: Anchor, gpus: dict, case: dict, reqs: Requests, refusable: bool) -> dict:
    """One prefix-caching configuration with its requests and the Python engine's answer (or, `refusable`, the
    error simulate() refused it with)."""
    case["requests"] = {"arrival_s": reqs.arrival_s.tolist(), "prompt_tokens": reqs.prompt_tokens.tolist(),
                        "output_tokens": reqs.output_tokens.tolist(),
                        "segments": [[list(s) for s in segs] for segs in reqs.segments],
                        "answer_ids": list(reqs.answer_ids) if reqs.answer_ids else None}
    gpu = gpus[case["gpu"]]
    eff = rl.BOUND if case["step_time"] == "bound" else rl.achieved(a)
    try:
        t = engine.simulate(twin.on_gpu(a, gpu), reqs, case["schedule"], efficiency=eff, gpu_name=gpu["label"],
                            **case["opts"])
    except ValueError as err:
        if not refusable:
            raise
        case["error"] = str(err)
        return case
    case["expected"] = {"admitted_s": t.admitted_s.tolist(), "first_token_s": t.first_token_s.tolist(),
                        "finish_s": t.finish_s.tolist(), "preemptions": t.preemptions.tolist(),
                        "cached_tokens": t.cached_tokens.tolist(), "prefill_saved_s": t.prefill_saved_s.tolist()}
    return case


def prefix_fixtures(a: Anchor, gpus: dict, prefix_doc: dict, count: int, seed: int) -> dict:
    """Configurations with prefix caching on (engine/kv.py paged+apc and reserved+slots): config/prefix.json's two
    workloads at generated rates and sizes, every paged preset and the lesson's schedules on paged memory, llama.cpp
    with its slots, small pools (evictions and preemptions), both step-time sets, and admission by request class
    (schedulers.py class_budget) on the budgeted schedules. Each carries its requests
    (arrivals, lengths, segments, answer ids) and the Python engine's per-request answer."""
    from scripts.serving.workloads.workload import conversations, shared_system_prompts

    rng = np.random.default_rng(seed)
    cases = []
    for k in range(count):
        kind = PREFIX_KINDS[k % len(PREFIX_KINDS)]
        wid = ("system_prompt", "multi_turn")[int(rng.integers(2))]
        gid = list(gpus)[int(rng.integers(len(gpus)))]
        n, rate = int(rng.choice([120, 240])), float(rng.choice([0.5, 1.0, 2.0, 4.0]))
        rseed = int(rng.integers(1, 1 << 30))
        spec = prefix_doc["workloads"][wid]
        reqs = shared_system_prompts(spec, n, rate, rseed) if wid == "system_prompt" else \
            conversations(spec, n, rate, rseed)[0]
        o = {"prefix_caching": True}
        if kind in ("sarathi", "orca"):
            o["paged"] = True
        if kind == "llama.cpp":
            o["max_batch"], o["max_num_batched_tokens"] = int(rng.choice([2, 4, 8])), int(rng.choice([512, 2048]))
        if kind != "llama.cpp" and rng.random() < 0.5:  # a small pool: evictions, and preemption with its blocks
            o["capacity_bytes"] = float(rng.choice([2e9, 4e9, 8e9]))
        if kind in ("vllm-v1", "sarathi", "llama.cpp") and rng.random() < 0.6:  # admission by request class
            o["class_budget"] = [int(rng.choice([2048, 4096, 6000])), int(rng.choice([64, 256]))]
        case = {"id": f"prefix-{k:02d}", "gpu": gid, "workload": wid, "schedule": kind,
                "step_time": STEP_TIMES[int(rng.integers(2))], "opts": o}
        cases.append(_prefix_case(a, gpus, case, reqs, refusable=True))
    for k, kind in enumerate(("vllm-v1", "sarathi", "llama.cpp")):  # a burst of long prompts that memory holds back
        n_short, n_long = 80, 8
        arrival = np.concatenate([np.sort(rng.uniform(0, 40, n_short)), np.full(n_long, 10.0)])
        prompt = np.concatenate([rng.integers(100, 900, n_short), np.full(n_long, 24576)])
        order = np.argsort(arrival, kind="stable")
        reqs = Requests(arrival[order], prompt[order], rng.integers(8, 200, n_short + n_long)[order],
                        tuple(((7000 + int(i), int(p)),) for i, p in zip(order, prompt[order], strict=True)))
        o = {"prefix_caching": True, "class_budget": [8192, 256], "capacity_bytes": 6e9}  # three long ones fit
        if kind == "llama.cpp":
            o["max_batch"], o["max_num_batched_tokens"] = 8, 2048
        else:
            o["paged"] = True
        case = {"id": f"burst-{k}", "gpu": list(gpus)[0], "workload": "burst", "schedule": kind,
                "step_time": "realistic", "opts": o}
        cases.append(_prefix_case(a, gpus, case, reqs, refusable=False))
    return {"model": twin.model_constants(a), "efficiency": twin.efficiency_constants(a),
            "gpus": {gid: twin.gpu_constants(twin.on_gpu(a, g), g["label"]) for gid, g in gpus.items()}, "cases": cases}
