"""The frontier experiment's technique switches (issue 40): config/techniques.json and the GPU table become the
settings lesson.js computes from, one provenance record per number the page shows at its default state, and the
claims its sentences are worded by, settled on every GPU of the switch (scripts/model/techniques.py does the math).
"""
from __future__ import annotations

import math

from scripts.lesson.labels import LABELS
from scripts.model import sizes
from scripts.model import techniques as tq
from scripts.model.features import features
from scripts.record.provenance import assumed, cited_record, from_formula

TECHNIQUES = "config/techniques.json"
# The words of the switch's records and claims (scripts/lesson/labels.json "techniques"), by id.
WORDS = LABELS["techniques"]
# The switch, in the page's order: the baseline first (paged KV, bf16 weights and KV, no speculation).
ORDER = ("baseline", "weights_fp8", "weights_int4", "kv_fp8", "speculative", "reserved")
NAMES = {"ttft_s": ("s", "f2"), "tpot_b1_ms": ("ms", "f1"), "max_batch": ("request", "int"),
         "slo_batch": ("request", "int"), "slo_throughput_tok_s": ("tok/s", "int"),
         "slo_per_user_tok_s": ("tok/s", "int"), "cap_throughput_tok_s": ("tok/s", "int")}
# What each claim compares, per GPU at the default state: (technique, readout, op, technique, readout).
CLAIMS = {
    "weights_move_frontier": (WORDS["claims"]["weights_move_frontier"],
                              [(t, n, op, "baseline", n) for t in ("weights_fp8", "weights_int4")
                               for n, op in (("tpot_b1_ms", "<"), ("max_batch", ">"), ("slo_throughput_tok_s", ">"))]),
    "fp8_prefills_int4_decodes": (WORDS["claims"]["fp8_prefills_int4_decodes"],
                                  [("weights_fp8", "ttft_s", "<", "weights_int4", "ttft_s"),
                                   ("weights_int4", "tpot_b1_ms", "<", "weights_fp8", "tpot_b1_ms")]),
    "kv_fp8_fits_more": (WORDS["claims"]["kv_fp8_fits_more"],
                         [("kv_fp8", "max_batch", ">", "baseline", "max_batch"),
                          ("kv_fp8", "tpot_b1_ms", "<=", "baseline", "tpot_b1_ms")]),
    "spec_helps_lone_user": (WORDS["claims"]["spec_helps_lone_user"],
                             [("speculative", "tpot_b1_ms", "<", "baseline", "tpot_b1_ms")]),
    "spec_helps_full_machine": (WORDS["claims"]["spec_helps_full_machine"],
                                [("speculative", "cap_throughput_tok_s", ">", "baseline", "cap_throughput_tok_s")]),
    "spec_costs_ttft": (WORDS["claims"]["spec_costs_ttft"],
                        [("speculative", "ttft_s", ">", "baseline", "ttft_s")]),
    "paging_reaches_further": (WORDS["claims"]["paging_reaches_further"],
                               [("reserved", "max_batch", "<", "baseline", "max_batch")]),
}


def reserve_tokens(doc: dict, workloads: dict, max_context: int) -> int:
    """What a request reserves without paging: its workload's longest prompt plus longest output (at most the
    model's context)."""
    w = workloads["workloads"][doc["reserved"]["reserve_from_workload"]["value"]]
    return min(max_context, w["prompt_tokens"]["max"] + w["output_tokens"]["max"])


def settings(doc: dict, reserve: int) -> dict[str, dict]:
    """Each technique's scripts/model/techniques.Technique fields, the speculation at its default k and a."""
    w, s = doc["weights"], doc["speculative"]
    return {
        "baseline": {},
        "weights_fp8": {"weight_bytes": w["fp8"]["bytes_per_weight"]["value"],
                        "fp8_compute": w["fp8"]["fp8_compute"]["value"]},
        "weights_int4": {"weight_bytes": w["int4"]["bytes_per_weight"]["value"],
                         "fp8_compute": w["int4"]["fp8_compute"]["value"]},
        "kv_fp8": {"kv_bytes": doc["kv"]["fp8"]["bytes_per_element"]["value"]},
        "speculative": {"draft_tokens": s["draft_tokens"]["value"], "acceptance": s["acceptance"]["value"],
                        "draft_cost": s["draft_cost"]["value"]},
        "reserved": {"reserve_tokens": reserve},
    }


