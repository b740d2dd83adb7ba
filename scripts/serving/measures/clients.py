"""Results of other benchmark clients in the kit's layout (`vllm bench serve --save-result --save-detailed`, with the
kit's `send_times`), so `python -m scripts.serving --vllm-result` and the prediction command read them as they read
vLLM's own files. One line naming the file, the line and the field on any problem; nothing is written then.

  python -m scripts.serving.measures.clients aiperf profile_export.jsonl --out result.json
  python -m scripts.serving.measures.clients guidellm benchmarks.json [--benchmark K] --out result.json

aiperf 0.13.0 (PyPI; aiperf/common/models/record_models.py `MetricRecordInfo`, one JSON object per line of
`profile_export.jsonl`): `metadata` (request_start_ns and request_end_ns, wall clock; benchmark_phase warmup or
profiling), `metrics` (each {"value", "unit"} in display units: time_to_first_token and request_latency in ms, from
the request's start to its first and last content chunk, metrics/types/ttft_metric.py and request_latency_metric.py;
inter_chunk_latency, the list of gaps between consecutive content chunks in ms, inter_chunk_latency_metric.py;
input_sequence_length and output_sequence_length in tokens) and `error` (null, or ErrorDetails with a `message`).
Converted: warmup records left out; send_times = request_start_ns less the earliest, in seconds; ttfts, latencies
and itls in seconds; output_lens the output tokens, and a successful request must have one chunk gap fewer than
tokens (vLLM's ITLs are per token: a file whose chunks merged tokens is refused, not reinterpreted, unless the
reading asks only for chunks, as the tools' table does: per_token False); errors the
error message, "" on success; duration from the earliest start to the latest end (vLLM times its run from before
the first send to after the last response: the same span up to the client's own overhead). A failed request with
no input_sequence_length (with --use-server-token-count the count is the server's, and a request whose body was never
written has none) is kept as failed with 0 prompt tokens when its error says it never reached the server
(results.NOT_CONNECTED); any other record without it is refused.

GuideLLM 0.8.1 (PyPI; guidellm/benchmark/schemas/report.py `GenerativeBenchmarksReport`, benchmark.py
`GenerativeBenchmark`, schemas/base/request_stats.py `GenerativeRequestStats`, schemas/base/info.py
`RequestTimings`): one benchmark of `benchmarks` (`--benchmark K` when the report holds several, as a sweep does);
its `requests` grouped as successful, errored and incomplete, each with info.timings (request_start,
first_token_iteration, last_token_iteration, token_iterations: Unix seconds), prompt_tokens and output_tokens
(computed fields, from the server's usage) and info.error. Converted: send_times = request_start less the earliest;
ttfts = first_token_iteration - request_start (GuideLLM's time_to_first_token_ms); latencies = last_token_iteration -
request_start (the last token's arrival, as vLLM times it; GuideLLM's request_latency runs to request_end); errored
and incomplete requests failed, with their error (incomplete: cancelled when the benchmark ended). GuideLLM keeps only
the first and last token's times, so the per-token gaps are not known: the file says so (`itls_evenly_spaced`), the
gaps are written evenly spaced (what GuideLLM's own iter_tokens_timings assumes) only so the layout holds, and every
metric built on them (ITL percentiles) is left out when the file is read (results.metrics_of); TTFT, TPOT and E2EL
do not use them. A report that kept fewer requests than it counted (`sample_size` set: reservoir sampling) is
refused: the sampled requests alone are not the load the server saw."""
from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

from scripts.record.atomic import write_json_atomic
from scripts.record.inputs import MAX_JSON_BYTES, InputError, jsonl_objects
from scripts.serving.measures import results

AIPERF_VERSION = "aiperf 0.13.0"
NS = 1e-9


COUNTS = ("input_sequence_length", "output_sequence_length")


