"""precomputed.json: every constant the page's client-side math reads, the frontier table, the default
long-prompt timeline, the lesson's headline numbers, and one provenance record per number."""



from dataclasses import replace

from scripts.common.names import FIELD_LABELS
from scripts.lesson import techniques as techniques_page
from scripts.lesson.experts import expert_claims, expert_constants, expert_gpu_claims, experts_frontier
from scripts.lesson.labels import CLAIM_WORDS, LABELS
from scripts.model import roofline as rl
from scripts.model import sizes
from scripts.model import techniques as tq
from scripts.model import timeline as tl
from scripts.model.readouts import SLIDERS, readout_formats, readouts
from scripts.record.claims import check as check_claims
from scripts.record.claims import settle as settle_claims
from scripts.record.inputs import InputError
from scripts.record.provenance import cited, cited_record, field_paths, from_anchor, from_formula, ratio

# Constants the browser's math needs, each one formula over the anchor (no constant is typed twice).
CLIENT_CONSTANTS = {
    "weight_bytes_read_per_step": (sizes.weight_bytes_read_per_step, "B"),
    "params_read_per_step": (sizes.params_read_per_step, "param"),
    "kv_bytes_per_token": (sizes.kv_bytes_per_token, "B"),
    "state_bytes_per_request": (sizes.state_bytes_per_request, "B"),
    "attention_flops_per_token_position": (rl.attention_flops_per_token_position, "FLOP"),
    "free_bytes_for_requests": (rl.free_bytes_for_requests, "B"),
    # the technique switches' TechniqueCost (scripts/model/techniques.py), in lesson.js
    "total_params": (sizes.total_params, "param"),
    "linear_weight_params": (tq.linear_weight_params, "param"),
    "kv_elements_per_token": (tq.kv_elements_per_token, "element"),
}
# A sliding-window model's (only on its page; the JS reads them when K.window_kv_elements_per_request is set): its
# fixed-size memory split into the DeltaNet state and the window layers' KV, and what a decode step moves of it.
WINDOW_CLIENT_CONSTANTS = {
    "recurrent_state_bytes_per_request": (sizes.recurrent_state_bytes_per_request, "B"),
    "window_kv_elements_per_request": (sizes.window_kv_elements_per_request, "element"),
    "decode_state_bytes": (sizes.decode_state_bytes, "B"),
}
HARDWARE_CONSTANTS = ("hbm_bandwidth_bytes_per_s", "peak_bf16_flops", "pd_link_bytes_per_s", "runtime_reserve_bytes")
MODEL_CONSTANTS = ("weight_bytes", "kv_cache_bytes")  # the technique switches replace these per technique
GPU_FIELDS = ("hbm_bytes", "hbm_bandwidth_bytes_per_s", "peak_bf16_flops")
GPU_SHOWN = (("hbm_bandwidth_bytes_per_s", "TB/s", "f2", 1e-12), ("peak_bf16_flops", "TFLOP/s", "f1", 1e-12),
             ("hbm_bytes", "GB", "int", 1e-9))


def powers_of_two(lo: int, hi: int) -> list[int]:
    return [1 << k for k in range(lo.bit_length() - 1, hi.bit_length())]


def frontier_rows(a, contexts: list[int], max_batch: int) -> list[dict]:
    """Every batch up to the memory cap plus one row past it (where memory runs out), never past the batch
    slider's maximum: the slider cannot reach further, and a huge memory must not mean a huge table."""
    rows = []
    for context in contexts:
        cap = rl.max_batch_by_memory(a, context)
        for batch in range(1, min(cap, max_batch) + 2):
            step = rl.decode_step_seconds(a, batch, context)
            rows.append({"context": context, "batch": batch, "step_ms": step * 1e3,
                         "throughput_tok_s": batch / step, "per_user_tok_s": 1 / step, "fits": batch <= cap})
    return rows