def labels(doc: dict, a) -> dict[str, str]:
    """Each technique's name on the page; the baseline names the model's own format where its experts ship
    narrower than bf16 (gpt-oss's MXFP4)."""
    return {"baseline": WORDS["baseline_own_format" if sizes.experts_in_own_format(a) else "baseline"],
            "weights_fp8": doc["weights"]["fp8"]["label"],
            "weights_int4": doc["weights"]["int4"]["label"], "kv_fp8": doc["kv"]["fp8"]["label"],
            "speculative": doc["speculative"]["label"], "reserved": doc["reserved"]["label"]}


def gpu_args(choice: dict) -> dict:
    c = choice["constants"]
    return {"hbm_bytes": c["hbm_bytes"], "hbm_bandwidth_bytes_per_s": c["hbm_bandwidth_bytes_per_s"],
            "peak_bf16_flops": c["peak_bf16_flops"], "peak_fp8_flops": c.get("peak_fp8_flops")}


def setting_records(doc: dict, reserve: int, workloads_file: str = "config/workloads.json") -> list[dict]:
    """The settings the page names, each cited or assumed as config/techniques.json says."""
    def one(rid, entry, field, unit, fmt, key="value", label=None):
        label = label or WORDS["settings"][rid]
        if "source" in entry:
            return cited_record(rid, label, entry[key], unit, fmt, work=entry["source"],
                                version=f"as recorded in {TECHNIQUES}", locator=f"{TECHNIQUES} {field}",
                                self_reported=False, field=field)
        return assumed(rid, label, entry[key], unit, fmt, assumption=entry["assumption"], field=field)

    w, s = doc["weights"], doc["speculative"]
    wid = doc["reserved"]["reserve_from_workload"]["value"]
    out = [one("technique.fp8.bytes_per_weight", w["fp8"]["bytes_per_weight"], "weights.fp8.bytes_per_weight", "B",
               "f1"),
           one("technique.int4.bytes_per_weight", w["int4"]["bytes_per_weight"], "weights.int4.bytes_per_weight", "B",
               "f2"),
           one("technique.kv_fp8.bytes_per_element", doc["kv"]["fp8"]["bytes_per_element"], "kv.fp8.bytes_per_element",
               "B", "f1"),
           one("technique.draft_cost_pct", {**s["draft_cost"], "value": s["draft_cost"]["value"] * 100},
               "speculative.draft_cost", "%", "int")]
    for name in ("draft_tokens", "acceptance"):
        fmt, label = ("int" if name == "draft_tokens" else "f2"), WORDS["settings"][f"technique.{name}"]
        out += [one(f"technique.{name}", s[name], f"speculative.{name}", "token" if fmt == "int" else "", fmt)] + [
            one(f"technique.{name}.{k}", s[name], f"speculative.{name}.{k}", "token" if fmt == "int" else "", fmt,
                key=k, label=WORDS["bound"][k].format(label=label)) for k in ("min", "max")]
    out.append(cited_record("technique.reserve_tokens", WORDS["settings"]["technique.reserve_tokens"], reserve,
                            "token", "int", work=doc["reserved"]["reserve_from_workload"]["source"],
                            version=f"as recorded in {workloads_file}",
                            locator=f"{workloads_file} workloads.{wid}.prompt_tokens.max + output_tokens.max",
                            self_reported=False, field="reserved.reserve_from_workload"))
    return out


