"""Merge the committed benchmark records (precomputed/bench/*.json) into the medians, cache/no-cache ratios
and per-position traces the page shows, one provenance record per number; and check one record."""

import datetime as dt
import hashlib
import re
from pathlib import Path

from scripts.page.display import format_number
from scripts.record.inputs import InputError, read_json

SCHEMA_VERSION = 2
MACHINE_FIELDS = ("id", "device", "cpu", "cores", "accelerator", "torch", "torch_threads", "os", "date", "git_commit",
                  "slurm_job_id", "slurm_partition")
RESULT_FIELDS = ("new_tokens", "kv_cache", "median_s", "q1_s", "q3_s", "min_s", "max_s", "runs", "tokens_identical")
TOP_FIELDS = {"schema_version", "kind", "machine", "model", "method", "results", "per_step"}
EXTRA_MACHINE_FIELDS = {"python", "hostname"}
MACHINE_ID = re.compile(r"^(cpu|cuda)-[a-z0-9-]{1,48}-(\d+c-)?torch[0-9a-z.]+$")


def check_record(rec: object, name: str) -> dict:
    def fail(field: str, why: str):
        raise InputError(f"{name}: field {field} {why}")

    if not isinstance(rec, dict):
        fail("(top level)", "must be an object")
    if rec.get("schema_version") != SCHEMA_VERSION:
        fail("schema_version", f"is {rec.get('schema_version')!r}; this kit reads version {SCHEMA_VERSION} "
             "(re-run `make bench`)")
    for key in ("machine", "model", "results", "per_step"):
        if key not in rec:
            fail(key, "is missing")
    for key in MACHINE_FIELDS:
        if key not in rec["machine"]:
            fail(f"machine.{key}", "is missing")
    if not isinstance(rec["model"].get("params"), int) or rec["model"]["params"] <= 0:
        fail("model.params", "must be a positive integer")
    if not isinstance(rec["results"], list) or not rec["results"]:
        fail("results", "must be a non-empty list")
    unknown = sorted(set(rec) - TOP_FIELDS) or sorted(set(rec["machine"]) - set(MACHINE_FIELDS) - EXTRA_MACHINE_FIELDS)
    if unknown:
        fail(unknown[0] if unknown[0] in rec else f"machine.{unknown[0]}", "is not a field of a benchmark record")
    m = rec["machine"]
    if not isinstance(m.get("id"), str) or not MACHINE_ID.match(m["id"]):
        fail("machine.id", f"must look like cpu-<model>-<cores>c-torch<threads>t or cuda-<gpu>-torch<version>, "
             f"got {str(m.get('id'))[:60]!r}")
    if m.get("device") not in ("cpu", "cuda") or not m["id"].startswith(m["device"] + "-"):
        fail("machine.device", "must be cpu or cuda, and agree with machine.id")
    if not isinstance(m.get("cores"), int) or isinstance(m["cores"], bool) or not 1 <= m["cores"] <= 4096:
        fail("machine.cores", "must be a whole number of cores in [1, 4096]")
    try:
        dt.date.fromisoformat(str(m.get("date")))
    except ValueError:
        fail("machine.date", f"must be an ISO date (YYYY-MM-DD), got {str(m.get('date'))[:30]!r}")
    seen = set()
    for i, r in enumerate(rec["results"]):
        for key in RESULT_FIELDS:
            if key not in r:
                fail(f"results[{i}].{key}", "is missing")
        for key in ("new_tokens", "runs"):
            if not isinstance(r[key], int) or isinstance(r[key], bool) or not 1 <= r[key] <= 100_000:
                fail(f"results[{i}].{key}", f"must be a whole number in [1, 100000], got {r[key]!r}")
        for key in ("median_s", "q1_s", "q3_s", "min_s", "max_s"):
            if not isinstance(r[key], int | float) or isinstance(r[key], bool) or not 0 < r[key] < 86_400:
                fail(f"results[{i}].{key}", f"must be a positive number of seconds under a day, got {r[key]!r}")
        if not r["min_s"] <= r["q1_s"] <= r["median_s"] <= r["q3_s"] <= r["max_s"]:
            fail(f"results[{i}].median_s", "must satisfy min_s <= q1_s <= median_s <= q3_s <= max_s")
        if r["tokens_identical"] is not True:
            fail(f"results[{i}].tokens_identical", "is not true: cache and no-cache outputs differed")
        if set(r) - set(RESULT_FIELDS) - {"loops"}:
            fail(f"results[{i}].{sorted(set(r) - set(RESULT_FIELDS) - {'loops'})[0]}", "is not a field of a result")
        if (r["new_tokens"], r["kv_cache"]) in seen:
            fail(f"results[{i}]", "repeats a (new_tokens, kv_cache) pair")
        seen.add((r["new_tokens"], r["kv_cache"]))
    if seen != {(n, kv) for n, _ in seen for kv in (True, False)}:
        fail("results", "needs both a cache and a no-cache result for every new_tokens")
    return rec


def check_cluster_config(config: dict, name: str = "config/cluster.yaml") -> None:
    """The benchmark settings Snakemake read from config/cluster.yaml (and any --config override)."""
    parts, tokens = config.get("bench_partitions"), config.get("bench_new_tokens")
    if not isinstance(parts, list) or not parts or not all(isinstance(p, str) and re.fullmatch(r"[A-Za-z0-9_-]+", p)
                                                           for p in parts):
        raise InputError(f"{name}: field bench_partitions must be a list of partition names ([A-Za-z0-9_-]+)")
    if not isinstance(tokens, list) or not tokens or not all(isinstance(n, int) and 1 <= n <= 4096 for n in tokens):
        raise InputError(f"{name}: field bench_new_tokens must be a list of whole numbers in [1, 4096]")
    for key, lo in (("bench_runs", 1), ("bench_warmup", 0), ("bench_threads", 1)):
        if not isinstance(config.get(key), int) or isinstance(config[key], bool) or not lo <= config[key] <= 1000:
            raise InputError(f"{name}: field {key} must be a whole number in [{lo}, 1000]")