def _metric(rec: dict, tag: str, where: str, required: bool = True):
    """metrics.<tag>.value, checked: a finite number >= 0 (a whole number for a token count), or for
    inter_chunk_latency a list of them; None when absent and not required."""
    metrics = rec.get("metrics")
    if not isinstance(metrics, dict):
        raise InputError(f"{where}: field metrics must be an object of {{value, unit}} entries")
    value = metrics.get(tag)
    if value is None:
        if required:
            raise InputError(f"{where}: field metrics.{tag} is missing")
        return None
    if not isinstance(value, dict) or "value" not in value:
        raise InputError(f"{where}: field metrics.{tag} is not {{value, unit}}")
    unit, v = value.get("unit"), value["value"]
    if tag in ("time_to_first_token", "request_latency", "inter_chunk_latency") and unit != "ms":
        raise InputError(f"{where}: field metrics.{tag}.unit is {unit!r}; {AIPERF_VERSION} exports ms")
    items = v if tag == "inter_chunk_latency" and isinstance(v, list) else [v]
    for x in items:
        if not _finite(x) or (tag in COUNTS and not isinstance(x, int)):
            kind = "a whole number of tokens" if tag in COUNTS else "a finite number of ms >= 0"
            raise InputError(f"{where}: field metrics.{tag}.value must be {kind}"
                             f"{' (or a list of them)' if tag == 'inter_chunk_latency' else ''}, not {x!r:.40}")
    return v


def _finite(x) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x) and x >= 0


def _error_message(error, where: str) -> str:
    """aiperf's ErrorDetails ({message, type, ...}); a plain string is read as the message."""
    if isinstance(error, str):
        return error or "error"
    if not isinstance(error, dict):
        raise InputError(f"{where}: field error must be null, a message or an object with a message")
    return str(error.get("message") or error.get("type") or "error")


def from_aiperf(path: Path | str, per_token: bool = True) -> dict:
    """An aiperf profile_export.jsonl as a vLLM --save-detailed result with send_times (module docstring). With
    `per_token` False a request whose chunks bundled tokens is kept, its gaps per chunk (as vLLM writes them)."""
    name = Path(path).as_posix()
    rows = []
    for n, rec in jsonl_objects(Path(path), 50 * MAX_JSON_BYTES):
        where = f"{name}: line {n}"
        if not isinstance(rec, dict) or not isinstance(rec.get("metadata"), dict) or "metrics" not in rec:
            raise InputError(f"{where}: not an aiperf record (needs metadata and metrics; {AIPERF_VERSION} layout)")
        meta = rec["metadata"]
        if meta.get("benchmark_phase") == "warmup":
            continue
        for key in ("request_start_ns", "request_end_ns"):
            if not isinstance(meta.get(key), int) or isinstance(meta[key], bool) or meta[key] < 0:
                raise InputError(f"{where}: field metadata.{key} must be a whole number of nanoseconds")
        if meta["request_end_ns"] < meta["request_start_ns"]:
            raise InputError(f"{where}: field metadata.request_end_ns is before request_start_ns")
        error = rec.get("error")
        ok = error is None
        message = "" if ok else _error_message(error, where)
        isl = _metric(rec, "input_sequence_length", where, required=False)
        if isl is None:  # a request whose body was never written has no count when the counts are the server's
            if ok or not any(m in message for m in results.NOT_CONNECTED):
                raise InputError(f"{where}: field metrics.input_sequence_length is missing (the prompt's tokens)")
            isl = 0  # never reached the server: left out of every prediction (results.never_reached)
        row = {"start": meta["request_start_ns"], "end": meta["request_end_ns"], "isl": int(isl), "error": message}
        if ok:
            row["ttft"] = float(_metric(rec, "time_to_first_token", where)) / 1000
            row["e2el"] = float(_metric(rec, "request_latency", where)) / 1000
            row["osl"] = int(_metric(rec, "output_sequence_length", where))
            gaps = _metric(rec, "inter_chunk_latency", where, required=False) or []
            row["itl"] = [float(g) / 1000 for g in gaps]
            chunks = len(row["itl"]) + 1
            if row["osl"] >= 1 and (chunks > row["osl"] or (per_token and chunks != row["osl"])):
                raise InputError(f"{where}: {chunks} content chunks for {row['osl']} output tokens: "
                                 + ("more chunks than tokens" if chunks > row["osl"] else
                                    "the server merged tokens into chunks, so per-token gaps are not known (this "
                                    "reading needs every token's arrival)"))
        else:
            row.update(ttft=0.0, e2el=0.0, osl=0, itl=[])
        rows.append(row)
    if not rows:
        raise InputError(f"{name}: no profiling records")
    rows.sort(key=lambda r: r["start"])
    first, last = rows[0]["start"], max(r["end"] for r in rows)
    converter = "scripts/serving/measures/clients.py"
    return {"source": f"{name} ({AIPERF_VERSION} profile_export.jsonl, converted by {converter})",
            "duration": (last - first) * NS, "completed": sum(not r["error"] for r in rows),
            "send_times": [(r["start"] - first) * NS for r in rows], "ttfts": [r["ttft"] for r in rows],
            "latencies": [r["e2el"] for r in rows], "itls": [r["itl"] for r in rows],
            "input_lens": [r["isl"] for r in rows], "output_lens": [r["osl"] for r in rows],
            "errors": [r["error"] for r in rows], "success": [not r["error"] for r in rows]}


