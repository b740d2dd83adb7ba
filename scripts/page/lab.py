"""The lab's in-browser model script: templates/lab/model/model.js with its kernel (templates/lab/model/kernel.wat)
compiled by wasmtime's wat2wasm (pinned in requirements.txt) and inlined as base64, so site/lab-model.js downloads
nothing."""
from __future__ import annotations

import base64
import json
import math
import re
from pathlib import Path

from scripts.bench.seeded_weights import SEED, param_total, spec
from scripts.bench.shape import DEFAULT
from scripts.record.inputs import InputError

MODEL_SOURCE = "lab/model/model.js"
# appended to the model: a run's metrics as vllm bench serve computes them, experiment D's tool metrics and file
# readers, and the model on WebGPU (its shaders where GPU_PLACEHOLDER stands)
MODEL_PARTS = ("lab/model/metrics.js", "lab/model/tools.js", "lab/model/readers.js", "lab/model/gpu.js")
WORDS = json.loads((Path(__file__).parent / "labels.json").read_text(encoding="utf-8"))["lab"]  # record labels
KERNEL_SOURCE = "lab/model/kernel.wat"
PLACEHOLDER = "@KERNEL_BASE64@"
FUSED_PLACEHOLDER = "@KERNEL_FUSED_BASE64@"
MODEL_PLACEHOLDER = "__MODEL__"
GPU_SOURCE, GPU_PART, GPU_PLACEHOLDER = "lab/model/gpu.wgsl", "lab/model/gpu.js", '"@GPU_WGSL@"'
# numpy's helpers (percentile, rint, pairwise sum): one file, the serving twin's, in both bundles
NUMPY_SOURCE, NUMPY_PLACEHOLDER = "serving_sim/numpy.js", "@NUMPY_HELPERS@"


def kernel_bytes(wat: Path, fused: bool = False) -> bytes:
    """The kernel's WebAssembly binary (its relaxed-SIMD build with `fused`: fused_kernel); a WAT error names the file
    and wat2wasm's message."""
    import wasmtime

    try:
        text = wat.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{wat.as_posix()}: cannot be read as UTF-8 text ({exc})") from None
    try:
        binary = bytes(wasmtime.wat2wasm(fused_kernel(text) if fused else text))
    except wasmtime.WasmtimeError as exc:
        raise InputError(f"{wat.as_posix()}: wat2wasm refused it: {str(exc).splitlines()[0]}") from None
    config = wasmtime.Config()
    config.wasm_simd, config.wasm_relaxed_simd = True, True
    try:  # wat2wasm only parses: a function whose types do not match compiles, and the browser refuses the module
        wasmtime.Module.validate(wasmtime.Engine(config), binary)
    except wasmtime.WasmtimeError as exc:
        build = "its relaxed-SIMD build" if fused else "it"
        raise InputError(f"{wat.as_posix()}: WebAssembly refuses {build}: {str(exc).splitlines()[0]}") from None
    return binary


def _sexpr_end(text: str, start: int) -> int:
    """The index just past the balanced s-expression that opens at text[start] == "("."""
    depth = 0
    for k in range(start, len(text)):
        depth += {"(": 1, ")": -1}.get(text[k], 0)
        if depth == 0:
            return k + 1
    raise ValueError(f"unbalanced parentheses from offset {start}")


def _children(text: str, start: int, end: int) -> list[str]:
    out, k = [], start
    while k < end:
        if text[k] == "(":
            e = _sexpr_end(text, k)
            out.append(text[k:e])
            k = e
        else:
            k += 1
    return out


def fused_kernel(wat: str) -> str:
    """The relaxed-SIMD build of the kernel from the same source: every (f32x4.add A (f32x4.mul X Y)) becomes
    (f32x4.relaxed_madd X Y A), a fused multiply-add where the CPU has one (V8 emits vfmadd on x86 with FMA3, fmla on
    arm64; the relaxed-simd proposal lets it round once or twice). Safari rejects a whole module holding a relaxed
    instruction, so the page keeps the plain build and picks by WebAssembly.validate (model.js kernelBuild)."""
    out, k, key = [], 0, "(f32x4.add "
    while (i := wat.find(key, k)) >= 0:
        end = _sexpr_end(wat, i)
        parts = _children(wat, i + len(key), end - 1)
        if len(parts) == 2 and parts[1].startswith("(f32x4.mul "):
            x, y = _children(parts[1], len("(f32x4.mul "), len(parts[1]) - 1)
            out.append(wat[k:i] + f"(f32x4.relaxed_madd {fused_kernel(x)} {fused_kernel(y)} {fused_kernel(parts[0])})")
            k = end
        else:
            out.append(wat[k:i + len(key)])
            k = i + len(key)
    return "".join(out) + wat[k:]