def gpu_choices(a, doc: dict, gpus_doc: dict) -> tuple[list[dict], list[dict]]:
    """The page's GPU switch: each GPU's constants for the browser's math (bandwidth, dense BF16 peak, memory left
    for requests beside this model's weights) and a cited record per datasheet number. The anchor's GPU (its
    hardware.gpu id) is the default."""
    default_id = doc["hardware"]["gpu"]["value"]
    choices, records = [], []
    for gid, g in gpus_doc["gpus"].items():
        label = g["label"]
        values = {k: g[k]["value"] for k in GPU_FIELDS}
        on_gpu = replace(a, **values)
        fp8 = (g.get("peak_fp8_flops") or {}).get("value")  # None: no FP8 tensor-core rate
        choices.append({"id": gid, "label": label, "name": g["name"]["value"], "default": gid == default_id,
                        "constants": {"hbm_bytes": values["hbm_bytes"],
                                      "hbm_bandwidth_bytes_per_s": values["hbm_bandwidth_bytes_per_s"],
                                      "peak_bf16_flops": values["peak_bf16_flops"], "peak_fp8_flops": fp8,
                                      "free_bytes_for_requests": rl.free_bytes_for_requests(on_gpu)}})
        if fp8 is not None:
            records.append(cited_record(f"gpu.{gid}.peak_fp8_flops", LABELS["gpu.peak_fp8_flops"].format(gpu=label),
                                        fp8 * 1e-12, "TFLOP/s", "f1", work=g["peak_fp8_flops"]["source"],
                                        version="config/gpus.json",
                                        locator=f"config/gpus.json gpus.{gid}.peak_fp8_flops", self_reported=True))
        for k, unit, fmt, scale in GPU_SHOWN:
            shown = LABELS["gpu.field"].format(gpu=label, field=FIELD_LABELS.get(k, k))
            records.append(cited_record(f"gpu.{gid}.{k}", shown, values[k] * scale, unit, fmt, work=g[k]["source"],
                                        version="config/gpus.json", locator=f"config/gpus.json gpus.{gid}.{k}",
                                        self_reported=True))
    return choices, records


class _Records:
    """The page's provenance records in the order they are made: `d` a number derived from the anchor, `field` an
    anchor field as the page shows it."""

    def __init__(self, a, doc: dict, anchor_file: str):
        self.a, self.doc, self.anchor_file, self.paths, self.list = a, doc, anchor_file, field_paths(doc), []

    def d(self, rid, fn, args, unit, fmt, label, scale=1.0):
        self.list.append(from_formula(self.a, self.paths, rid, fn, args, unit=unit, fmt=fmt, label=label, scale=scale))
        return self.list[-1]["value"]

    def field(self, section, name, **kw):
        self.list.append(from_anchor(self.anchor_file, self.doc, section, name, **kw))
        return self.list[-1]




def _constants(r: _Records) -> dict:
    """The browser's constants (derived, the GPU's, the model's) and the model's and hardware's shown numbers."""
    doc, d = r.doc, r.d
    constants = {name: d(f"const.{name}", fn, {}, unit, "int", FIELD_LABELS.get(name, name))
                 for name, (fn, unit) in CLIENT_CONSTANTS.items()}
    for section, names in (("hardware", HARDWARE_CONSTANTS), ("model", MODEL_CONSTANTS)):
        for name in names:
            r.field(section, name, unit=doc[section][name]["unit"], fmt="int", label=FIELD_LABELS.get(name, name))
            constants[name] = doc[section][name]["value"]
    if r.a.num_experts:
        constants.update(expert_constants(r))
    if r.a.sliding_window:
        constants.update({name: d(f"const.{name}", fn, {}, unit, "int", FIELD_LABELS.get(name, name))
                          for name, (fn, unit) in WINDOW_CLIENT_CONSTANTS.items()})
    d("model.total_params_b", sizes.total_params, {}, "B params", "f2", LABELS["model.total_params_b"], 1e-9)
    d("model.params_read_b", sizes.params_read_per_step, {}, "B params", "f2", LABELS["model.params_read_b"], 1e-9)
    d("model.weights_gb", sizes.weight_bytes_total, {}, "GB", "f1",
      LABELS["model.weights_gb.experts_own_format" if sizes.experts_in_own_format(r.a) else "model.weights_gb"], 1e-9)
    d("model.kv_bytes_per_token", sizes.kv_bytes_per_token, {}, "B", "int", LABELS["model.kv_per_token"])
    d("model.kv_kb_per_token", sizes.kv_bytes_per_token, {}, "KiB", "int", LABELS["model.kv_per_token"], 1 / 1024)
    d("model.state_mb", sizes.state_bytes_per_request, {}, "MB", "f1",
      LABELS["model.state_mb.window" if r.a.sliding_window else "model.state_mb"], 1e-6)
    if r.a.sliding_window:
        d("model.window_layers", sizes.window_attention_layers, {}, "layer", "int", LABELS["model.window_layers"])
        r.field("model", "sliding_window", unit="token", fmt="int", label=LABELS["model.sliding_window"])
    d("model.full_layers", sizes.full_attention_layers, {}, "layer", "int", LABELS["model.full_layers"])
    d("model.linear_layers", sizes.linear_attention_layers, {}, "layer", "int", LABELS["model.linear_layers"])
    d("hw.free_gb", rl.free_bytes_for_requests, {}, "GB", "f1", LABELS["hw.free_gb"], 1e-9)
    for name, unit, fmt, scale in (("hbm_bytes", "GB", "int", 1e-9),
                                   ("hbm_bandwidth_bytes_per_s", "TB/s", "f2", 1e-12),
                                   ("peak_bf16_flops", "TFLOP/s", "f1", 1e-12),
                                   ("runtime_reserve_bytes", "GB", "f1", 1e-9),
                                   ("pd_link_bytes_per_s", "GB/s", "int", 1e-9)):
        r.field("hardware", name, unit=unit, fmt=fmt, label=LABELS[f"hw.{name}"], scale=scale)["id"] = f"hw.{name}"
    return constants


