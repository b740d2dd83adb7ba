"""precomputed.json: every constant the page's client-side math reads, the frontier table, the default
long-prompt timeline, the lesson's headline numbers, and one provenance record per number."""



from scripts.model import roofline as rl
from scripts.model import timeline as tl
from scripts.model.readouts import READOUT_FORMATS, SLIDERS, readouts
from scripts.record.inputs import InputError
from scripts.record.provenance import cited, derived, field_paths, from_anchor, ratio

# Constants the browser's math needs, each one formula over the anchor (no constant is typed twice).
CLIENT_CONSTANTS = {
    "weight_bytes_read_per_step": (rl.weight_bytes_read_per_step, "B"),
    "params_read_per_step": (rl.params_read_per_step, "param"),
    "kv_bytes_per_token": (rl.kv_bytes_per_token, "B"),
    "state_bytes_per_request": (rl.state_bytes_per_request, "B"),
    "attention_flops_per_token_position": (rl.attention_flops_per_token_position, "FLOP"),
    "free_bytes_for_requests": (rl.free_bytes_for_requests, "B"),
}
HARDWARE_CONSTANTS = ("hbm_bandwidth_bytes_per_s", "peak_bf16_flops", "pd_link_bytes_per_s")


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


def build(a, doc: dict, cited_doc: dict) -> dict:
    paths, sc = field_paths(doc), {k: v for k, v in doc["scenario"].items()}
    ctx, prompt, chunk = sc["context_tokens"]["value"], sc["prompt_tokens"]["value"], sc["chunk_tokens"]["value"]
    records = []

    def d(rid, fn, args, unit, fmt, label, scale=1.0):
        records.append(derived(a, paths, rid, fn, args, unit=unit, fmt=fmt, label=label, scale=scale))
        return records[-1]["value"]

    constants = {name: d(f"const.{name}", fn, {}, unit, "int", name) for name, (fn, unit) in CLIENT_CONSTANTS.items()}
    for name in HARDWARE_CONSTANTS:
        records.append(from_anchor(doc, "hardware", name, unit=doc["hardware"][name]["unit"], fmt="int", label=name))
        constants[name] = doc["hardware"][name]["value"]

    d("model.total_params_b", rl.total_params, {}, "B params", "f2", "总参数量", 1e-9)
    d("model.params_read_b", rl.params_read_per_step, {}, "B params", "f2", "每步读的参数量", 1e-9)
    d("model.weights_gb", rl.weight_bytes_total, {}, "GB", "f1", "全部权重(bf16)", 1e-9)
    d("model.kv_bytes_per_token", rl.kv_bytes_per_token, {}, "B", "int", "每个 token 的 KV cache")
    d("model.kv_kb_per_token", rl.kv_bytes_per_token, {}, "KiB", "int", "每个 token 的 KV cache", 1 / 1024)
    d("model.state_mb", rl.state_bytes_per_request, {}, "MB", "f1", "每个请求的 DeltaNet 状态", 1e-6)
    d("model.full_layers", rl.full_attention_layers, {}, "layer", "int", "全注意力层")
    d("model.linear_layers", rl.linear_attention_layers, {}, "layer", "int", "线性注意力层")
    d("hw.free_gb", rl.free_bytes_for_requests, {}, "GB", "f1", "留给 KV 与状态的显存", 1e-9)
    for name, unit, fmt, scale, label in (("hbm_bytes", "GB", "int", 1e-9, "显存"),
                                          ("hbm_bandwidth_bytes_per_s", "TB/s", "f2", 1e-12, "显存带宽"),
                                          ("peak_bf16_flops", "TFLOP/s", "f1", 1e-12, "BF16 稠密算力"),
                                          ("runtime_reserve_bytes", "GB", "f1", 1e-9, "运行时预留"),
                                          ("pd_link_bytes_per_s", "GB/s", "int", 1e-9, "P/D 传输链路")):
        rec = from_anchor(doc, "hardware", name, unit=unit, fmt=fmt, label=label, scale=scale)
        rec["id"] = f"hw.{name}"
        records.append(rec)

    for b in sc["table_batches"]["value"]:
        d(f"frontier.c{ctx}.b{b}.throughput_tok_s", rl.decode_throughput_tok_s, {"batch": b, "context": ctx},
          "tok/s", "int", f"batch {b} 整机吞吐")
        d(f"frontier.c{ctx}.b{b}.step_ms", rl.decode_step_seconds, {"batch": b, "context": ctx}, "ms", "f1",
          f"batch {b} 每步时间(TPOT)", 1e3)
    cap = d(f"mem.cap.c{ctx}", rl.max_batch_by_memory, {"context": ctx}, "request", "int", "显存放得下的请求数")
    d("frontier.gain_1_to_cap", rl.throughput_gain_over_batch1, {"batch": cap, "context": ctx}, "×", "f1",
      "batch 1 → 上限 的吞吐倍数")
    for c in sc["try_context_tokens"]["value"]:
        d(f"mem.cap.c{c}", rl.max_batch_by_memory, {"context": c}, "request", "int", f"上下文 {c} 时放得下的请求数")
        nb = rl.max_batch_under_slo(a, c, sc["tpot_slo_ms"]["value"] / 1e3)
        d(f"slo.default.c{c}.throughput_tok_s", rl.decode_throughput_tok_s, {"batch": nb, "context": c}, "tok/s",
          "int", f"上下文 {c}、默认 TPOT 目标下的吞吐")
    for slo_ms in sc["try_tpot_slo_ms"]["value"]:
        nb = d(f"slo.{slo_ms}ms.max_batch", rl.max_batch_under_slo, {"context": ctx, "tpot_slo_s": slo_ms / 1e3},
               "request", "int", f"TPOT ≤ {slo_ms} ms 时最多的请求数")
        d(f"slo.{slo_ms}ms.throughput_tok_s", rl.decode_throughput_tok_s, {"batch": nb, "context": ctx}, "tok/s", "int",
          f"TPOT ≤ {slo_ms} ms 时的吞吐")
        d(f"slo.{slo_ms}ms.per_user_tok_s", rl.per_user_tok_s, {"batch": nb, "context": ctx}, "tok/s", "int",
          f"TPOT ≤ {slo_ms} ms 时每个用户的速度")
        d(f"slo.{slo_ms}ms.step_ms", rl.decode_step_seconds, {"batch": nb, "context": ctx}, "ms", "f1",
          f"TPOT ≤ {slo_ms} ms 时的每步时间", 1e3)

    d("timeline.running_users", tl.running_decoders, {"context": ctx}, "request", "int", "正在解码的老用户")
    d("timeline.whole_stall_s", tl.whole_prefill_stall_s, {"context": ctx, "prompt": prompt}, "s", "f2",
      "整段 prefill 的停顿")
    for c in [chunk, *sc["try_chunk_tokens"]["value"]]:
        d(f"timeline.chunk{c}.max_step_ms", tl.chunked_max_step_s, {"context": ctx, "prompt": prompt, "chunk": c},
          "ms", "int", f"块 {c} 时老用户最长一步", 1e3)
        d(f"timeline.chunk{c}.ttft_s", tl.chunked_ttft_s, {"context": ctx, "prompt": prompt, "chunk": c}, "s", "f2",
          f"块 {c} 时新请求的 TTFT")
    d("timeline.disagg_ttft_s", tl.disagg_ttft_s, {"prompt": prompt}, "s", "f2", "P/D 分离时新请求的 TTFT")
    d("timeline.transfer_ms", rl.transfer_seconds, {"prompt": prompt}, "ms", "int", "KV 与状态跨卡传输", 1e3)
    longest = sc["prompt_tokens"]["max"]
    d(f"timeline.p{longest}.whole_step_s", tl.whole_prefill_stall_s, {"context": ctx, "prompt": longest}, "s", "f1",
      f"{longest} token 整段 prefill 的那一步")

    defaults = {name: sc[name]["value"] for name in SLIDERS}
    for name, (fmt, unit) in READOUT_FORMATS.items():
        records.append(derived(a, paths, f"readout.{name}", readouts, defaults, unit=unit, fmt=fmt,
                               label=f"实时读数 {name}(默认滑块位置)", key=name))

    for name, field in sc.items():
        if isinstance(field["value"], list):
            for i in range(len(field["value"])):
                records.append(from_anchor(doc, "scenario", name, unit=field["unit"], fmt="int", label=name,
                                           rid=f"scenario.{name}.{i}", index=i))
        else:
            records.append(from_anchor(doc, "scenario", name, unit=field["unit"], fmt="int", label=name))
        if "max" in field:
            records.append(from_anchor(doc, "scenario", name, unit=field["unit"], fmt="int", label=f"{name} 上限",
                                       rid=f"scenario.{name}.max", key="max"))

    works = cited_doc["works"]
    for entry in cited_doc["numbers"]:
        if entry.get("work_id") not in works:
            raise InputError(f"precomputed/cited.json: field numbers[{entry.get('id')}].work_id is not a known work")
        records.append(cited({**entry, **works[entry["work_id"]]}))
    by_id = {r["id"]: r for r in records}
    records.append(ratio("course.gpt2_to_anchor_ratio", by_id["cited.course.gpt2_tokens"],
                         by_id["cited.course.qwen_tokens"], fmt="f1", label="课程段落:GPT-2 与锚点词表的 token 数之比"))

    return {
        "schema_version": 1,
        "anchor": {"name": doc["model"]["name"]["value"], "display_name": doc["model"]["display_name"]["value"],
                   "hardware": doc["hardware"]["name"]["value"]},
        "scenario": sc,
        "constants": constants,
        "frontier": {"contexts": powers_of_two(sc["context_tokens"]["min"], sc["context_tokens"]["max"]),
                     "rows": frontier_rows(a, powers_of_two(sc["context_tokens"]["min"], sc["context_tokens"]["max"]),
                                           int(sc["batch"]["max"]))},
        "timeline_default": {"context": ctx, "prompt": prompt, "chunk": chunk,
                             "bars": tl.lanes(a, ctx, prompt, chunk)},
        "provenance": {r["id"]: r for r in records},
    }
