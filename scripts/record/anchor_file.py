"""Load and validate an anchor file (schema, its GPU, cross-field rules, weights fit); one line per failure.

An anchor names its GPU by id (`hardware.gpu`); the GPU's name and datasheet numbers live once, in config/gpus.json,
and `load` puts them into the document it returns, each entry with a `locator` naming where it came from (the
provenance records cite that place)."""
from __future__ import annotations

from pathlib import Path

from scripts.model import roofline, sizes
from scripts.model.anchor import Anchor, anchor_from
from scripts.record import schema
from scripts.record.inputs import InputError, read_json
from scripts.record.schema import read_config

SCHEMA_PATH = schema.SCHEMAS / f"{schema.ANCHOR}.schema.json"
GPUS_PATH = Path(__file__).resolve().parents[2] / "config" / "gpus.json"  # the kit's own, beside the anchor files
DATASHEET = ("name", "hbm_bytes", "hbm_bandwidth_bytes_per_s", "peak_bf16_flops")  # what an anchor reads off its GPU


def validate(data: object, filename: str = "anchor-model.json", gpus_path: Path | None = None,
             gpus_doc: dict | None = None) -> dict:
    """Check structure, types, ranges, the GPU id and cross-field rules; raise InputError on the first problem.
    Returns the document with its GPU's datasheet entries in `hardware` (with_gpu), read from `gpus_doc` (a
    config/gpus.json already loaded) or else the file at `gpus_path` (default: the kit's)."""
    _refuse_datasheet_copies(data, filename)
    schema.validate(data, schema.ANCHOR, filename)
    gpus_path = gpus_path or GPUS_PATH
    resolved = with_gpu(data, gpus_doc or load_gpus(gpus_path), filename, gpus_path)
    _check_cross_fields(resolved, filename)
    _check_weights_fit(resolved, filename)
    return resolved


def _refuse_datasheet_copies(data: object, filename: str) -> None:
    """An anchor written before GPUs were named by id holds its GPU's datasheet numbers itself: say where they go."""
    hardware = data.get("hardware") if isinstance(data, dict) else None
    copied = [k for k in DATASHEET if isinstance(hardware, dict) and k in hardware]
    if copied:
        raise InputError(f"{filename}: field hardware.{copied[0]} is not an anchor's: a GPU's name and datasheet "
                         "numbers live in config/gpus.json; name the GPU by its id there in hardware.gpu.value")


def with_gpu(data: dict, gpus_doc: dict, filename: str, gpus_path: Path) -> dict:
    """The anchor document with hardware.name, hbm_bytes, hbm_bandwidth_bytes_per_s and peak_bf16_flops read from
    its GPU's entry in config/gpus.json, each with a `locator` (file and field) for its provenance record."""
    gid, gpus = data["hardware"]["gpu"]["value"], gpus_doc["gpus"]
    where = f"config/{Path(gpus_path).name}"
    if gid not in gpus:
        raise InputError(f"{filename}: field hardware.gpu.value names {gid!r}, which is not a GPU of {where} "
                         f"({', '.join(gpus)})")
    datasheet = {k: {**gpus[gid][k], "locator": f"{where} gpus.{gid}.{k}"} for k in DATASHEET}
    return {**data, "hardware": {**datasheet, **data["hardware"]}}


def _check_weights_fit(data: dict, filename: str) -> None:
    a = anchor_from(data)
    if roofline.free_bytes_for_requests(a) <= 0:
        where, field = data["hardware"]["hbm_bytes"]["locator"].split(" ")
        raise InputError(f"{where}: field {field}.value ({a.hbm_bytes / 1e9:g} GB), the GPU of {filename} "
                         f"(hardware.gpu), cannot hold its weights ({sizes.weight_bytes_total(a) / 1e9:.1f} GB) "
                         "plus the runtime reserve")


def _check_cross_fields(data: dict, filename: str) -> None:
    model, scenario = data["model"], data["scenario"]

    def fail(field: str, why: str) -> None:
        raise InputError(f"{filename}: field {field} {why}")

    if model["num_hidden_layers"]["value"] % model["full_attention_interval"]["value"]:
        fail("model.full_attention_interval.value", "must divide model.num_hidden_layers")
    if model["num_attention_heads"]["value"] % model["num_key_value_heads"]["value"]:
        fail("model.num_key_value_heads.value", "must divide model.num_attention_heads")
    for name, slider in scenario.items():
        if "min" not in slider:
            continue
        lo, hi, value = slider["min"], slider["max"], slider["value"]
        if lo > hi:
            fail(f"scenario.{name}.min", f"({lo}) must not exceed scenario.{name}.max ({hi})")
        if not lo <= value <= hi:
            fail(f"scenario.{name}.value", f"({value}) must lie within [{lo}, {hi}]")
    _check_experts(model, fail)
    if ("expert_knee_percent" in scenario) != bool((model.get("num_experts") or {}).get("value", 0)):
        fail("scenario.expert_knee_percent", "goes with model.num_experts: required for a mixture of experts (where "
             "the page marks the expert knee), refused for a dense model")
    longest = max(scenario["context_tokens"]["max"], scenario["prompt_tokens"]["max"])
    if longest > model["max_position_embeddings"]["value"]:
        fail("scenario.context_tokens.max", f"({longest}) is longer than the model allows "
             f"(model.max_position_embeddings = {model['max_position_embeddings']['value']})")
    for name in ("context_tokens", "prompt_tokens", "chunk_tokens"):  # log2 sliders
        s = scenario[name]
        for key in ("value", "min", "max"):
            v = s[key]
            if v != int(v) or int(v) & (int(v) - 1):
                fail(f"scenario.{name}.{key}", f"must be a power of two, got {v}")
    for key in ("value", "min", "max"):
        if scenario["batch"][key] != int(scenario["batch"][key]):
            fail(f"scenario.batch.{key}", "must be a whole number of requests")
    default, tries = scenario["context_tokens"]["value"], scenario.get("try_context_tokens", {}).get("value", [])
    for i, ctx in enumerate(tries):  # the frontier's "a longer context costs" step compares it with the default
        if not default < ctx <= scenario["context_tokens"]["max"]:
            fail(f"scenario.try_context_tokens.value[{i}]", f"({ctx}) must be longer than scenario.context_tokens."
                 f"value ({default}) and at most scenario.context_tokens.max ({scenario['context_tokens']['max']}): "
                 "the long-context try compares a longer context with the default")