def _frontier(r: _Records, sc: dict, ctx: int) -> tuple[float, list[int]]:
    """The memory cap, the naive design's table (its batches that fit, then the cap), the gain, the longer
    contexts and the TPOT targets tried. Returns the cap and the table's batches."""
    d = r.d
    cap = d(f"mem.cap.c{ctx}", rl.max_batch_by_memory, {"context": ctx}, "request", "int", LABELS["mem.cap"])
    table_rows = [b for b in sc["table_batches"]["value"] if b < cap] + ([int(cap)] if cap >= 1 else [])
    for b in sorted({1, *table_rows}) if cap >= 1 else []:
        d(f"frontier.c{ctx}.b{b}.throughput_tok_s", rl.decode_throughput_tok_s, {"batch": b, "context": ctx},
          "tok/s", "int", LABELS["frontier.throughput_tok_s"].format(b=b))
        d(f"frontier.c{ctx}.b{b}.step_ms", rl.decode_step_seconds, {"batch": b, "context": ctx}, "ms", "f1",
          LABELS["frontier.step_ms"].format(b=b), 1e3)
    d("frontier.gain_1_to_cap", rl.throughput_gain_over_batch1, {"batch": max(1, cap), "context": ctx}, "×", "f1",
      LABELS["frontier.gain_1_to_cap"])
    for c in sc["try_context_tokens"]["value"]:
        d(f"mem.cap.c{c}", rl.max_batch_by_memory, {"context": c}, "request", "int",
          LABELS["mem.cap.try"].format(c=c))
        nb = rl.max_batch_under_slo(r.a, c, sc["tpot_slo_ms"]["value"] / 1e3)
        d(f"slo.default.c{c}.throughput_tok_s", rl.decode_throughput_tok_s, {"batch": nb, "context": c}, "tok/s",
          "int", LABELS["slo.default.throughput_tok_s"].format(c=c))
    for slo_ms in sc["try_tpot_slo_ms"]["value"]:
        nb = d(f"slo.{slo_ms}ms.max_batch", rl.max_batch_under_slo, {"context": ctx, "tpot_slo_s": slo_ms / 1e3},
               "request", "int", LABELS["slo.max_batch"].format(slo=slo_ms))
        d(f"slo.{slo_ms}ms.throughput_tok_s", rl.decode_throughput_tok_s, {"batch": nb, "context": ctx}, "tok/s", "int",
          LABELS["slo.throughput_tok_s"].format(slo=slo_ms))
        d(f"slo.{slo_ms}ms.per_user_tok_s", rl.per_user_tok_s, {"batch": nb, "context": ctx}, "tok/s", "int",
          LABELS["slo.per_user_tok_s"].format(slo=slo_ms))
        d(f"slo.{slo_ms}ms.step_ms", rl.decode_step_seconds, {"batch": nb, "context": ctx}, "ms", "f1",
          LABELS["slo.step_ms"].format(slo=slo_ms), 1e3)
    return cap, table_rows








