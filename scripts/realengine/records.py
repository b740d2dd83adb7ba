"""The real-engine comparison as page records (merged into bench_medians.json by scripts/bench/records.py, beside
the KV-cache benchmark): measured numbers (`measured`: the load runs' mean over their runs, with the run-to-run
spread), the simulator's predictions of them (`calibrated`: the serving model on step times fitted to the
calibration run), the errors, and the settings the measurement ran with (`assumed`: our choices). Record ids:
real.<machine>.<workload>.r<rate>.<metric>.{measured,predicted}, real.<machine>.{summary,step,engine,model,server,
cal,goal,load,slo}.*."""
from __future__ import annotations

import functools
from pathlib import Path

from scripts.common.display import exact_format
from scripts.realengine.heldout_comparison import session_key, start_range
from scripts.record import provenance as pv
from scripts.record.manifest import sha256

# The page's table: metric -> (label, unit, format, scale from the metrics' own unit)
SHOWN = {"median_ttft_ms": ("TTFT 中位数", "ms", "int", 1.0), "p99_ttft_ms": ("TTFT p99", "ms", "int", 1.0),
         "mean_tpot_ms": ("TPOT 均值", "ms", "f1", 1.0), "p99_itl_ms": ("ITL p99", "ms", "int", 1.0),
         "median_e2el_ms": ("E2EL 中位数", "ms", "int", 1.0), "slo_attainment": ("SLO 达标率", "%", "int", 100.0)}
WORKLOAD_LABELS = {"short": "短请求", "long_mix": "夹带长提示"}
SPEED_MOVED = ("测量前后单独请求的解码速度变化超过界限(config/real_engine.json comparison.speed_check_bound)、"
               "因此不计入误差的格子数")
GOAL_SOURCE = "课程定下的目标:模拟器对真实引擎的预测误差(issue 26;config/real_engine.json comparison.goals)"
PREDICTION = ("llama.cpp 的调度(每轮先给每个在生成的槽一个 token,再用剩余预算装等待中的提示)"
              "+ 步时模型(scripts/serving/stepmodel.py),只用另一半请求率的实测运行拟合(交叉验证)")
SEPARATE = ("同上的调度 + 步时模型,只用单独做的校准压测(其他请求率、其他请求,在全部格子之后测)拟合")
LAYOUT = (";每一轮按各请求所占的槽切成 ubatch 计时(槽号相连的同走一次前向,不相连的各走一次:"
          "scripts/serving/stepmodel.py split_equal,config/real_engine.json comparison.ubatch_layout)")


def prices_layout(e: dict) -> bool:
    """Whether the comparison's step models priced the slots' ubatches (their dicts carry U)."""
    models = [e.get("step_model"), (e.get("separate_calibration") or {}).get("step_model")]
    halves = e.get("halves") or {}
    models += [h.get("step_model") for h in (halves.values() if isinstance(halves, dict) else halves)]
    return any(m and "ubatch_seconds" in m for m in models)


@functools.cache
def _digest(path: str) -> str:  # every cell's run file backs seven records: hashed once
    return sha256(Path(path))


class _Records:
    """The record constructors of one engine + machine, with its machine line and calibration file bound."""

    def __init__(self, e: dict, prov: dict, folder: str = "precomputed/serve"):
        m = e["machine"]
        self.m, self.mid, self.prov, self.cal_file = m, m["id"], prov, e["calibration"]
        eid = e["engine"]["id"]
        self.data = [self.cal_file, f"{folder}/{eid}-{self.mid}-*.json",
                     f"{folder}/calibration/{eid}-{self.mid}-calibration-*.json"]
        self.machine = f"{m['cpu']} · {m['cores']} cores · llama-server -t {m['engine_threads']} · {m['os']}"
        first = e["cells"][0]
        self.first_run = first["runs"][0]["file"] if "runs" in first else first["file"]  # a whole-measurement file
        self.layout = LAYOUT if prices_layout(e) else ""

    def measured(self, rid, label, value, unit, fmt, file, runs, spread):
        self.prov[rid] = pv.measured(rid, label, value, unit, fmt, machine=self.machine, date=self.m["date"],
                                     runs=runs, spread=spread, file=file, file_sha256=_digest(file),
                                     script="scripts/realengine/run.py", machine_id=self.mid,
                                     git_commit=self.m["git_commit"])

    def predicted(self, rid, label, value, unit, fmt, args, fit=PREDICTION):
        self.prov[rid] = pv.calibrated(rid, label, value, unit, fmt, fit=fit + self.layout, data=self.data,
                                       script="scripts/realengine/comparison.py", args=args)

    def setting(self, key, label, value, unit, fmt, assumption):
        rid = f"real.{self.mid}.{key}"
        self.prov[rid] = pv.assumed(rid, label, value, unit, fmt, assumption=assumption)


def _cells(r: _Records, e: dict) -> list[dict]:
    rows = []
    for c in e["cells"]:
        base = f"real.{r.mid}.{c['workload']}.r{c['rate']:g}"
        files = [run["file"] for run in c["runs"]]
        where = f"「{WORKLOAD_LABELS.get(c['workload'], c['workload'])}」负载,每秒 {c['rate']:g} 个请求"
        for key, (label, unit, fmt, scale) in SHOWN.items():
            runs = [run["measured"][key] * scale for run in c["runs"]]
            spread = ("两次运行:" + " / ".join(f"{v:.1f}" for v in runs) + f" {unit}") if len(runs) > 1 else "—"
            r.measured(f"{base}.{key}.measured", f"{where}:{label}(实测,两次运行的均值)", c["measured"][key] * scale,
                       unit, fmt, files[0], len(runs), spread)
            r.predicted(f"{base}.{key}.predicted", f"{where}:{label}(模拟器的预测)", c["predicted"][key] * scale,
                        unit, fmt, {"workload": c["workload"], "rate": c["rate"], "metric": key})
        r.measured(f"{base}.rate", f"{where}:发送请求率", c["rate"], "req/s", "f1", files[0], len(files),
                   "两次运行用同一组发送时刻")
        rows.append({"workload": c["workload"], "rate": c["rate"], "saturated": c["saturated"], "id": base,
                     "error": c["error"], "spread": c["spread"]})
    return rows


