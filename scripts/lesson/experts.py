"""A mixture-of-experts anchor's part of precomputed.json: the experts' constants for the browser, the expert knee's
frontier (batch 1, the knee, the memory cap) and its claims, per GPU too. Nothing for a dense anchor.
precomputed.build calls these with its record keeper (`r`: its derived records, its anchor fields)."""
from __future__ import annotations

from scripts.common.names import FIELD_LABELS
from scripts.lesson.labels import CLAIM_WORDS, LABELS
from scripts.model import roofline as rl
from scripts.model import sizes

# A mixture of experts' (only on its page; the roofline.js section reads them when K.num_experts is set).
MOE_CLIENT_CONSTANTS = {
    "active_params_per_token": (sizes.active_params_per_token, "param"),
    "routed_expert_params": (sizes.routed_expert_params, "param"),
    "moe_expert_params": (sizes.moe_expert_params, "param"),
}


MOE_MODEL_CONSTANTS = ("num_experts", "num_experts_per_tok")


def expert_constants(r) -> dict:
    """A mixture of experts' constants for the browser (MOE_CLIENT_CONSTANTS, E and k, the experts' bytes per
    parameter) and the expert knee's records."""
    constants = {name: r.d(f"const.{name}", fn, {}, unit, "int", FIELD_LABELS.get(name, name))
                 for name, (fn, unit) in MOE_CLIENT_CONSTANTS.items()}
    constants["expert_weight_bytes"] = r.d("const.expert_weight_bytes", sizes.expert_bytes_per_param, {}, "B", "f2",
                                           FIELD_LABELS.get("expert_weight_bytes", "expert_weight_bytes"))
    for name in MOE_MODEL_CONSTANTS:
        r.field("model", name, unit="expert", fmt="int", label=FIELD_LABELS.get(name, name))
        constants[name] = r.doc["model"][name]["value"]
    return constants


def experts_frontier(r, sc: dict, ctx: int, cap: int) -> dict | None:
    """A mixture of experts' frontier (None for a dense model): the experts and weight bytes a decode step reads at
    batch 1, at the expert knee (scenario.expert_knee_percent of the routed experts) and at the memory cap, and the
    step and throughput at the knee. Returns the page's view of them."""
    if not r.a.num_experts:
        return None
    d, percent = r.d, sc["expert_knee_percent"]["value"]
    knee = int(d("moe.knee_batch", sizes.expert_knee_batch, {"percent": percent}, "request", "int",
             LABELS["moe.knee_batch"].format(percent=percent)))
    d("moe.active_params_b", sizes.active_params_per_token, {}, "B params", "f2", LABELS["moe.active_params_b"], 1e-9)
    d("moe.weights_gb_all", sizes.weight_bytes_all_experts, {}, "GB", "f1", LABELS["moe.weights_gb_all"], 1e-9)
    for b in sorted({1, knee, cap}):
        d(f"moe.b{b}.experts", sizes.expected_experts_touched, {"tokens": b}, "expert", "int",
          LABELS["moe.experts"].format(b=b))
        d(f"moe.b{b}.weights_gb", rl.weight_bytes_read, {"tokens": b}, "GB", "f1", LABELS["moe.weights_gb"].format(b=b),
          1e-9)
    d("moe.knee.step_ms", rl.decode_step_seconds, {"batch": knee, "context": ctx}, "ms", "f1",
      LABELS["moe.knee_step_ms"], 1e3)
    d("moe.knee.throughput_tok_s", rl.decode_throughput_tok_s, {"batch": knee, "context": ctx}, "tok/s", "int",
      LABELS["moe.knee_throughput_tok_s"])
    for part, lo, hi in (("before", 1, knee), ("after", knee, cap)):  # the step's growth per request on each side
        if hi > lo:
            d(f"moe.{part}_knee.ms_per_request", rl.step_growth_per_request,
              {"context": ctx, "batch_from": lo, "batch_to": hi}, "ms", "f2",
              LABELS[f"moe.{part}_knee_ms_per_request"], 1e3)
    return {"knee": knee, "percent": percent, "flattens": 1 < knee < cap}  # both sides exist: memory passes it


def expert_gpu_claims(gpus: list[dict]) -> list[dict]:
    """On each GPU of the switch: memory holds the knee's batch at the default context (the baseline technique's
    memory cap there, techniques_page's record, against moe.knee_batch). Settled, not stopping the build: the
    experts' paragraph names the GPUs where it holds and where not."""
    return [{"id": f"moe.{g['id']}.memory_reaches_knee",
             "says": CLAIM_WORDS["moe.memory_reaches_knee"].format(gpu=g["label"]),
             "all": [[f"technique.{g['id']}.baseline.max_batch", ">=", "moe.knee_batch"]],
             "fix": "anchors/<anchor>.json scenario.context_tokens or scenario.expert_knee_percent"} for g in gpus]


def expert_claims(experts: dict | None) -> list[dict]:
    """What the experts' paragraph says (checked: stops the build when false): past the knee a step grows less per
    request than before it (the weight bytes stop growing; only the KV reads do)."""
    if not experts or not experts["flattens"]:
        return []
    return [{"id": "moe.knee_flattens", "says": CLAIM_WORDS["moe.knee_flattens"],
             "all": [["moe.after_knee.ms_per_request", "<", "moe.before_knee.ms_per_request"]],
             "fix": "anchors/<anchor>.json scenario.expert_knee_percent (or model.expert_routing)"}]
