"""Merge the committed benchmark records (precomputed/bench/*.json) into the medians, cache/no-cache ratios
and per-position traces the page shows, one provenance record per number; and check one record."""

import hashlib
from pathlib import Path

from scripts.page.display import format_number
from scripts.record.inputs import InputError, read_json

SCHEMA_VERSION = 1
MACHINE_FIELDS = ("id", "device", "cpu", "cores", "torch", "torch_threads", "os", "date", "git_commit")
RESULT_FIELDS = ("new_tokens", "kv_cache", "median_s", "min_s", "max_s", "runs", "tokens_identical")


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
    for i, r in enumerate(rec["results"]):
        for key in RESULT_FIELDS:
            if key not in r:
                fail(f"results[{i}].{key}", "is missing")
        for key in ("median_s", "min_s", "max_s"):
            if not isinstance(r[key], int | float) or r[key] <= 0:
                fail(f"results[{i}].{key}", f"must be a positive number of seconds, got {r[key]!r}")
        if not r["min_s"] <= r["median_s"] <= r["max_s"]:
            fail(f"results[{i}].median_s", "must lie between min_s and max_s")
        if r["tokens_identical"] is not True:
            fail(f"results[{i}].tokens_identical", "is not true: cache and no-cache outputs differed")
    return rec


def measured(rid, value, unit, fmt, label, m, file, digest, runs, spread) -> dict:
    return {"id": rid, "kind": "measured", "label": label, "value": value, "unit": unit, "format": fmt,
            "display": format_number(value, fmt), "machine": f"{m['cpu']} · {m['cores']} cores · torch {m['torch']} "
            f"({m['torch_threads']} threads) · {m['os']}", "machine_id": m["id"], "date": m["date"], "runs": runs,
            "spread": spread, "file": file, "file_sha256": digest, "git_commit": m["git_commit"],
            "script": "scripts/bench/kv_cache.py"}


def merge(paths: list[Path]) -> dict:
    machines, prov = [], {}
    for path in sorted(paths):
        rec = check_record(read_json(path), path.as_posix())
        m, digest, file = rec["machine"], hashlib.sha256(path.read_bytes()).hexdigest(), path.as_posix()
        by = {(r["new_tokens"], r["kv_cache"]): r for r in rec["results"]}
        rows = []
        for n in sorted({r["new_tokens"] for r in rec["results"]}):
            kv, full = by[(n, True)], by[(n, False)]
            base = f"bench.{m['id']}.n{n}"
            for tag, r in (("kv", kv), ("nokv", full)):
                prov[f"{base}.{tag}.median_ms"] = measured(
                    f"{base}.{tag}.median_ms", r["median_s"] * 1e3, "ms", "int",
                    f"生成 {n} 个 token({'有' if tag == 'kv' else '无'} KV cache)的中位时间", m, file, digest,
                    r["runs"], f"{r['min_s'] * 1e3:.1f}–{r['max_s'] * 1e3:.1f} ms")
            prov[f"{base}.newtokens"] = measured(f"{base}.newtokens", n, "token", "int",
                                                 "这一行生成的新 token 数(基准设置)", m, file, digest, kv["runs"], "—")
            ratio = full["median_s"] / kv["median_s"]
            prov[f"{base}.ratio"] = measured(
                f"{base}.ratio", ratio, "×", "f2", f"生成 {n} 个 token:无 cache ÷ 有 cache(中位数之比)", m, file,
                digest, kv["runs"], f"{full['min_s'] / kv['max_s']:.2f}–{full['max_s'] / kv['min_s']:.2f}×")
            rows.append({"new_tokens": n, "kv_median_s": kv["median_s"], "nokv_median_s": full["median_s"],
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