def _summary(r: _Records, e: dict) -> None:
    s, first = e["summary"], r.first_run
    central = "TTFT 中位数、TPOT 均值、E2EL 中位数的预测误差(未饱和格子,绝对值的中位数)"
    variants = [("summary", s, PREDICTION)]
    if e.get("separate_calibration"):
        variants.append(("separate", e["separate_calibration"]["summary"], SEPARATE))
    for prefix, summ, fit in variants:
        for key, label in (("central_median_abs_error", central),
                           ("tail_median_abs_error", "各 p99 的预测误差(未饱和格子,绝对值的中位数)")):
            if summ[key] is not None:
                r.predicted(f"real.{r.mid}.{prefix}.{key}", label, summ[key] * 100, "%", "f1", {prefix: key}, fit)
        if summ["attainment_max_abs_error"] is not None:
            r.predicted(f"real.{r.mid}.{prefix}.attainment_max_abs_error", "SLO 达标率的最大预测误差(所有格子)",
                        summ["attainment_max_abs_error"] * 100, "百分点", "f1", {prefix: "attainment"}, fit)
    r.measured(f"real.{r.mid}.summary.below_saturation", "没饱和的格子数(完成率不低于发送率的 90%)",
               s["below_saturation"], "个", "int", first, 2, "—")
    if s.get("speed_moved"):
        r.measured(f"real.{r.mid}.summary.speed_moved", SPEED_MOVED, s["speed_moved"], "个", "int", first, 2, "—")
    w = s.get("worst_central")
    if w:
        where = f"「{WORKLOAD_LABELS.get(w['workload'], w['workload'])}」负载每秒 {w['rate']:g} 个请求"
        r.predicted(f"real.{r.mid}.worst.error", f"{where}:{SHOWN[w['metric']][0]}的预测误差(未饱和格子里最大的)",
                    abs(w["error"]) * 100, "%", "int", {"worst": "central"})
        if w["spread"] is not None:
            r.measured(f"real.{r.mid}.worst.spread", f"{where}:{SHOWN[w['metric']][0]}两次运行之差",
                       w["spread"] * 100, "%", "int", first, 2, "同一格子的两次运行")
        r.measured(f"real.{r.mid}.worst.rate", f"{where}:请求率", w["rate"], "req/s", "f1", first, 2, "—")
    a = s.get("worst_attainment")
    if a:
        where = f"「{WORKLOAD_LABELS.get(a['workload'], a['workload'])}」负载每秒 {a['rate']:g} 个请求"
        r.measured(f"real.{r.mid}.worst_att.rate", f"{where}:请求率", a["rate"], "req/s", "f1", first, 2, "—")
        r.measured(f"real.{r.mid}.worst_att.measured", f"{where}:达标率(实测)", a["measured"] * 100, "%", "int",
                   first, 2, "两次运行的均值")
        r.predicted(f"real.{r.mid}.worst_att.predicted", f"{where}:达标率(预测)", a["predicted"] * 100, "%", "int",
                    {"worst": "attainment"})
        r.predicted(f"real.{r.mid}.worst_att.p99_ttft_error", f"{where}:TTFT p99 的预测误差",
                    abs(a["p99_ttft_error"]) * 100, "%", "int", {"worst": "attainment_p99_ttft"})
    for half, h in e["halves"].items():
        r.predicted(f"real.{r.mid}.half{half}.fit_error", "步时模型对拟合它的那些迭代的误差(绝对值的中位数)",
                    h["fit_quality"]["median_abs_rel_error"] * 100, "%", "f1", {"half": half}, PREDICTION)
    sep = e.get("separate_calibration")
    if sep:
        for key, b in (("decode_b1", 1.0),):
            i = sep["step_model"]["decode_batch"].index(b)
            r.predicted(f"real.{r.mid}.separate.{key}", "单独校准压测里,一个请求单独解码一步的时间(中位数)",
                        sep["step_model"]["decode_seconds"][i] * 1e3, "ms", "f1", {"separate": key}, SEPARATE)
        d1 = [h["step_model"]["decode_seconds"][h["step_model"]["decode_batch"].index(1.0)] for h in
              e["halves"].values()]
        for end, value in (("low", min(d1)), ("high", max(d1))):
            which = "较小" if end == "low" else "较大"
            r.predicted(f"real.{r.mid}.cells.decode_b1_{end}",
                        f"格子运行里一个请求单独解码一步的时间(中位数;两半各拟合一次,取{which}者)",
                        value * 1e3, "ms", "f1", {"halves": "decode_b1", "end": end}, PREDICTION)
    if s.get("per_metric_median_spread"):
        for key in ("median_ttft_ms", "mean_tpot_ms", "p99_itl_ms"):
            r.measured(f"real.{r.mid}.summary.spread.{key}", f"{SHOWN[key][0]}:两次运行之差(未饱和格子的中位数)",
                       s["per_metric_median_spread"][key] * 100, "%", "f1", first, 2, "每个格子跑两次")


def _calibration(r: _Records, e: dict) -> None:
    pts = e["calibration_points"]
    dec = {d["batch"]: d for d in pts["decode"] if d["prompt_tokens"] == pts["settings"]["decode_prompt_tokens"]}
    pre = {p["prompt_tokens"]: p for p in pts["prefill"]}
    batch_max = max(dec)
    for b in (1, batch_max):
        d = dec[b]
        r.measured(f"real.{r.mid}.step.decode_b{'max' if b == batch_max else b}",
                   f"校准:{b} 个请求同时生成时每一步的时间(中位数)", d["median_s"] * 1e3, "ms", "f1", r.cal_file,
                   d["n"],
                   f"四分位 {d['q1_s'] * 1e3:.1f}–{d['q3_s'] * 1e3:.1f} ms")
    r.setting("cal.batch_max", "校准:同时生成的请求数的最大值", batch_max, "个", "int",
              "校准设置(config/real_engine.json calibration.decode_batches),最多到引擎的并发槽数")
    for tag, n, why in (("short", 64, "负载里短提示长度的上限"), ("long", 512, "「夹带长提示」负载里长提示的长度")):
        p = pre[n]
        r.measured(f"real.{r.mid}.step.prompt_{tag}", f"校准:单独一个 {n} token 的提示的 TTFT(中位数)",
                   p["median_s"] * 1e3, "ms", "int", r.cal_file, p["n"],
                   f"四分位 {p['q1_s'] * 1e3:.1f}–{p['q3_s'] * 1e3:.1f} ms")
        r.setting(f"cal.prompt_{tag}", f"校准里{'较短' if tag == 'short' else '较长'}的单独提示", n, "token", "int",
                  f"校准设置 config/real_engine.json calibration.prefill_prompt_tokens 中的一个:{why}")


# Why one thread (the run files keep the sentence of their day, which named a note outside the repository)
THREADS_SOURCE = ("在这台两核机器上试出来的(docs/serving-notes.md「真实引擎」一节,"
                  "config/real_engine.json server.threads_source):"
                  "-t 2 时 OpenMP 忙等互相拖垮,解码步在 32–590 ms 之间乱跳;-t 1 把另一个核留给压测客户端")


