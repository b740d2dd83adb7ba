"""serving.json's `engines` block: the engine presets compared on the default sweep's workloads (DistServe goodput
per GPU, the P/D splits), the step-time fields each engine's record carries, and the chunking claims (a preset's
goodput against the lesson's whole schedule). aggregate.py calls it; compare.py prints the same table. Pure."""
from __future__ import annotations

from scripts.common.names import PRESET_LABELS, STEP_TIME_LABELS
from scripts.record import provenance as pv
from scripts.serving.labels import LABELS
from scripts.serving.sweep import workload_seed

SCRIPT = "scripts/simulate_cells.py"  # the rule entry script that simulates the cells (the records' `script`)



def simulated(rid: str, value: float, unit: str, fmt: str, label: str, cell: dict, metric: str,
              script: str = SCRIPT, **readout) -> dict:
    """A number of one simulated cell (or, with `readout`'s formula/args/key, a page readout over the sweep; with
    `interval`, the number over the sweep's replications)."""
    return pv.simulated(rid, label, value, unit, fmt, workload=cell["workload"], schedule=cell["schedule"],
                        seed=cell["seed"], requests=cell["requests"], metric=metric, script=script,
                        rate_per_gpu=cell.get("rate_per_gpu"), slo_ms=cell["slo_ms"], **readout)


CLEAR_GAIN = 1.5  # "clearly more goodput": the chunking claims' threshold (record serving.engines.clear_gain)


def engine_claims(block: dict, wid: str) -> list[dict]:
    """What the page says about the engine presets, per set of step times, as claims over their goodput records
    (settled: the page words each by whether it holds)."""
    out, says = [], LABELS["claims"]
    for step, r in block["records"].get(wid, {}).items():
        label = STEP_TIME_LABELS[step]
        out += [
            {"id": f"engines.{step}.chunking_gain", "fix": "config/workloads.json sweep",
             "says": says["chunking_gain"].format(step=label),
             "all": [[r["sarathi"], ">=", [r["orca"], CLEAR_GAIN]]]},
            {"id": f"engines.{step}.v1_keeps_gain", "fix": "config/workloads.json sweep",
             "says": says["v1_keeps_gain"].format(step=label),
             "all": [[r["vllm-v1"], ">=", [r["orca"], CLEAR_GAIN]]]},
            {"id": f"engines.{step}.pd_beats_whole", "fix": "config/workloads.json sweep",
             "says": says["pd_beats_whole"].format(step=label),
             "all": [[r["disagg"], ">", r["orca"]]]},
            {"id": f"engines.{step}.sarathi_beats_pd", "fix": "config/workloads.json sweep",
             "says": says["sarathi_beats_pd"].format(step=label),
             "all": [[r["sarathi"], ">", r["disagg"]]]}]
        splits = block.get("pd_splits", {}).get(step, {})
        if len(splits) >= 2:
            best = max(splits, key=lambda s: splits[s]["rate_per_gpu"])
            out.append({"id": f"engines.{step}.pd_split_best", "fix": "config/workloads.json sweep.pd_split_gpus",
                        "says": says["pd_split_best"].format(step=label, gpus=block["pd_splits"]["gpus"], best=best),
                        "all": [[splits[best]["record"], ">=", splits[s]["record"]] for s in splits if s != best]})
    return out


STEP_TIME_FIELDS = tuple((key, field, unit, fmt, LABELS["step_time_fields"][key]) for key, field, unit, fmt in (
    ("flops_fraction", "achieved_flops_fraction", "", "f2"),
    ("bandwidth_fraction", "achieved_bandwidth_fraction", "", "f2"),
    ("overhead_s", "iteration_overhead_s", "ms", "f1")))