MOE_FIELDS = ("num_experts_per_tok", "num_shared_experts", "moe_intermediate_size", "first_dense_layers",
              "expert_weight_bytes", "expert_routing")


def _check_experts(model: dict, fail) -> None:
    """A mixture of experts names k within E, its experts' width and its routing assumption, and keeps a MoE layer;
    a dense model sets none of those fields. MLA's RoPE part comes with its latent."""
    value = lambda k: (model.get(k) or {}).get("value", 0)  # noqa: E731
    experts = value("num_experts")
    if not experts:
        stray = [k for k in MOE_FIELDS if value(k)]
        if stray:
            fail(f"model.{stray[0]}.value", "describes experts, but model.num_experts is 0 or absent (a dense model)")
    else:
        if not 1 <= value("num_experts_per_tok") <= experts:
            fail("model.num_experts_per_tok.value", f"must lie within [1, model.num_experts = {experts}]")
        if not value("moe_intermediate_size"):
            fail("model.moe_intermediate_size.value", "is required with model.num_experts (one expert's FFN width)")
        if "expert_routing" not in model:
            fail("model.expert_routing", "is required with model.num_experts (the routing the roofline assumes)")
        if value("first_dense_layers") >= model["num_hidden_layers"]["value"]:
            fail("model.first_dense_layers.value", "must be fewer than model.num_hidden_layers (a MoE layer stays)")
    if value("qk_rope_head_dim") and not value("kv_lora_rank"):
        fail("model.qk_rope_head_dim.value", "is MLA's RoPE part: it needs model.kv_lora_rank (the latent)")
    if value("sliding_window") and value("full_attention_interval") < 2:
        fail("model.sliding_window.value", "names the window of the layers between the full-attention ones, but "
             "model.full_attention_interval is 1 (every layer is full attention)")
    if value("sliding_window") and value("kv_lora_rank"):
        fail("model.sliding_window.value", "is priced with grouped-query attention's K and V: not with MLA "
             "(model.kv_lora_rank)")


def load(path: Path, gpus_path: Path | None = None) -> tuple[Anchor, dict]:
    """The validated anchor and its document, its GPU's datasheet entries in (for sources and scenario); the GPU is
    looked up in `gpus_path`, by default the kit's the anchor file is in (gpus_file_of)."""
    data = validate(read_json(path), Path(path).name, gpus_path or gpus_file_of(Path(path)))
    return anchor_from(data), data


def gpus_file_of(anchor_path: Path) -> Path:
    """config/gpus.json of the kit holding `anchor_path` (anchor-model.json at its top, or anchors/<name>.json), so a
    scratch copy of the kit reads its own; an anchor file elsewhere reads this kit's."""
    for kit in (anchor_path.parent, anchor_path.parent.parent):
        if (kit / "config" / "gpus.json").is_file():
            return kit / "config" / "gpus.json"
    return GPUS_PATH


def load_gpus(path: Path) -> dict:
    """config/gpus.json: the GPUs the page can switch to, each number with its datasheet (schemas/gpus)."""
    return read_config(path, "gpus", schema.GPUS)[0]


def load_techniques(path: Path, workloads: Path) -> dict:
    """config/techniques.json (schemas/techniques), and what a schema cannot say: each slider's default within its
    range, and the reserving workload present in config/workloads.json."""
    from scripts.record.inputs import InputError, read_json

    doc = read_config(path, "speculative", schema.TECHNIQUES)[0]
    name = path.as_posix()
    for key in ("draft_tokens", "acceptance"):
        entry = doc["speculative"][key]
        lo, hi = entry.get("min", entry["value"]), entry.get("max", entry["value"])
        if not lo <= entry["value"] <= hi:
            raise InputError(f"{name}: field speculative.{key}: value {entry['value']:g} must lie within min {lo:g} "
                             f"and max {hi:g} (the slider's range)")
    wid = doc["reserved"]["reserve_from_workload"]["value"]
    wdoc = read_json(workloads)
    known = wdoc.get("workloads") if isinstance(wdoc, dict) else None
    if not isinstance(known, dict):  # read here before the workloads file's own check: say what is wrong with it
        raise InputError(f"{workloads.as_posix()}: field workloads must be an object of workloads by id (the file "
                         f"holds {'an object without it' if isinstance(wdoc, dict) else 'a ' + type(wdoc).__name__})")
    if wid not in known:
        raise InputError(f"{name}: field reserved.reserve_from_workload.value names {wid!r}, which is not a workload "
                         f"of {workloads.as_posix()} ({', '.join(known)})")
    return doc