def _settings(r: _Records, e: dict, goals: dict) -> None:
    eng, model, srv = e["engine"], e["model"], e["server"]
    r.measured(f"real.{r.mid}.engine.build_s", "llama-server 在本机的编译时间(2 个并行任务)", eng["build_seconds"], "s",
               "int", r.cal_file, 1, "一次编译")
    r.measured(f"real.{r.mid}.engine.binary_mb", "llama-server 可执行文件大小", eng["binary_bytes"] / 1e6, "MB", "f1",
               r.cal_file, 1, "—")
    r.measured(f"real.{r.mid}.model.params_m", "随机权重模型的参数量(写入 GGUF 时清点)", model["parameters"] / 1e6, "M",
               "f1", r.cal_file, 1, "—")
    r.measured(f"real.{r.mid}.model.file_mb", "模型 GGUF 文件大小", model["file_bytes"] / 1e6, "MB", "int", r.cal_file,
               1, "—")
    note = "测量时引擎的设置(config/real_engine.json 的 server)"
    r.setting("server.slots", "并发槽数(llama-server -np)", srv["slots"], "个", "int", note)
    r.setting("server.batch_tokens", "每轮最多装的 token 数(llama-server -b)", srv["batch_tokens"], "token", "int",
              note)
    r.setting("server.threads", "计算线程数(llama-server -t)", srv["threads"], "个", "int", THREADS_SOURCE)
    for key, goal, label, unit in (
            ("goal.central", "central_median_abs_error", "目标:中位与均值类指标的预测误差上限", "%"),
            ("goal.tail", "tail_median_abs_error", "目标:p99 类指标的预测误差上限", "%"),
            ("goal.attainment", "attainment_abs_error", "目标:达标率的预测误差上限", "百分点")):
        r.setting(key, label, round(goals[goal] * 100, 9), unit, "int", GOAL_SOURCE)  # the comparison's own goals
    first = r.first_run
    load = e["load"]
    r.measured(f"real.{r.mid}.load.requests", "每个格子每次运行的请求数", load["requests"], "个", "int", first,
               load["runs"], "每个格子、每次运行相同")
    if load.get("long_prompt_tokens"):
        r.measured(f"real.{r.mid}.load.long_prompt_tokens", "长提示的长度", load["long_prompt_tokens"], "token", "int",
                   first, load["runs"], "—")
        r.measured(f"real.{r.mid}.load.long_share", "长提示请求所占比例(各次运行的平均)", load["long_share"] * 100, "%",
                   "int", first, load["runs"], "—")
    for key in ("ttft", "tpot"):
        r.setting(f"slo.{key}", f"实测部分的 SLO:{key.upper()} 上限", e["slo_ms"][key], "ms", "int",
                  e.get("slo_assumption") or "config/real_engine.json slo_ms")


def page_block(comparison: dict) -> dict:
    """{"engines": [...], "provenance": {...}}; empty when nothing was measured."""
    engines, prov = [], {}
    for e in comparison.get("engines", []):
        r = _Records(e, prov)
        rows = _cells(r, e)
        _summary(r, e)
        _calibration(r, e)
        _settings(r, e, comparison["goals"])
        engines.append({"id": r.mid, "machine": e["machine"], "worst": e["summary"].get("worst_central"),
                        "layout": bool(r.layout),
                        "worst_attainment": e["summary"].get("worst_attainment"), "engine": e["engine"],
                        "server": e["server"],
                        "calibration": e["calibration"], "rows": rows, "summary": e["summary"],
                        "separate_calibration": e.get("separate_calibration"),
                        "speed_check_bound": e.get("speed_check_bound"),
                        "workloads": [w for w in WORKLOAD_LABELS if any(x["workload"] == w for x in rows)],
                        "workload_labels": WORKLOAD_LABELS})
    return {"engines": engines, "provenance": prov}


# The lab's prefix-reuse table (prefix_comparison.py): metric -> (label, unit, format, scale)
PREFIX_SHOWN = {"median_ttft_ms": ("TTFT 中位数", "ms", "int", 1.0), "p99_ttft_ms": ("TTFT p99", "ms", "int", 1.0),
                "mean_tpot_ms": ("TPOT 均值", "ms", "f1", 1.0)}
PREFIX_LABELS = {"system_prompts": ("共享系统提示", "个请求"), "conversations": ("多轮对话", "段会话")}
PREFIX_GOAL_SOURCE = ("issue 42 定下的目标:复用 token 数完全相同的请求 ≥ 95%,中位类指标的误差同真实引擎对照的目标 ≤ 10%"
                      "(config/real_engine.json comparison.goals)")
PREFIX_PREDICTION = ("llama.cpp 的调度与它的槽(每个槽留着上一个请求的 token,新请求挑公共前缀占比最大的空闲槽;"
                     "scripts/serving/engine/prefix.py)+ 步时模型,只用同一时段单独做的校准压测(提示互不相同)拟合,"
                     "前缀复用的运行一次也没用来拟合")


class _PrefixRecords(_Records):
    """The prefix-reuse runs' records: data under precomputed/serve-prefix/, predictions by prefix_comparison.py."""

    def __init__(self, e: dict, prov: dict):
        super().__init__(e, prov, "precomputed/serve-prefix")

    def predicted(self, rid, label, value, unit, fmt, args, fit=PREFIX_PREDICTION):
        self.prov[rid] = pv.calibrated(rid, label, value, unit, fmt, fit=fit + self.layout, data=self.data,
                                       script="scripts/realengine/prefix_comparison.py", args=args)