def kept_in_bf16(a, doc: dict) -> str:
    """The caption's list of tensors a recipe leaves in bf16: the parts of weights.keep_bf16 this anchor has (a part
    with `when` only where the model has that feature: no DeltaNet convolution on a dense model)."""
    has = features(a)
    return "、".join(p["part"] for p in doc["weights"]["keep_bf16"]["value"] if "when" not in p or p["when"] in has)


def build(a, paths: dict, doc: dict, workloads: dict, gpus: list[dict], state: dict) -> tuple[dict, list, list]:
    """(the page's technique data, the records, the settled claims). `state`: the default context, prompt and TPOT
    target; `gpus`: precomputed.gpu_choices' list (the default first-class, every one checked for the claims)."""
    reserve = reserve_tokens(doc, workloads, a.max_position_embeddings)
    techs = settings(doc, reserve)
    records = setting_records(doc, reserve)
    default = next(g for g in gpus if g["default"])
    args = {"context": state["context"], "prompt": state["prompt"], "tpot_slo_ms": state["tpot_slo_ms"]}

    def rec(rid, fn_args, name, label):
        unit, fmt = NAMES[name]
        records.append(from_formula(a, paths, rid, tq.readouts, fn_args, unit=unit, fmt=fmt, label=label, key=name))

    names = labels(doc, a)
    for tid in ORDER:  # the live table's default state: each cell's record, and its change over the baseline
        for name, label in WORDS["readouts"].items():
            cell = {"technique": techs[tid], "gpu": gpu_args(default), **args}
            rec(f"readout.technique.{tid}.{name}", cell, name, f"{names[tid]}:{label}")
            ratio = from_formula(a, paths, f"readout.technique.{tid}.{name}_vs_base", tq.change,
                                 {**cell, "baseline": techs["baseline"], "name": name}, unit="×", fmt="f2",
                                 label=WORDS["relative"].format(technique=names[tid], readout=label))
            if tid != "baseline" and not math.isnan(ratio["value"]):  # no ratio to a zero: the page shows a dash
                records.append(ratio)
    claims = []
    used = sorted({n for _, comparisons in CLAIMS.values() for c in comparisons for n in (c[1], c[4])})
    for g in gpus:  # every GPU of the switch, at the default state: the numbers the claims compare
        for tid in ORDER:
            for name in used:
                rec(f"technique.{g['id']}.{tid}.{name}", {"technique": techs[tid], "gpu": gpu_args(g), **args}, name,
                    f"{g['label']}、{names[tid]}:{WORDS['readouts'][name]}")
        for cid, (says, comparisons) in CLAIMS.items():
            claims.append({"id": f"technique.{g['id']}.{cid}", "says": f"{g['label']}:{says}",
                           "all": [[f"technique.{g['id']}.{t1}.{n1}", op, f"technique.{g['id']}.{t2}.{n2}"]
                                   for t1, n1, op, t2, n2 in comparisons],
                           "fix": f"{TECHNIQUES} (or config/gpus.json gpus.{g['id']})"})
    page = {"order": list(ORDER), "labels": labels(doc, a), "settings": techs, "readouts": list(NAMES),
            "claims": list(CLAIMS), "gpus": [g["id"] for g in gpus], "keep_bf16": kept_in_bf16(a, doc),
            "without_fp8": [g["id"] for g in gpus if g["constants"].get("peak_fp8_flops") is None],
            "sliders": {k: {f: doc["speculative"][k][f] for f in ("value", "min", "max", "step")
                            if f in doc["speculative"][k]} for k in ("draft_tokens", "acceptance")}}
    return page, records, claims


def outcomes(claims: list[dict], gpus: list[str]) -> dict[str, list[str]]:
    """Per claim of CLAIMS, the GPUs (ids) on which it fails: what the page's sentence is worded by."""
    held = {c["id"]: c["holds"] for c in claims}
    return {cid: [g for g in gpus if not held[f"technique.{g}.{cid}"]] for cid in CLAIMS}
