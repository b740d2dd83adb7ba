"""Merge the committed benchmark records (precomputed/bench/*.json) into the medians, cache/no-cache ratios
and per-position traces the page shows, one provenance record per number; and check one record."""

import datetime as dt
import hashlib
import json
from pathlib import Path

import numpy as np

from scripts.record import provenance as pv
from scripts.record import schema
from scripts.record.inputs import InputError, check_values, read_json, read_text

SCHEMA_VERSION = 2
# the records' labels (labels.json beside this file; words only, the code fills the {fields})
WORDS = json.loads((Path(__file__).parent / "labels.json").read_text(encoding="utf-8"))


def check_record(rec: object, name: str) -> dict:
    """schemas/bench-record (types, keys, bounds: every time >= 1 µs), then what a schema cannot say: the
    quartiles in order, one cache and one no-cache result per length, the machine id agreeing with its device,
    per-step traces of equal lengths."""
    def fail(field: str, why: str):
        raise InputError(f"{name}: field {field} {why}")

    schema.validate(rec, schema.BENCH_RECORD, name)
    m = rec["machine"]
    if not m["id"].startswith(m["device"] + "-"):
        fail("machine.device", f"is {m['device']!r} but machine.id is {m['id']!r}: they must agree")
    try:
        day = dt.date.fromisoformat(m["date"])
    except ValueError:
        fail("machine.date", f"must be an ISO date (YYYY-MM-DD), got {m['date'][:30]!r}")
    latest = dt.datetime.now(dt.UTC).date() + dt.timedelta(days=1)  # a day's slack: a record made east of UTC
    if day > latest:
        fail("machine.date", f"is {m['date']}, in the future (today is {latest - dt.timedelta(days=1)} UTC): a "
             "measurement is dated when it ran")
    seen = set()
    for i, r in enumerate(rec["results"]):
        if not r["min_s"] <= r["q1_s"] <= r["median_s"] <= r["q3_s"] <= r["max_s"]:
            fail(f"results[{i}].median_s", "must satisfy min_s <= q1_s <= median_s <= q3_s <= max_s")
        if (r["new_tokens"], r["kv_cache"]) in seen:
            fail(f"results[{i}]", "repeats a (new_tokens, kv_cache) pair")
        seen.add((r["new_tokens"], r["kv_cache"]))
    if seen != {(n, kv) for n, _ in seen for kv in (True, False)}:
        fail("results", "needs both a cache and a no-cache result for every new_tokens")
    by = {(r["new_tokens"], r["kv_cache"]): r for r in rec["results"]}
    for i, r in enumerate(rec["results"]):
        times = r.get("times_s")
        if times is not None and len(times) != r["runs"]:
            fail(f"results[{i}].times_s", f"has {len(times)} entries for runs = {r['runs']}: one per timed run")
        other = by[(r["new_tokens"], not r["kv_cache"])]
        if (times is None) != (other.get("times_s") is None):
            fail(f"results[{i}].times_s", "must be given for both the cache and the no-cache result of a length")
    for key in ("kv_cache", "no_cache"):
        trace = rec["per_step"][key]
        if len(trace["positions"]) != len(trace["median_ms"]):
            fail(f"per_step.{key}.median_ms", f"has {len(trace['median_ms'])} entries for "
                 f"{len(trace['positions'])} positions: one per position")
    return rec


def load_cluster_config(path: Path) -> dict:
    """config/cluster.yaml, read here before Snakemake sees it: plain YAML (no anchors or aliases, so a small file
    cannot expand into gigabytes; no key given twice in one mapping, where YAML's last-wins would drop a setting
    silently), at most 64 KB, under schemas/cluster."""
    import yaml

    class UniqueKeys(yaml.SafeLoader):
        def construct_mapping(self, node, deep=False):
            seen = set()
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=True)
                if key in seen:
                    raise InputError(f"{name}: line {key_node.start_mark.line + 1}: key {key!r} is given twice in one "
                                     "mapping (YAML would keep the last silently); give it once")
                seen.add(key)
            return super().construct_mapping(node, deep)

    name = Path(path).as_posix()
    text = read_text(path, max_bytes=64 * 1024)
    try:
        for event in yaml.parse(text, Loader=yaml.SafeLoader):
            if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
                line = event.start_mark.line + 1
                raise InputError(f"{name}: line {line}: YAML anchors and aliases are not allowed in this file")
        doc = yaml.load(text, Loader=UniqueKeys)  # a SafeLoader that refuses repeated keys
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}: " if mark else ""
        raise InputError(f"{name}: {where}not valid YAML ({getattr(exc, 'problem', None) or exc})") from None
    check_values(doc, name)
    return check_cluster_config(doc, name)


def check_cluster_config(config: dict, name: str = "config/cluster.yaml") -> dict:
    """The benchmark settings Snakemake read from config/cluster.yaml (and any --config override)."""
    return schema.validate(config, schema.CLUSTER, name)


def measured(rid, value, unit, fmt, label, m, file, digest, runs, spread) -> dict:
    return pv.measured(rid, label, value, unit, fmt, machine=f"{m['cpu']} · {m['cores']} cores · torch {m['torch']} "
                       f"({m['torch_threads']} threads) · {m['os']}", date=m["date"], runs=runs, spread=spread,
                       file=file, file_sha256=digest, script="scripts/bench/kv_cache.py", machine_id=m["id"],
                       git_commit=m["git_commit"])