def prefix_page_block(comparison: dict) -> dict:
    """{"engines": [...], "provenance": {...}} for the prefix-reuse runs; record ids
    realpfx.<machine>.<workload>.r<rate>.<metric>.{measured,predicted}, realpfx.<machine>.summary.*."""
    engines, prov = [], {}
    for e in comparison.get("engines", []):
        r = _PrefixRecords(e, prov)
        rows = []
        for c in e["cells"]:
            base = f"realpfx.{r.mid}.{c['workload']}.r{c['rate']:g}"
            name, per = PREFIX_LABELS.get(c["workload"], (c["workload"], "个请求"))
            where = f"「{name}」负载,每秒 {c['rate']:g} {per}"
            for key, (label, unit, fmt, scale) in PREFIX_SHOWN.items():
                r.measured(f"{base}.{key}.measured", f"{where}:{label}(实测)", c["measured"][key] * scale, unit, fmt,
                           c["file"], 1, "—")
                r.predicted(f"{base}.{key}.predicted", f"{where}:{label}(模拟器的预测)", c["predicted"][key] * scale,
                            unit, fmt, {"workload": c["workload"], "rate": c["rate"], "metric": key})
            r.measured(f"{base}.hit.measured", f"{where}:提示 token 中由槽复用的比例(引擎报告)",
                       c["reuse"]["measured_hit"] * 100, "%", "int", c["file"], 1, "—")
            r.predicted(f"{base}.hit.predicted", f"{where}:提示 token 中由槽复用的比例(模拟)",
                        c["reuse"]["predicted_hit"] * 100, "%", "int",
                        {"workload": c["workload"], "rate": c["rate"], "metric": "hit"})
            r.predicted(f"{base}.reuse_equal", f"{where}:复用 token 数与引擎报告完全相同的请求占比",
                        c["reuse"]["equal_share"] * 100, "%", "int",
                        {"workload": c["workload"], "rate": c["rate"], "metric": "reuse_equal"})
            r.measured(f"{base}.rate", f"{where}:发送速率", c["rate"], "/s", exact_format(c["rate"]), c["file"], 1, "—")
            r.measured(f"{base}.requests", f"{where}:请求数", c["requests"], "个", "int", c["file"], 1, "—")
            rows.append({"workload": c["workload"], "rate": c["rate"], "saturated": c["saturated"], "id": base,
                         "label": name, "per": per})
        s = e["summary"]
        for key, label in (("reuse_equal_share", "所有格子合起来:复用 token 数与引擎报告完全相同的请求占比"),
                           ("central_median_abs_error", "TTFT 中位数、TPOT 均值、E2EL 中位数的预测误差(未饱和格子,"
                                                        "绝对值的中位数)"),
                           ("tail_median_abs_error", "各 p99 的预测误差(未饱和格子,绝对值的中位数)")):
            if s[key] is not None:
                fmt = "int" if key == "reuse_equal_share" else "f1"
                r.predicted(f"realpfx.{r.mid}.summary.{key}", label, s[key] * 100, "%", fmt, {"summary": key})
        r.measured(f"realpfx.{r.mid}.summary.below_saturation", "没饱和的格子数(完成率不低于发送率的 90%)",
                   s["below_saturation"], "个", "int", r.first_run, 1, "—")
        if s.get("speed_moved"):
            r.measured(f"realpfx.{r.mid}.summary.speed_moved", SPEED_MOVED, s["speed_moved"], "个", "int", r.first_run,
                       1, "—")
        for key, value, label in (("goal.reuse", 95, "目标:复用 token 数与引擎报告完全相同的请求占比下限"),
                                  ("goal.central", 10, "目标:中位与均值类指标的预测误差上限")):
            rid = f"realpfx.{r.mid}.{key}"
            prov[rid] = pv.assumed(rid, label, value, "%", "int", assumption=PREFIX_GOAL_SOURCE)
        r.measured(f"realpfx.{r.mid}.summary.requests", "所有格子合起来的请求数(引擎报告了复用数的)",
                   s["reuse_requests"], "个", "int", r.first_run, 1, "—")
        r.predicted(f"realpfx.{r.mid}.summary.reuse_differ", "所有格子合起来:复用 token 数与引擎报告不同的请求数",
                    s["reuse_differ"], "个", "int", {"summary": "reuse_differ"})
        r.predicted(f"realpfx.{r.mid}.summary.reuse_differ_busy",
                    "其中发出时所有槽都在忙的请求数(客户端测得:在途请求数不少于槽数)",
                    s["reuse_differ_all_slots_busy"], "个", "int", {"summary": "reuse_differ_all_slots_busy"})
        r.predicted(f"realpfx.{r.mid}.summary.reuse_differ_turn",
                    "其余的里,模拟中同一会话的上一轮还没结束就发出的下一轮(按实测的发送时刻)",
                    s["reuse_differ_previous_turn"], "个", "int", {"summary": "reuse_differ_previous_turn"})
        engines.append({"id": r.mid, "rows": rows, "summary": s, "machine": e["machine"],
                        "calibration": e["calibration"], "fitted_on": e["fitted_on"]})
    return {"engines": engines, "provenance": prov}


def measured(records: list[Path], serve_comparison: Path, serve_prefix_comparison: Path | None = None,
             serve_heldout_comparison: Path | None = None) -> dict:
    """bench_medians.json: the KV-cache records' medians and ratios (scripts/bench/records.py), the real engine's
    runs beside the simulator's predictions (`serve_real`), its prefix-reuse runs (`serve_real_prefix`) and its
    held-out cells (`serve_real_heldout`): every measured number the page shows, in one file."""
    from scripts.bench.records import merge
    from scripts.record.inputs import read_json

    out = merge(records)
    real = page_block(read_json(serve_comparison))
    out["serve_real"] = real["engines"]
    out["provenance"].update(real["provenance"])
    if serve_prefix_comparison is not None:
        pfx = prefix_page_block(read_json(serve_prefix_comparison))
        out["serve_real_prefix"] = pfx["engines"]
        out["provenance"].update(pfx["provenance"])
    if serve_heldout_comparison is not None:
        held = heldout_page_block(read_json(serve_heldout_comparison))
        out["serve_real_heldout"] = held["engines"]
        out["provenance"].update(held["provenance"])
    return out


# The lab's held-out table (heldout_comparison.py): metric -> (label, unit, format, scale)
HELD_SHOWN = {"median_ttft_ms": ("TTFT 中位数", "ms", "int", 1.0), "p99_ttft_ms": ("TTFT p99", "ms", "int", 1.0),
              "mean_tpot_ms": ("TPOT 均值", "ms", "f1", 1.0), "median_e2el_ms": ("E2EL 中位数", "ms", "int", 1.0),
              "slo_attainment": ("SLO 达标率", "%", "int", 100.0)}
HELD_LABELS = {"long_answers": "长提示长回答", "equal_requests": "等长请求闭环"}
HELD_GOAL_SOURCE = ("issue 43 定下的目标:同一时段校准、留出的负载族在未饱和时中位类误差 ≤ 10%、p99 类 ≤ 20%、"
                    "达标率 ≤ 5 个百分点;闭环的 TTFT p50 与 p99 要分得开,达标率差 ≤ 10 个百分点"
                    "(config/real_engine.json comparison.goals)")