GUIDELLM_VERSION = "guidellm 0.8.1"
GUIDELLM_GROUPS = ("successful", "errored", "incomplete")


MAX_SECONDS = 1e11  # a timestamp past this (about 3,000 years) is not a time: differences of such lose every digit


def _number(obj: dict, key: str, where: str, kind=float):
    v = obj.get(key) if isinstance(obj, dict) else None
    if kind is int:
        if not isinstance(v, int) or isinstance(v, bool) or v < 0:
            raise InputError(f"{where}: field {key} must be a whole number >= 0, not {v!r:.40}")
        return v
    if not _finite(v) or v > MAX_SECONDS:
        raise InputError(f"{where}: field {key} must be a finite number of seconds >= 0 and below {MAX_SECONDS:g}")
    return float(v)


def _object(obj, key: str, where: str) -> dict:
    """obj[key] when it is an object (or absent: {}); one line naming the field otherwise."""
    v = obj.get(key) if isinstance(obj, dict) else None
    if v is None:
        return {}
    if not isinstance(v, dict):
        raise InputError(f"{where}: field {key} must be an object ({GUIDELLM_VERSION} layout), not a "
                         f"{type(v).__name__}")
    return v


def from_guidellm(path: Path | str, benchmark: int | None = None) -> dict:
    """A GuideLLM benchmarks.json benchmark as a vLLM --save-detailed result with send_times (module docstring)."""
    from scripts.record.inputs import read_json

    name = Path(path).as_posix()
    report = read_json(Path(path))
    benches = report.get("benchmarks") if isinstance(report, dict) else None
    if not isinstance(benches, list) or not benches:
        raise InputError(f"{name}: field benchmarks is missing or empty (a {GUIDELLM_VERSION} report)")
    if benchmark is None and len(benches) > 1:
        raise InputError(f"{name}: holds {len(benches)} benchmarks; pick one with --benchmark 0..{len(benches) - 1}")
    k = 0 if benchmark is None else benchmark
    if not 0 <= k < len(benches):
        raise InputError(f"{name}: --benchmark {k} is not one of 0..{len(benches) - 1}")
    bench, where_b = benches[k], f"{name}: benchmarks[{k}]"
    groups = bench.get("requests") if isinstance(bench, dict) else None
    if not isinstance(groups, dict) or not all(isinstance(groups.get(g, []), list) for g in GUIDELLM_GROUPS):
        raise InputError(f"{where_b}: field requests must hold the lists {', '.join(GUIDELLM_GROUPS)}")
    totals = _object(_object(bench, "metrics", where_b), "request_totals", f"{where_b}.metrics")
    for g in GUIDELLM_GROUPS:
        kept, counted = len(groups.get(g, [])), totals.get(g)
        if isinstance(counted, int) and kept < counted:
            raise InputError(f"{where_b}: field requests.{g} keeps {kept} of the {counted} requests it counted (the "
                             "run sampled them: sample_size); rerun with every request kept")
    rows = []
    for g in GUIDELLM_GROUPS:
        for i, rec in enumerate(groups.get(g, [])):
            where = f"{where_b}.requests.{g}[{i}]"
            timings = _object(rec, "info", where).get("timings")
            if not isinstance(timings, dict):
                raise InputError(f"{where}: field info.timings is missing ({GUIDELLM_VERSION} layout)")
            start = _number(timings, "request_start", f"{where}.info.timings")
            row = {"start": start, "isl": _number(rec, "prompt_tokens", where, int), "itl": []}
            if g == "successful":
                first = _number(timings, "first_token_iteration", f"{where}.info.timings")
                last = _number(timings, "last_token_iteration", f"{where}.info.timings")
                osl = _number(rec, "output_tokens", where, int)
                if not start <= first <= last or osl < 1:
                    raise InputError(f"{where}: needs request_start <= first_token_iteration <= "
                                     "last_token_iteration and at least one output token")
                row.update(ttft=first - start, e2el=last - start, osl=osl, end=last, error="",
                           itl=[(last - first) / (osl - 1)] * (osl - 1) if osl > 1 else [])
            else:
                message = _object(rec, "info", where).get("error") or ("cancelled when the benchmark ended"
                                                                        if g == "incomplete" else "error")
                end = timings.get("request_end") if _finite(timings.get("request_end")) else start
                end = min(end, MAX_SECONDS)
                row.update(ttft=0.0, e2el=0.0, osl=0, end=max(end, start), error=f"{g}: {message}")
            rows.append(row)
    if not rows:
        raise InputError(f"{where_b}: no requests")
    rows.sort(key=lambda r: r["start"])
    first_send, last_end = rows[0]["start"], max(r["end"] for r in rows)
    return {"source": f"{name} benchmark {k} ({GUIDELLM_VERSION} benchmarks.json, converted by "
                      "scripts/serving/measures/clients.py)",
            "itls_evenly_spaced": True,
            "duration": last_end - first_send, "completed": sum(not r["error"] for r in rows),
            "send_times": [r["start"] - first_send for r in rows], "ttfts": [r["ttft"] for r in rows],
            "latencies": [r["e2el"] for r in rows], "itls": [r["itl"] for r in rows],
            "input_lens": [r["isl"] for r in rows], "output_lens": [r["osl"] for r in rows],
            "errors": [r["error"] for r in rows], "success": [not r["error"] for r in rows]}