def lab_model_script(templates: Path) -> str:
    """site/lab-model.js: the model's source with the compiled kernel and the model's shape, seed and weight spec
    (scripts/bench/seeded_weights.py, their one home) where the placeholders stand (each exactly once)."""
    source = (templates / MODEL_SOURCE).read_text(encoding="utf-8")
    for mark in (PLACEHOLDER, FUSED_PLACEHOLDER, MODEL_PLACEHOLDER, NUMPY_PLACEHOLDER):
        if source.count(mark) != 1:
            raise InputError(f"{(templates / MODEL_SOURCE).as_posix()}: needs the placeholder {mark} exactly once")
    encoded = base64.b64encode(kernel_bytes(templates / KERNEL_SOURCE)).decode("ascii")
    fused = base64.b64encode(kernel_bytes(templates / KERNEL_SOURCE, fused=True)).decode("ascii")
    model = {"shape": DEFAULT.as_dict(), "seed": SEED, "spec": [[n, list(d), o, s] for n, d, o, s in spec()]}
    parts = [(templates / part).read_text(encoding="utf-8") for part in MODEL_PARTS]
    parts[MODEL_PARTS.index(GPU_PART)] = gpu_script(templates)
    model_text = json.dumps(model, separators=(",", ":"))
    source = source.replace(PLACEHOLDER, encoded).replace(FUSED_PLACEHOLDER, fused)
    numpy_helpers = (templates / NUMPY_SOURCE).read_text(encoding="utf-8").rstrip("\n")
    source = re.sub(rf"^  // {NUMPY_PLACEHOLDER}.*$", lambda _: numpy_helpers, source, count=1, flags=re.M)
    return "\n".join([source.replace(MODEL_PLACEHOLDER, model_text), *parts])


def gpu_script(templates: Path) -> str:
    """gpu.js with its shaders (gpu.wgsl) as a JavaScript string where the placeholder stands (exactly once)."""
    source, shown = (templates / GPU_PART).read_text(encoding="utf-8"), (templates / GPU_PART).as_posix()
    if source.count(GPU_PLACEHOLDER) != 1:
        raise InputError(f"{shown}: needs the placeholder {GPU_PLACEHOLDER} exactly once")
    try:
        wgsl = (templates / GPU_SOURCE).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{(templates / GPU_SOURCE).as_posix()}: cannot be read as UTF-8 text ({exc})") from None
    return source.replace(GPU_PLACEHOLDER, json.dumps(wgsl))


LAB_CONFIG = "config/lab.json"
NOT_SETTINGS = ("schema_version", "description", "experiments")  # the file's other keys: each other is a group


def setting_groups(doc: dict) -> list[str]:
    """config/lab.json's settings groups (engine, batch, kv, ...): every top-level key but NOT_SETTINGS."""
    return [g for g in doc if g not in NOT_SETTINGS]
DEFAULTS = {"rate": "rates", "request_count": "requests", "prompt": "prompt_tokens", "output": "output_tokens",
            "prefix_system_prompt": "prefix_system_prompts"}


def lab_settings(path: Path) -> dict:
    """config/lab.json's values, checked (read_lab)."""
    return read_lab(path)[1]


def read_lab(path: Path) -> tuple[dict, dict]:
    """config/lab.json read and checked: its schema (scripts/record/schemas/lab.schema.json: every field with a
    value in its bounds and one of source/assumption), then what a schema cannot say: each default among its
    choices, the engine's limits holding the largest request and batch, and the experiments' list naming fields the
    file has. Returns the document and {group: {key: value}}, with the experiments' list and the simulator's view of
    the model (sim_model); a problem is one line naming the file and the field. The Snakefile's input check calls it
    before any rule runs (scripts/audit/inputs.py)."""
    from scripts.record import schema

    shown = path.as_posix()
    doc = schema.read_input(path, schema.LAB)
    out = {g: {k: e["value"] for k, e in doc[g].items()} for g in setting_groups(doc)}
    out["experiments"] = doc["experiments"]
    out["sim_model"] = sim_model(out["engine"]["max_context"])
    load, engine = out["load"], out["engine"]
    for default, choices in DEFAULTS.items():
        if load[default] not in load[choices]:
            raise InputError(f"{shown}: field load.{default} ({load[default]}) is not one of load.{choices}")
    longest = max(load["prefix_system_prompts"]) + max(load["prompt_tokens"]) + max(load["output_tokens"])
    if longest > engine["max_context"] or \
            out["kv"]["prompt_tokens"] + max(out["kv"]["new_tokens"]) > engine["max_context"]:
        raise InputError(f"{shown}: field engine.max_context ({engine['max_context']}) is shorter than the longest "
                         "request the load (with the prefix comparison's system prompt) or KV experiment makes")
    if max(out["batch"]["sizes"]) > engine["max_num_seqs"] or engine["max_num_seqs"] > engine["max_num_batched_tokens"]:
        raise InputError(f"{shown}: field engine.max_num_seqs must hold every batch.sizes and not exceed "
                         "engine.max_num_batched_tokens")
    _check_calibration(out, shown)
    for default, choices in (("prompt", "prompts"), ("chunk", "chunks")):
        if out["waits"][default] not in out["waits"][choices]:
            raise InputError(f"{shown}: field waits.{default} ({out['waits'][default]}) is not one of waits.{choices}")
    if out["kv"]["min_pairs"] > out["kv"]["pairs"]:
        raise InputError(f"{shown}: field kv.min_pairs must be a whole number no larger than kv.pairs")
    if out["batch"]["position"] + 1 > engine["max_context"]:
        raise InputError(f"{shown}: field batch.position is past engine.max_context")
    _check_experiments(out, setting_groups(doc), shown)
    return doc, out