HELD_PREDICTION = ("llama.cpp 的调度 + 步时模型,只用同一时段先做的三次校准压测(课程自己的客户端、随机提示)拟合;"
                   "这些格子换了客户端(aiperf)、换了长度分布,一次也没拿来拟合;泊松格子按各自实测的发送时刻发,"
                   "闭环按客户端实测的补发间隔发(客户端一侧的输入,与服务器的快慢无关)")
HELD_AT_ONCE = HELD_PREDICTION + ";闭环的客户端不按实测的补发间隔,而在请求结束的那一刻补发(作对照)"
HELD_PATTERN = HELD_PREDICTION + (";闭环的开局改成头几个请求同时到达(其余按实测的补发间隔),"
                                  "看模型会停在哪种排法里(heldout_comparison.start_of)")
HELD_LAYOUT = HELD_PREDICTION + (";这次测量前没有先把服务器的槽排成已知的次序,改从两种极端的开局各预测一次:"
                                 "闭环的请求占相邻的槽(一步一次前向)或隔开的槽(一步每个请求一次前向)"
                                 "(heldout_comparison.slot_layouts)")
HELD_NOISY = HELD_PREDICTION + ";每一轮的步时再按校准里测到的步时噪声随机拉伸(5 个种子取中位数,stepmodel.Noisy)"
HELD_OTHER_CALIBRATION = ("同样的调度 + 步时模型,改用另一次提交的校准({folder}/:"
                          "那次的单独步时与它的校准压测)拟合")


class _HeldOutRecords(_Records):
    """The held-out cells' records: data under precomputed/serve-heldout/, predictions by heldout_comparison.py."""

    def __init__(self, e: dict, prov: dict):
        super().__init__(e, prov, e.get("folder", "precomputed/serve-heldout"))  # the session's folder

    def predicted(self, rid, label, value, unit, fmt, args, fit=HELD_PREDICTION, data=None):
        self.prov[rid] = pv.calibrated(rid, label, value, unit, fmt, fit=fit + self.layout, data=data or self.data,
                                       script="scripts/realengine/heldout_comparison.py", args=args)


def _held_where(c: dict) -> str:
    name = HELD_LABELS.get(c["workload"], c["workload"])
    if c["concurrency"]:
        return f"「{name}」,同时最多 {c['concurrency']} 个请求"
    return f"「{name}」,每秒 {c['rate']:g} 个请求"


def _layout_records(r: _HeldOutRecords, layouts: dict, base: str, where: str, args: dict) -> None:
    """A closed loop's prediction from the two slot layouts (heldout_comparison.slot_layouts): mean TPOT and
    attainment, realho.<...>.layout_{adjacent,apart}.<metric>."""
    for name, zh in (("adjacent", "相邻"), ("apart", "隔开")):
        for key in ("mean_tpot_ms", "slo_attainment"):
            label, unit, fmt, scale = HELD_SHOWN[key]
            r.predicted(f"{base}.layout_{name}.{key}", f"{where}:{label}(预测,无噪声,开局时请求占{zh}的槽)",
                        layouts[name][key] * scale, unit, fmt, {**args, "metric": key, "slot_layout": name},
                        HELD_LAYOUT)


def _loop_records(r: _HeldOutRecords, c: dict, base: str, where: str, args: dict) -> None:
    """A closed loop's client turnaround (measured), its waves' first prefill sizes (measured and predicted), the
    TPOT of the requests that met the TTFT target, and the prediction with every request released at the finish."""
    turn = c.get("turnaround_ms")
    if turn:
        for key, label in (("median", "中位数"), ("p95", "p95")):
            r.measured(f"{base}.turnaround_{key}", f"{where}:客户端补发的间隔(一个请求结束到它腾出的位置发出下一个,"
                       f"{label})", turn[key], "ms", "f1", c["file"], 1, "—")
    sizes = sorted({k for w in (c["send_waves"], c.get("predicted_waves")) if w for k in w["first_part"]}, key=int)
    for k in sizes:
        label = f"{where}:第一批 prefill 恰好是 {k} 个请求的轮数"
        r.measured(f"{base}.first{k}.measured", label + "(实测)", c["send_waves"]["first_part"].get(k, 0), "轮", "int",
                   c["file"], 1, "—")
        if c.get("predicted_waves"):
            r.predicted(f"{base}.first{k}.predicted", label + "(预测,无噪声)", c["predicted_waves"]["first_part"].get(
                k, 0), "轮", "int", {**args, "first_part": k})
    met = c.get("ttft_met_tpot_ms")
    if met and met["measured"] is not None:
        label = f"{where}:达到 TTFT 目标的那些请求的 TPOT 中位数"
        r.measured(f"{base}.met_tpot.measured", label + "(实测)", met["measured"], "ms", "f1", c["file"], 1, "—")
        if met["predicted"] is not None:
            r.predicted(f"{base}.met_tpot.predicted", label + "(预测,无噪声)", met["predicted"], "ms", "f1",
                        {**args, "met_tpot": True})
    bounds = start_range(c.get("starts"))
    if bounds:  # the settled patterns the model has: the lowest and highest attainment over the starts
        for end, st in bounds.items():
            r.predicted(f"{base}.pattern_{end}.attainment", f"{where}:达标率(预测,无噪声,头 {st['together']} 个请求同时"
                        f"到达的开局,{'各种开局里最低' if end == 'low' else '各种开局里最高'})",
                        st["slo_attainment"] * 100, "%", "int", {**args, "metric": "slo_attainment",
                                                                 "together": st["together"]}, HELD_PATTERN)
            r.predicted(f"{base}.pattern_{end}.together", f"{where}:那种开局里同时到达的请求数", st["together"], "个",
                        "int", {**args, "together": st["together"]}, HELD_PATTERN)
            for k, n in (st["first_part"] or {}).items():
                r.predicted(f"{base}.pattern_{end}.first{k}",
                            f"{where}:那种开局里第一批 prefill 恰好是 {k} 个请求的轮数",
                            n, "轮", "int", {**args, "together": st["together"], "first_part": k}, HELD_PATTERN)
    if c.get("slot_layouts"):
        _layout_records(r, c["slot_layouts"], base, where, args)
    once = c.get("released_at_once")
    if once:
        for key, (label, unit, fmt, scale) in HELD_SHOWN.items():
            if key in once:
                r.predicted(f"{base}.{key}.at_once", f"{where}:{label}(预测,无噪声,客户端在请求结束的那一刻补发)",
                            once[key] * scale, unit, fmt, {**args, "metric": key, "released_at_once": True},
                            HELD_AT_ONCE)