BOOTSTRAP_RESAMPLES = 4000  # percentile bootstrap of the median paired ratio; a fixed seed keeps it reproducible
BOOTSTRAP_SEED = 0


def paired_ratio(kv: dict, full: dict) -> dict | None:
    """Runs alternate (cache, no-cache, cache, ...), so run i of each is a pair that saw the same machine state: the
    median of the pairs' no-cache / cache ratios, with a 95% percentile-bootstrap interval over the pairs (None
    for a record without raw times)."""
    if kv.get("times_s") is None:
        return None
    ratios = np.asarray(full["times_s"], float) / np.asarray(kv["times_s"], float)
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    draws = rng.integers(0, len(ratios), (BOOTSTRAP_RESAMPLES, len(ratios)))
    medians = np.median(ratios[draws], axis=1)
    low, high = (float(v) for v in np.percentile(medians, [2.5, 97.5]))
    median = float(np.median(ratios))
    return {"median": median, "low": low, "high": high, "pairs": int(len(ratios)),
            "half_width_pct": (high - low) / 2 / median * 100}


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
                mode = WORDS["cache"][tag]
                prov[f"{base}.{tag}.median_ms"] = measured(
                    f"{base}.{tag}.median_ms", r["median_s"] * 1e3, "ms", "int",
                    WORDS["median_ms"].format(n=n, cache=mode), m, file, digest, r["runs"], iqr)
                prov[f"{base}.{tag}.iqr_pct"] = measured(
                    f"{base}.{tag}.iqr_pct", iqr_pct(r), "%", "f1",
                    WORDS["iqr_pct"].format(n=n, cache=mode), m, file, digest, r["runs"], iqr)
            prov[f"{base}.newtokens"] = measured(f"{base}.newtokens", n, "token", "int",
                                                 WORDS["newtokens"], m, file, digest, kv["runs"], "—")
            paired = paired_ratio(kv, full)
            ratio = paired["median"] if paired else full["median_s"] / kv["median_s"]
            if paired:
                spread = (f"95% bootstrap interval {paired['low']:.2f}–{paired['high']:.2f}× over {paired['pairs']} "
                          f"pairs (half-width {paired['half_width_pct']:.1f}% of the ratio)")
                for end in ("low", "high"):
                    prov[f"{base}.ratio_{end}"] = measured(
                        f"{base}.ratio_{end}", paired[end], "×", "f2",
                        WORDS["ratio_end"].format(n=n, end=WORDS["end"][end]), m, file,
                        digest, kv["runs"], spread)
            else:
                spread = f"{full['min_s'] / kv['max_s']:.2f}–{full['max_s'] / kv['min_s']:.2f}×"
            prov[f"{base}.ratio"] = measured(
                f"{base}.ratio", ratio, "×", "f2",
                WORDS["ratio"].format(n=n, how=WORDS["ratio_of"]["paired" if paired else "medians"]), m, file,
                digest, kv["runs"], spread)
            rows.append({"new_tokens": n, "kv_median_s": kv["median_s"], "nokv_median_s": full["median_s"],
                         "kv_iqr_pct": iqr_pct(kv), "nokv_iqr_pct": iqr_pct(full), "paired": paired,
                         "ratio": ratio, "kv_tok_s": n / kv["median_s"], "nokv_tok_s": n / full["median_s"]})
        if rows and rows[0]["paired"]:
            prov[f"bench.{m['id']}.interval_pct"] = pv.assumed(
                f"bench.{m['id']}.interval_pct", WORDS["interval_pct"], 95, "%", "int",
                assumption=WORDS["interval_assumption"].format(resamples=BOOTSTRAP_RESAMPLES, seed=BOOTSTRAP_SEED))
        ratios = [r["ratio"] for r in rows]
        for key, value in (("ratio_min", min(ratios)), ("ratio_max", max(ratios))):
            prov[f"bench.{m['id']}.{key}"] = measured(f"bench.{m['id']}.{key}", value, "×", "f2",
                                                      WORDS["ratio_extreme"][key],
                                                      m, file, digest, kv["runs"], "over every new_tokens setting")
        prov[f"bench.{m['id']}.params"] = pv.derived(
            f"bench.{m['id']}.params", WORDS["params"], rec["model"]["params"], "param", "int",
            derivation=pv.Derivation.TINYGPT, formula="scripts.bench.tinygpt:param_count",
            inputs=[f"{file} model.shape"], script="scripts/bench/kv_cache.py", args=rec["model"]["shape"], scale=1.0)
        prov[f"bench.{m['id']}.runs"] = measured(f"bench.{m['id']}.runs", kv["runs"], WORDS["runs_unit"], "int",
                                                 WORDS["runs"], m, file, digest, kv["runs"], "—")
        machines.append({"id": m["id"], "machine": m, "model": rec["model"], "file": file, "sha256": digest,
                         "rows": rows, "per_step": rec["per_step"]})
    return {"schema_version": SCHEMA_VERSION, "machines": machines, "provenance": prov}