def _timeline(r: _Records, sc: dict, ctx: int, new_tokens: float) -> None:
    """The long prompt's timeline: whole, chunked, disaggregated, at the default prompt and the longest."""
    d, prompt, chunk = r.d, sc["prompt_tokens"]["value"], sc["chunk_tokens"]["value"]
    d("timeline.running_users", tl.running_decoders, {"context": ctx}, "request", "int",
      LABELS["timeline.running_users"])
    d("timeline.whole_stall_s", tl.whole_prefill_stall_s, {"context": ctx, "prompt": prompt}, "s", "f2",
      LABELS["timeline.whole_stall_s"])
    for c in [chunk, *sc["try_chunk_tokens"]["value"]]:
        d(f"timeline.chunk{c}.max_step_ms", tl.chunked_max_step_s, {"context": ctx, "prompt": prompt, "chunk": c},
          "ms", "int", LABELS["timeline.chunk.max_step_ms"].format(c=c), 1e3)
        d(f"timeline.chunk{c}.ttft_s", tl.chunked_ttft_s, {"context": ctx, "prompt": prompt, "chunk": c}, "s", "f2",
          LABELS["timeline.chunk.ttft_s"].format(c=c))
    d("timeline.disagg_ttft_s", tl.disagg_ttft_s, {"prompt": prompt}, "s", "f2", LABELS["timeline.disagg_ttft_s"])
    d("timeline.transfer_ms", rl.transfer_seconds, {"prompt": prompt}, "ms", "int", LABELS["timeline.transfer_ms"], 1e3)
    d("timeline.scenario_gb", tl.scenario_bytes, {"context": ctx, "prompt": prompt}, "GB", "f1",
      LABELS["timeline.scenario_gb"], 1e-9)
    longest = sc["prompt_tokens"]["max"]
    d(f"timeline.p{longest}.whole_step_s", tl.whole_prefill_stall_s, {"context": ctx, "prompt": longest}, "s", "f1",
      LABELS["timeline.longest.whole_step_s"].format(p=longest))
    d(f"timeline.p{longest}.whole_ttft_s", tl.whole_ttft_s, {"context": ctx, "prompt": longest}, "s", "f2",
      LABELS["timeline.longest.whole_ttft_s"].format(p=longest))
    d(f"timeline.p{longest}.disagg_ttft_s", tl.disagg_ttft_s, {"prompt": longest}, "s", "f2",
      LABELS["timeline.longest.disagg_ttft_s"].format(p=longest))
    d("timeline.disagg_max_step_ms", tl.disagg_max_step_s, {"context": ctx}, "ms", "int",
      LABELS["timeline.disagg_max_step_ms"], 1e3)
    # the timeline's prefix-cache switch: a prompt adds the Kimi K3 report's new tokens to a cached prefix
    d(f"timeline.p{longest}.prefix_hit_ttft_s", tl.prefix_hit_ttft_s,
      {"context": ctx, "prompt": longest, "new_tokens": new_tokens}, "s", "f2",
      LABELS["timeline.longest.prefix_hit_ttft_s"].format(p=longest, new=new_tokens))


def _readouts_and_scenario(r: _Records, sc: dict, new_tokens: float) -> None:
    """The readouts at the default state, and every scenario field (each list item, each slider's maximum)."""
    defaults = {**{name: sc[name]["value"] for name in SLIDERS}, "new_tokens": new_tokens}
    for name, (fmt, unit) in readout_formats(r.a).items():
        r.list.append(from_formula(r.a, r.paths, f"readout.{name}", readouts, defaults, unit=unit, fmt=fmt,
                                   label=LABELS["readout"].format(field=FIELD_LABELS.get(name, name)), key=name))
    for name, field in sc.items():
        label = FIELD_LABELS.get(name, name)
        if isinstance(field["value"], list):
            for i in range(len(field["value"])):
                r.field("scenario", name, unit=field["unit"], fmt="int", label=label, rid=f"scenario.{name}.{i}",
                        index=i)
        else:
            r.field("scenario", name, unit=field["unit"], fmt="int", label=label)
        if "max" in field:
            r.field("scenario", name, unit=field["unit"], fmt="int", rid=f"scenario.{name}.max", key="max",
                    label=LABELS["scenario.max"].format(field=label.split("(")[0]))


def _cited(r: _Records, cited_doc: dict) -> None:
    """config/cited.json's numbers with their works, and the course's ratio of two of them."""
    works = cited_doc["works"]
    for entry in cited_doc["numbers"]:
        if entry.get("work_id") not in works:
            raise InputError(f"config/cited.json: field numbers[{entry.get('id')}].work_id is not a known work")
        r.list.append(cited({**entry, **works[entry["work_id"]]}))
    by_id = {rec["id"]: rec for rec in r.list}
    r.list.append(ratio("course.gpt2_to_anchor_ratio", by_id["cited.course.gpt2_tokens"],
                        by_id["cited.course.qwen_tokens"], fmt="f1",
                        label=LABELS["course.gpt2_to_anchor_ratio"]))