def _check_calibration(out: dict, shown: str) -> None:
    cal, engine = out["calibration"], out["engine"]
    burst = [(cal["burst_prompts"][k % len(cal["burst_prompts"])], cal["burst_output_step"] * (k + 1))
             for k in range(engine["max_num_seqs"])]
    if any(p + o > engine["max_context"] for p, o in burst):
        raise InputError(f"{shown}: field calibration.burst_prompts with burst_output_step makes a request longer "
                         f"than engine.max_context ({engine['max_context']})")
    for key in ("fit_bandwidth_bytes_per_s", "fit_flops_per_s", "fit_overhead_s"):
        if not cal[key][0] < cal[key][1]:
            raise InputError(f"{shown}: field calibration.{key} must be [low, high] with low below high")


def _check_experiments(out: dict, groups: list[str], shown: str) -> None:
    """Ids and boxes once each; every run_seconds factor a field of one of the file's settings `groups`."""
    for key in ("id", "element"):
        names = [e[key] for e in out["experiments"]]
        for k, name in enumerate(names):
            if name in names[:k]:
                raise InputError(f"{shown}: field experiments[{k}].{key} repeats {name!r}")
    for k, e in enumerate(out["experiments"]):
        for term in e["run_seconds"]:
            for factor in term:
                group, _, key = factor.partition(".")
                if group not in groups or key not in out[group]:
                    raise InputError(f"{shown}: field experiments[{k}].run_seconds names {factor}, which is not a "
                                     "field of the file")


def sim_model(max_context: int) -> dict:
    """The tiny model as the page's simulator reads a model (templates/serving_sim/stepcost.js), from its shape:
    float32 weights read once a step, 2 FLOPs per parameter per token, K and V of every layer per token, 4 d FLOPs
    per layer per attended position (q.k and the weighted sum of v); no recurrent state, nothing reserved."""
    s, params = DEFAULT, param_total()
    return {"weight_bytes_read_per_step": 4 * params, "params_read_per_step": params,
            "kv_bytes_per_token": 2 * s.n_layer * s.d_model * 4, "state_bytes_per_request": 0,
            "attention_flops_per_token_position": 4 * s.d_model * s.n_layer, "weight_bytes_total": 4 * params,
            "runtime_reserve_bytes": 0, "pd_link_bytes_per_s": 1, "max_position_embeddings": max_context}


def run_seconds(settings: dict) -> dict[str, float]:
    """Each experiment's longest run on the reader's device, from its bounds (the page's reading time counts them):
    its run_seconds in config/lab.json experiments, a sum of products of settings (a list counts as its length;
    the load experiment's longest is the sweep, one bounded run per rate)."""
    def factor(name: str) -> float:
        group, _, key = name.partition(".")
        value = settings[group][key]
        return len(value) if isinstance(value, list) else value

    seconds = {e["id"]: sum(math.prod(factor(f) for f in term) for term in e["run_seconds"])
               for e in settings["experiments"]}
    return {k: int(v) if float(v).is_integer() else v for k, v in seconds.items()}


def lab_records(doc: dict, settings: dict) -> dict[str, dict]:
    """The scalar settings of config/lab.json (read_lab's document and values) as records lab.<group>.<key>
    (assumed, or cited with its source); the lists are the controls' choices (shown as option labels)."""
    from scripts.record.provenance import Derivation, assumed, cited_record, derived

    out = {"lab.model.params": derived(
        "lab.model.params", WORDS["lab.model.params"], param_total(), "param", "int",
        derivation=Derivation.TINYGPT, formula="scripts.bench.tinygpt:param_count",
        inputs=["scripts/bench/shape.py Shape"], script="scripts/page/lab.py", args=DEFAULT.as_dict(), scale=1.0)}
    for group in setting_groups(doc):
        for key, value in settings[group].items():
            if isinstance(value, list):
                continue
            rid, entry, field = f"lab.{group}.{key}", doc[group][key], f"{group}.{key}"
            fmt = "int" if float(value).is_integer() else "f1"
            label = WORDS["setting"].format(field=field)
            if "source" in entry:
                out[rid] = cited_record(rid, label, value, "", fmt, work=entry["source"], field=field,
                                        version=f"as recorded in {LAB_CONFIG}", locator=f"{LAB_CONFIG} {field}",
                                        self_reported=False)
            else:
                out[rid] = assumed(rid, label, value, "", fmt, assumption=entry["assumption"], field=field)
    return out