def engines_block(anchor_doc: dict, settings: dict, workloads: dict, engines: list[dict], prov: dict,
                  anchor_file: str, sweep_doc: dict) -> dict:
    """Goodput per (workload, step times, engine preset) and per P/D split, each a `simulated` record (at the bound,
    the lesson's schedules point at the sweep's own goodput records); the realistic step-time factors as the anchor
    states them; which preset each of the lesson's schedules is."""
    from scripts.serving.engine import LESSON_PRESETS

    for key, field, unit, fmt, label in STEP_TIME_FIELDS:
        rid = f"serving.step_time.{key}"
        prov[rid] = pv.from_anchor(anchor_file, anchor_doc, "hardware", field, unit=unit, fmt=fmt, label=label,
                                   rid=rid, scale=1000.0 if unit == "ms" else 1.0)
    from scripts.serving.engine import vllm_v1_defaults

    budget = vllm_v1_defaults(anchor_doc["hardware"]["hbm_bytes"]["value"], anchor_doc["hardware"]["name"]["value"])[0]
    prov["serving.engines.vllm_v1_budget"] = pv.cited_record(
        "serving.engines.vllm_v1_budget", LABELS["vllm_v1_budget"], budget, "token", "int",
        work="vLLM engine arguments (vllm/engine/arg_utils.py EngineArgs._set_default_args, the v0.11 line): 8,192 "
             "for `vllm serve` on a GPU of at least 70 GiB that is not an A100, else 2,048",
        version="vLLM v0.11", locator="scripts/serving/engine/schedulers.py vllm_v1_defaults", self_reported=False)
    for key, unit, fmt in (("chunk_tokens", "token", "int"), ("block_size", "token", "int"),
                           ("gpu_memory_utilization", "", "f2")):
        rid, label = f"serving.engines.{key}", LABELS["engine_settings"][key]
        src = sweep_doc[key].get("source") or sweep_doc[key]["assumption"]
        prov[rid] = pv.assumed(rid, label, settings[key], unit, fmt, assumption=src, field=f"sweep.{key}")
    prov["serving.engines.clear_gain"] = pv.assumed(
        "serving.engines.clear_gain", LABELS["clear_gain"], CLEAR_GAIN, "×", "f1",
        assumption="the page calls one schedule's goodput clearly higher than another's from this ratio up (a "
                   "teaching threshold, not a standard; the claims engines.*.chunking_gain and *.v1_keeps_gain)")
    block = {"lesson_presets": LESSON_PRESETS, "presets": settings["presets"], "first_token": settings["first_token"],
             "preset_labels": {p: PRESET_LABELS[p] for p in settings["presets"]}, "step_times": {}, "goodput": {},
             "records": {}}
    for e in sorted(engines, key=lambda e: (list(workloads).index(e["workload"]),
                                            settings["step_times"].index(e["step_time"]))):
        wid, step = e["workload"], e["step_time"]
        block["step_times"][step] = e["efficiency"]
        base = {"workload": wid, "seed": workload_seed(settings, workloads, wid), "requests": settings["requests"],
                "slo_ms": settings["slo_ms"]}
        for preset, g in e["presets"].items():
            block["goodput"].setdefault(wid, {}).setdefault(step, {})[preset] = g["rate_per_gpu"]
            if "from_sweep" in g:  # the sweep's own record: the same simulations
                block["records"].setdefault(wid, {}).setdefault(step, {})[preset] = \
                    f"serving.{wid}.{g['from_sweep']}.goodput_rate"
                continue
            rid = f"serving.engines.{wid}.{step}.{preset}.goodput_rate"
            block["records"].setdefault(wid, {}).setdefault(step, {})[preset] = rid
            prov[rid] = engine_record(rid, g, LABELS["engine_goodput"].format(
                workload=workloads[wid]["label"], preset=PRESET_LABELS[preset], step=STEP_TIME_LABELS[step]), base,
                preset, step, None, settings)
        for split, g in e.get("pd_splits", {}).items():
            pf, dc = (int(x) for x in split.split(":"))
            rid = f"serving.pd_split.{step}.p{pf}d{dc}.goodput_rate"
            splits = block.setdefault("pd_splits", {"workload": wid, "gpus": settings["pd_split_gpus"],
                                                    "splits": {}})
            splits.setdefault(step, {})[split] = {"rate_per_gpu": g["rate_per_gpu"], "record": rid}
            for role, count in (("prefill", pf), ("decode", dc)):
                gid = f"serving.pd_split.p{pf}d{dc}.{role}_gpus"
                splits["splits"].setdefault(split, {})[role] = gid
                prov[gid] = pv.assumed(gid, LABELS["pd_split_gpus"].format(role=role), count, "GPU", "int",
                                       field="sweep.pd_split_gpus", assumption=sweep_doc["pd_split_gpus"]["assumption"])
            prov[rid] = engine_record(rid, g, LABELS["pd_split_goodput"].format(
                workload=workloads[wid]["label"], prefill=pf, decode=dc, step=STEP_TIME_LABELS[step]), base, "disagg",
                step, [pf, dc], settings)
    return block


def engine_record(rid: str, g: dict, label: str, base: dict, preset: str, step: str, split: list | None,
                  settings: dict) -> dict:
    """A goodput the audit checks by two simulations: the rate meets the attainment target and the bisection's
    last missing rate (`miss_rate`) does not."""
    return simulated(rid, g["rate_per_gpu"], "req/s per GPU", "f2", label, {**base, "schedule": preset},
                     "engine_goodput", "scripts/simulate_engines.py",
                     formula="scripts.serving.sweep:distserve_goodput",
                     args={"step_time": step, "split": split, "miss_rate": g["miss_rate"],
                           "first_token": settings["first_token"]})