def heldout_page_block(comparison: dict) -> dict:
    """{"engines": [...], "provenance": {...}} for the held-out cells; record ids
    realho.<machine>.<workload>.{r<rate>,c<concurrency>}.<metric>.{measured,predicted,noisy}, a closed loop's
    .<metric>.at_once, .turnaround_*, .first<k>.{measured,predicted}, .met_tpot.*,
    realho.<machine>.{held,noisy,fitted,other,loop,goal,slo}.*."""
    engines, prov, done = [], {}, set()
    for e in comparison.get("engines", []):
        if (e["engine"]["id"], e["machine"]["id"]) in done:
            continue  # a later session of the same engine and machine: its records are the repeat's (_repeat_block)
        done.add((e["engine"]["id"], e["machine"]["id"]))
        r = _HeldOutRecords(e, prov)
        rows = []
        for c in e["cells"]:
            cell = f"c{c['concurrency']}" if c["concurrency"] else f"r{c['rate']:g}"
            base, where = f"realho.{r.mid}.{c['workload']}.{cell}", _held_where(c)
            args = {"workload": c["workload"], "cell": cell}
            for key, (label, unit, fmt, scale) in HELD_SHOWN.items():
                r.measured(f"{base}.{key}.measured", f"{where}:{label}(实测,aiperf)", c["measured"][key] * scale,
                           unit, fmt, c["file"], 1, "—")
                r.predicted(f"{base}.{key}.predicted", f"{where}:{label}(预测,无噪声)", c["predicted"][key] * scale,
                            unit, fmt, {**args, "metric": key})
                if c.get("noisy"):
                    r.predicted(f"{base}.{key}.noisy", f"{where}:{label}(预测,带步时噪声)",
                                c["noisy"]["predicted"][key] * scale, unit, fmt, {**args, "metric": key, "noisy": True},
                                HELD_NOISY)
            if c["concurrency"]:
                r.measured(f"{base}.concurrency", f"{where}:客户端保持的在途请求数", c["concurrency"], "个", "int",
                           c["file"], 1, "—")
                sw = c.get("send_waves")
                if sw:
                    r.measured(f"{base}.waves", f"{where}:客户端补发的轮数(发送间隔超过 E2EL 中位数一半处分轮)",
                               sw["waves"], "轮", "int", c["file"], 1, "—")
                    r.measured(f"{base}.split", f"{where}:被拆成几次 prefill 的轮数(一轮里最慢的 TTFT 超过最快的 "
                               "1.5 倍)", sw["split"], "轮", "int", c["file"], 1, "—")
                    if sw["split"]:
                        for key, label in (("split_fast_ttft_ms", "先 prefill 的"),
                                           ("split_slow_ttft_ms", "后 prefill 的")):
                            r.measured(f"{base}.{key}", f"{where}:被拆开的那些轮里,{label}请求的 TTFT(各轮中位数)",
                                       sw[key], "ms", "int", c["file"], 1, "—")
                    _loop_records(r, c, base, where, args)
            else:
                r.measured(f"{base}.rate", f"{where}:发送请求率", c["rate"], "req/s", "f2", c["file"], 1, "—")
            r.measured(f"{base}.prompt_tokens", f"{where}:提示的平均长度(引擎计数)", c["prompt_tokens_mean"], "token",
                       "int", c["file"], 1, "—")
            r.measured(f"{base}.output_tokens", f"{where}:回答的平均长度(引擎计数)", c["output_tokens_mean"], "token",
                       "int", c["file"], 1, "—")
            ks = c["noisy"]["ks"] if c.get("noisy") else c["ks"]
            for k in ("ttft", "tpot"):
                r.predicted(f"{base}.ks_{k}", f"{where}:实测与预测的 {k.upper()} 分布之间的 KS 距离", ks[k], "", "f2",
                            {**args, "ks": k}, HELD_NOISY if c.get("noisy") else HELD_PREDICTION)
            rows.append({"workload": c["workload"], "label": HELD_LABELS.get(c["workload"], c["workload"]),
                         "rate": c["rate"], "concurrency": c["concurrency"], "saturated": c["saturated"],
                         "speed_moved": bool(c.get("speed_moved")), "id": base, "noisy": bool(c.get("noisy")),
                         "send_waves": c.get("send_waves")})
        sums = e["summaries"]
        central = "TTFT 中位数、TPOT 均值、E2EL 中位数的预测误差(未饱和的泊松格子,绝对值的中位数)"
        tail = "各 p99 的预测误差(未饱和的泊松格子,绝对值的中位数)"
        att = "达标率的最大预测误差(未饱和的泊松格子)"
        for tag, s, fit in (("held", sums["held_out"], HELD_PREDICTION), ("noisy", sums.get("held_out_noisy"),
                                                                         HELD_NOISY)):
            if not s:
                continue
            for key, label, unit, scale in (("central_median_abs_error", central, "%", 100),
                                            ("tail_median_abs_error", tail, "%", 100),
                                            ("attainment_max_abs_error", att, "百分点", 100),
                                            ("saturated_central_median_abs_error",
                                             "已饱和的泊松格子:中位与均值类的预测误差(绝对值的中位数)", "%", 100)):
                if s[key] is not None:
                    r.predicted(f"realho.{r.mid}.{tag}.{key}", label, s[key] * scale, unit, "f1", {tag: key}, fit)
            for k in ("ttft", "tpot"):
                if s["ks_median"][k] is not None:
                    r.predicted(f"realho.{r.mid}.{tag}.ks_{k}", f"所有格子 {k.upper()} 分布的 KS 距离(中位数)",
                                s["ks_median"][k], "", "f2", {tag: f"ks_{k}"}, fit)
        s = sums["held_out"]
        first = e["cells"][0]["file"]
        for key, label in (("below_saturation", "没饱和的泊松格子数(完成率不低于发送率的 90%)"),
                           ("saturated", "已饱和的泊松格子数")):
            r.measured(f"realho.{r.mid}.held.{key}", label, s[key], "个", "int", first, 1, "—")
        if s.get("speed_moved"):
            r.measured(f"realho.{r.mid}.held.speed_moved", SPEED_MOVED, s["speed_moved"], "个", "int", first, 1, "—")
        fam = sums["fitted_family"]
        for key, label in (("central_median_abs_error", "校准压测本身(拟合所用):中位与均值类的误差(样本内)"),
                           ("tail_median_abs_error", "校准压测本身(拟合所用):p99 类的误差(样本内)")):
            if fam[key] is not None:
                r.predicted(f"realho.{r.mid}.fitted.{key}", label, fam[key] * 100, "%", "f1", {"fitted": key})
        others = {}  # one other calibration of each kind: another day ("other"), the same day ("hour")
        for o in e.get("other_calibrations", []):
            others.setdefault("other" if o["when"] == "day" else "hour", o)
        for tag, o in others.items():
            folder = Path(o["calibration"]).parent.as_posix()
            odata = [o["calibration"], f"{folder}/*-calibration-*.json", *r.data]
            which = f"另一天({o['date']})的校准" if tag == "other" else f"同一天另一时段({o['taken']})的校准"
            for key, label in (("central_median_abs_error", "中位与均值类的预测误差(未饱和的泊松格子)"),
                               ("tail_median_abs_error", "p99 类的预测误差(未饱和的泊松格子)")):
                if o["summary"][key] is not None:
                    r.predicted(f"realho.{r.mid}.{tag}.{key}", f"用{which}:{label}", o["summary"][key] * 100, "%",
                                "f1", {tag: key}, HELD_OTHER_CALIBRATION.format(folder=folder), odata)
            r.measured(f"realho.{r.mid}.{tag}.lone_step_ms", f"{which}:单独一个请求解码一步(中位数)",
                       o["lone_step_ms"]["committed"], "ms", "f1", o["calibration"], 1, "—")
            if tag == "hour":  # the start stamps (`date`) of the two calibrations' load runs
                r.measured(f"realho.{r.mid}.hour.hours_apart", "两次校准相隔多少小时(各自校准压测的开始时刻之差)",
                           abs(o["hours_apart"]), "小时", "f1", o["fitted_on"][0], 1, "—")
        if others:
            o = next(iter(others.values()))
            r.measured(f"realho.{r.mid}.held.lone_step_ms", "本次校准:单独一个请求解码一步(中位数)",
                       o["lone_step_ms"]["this_session"], "ms", "f1", r.cal_file, 1, "—")
            if o["speed_probe_itl_ms"]:
                lo, hi = o["speed_probe_itl_ms"]
                for end, v in (("low", lo), ("high", hi)):
                    r.measured(f"realho.{r.mid}.held.probe_{end}",
                               f"每个格子前后的速度探测:单独请求的 ITL 中位数({'最小' if end == 'low' else '最大'})",
                               v, "ms", "f2", first, 1, "格子前后各一次")
        for key in ("ttft", "tpot"):
            rid = f"realho.{r.mid}.slo.{key}"
            prov[rid] = pv.assumed(rid, f"留出格子的 SLO:{key.upper()} 上限", e["slo_ms"][key], "ms", "int",
                                   assumption=e.get("slo_assumption") or "config/real_engine.json slo_ms")
        if e["noise_seeds"]:
            rid = f"realho.{r.mid}.noise_seeds"
            prov[rid] = pv.assumed(rid, "带噪声的预测:每个格子模拟的次数(种子数)", e["noise_seeds"], "个", "int",
                                   assumption="config/real_engine.json comparison.held_out_noise_seeds(假设)")
        goals = comparison["goals"]  # config/real_engine.json comparison.goals, as the comparison used them
        for key, goal, unit, label in (("central", "central_median_abs_error", "%", "目标:中位与均值类的预测误差上限"),
                                       ("tail", "tail_median_abs_error", "%", "目标:p99 类的预测误差上限"),
                                       ("attainment", "attainment_abs_error", "百分点", "目标:达标率的预测误差上限"),
                                       ("loop_attainment", "closed_loop_attainment_abs_error", "百分点",
                                        "目标:闭环达标率的预测误差上限")):
            rid = f"realho.{r.mid}.goal.{key}"
            prov[rid] = pv.assumed(rid, label, round(goals[goal] * 100, 6), unit, "int", assumption=HELD_GOAL_SOURCE)
        sessions = sorted((x for x in comparison["engines"] if (x["engine"]["id"], x["machine"]["id"]) ==
                           (e["engine"]["id"], e["machine"]["id"])), key=lambda x: session_key(x["session"]))
        engines.append({"id": r.mid, "rows": rows, "summaries": sums, "machine": e["machine"],
                        "layout": bool(r.layout),
                        "slots_known": [k + 1 for k, x in enumerate(sessions)
                                        if x.get("slots_known")],
                        "calibration": e["calibration"], "fitted_on": e["fitted_on"], "noise_seeds": e["noise_seeds"],
                        "other_calibrations": {
                            tag: {**{k: o[k] for k in ("calibration", "date", "taken", "hours_apart",
                                                         "lone_step_ratio", "lone_step_moved")},
                                  "folder": Path(o["calibration"]).parent.as_posix()} for tag, o in others.items()},
                        "client": e["cells"][0]["client"],
                        "repeat": _repeat_block(r, e, comparison, prov)})
    return {"engines": engines, "provenance": prov}