def measured(rid, value, unit, fmt, label, m, file, digest, runs, spread) -> dict:
    return {"id": rid, "kind": "measured", "label": label, "value": value, "unit": unit, "format": fmt,
            "display": format_number(value, fmt), "machine": f"{m['cpu']} · {m['cores']} cores · torch {m['torch']} "
            f"({m['torch_threads']} threads) · {m['os']}", "machine_id": m["id"], "date": m["date"], "runs": runs,
            "spread": spread, "file": file, "file_sha256": digest, "git_commit": m["git_commit"],
            "script": "scripts/bench/kv_cache.py"}


def iqr_pct(r: dict) -> float:
    """The spread the page shows beside each median: interquartile range as a percentage of the median."""
    return (r["q3_s"] - r["q1_s"]) / r["median_s"] * 100


def read_record(path: Path, name: str | None = None) -> dict:
    """A committed record file: valid, and stored under its own machine id (so no two files claim one machine)."""
    name = name or path.as_posix()
    rec = check_record(read_json(path), name)
    if path.stem != rec["machine"]["id"]:
        raise InputError(f"{name}: field machine.id is {rec['machine']['id']!r} but the file is named {path.name}: "
                         "a record is stored as <machine id>.json")
    return rec


def merge(paths: list[Path]) -> dict:
    machines, prov = [], {}
    for path in sorted(paths):
        rec = read_record(path)
        m, digest, file = rec["machine"], hashlib.sha256(path.read_bytes()).hexdigest(), path.as_posix()
        by = {(r["new_tokens"], r["kv_cache"]): r for r in rec["results"]}
        rows = []
        for n in sorted({r["new_tokens"] for r in rec["results"]}):
            kv, full = by[(n, True)], by[(n, False)]
            base = f"bench.{m['id']}.n{n}"
            for tag, r in (("kv", kv), ("nokv", full)):
                iqr = (f"IQR {r['q1_s'] * 1e3:.1f}–{r['q3_s'] * 1e3:.1f} ms "
                       f"({iqr_pct(r):.1f}% of the median), range {r['min_s'] * 1e3:.1f}–{r['max_s'] * 1e3:.1f} ms")
                mode = "有" if tag == "kv" else "无"
                prov[f"{base}.{tag}.median_ms"] = measured(
                    f"{base}.{tag}.median_ms", r["median_s"] * 1e3, "ms", "int",
                    f"生成 {n} 个 token({mode} KV cache)的中位时间", m, file, digest, r["runs"], iqr)
                prov[f"{base}.{tag}.iqr_pct"] = measured(
                    f"{base}.{tag}.iqr_pct", iqr_pct(r), "%", "f1",
                    f"生成 {n} 个 token({mode} KV cache):四分位距占中位数的百分比", m, file, digest, r["runs"], iqr)
            prov[f"{base}.newtokens"] = measured(f"{base}.newtokens", n, "token", "int",
                                                 "这一行生成的新 token 数(基准设置)", m, file, digest, kv["runs"], "—")
            ratio = full["median_s"] / kv["median_s"]
            prov[f"{base}.ratio"] = measured(
                f"{base}.ratio", ratio, "×", "f2", f"生成 {n} 个 token:无 cache ÷ 有 cache(中位数之比)", m, file,
                digest, kv["runs"], f"{full['min_s'] / kv['max_s']:.2f}–{full['max_s'] / kv['min_s']:.2f}×")
            rows.append({"new_tokens": n, "kv_median_s": kv["median_s"], "nokv_median_s": full["median_s"],
                         "kv_iqr_pct": iqr_pct(kv), "nokv_iqr_pct": iqr_pct(full),
                         "ratio": ratio, "kv_tok_s": n / kv["median_s"], "nokv_tok_s": n / full["median_s"]})
        ratios = [r["ratio"] for r in rows]
        for key, value in (("ratio_min", min(ratios)), ("ratio_max", max(ratios))):
            prov[f"bench.{m['id']}.{key}"] = measured(f"bench.{m['id']}.{key}", value, "×", "f2",
                                                      f"各长度中 cache 加速比的{'最小' if 'min' in key else '最大'}值",
                                                      m, file, digest, kv["runs"], "over every new_tokens setting")
        prov[f"bench.{m['id']}.params"] = {
            "id": f"bench.{m['id']}.params", "kind": "derived", "label": "小模型参数量",
            "value": rec["model"]["params"],
            "unit": "param", "format": "int", "display": format_number(rec["model"]["params"], "int"),
            "formula": "scripts.bench.tinygpt:param_count", "args": rec["model"]["shape"], "scale": 1.0,
            "inputs": [f"{file} model.shape"], "script": "scripts/bench/kv_cache.py"}
        prov[f"bench.{m['id']}.runs"] = measured(f"bench.{m['id']}.runs", kv["runs"], "次", "int", "每个设置的计时次数",
                                                 m, file, digest, kv["runs"], "—")
        machines.append({"id": m["id"], "machine": m, "model": rec["model"], "file": file, "sha256": digest,
                         "rows": rows, "per_step": rec["per_step"]})
    return {"schema_version": SCHEMA_VERSION, "machines": machines, "provenance": prov}