def read_any(path: Path | str, benchmark: int | None = None) -> dict:
    """Any client's file as a run in the vLLM layout, chunks as they came (the tools' table: experiment D): an aiperf
    profile_export.jsonl (a .jsonl name), a GuideLLM report (a JSON object with `benchmarks`), or a vLLM result."""
    from scripts.record.inputs import read_json

    path = Path(path)
    if path.suffix.lower() == ".jsonl":
        return from_aiperf(path, per_token=False)
    doc = read_json(path)
    if isinstance(doc, dict) and "benchmarks" in doc:
        return from_guidellm(path, benchmark)
    return results.load_result(path, per_token=False)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m scripts.serving.measures.clients",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("client", choices=("aiperf", "guidellm"))
    ap.add_argument("export", type=Path, help="aiperf's profile_export.jsonl, or GuideLLM's benchmarks.json")
    ap.add_argument("--benchmark", type=int, help="GuideLLM: which benchmark of the report (its index)")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)
    try:
        if args.client == "aiperf" and args.benchmark is not None:
            raise InputError("--benchmark is GuideLLM's (an aiperf export is one run)")
        doc = from_aiperf(args.export) if args.client == "aiperf" else from_guidellm(args.export, args.benchmark)
        if args.out.resolve() == args.export.resolve():
            raise InputError(f"--out {args.out.as_posix()}: is the input; writing it would destroy it")
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    write_json_atomic(args.out, doc)
    print(f"wrote {args.out.as_posix()}: {len(doc['ttfts'])} requests ({doc['completed']} completed), "
          f"{doc['duration']:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