def build(a, doc: dict, cited_doc: dict, gpus_doc: dict, anchor_file: str = "anchor-model.json",
          techniques_doc: dict | None = None, workloads_doc: dict | None = None) -> dict:
    r, sc = _Records(a, doc, anchor_file), {k: v for k, v in doc["scenario"].items()}
    ctx, prompt, chunk = sc["context_tokens"]["value"], sc["prompt_tokens"]["value"], sc["chunk_tokens"]["value"]
    constants = _constants(r)
    cap, table_rows = _frontier(r, sc, ctx)
    experts = experts_frontier(r, sc, ctx, int(cap))
    if experts:  # the frontier chart marks the knee (lesson.js frontierRows)
        constants["expert_knee_batch"] = experts["knee"]
    new_tokens = next(e["value"] for e in cited_doc["numbers"] if e["id"] == "cited.kimi.new_tokens")
    _timeline(r, sc, ctx, new_tokens)
    _readouts_and_scenario(r, sc, new_tokens)
    _cited(r, cited_doc)
    gpus, gpu_records = gpu_choices(a, doc, gpus_doc)
    records = r.list + gpu_records
    technique_view, technique_claims = None, []
    if techniques_doc is not None and workloads_doc is not None:  # the frontier experiment's technique switches
        technique_view, technique_records, technique_claims = techniques_page.build(
            a, r.paths, techniques_doc, workloads_doc, gpus,
            {"context": ctx, "prompt": prompt, "tpot_slo_ms": sc["tpot_slo_ms"]["value"]})
        records += technique_records
    by_id = {rec["id"]: rec for rec in records}
    technique_claims = settle_claims(technique_claims, by_id)
    if technique_view is not None:
        technique_view["fails_on"] = techniques_page.outcomes(technique_claims, technique_view["gpus"])
        if experts:  # where memory reaches past the knee, on every GPU of the switch
            knee_claims = settle_claims(expert_gpu_claims(gpus), by_id)
            experts["memory_short_on"] = [g["id"] for g, c in zip(gpus, knee_claims, strict=True) if not c["holds"]]
            technique_claims += knee_claims
    view = {"context": ctx, "cap": int(cap), "table_rows": table_rows,
            "linear_layers": sizes.linear_attention_layers(a), "window_layers": sizes.window_attention_layers(a),
            **({"experts": experts} if experts else {}),  # a mixture of experts' frontier view
            "try_slo_all_fit": [by_id[f"slo.{s}ms.max_batch"]["value"] >= cap for s in sc["try_tpot_slo_ms"]["value"]]}
    contexts = powers_of_two(sc["context_tokens"]["min"], sc["context_tokens"]["max"])
    return {
        "schema_version": 1,
        "page": view,
        "claims": check_claims(anchor_claims(sc, ctx, int(cap), chunk, anchor_file) + expert_claims(experts), by_id)
        + settle_claims(worded_claims(sc), by_id) + technique_claims,
        "anchor": {"name": doc["model"]["name"]["value"], "display_name": doc["model"]["display_name"]["value"],
                   "hardware": doc["hardware"]["name"]["value"], "source_file": anchor_file},  # the page names it
        "scenario": sc,
        "constants": constants,
        "gpus": gpus,
        "techniques": technique_view,
        "frontier": {"contexts": contexts, "rows": frontier_rows(a, contexts, int(sc["batch"]["max"]))},
        "timeline_default": {"context": ctx, "prompt": prompt, "chunk": chunk,
                             "bars": tl.lanes(a, ctx, prompt, chunk)},
        "provenance": {rec["id"]: rec for rec in records},
    }


def worded_claims(sc: dict) -> list[dict]:
    """Sentences the page words by their outcome (settled, never stopping the build; the audit re-checks them)."""
    longest = sc["prompt_tokens"]["max"]
    return [
        {"id": "timeline.scenario_fits", "says": CLAIM_WORDS["timeline.scenario_fits"],
         "all": [["timeline.scenario_gb", "<=", "hw.free_gb"]], "fix": "anchor-model.json scenario"},
        {"id": "timeline.longest_pd_ttft_beats_whole",
         "says": CLAIM_WORDS["timeline.longest_pd_ttft_beats_whole"].format(longest=longest),
         "all": [[f"timeline.p{longest}.disagg_ttft_s", "<", f"timeline.p{longest}.whole_ttft_s"]],
         "fix": "anchor-model.json scenario.prompt_tokens.max"},
        {"id": "timeline.prompt_grows", "says": CLAIM_WORDS["timeline.prompt_grows"],
         "all": [["scenario.prompt_tokens", "<", "scenario.prompt_tokens.max"]],
         "fix": "anchor-model.json scenario.prompt_tokens"},
        {"id": "timeline.prefix_cache_saves",
         "says": CLAIM_WORDS["timeline.prefix_cache_saves"].format(longest=longest),
         "all": [[f"timeline.p{longest}.prefix_hit_ttft_s", "<", [f"timeline.p{longest}.whole_ttft_s", 0.5]]],
         "fix": "anchor-model.json scenario.prompt_tokens.max (a context that holds a long cached prefix)"},
    ]