def _floor_records(r: _HeldOutRecords, c: dict, floor: dict, base: str, where: str, args: dict,
                   data: list[str]) -> None:
    """A closed loop's attainment across the sessions with its slots known and its speed kept
    (heldout_comparison.attainment_floor): lowest, highest, the floor no single prediction gets under, and how many
    of those measurements the model's band of starts holds."""
    label, unit, fmt, scale = HELD_SHOWN["slo_attainment"]
    first, n = c["files"][c["present"].index(floor["sessions"][0])], len(floor["sessions"])
    kept = f"槽次序已知、速度没变的 {n} 次测量"
    for key, what in (("low", "最低"), ("high", "最高")):
        r.measured(f"{base}.{key}", f"{where}:{label}{what}({kept})", floor[key] * scale, unit, fmt,
                   first, n, f"{n} 次测量,各自校准")
    r.measured(f"{base}.floor", f"{where}:任何一个预测值至少与其中一次实测相差的百分点((最高 - 最低) / 2,{kept})",
               floor["floor"] * 100, "百分点", "f1", first, n, f"{n} 次测量,各自校准")
    r.measured(f"{base}.sessions", f"{where}:{kept}的次数", n, "次", "int", first, n, "—")
    if floor["with_starts"]:
        r.predicted(f"{base}.within_starts", f"{where}:实测达标率落在模型开局上下界之内的次数({kept})",
                    floor["within_starts"], "次", "int", {**args, "figure": "within_starts"}, data=data)


REPEAT_SHOWN = ("median_ttft_ms", "slo_attainment")  # the repeat table's metrics (HELD_SHOWN's formats)


def _loop_over_goal(c: dict, k: int, comparison: dict) -> bool:
    """Whether a closed loop's k-th measurement and its prediction differ by more than the closed-loop goal: the
    repeat's own attainment error (predict.cell_errors) against the closed loop's goal (comparison.goals)
    (`comparison["goals"]`); False for a Poisson cell."""
    if not c["concurrency"]:
        return False
    return abs(c["error"][k]["slo_attainment"]) > comparison["goals"]["closed_loop_attainment_abs_error"] + 1e-12