def anchor_claims(sc: dict, ctx: int, cap: int, chunk: int, anchor_file: str = "anchor-model.json") -> list[dict]:
    """What the page's prose says about the anchor, as claims over the records (scripts/record/claims.py): an anchor
    or scenario for which one is false stops the build, naming the claim and the field to change (in `anchor_file`,
    or the GPU's datasheet figures where the times depend on them)."""
    s0, s1 = sc["try_tpot_slo_ms"]["value"][:2]
    long_ctx, big_chunk = sc["try_context_tokens"]["value"][0], sc["try_chunk_tokens"]["value"][0]
    a, gpu = anchor_file + " ", " (or the GPU's figures in config/gpus.json, named by hardware.gpu)"
    return [
        {"id": "anchor.room_for_a_batch", "says": CLAIM_WORDS["anchor.room_for_a_batch"],
         "all": [[f"mem.cap.c{ctx}", ">=", 2]], "fix": a + "scenario.context_tokens (or hardware.gpu: more memory)"},
        {"id": "anchor.table_starts_at_one", "says": CLAIM_WORDS["anchor.table_starts_at_one"],
         "all": [["scenario.table_batches.0", "==", 1]], "fix": a + "scenario.table_batches[0]"},
        {"id": "anchor.batching_raises_throughput", "says": CLAIM_WORDS["anchor.batching_raises_throughput"],
         "all": [["frontier.gain_1_to_cap", ">", 1],
                 [f"frontier.c{ctx}.b{cap}.step_ms", ">", f"frontier.c{ctx}.b1.step_ms"]],
         "fix": a + "scenario.context_tokens"},
        {"id": "anchor.tight_slo_binds", "says": CLAIM_WORDS["anchor.tight_slo_binds"].format(slo=s0),
         "all": [[f"slo.{s0}ms.max_batch", "<", f"mem.cap.c{ctx}"], [f"slo.{s0}ms.max_batch", ">=", 1]],
         "fix": a + "scenario.try_tpot_slo_ms[0]"},
        {"id": "anchor.loose_slo_is_looser", "says": CLAIM_WORDS["anchor.loose_slo_is_looser"],
         "all": [["scenario.try_tpot_slo_ms.1", ">", "scenario.try_tpot_slo_ms.0"]],
         "fix": a + "scenario.try_tpot_slo_ms"},
        {"id": "anchor.long_context_costs", "says": CLAIM_WORDS["anchor.long_context_costs"],
         "all": [[f"mem.cap.c{long_ctx}", "<", f"mem.cap.c{ctx}"],
                 [f"slo.default.c{long_ctx}.throughput_tok_s", "<", "readout.throughput_at_slo_tok_s"]],
         "fix": a + "scenario.try_context_tokens"},
        {"id": "timeline.chunking_shortens_the_longest_step",
         "says": CLAIM_WORDS["timeline.chunking_shortens_the_longest_step"],
         "all": [[f"timeline.chunk{chunk}.max_step_ms", "<", ["timeline.whole_stall_s", 1000]]],
         "fix": a + "scenario.chunk_tokens" + gpu},
        {"id": "timeline.chunking_costs_ttft", "says": CLAIM_WORDS["timeline.chunking_costs_ttft"],
         "all": [[f"timeline.chunk{chunk}.ttft_s", ">", "timeline.whole_stall_s"]],
         "fix": a + "scenario.chunk_tokens" + gpu},
        {"id": "timeline.bigger_chunk_tradeoff", "says": CLAIM_WORDS["timeline.bigger_chunk_tradeoff"],
         "all": [[f"timeline.chunk{big_chunk}.max_step_ms", ">", f"timeline.chunk{chunk}.max_step_ms"],
                 [f"timeline.chunk{big_chunk}.ttft_s", "<", f"timeline.chunk{chunk}.ttft_s"]],
         "fix": a + "scenario.try_chunk_tokens" + gpu},
    ]