def _repeat_block(r1: _HeldOutRecords, e1: dict, comparison: dict, prov: dict) -> dict | None:
    """The sessions after the first of one engine + machine (heldout_comparison.repeats): per cell each later
    session's measurement and prediction (the first session's are its own records), the summary of the sessions'
    mean and of each session, and how far the sessions' measurements are apart. Record ids
    realho.<machine>.<session>.<workload>.<cell>.<metric>.{measured,predicted}, realho.<machine>.rep.*."""
    rep = next((x for x in comparison.get("repeats", []) if x["engine"] == e1["engine"]["id"]
                and x["machine"] == e1["machine"]["id"]), None)
    if rep is None:
        return None
    by_session = {e["session"]: e for e in comparison["engines"] if e["engine"]["id"] == rep["engine"]
                  and e["machine"]["id"] == rep["machine"]}
    recs = [r1] + [_HeldOutRecords(by_session[t], prov) for t in rep["sessions"][1:]]
    mid, rows = r1.mid, []
    data = [d for r in recs for d in r.data]
    noisy = any(x.get("noisy") for e in by_session.values() for x in e["cells"])
    for c in rep["cells"]:
        cell = f"c{c['concurrency']}" if c["concurrency"] else f"r{c['rate']:g}"
        where, first = _held_where(c), f"realho.{mid}.{c['workload']}.{cell}"
        ids = [{"base": first, "predicted": "noisy" if noisy else "predicted", "moved": c["speed_moved_each"][0],
                "over_goal": _loop_over_goal(c, 0, comparison)} if 0 in c["present"] else None]
        for i, (r, tag) in enumerate(zip(recs[1:], rep["sessions"][1:], strict=True), start=1):
            if i not in c["present"]:  # a session that stopped before this cell
                ids.append(None)
                continue
            k, base = c["present"].index(i), f"realho.{mid}.{tag}.{c['workload']}.{cell}"
            for key in REPEAT_SHOWN:
                label, unit, fmt, scale = HELD_SHOWN[key]
                r.measured(f"{base}.{key}.measured", f"{where}:{label}(实测,第 {i + 1} 次)",
                           c["measured"][k][key] * scale, unit, fmt, c["files"][k], 1, "—")
                r.predicted(f"{base}.{key}.predicted", f"{where}:{label}(预测,第 {i + 1} 次自己的校准)",
                            c["predicted"][k][key] * scale, unit, fmt,
                            {"session": tag, "workload": c["workload"], "cell": cell, "metric": key},
                            HELD_NOISY if noisy else HELD_PREDICTION)
            layouts = c["slot_layouts"][k]
            if layouts:  # a closed loop run with the slots in an unknown order: the band the layouts leave
                _layout_records(r, layouts, base, f"{where}(第 {i + 1} 次)",
                                {"session": tag, "workload": c["workload"], "cell": cell})
                label, unit, fmt, scale = HELD_SHOWN["mean_tpot_ms"]
                r.measured(f"{base}.mean_tpot_ms.measured", f"{where}:{label}(实测,第 {i + 1} 次)",
                           c["measured"][k]["mean_tpot_ms"] * scale, unit, fmt, c["files"][k], 1, "—")
            ids.append({"base": base, "predicted": "predicted", "layouts": layouts,
                        "moved": c["speed_moved_each"][k], "over_goal": _loop_over_goal(c, k, comparison)})
        floor = c.get("attainment_floor")
        if floor:
            _floor_records(r1, c, floor, f"realho.{mid}.rep.{c['workload']}.{cell}.floor", where,
                           {"workload": c["workload"], "cell": cell}, data)
        rows.append({"label": HELD_LABELS.get(c["workload"], c["workload"]), "rate": c["rate"],
                     "concurrency": c["concurrency"], "saturated": c["saturated"],
                     "speed_moved": c["speed_moved"], "first": first,
                     "ids": ids, "complete": len(c["present"]) == len(rep["sessions"]),
                     "floor": {**floor, "base": f"realho.{mid}.rep.{c['workload']}.{cell}.floor"} if floor else None})
    s = rep["summary"]
    fit = (HELD_NOISY if noisy else HELD_PREDICTION) + ";每次测量各用自己那一时段的校准预测"
    figures = (("central_median_abs_error", "中位与均值类的预测误差(绝对值的中位数)", "%"),
               ("tail_median_abs_error", "p99 类的预测误差(绝对值的中位数)", "%"),
               ("attainment_max_abs_error", "达标率的最大预测误差", "百分点"))
    n = len(rep["sessions"])
    for key, label, unit in figures:
        if s["mean"][key] is not None:
            r1.predicted(f"realho.{mid}.rep.mean.{key}",
                         f"{n} 次测量的均值对 {n} 次预测的均值:{label}(未饱和的泊松格子)",
                         s["mean"][key] * 100, unit, "f1", {"repeat": "mean", "figure": key}, fit, data)
        for i, per in enumerate(s["per_session"]):
            if per[key] is not None:
                r1.predicted(f"realho.{mid}.rep.s{i + 1}.{key}", f"只看第 {i + 1} 次测量:{label}(未饱和的泊松格子)",
                             per[key] * 100, unit, "f1", {"repeat": i + 1, "figure": key}, fit, data)
    files = [f for c in rep["cells"] for f in c["files"]]
    for key, label, unit in (("central_median", "中位与均值类", "%"), ("tail_median", "p99 类", "%"),
                             ("attainment_median", "达标率(中位数)", "百分点"),
                             ("attainment_max", "达标率(最大)", "百分点")):
        if s["spread"][key] is not None:
            r1.measured(f"realho.{mid}.rep.spread.{key}", f"同一格子 {n} 次测量之间相差多少:{label}(未饱和的泊松格子)",
                        s["spread"][key] * 100, unit, "f1", files[0], n, f"{n} 次测量,各自校准")
    r1.measured(f"realho.{mid}.rep.sessions", "留出格子整套测量的次数(每次先各自校准)", n, "次", "int", files[0], n,
                "—")
    r1.measured(f"realho.{mid}.rep.below_saturation", "各次都没饱和、速度也没变的泊松格子数(重复测量的汇总只算这些)",
                rep["below_saturation"], "个", "int", files[0], n, "—")
    return {"sessions": rep["sessions"], "rows": rows, "summary": s,
            "dates": [by_session[t]["machine"].get("date") for t in rep["sessions"]]}
