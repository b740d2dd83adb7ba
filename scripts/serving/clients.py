"""Results of other benchmark clients in the kit's layout (`vllm bench serve --save-result --save-detailed`, with the
kit's `send_times`), so `python -m scripts.serving --vllm-result` and the prediction command read them as they read
vLLM's own files. One line naming the file, the line and the field on any problem; nothing is written then.

  python -m scripts.serving.clients aiperf profile_export.jsonl --out result.json

aiperf 0.13.0 (PyPI; aiperf/common/models/record_models.py `MetricRecordInfo`, one JSON object per line of
`profile_export.jsonl`): `metadata` (request_start_ns and request_end_ns, wall clock; benchmark_phase warmup or
profiling), `metrics` (each {"value", "unit"} in display units: time_to_first_token and request_latency in ms, from
the request's start to its first and last content chunk, metrics/types/ttft_metric.py and request_latency_metric.py;
inter_chunk_latency, the list of gaps between consecutive content chunks in ms, inter_chunk_latency_metric.py;
input_sequence_length and output_sequence_length in tokens) and `error` (null, or ErrorDetails with a `message`).
Converted: warmup records left out; send_times = request_start_ns less the earliest, in seconds; ttfts, latencies
and itls in seconds; output_lens the output tokens, and a successful request must have one chunk gap fewer than
tokens (vLLM's ITLs are per token: a file whose chunks merged tokens is refused, not reinterpreted); errors the
error message, "" on success; duration from the earliest start to the latest end (vLLM times its run from before
the first send to after the last response: the same span up to the client's own overhead)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from scripts.record.atomic import write_json_atomic
from scripts.record.inputs import MAX_JSON_BYTES, InputError, jsonl_objects

AIPERF_VERSION = "aiperf 0.13.0"
NS = 1e-9


def _metric(rec: dict, tag: str, where: str, required: bool = True):
    value = rec.get("metrics", {}).get(tag)
    if value is None:
        if required:
            raise InputError(f"{where}: field metrics.{tag} is missing")
        return None
    if not isinstance(value, dict) or "value" not in value:
        raise InputError(f"{where}: field metrics.{tag} is not {{value, unit}}")
    unit, v = value.get("unit"), value["value"]
    if tag in ("time_to_first_token", "request_latency", "inter_chunk_latency") and unit != "ms":
        raise InputError(f"{where}: field metrics.{tag}.unit is {unit!r}; {AIPERF_VERSION} exports ms")
    return v


def from_aiperf(path: Path | str) -> dict:
    """An aiperf profile_export.jsonl as a vLLM --save-detailed result with send_times (module docstring)."""
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
            if not isinstance(meta.get(key), int) or meta[key] < 0:
                raise InputError(f"{where}: field metadata.{key} must be a whole number of nanoseconds")
        error = rec.get("error")
        ok = error is None
        isl = _metric(rec, "input_sequence_length", where, required=False)
        if isl is None:
            raise InputError(f"{where}: field metrics.input_sequence_length is missing (the prompt's tokens)")
        row = {"start": meta["request_start_ns"], "end": meta["request_end_ns"], "isl": int(isl),
               "error": "" if ok else str((error or {}).get("message") or (error or {}).get("type") or "error")}
        if ok:
            row["ttft"] = float(_metric(rec, "time_to_first_token", where)) / 1000
            row["e2el"] = float(_metric(rec, "request_latency", where)) / 1000
            row["osl"] = int(_metric(rec, "output_sequence_length", where))
            gaps = _metric(rec, "inter_chunk_latency", where, required=False) or []
            row["itl"] = [float(g) / 1000 for g in gaps]
            if row["osl"] >= 1 and len(row["itl"]) != row["osl"] - 1:
                raise InputError(f"{where}: {len(row['itl']) + 1} content chunks for {row['osl']} output tokens: "
                                 "the server merged tokens into chunks, so per-token gaps are not known (vLLM's "
                                 "ITLs are per token)")
        else:
            row.update(ttft=0.0, e2el=0.0, osl=0, itl=[])
        rows.append(row)
    if not rows:
        raise InputError(f"{name}: no profiling records")
    rows.sort(key=lambda r: r["start"])
    first, last = rows[0]["start"], max(r["end"] for r in rows)
    return {"source": f"{name} ({AIPERF_VERSION} profile_export.jsonl, converted by scripts/serving/clients.py)",
            "duration": (last - first) * NS, "completed": sum(not r["error"] for r in rows),
            "send_times": [(r["start"] - first) * NS for r in rows], "ttfts": [r["ttft"] for r in rows],
            "latencies": [r["e2el"] for r in rows], "itls": [r["itl"] for r in rows],
            "input_lens": [r["isl"] for r in rows], "output_lens": [r["osl"] for r in rows],
            "errors": [r["error"] for r in rows], "success": [not r["error"] for r in rows]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m scripts.serving.clients", description=__doc__.split("\n\n")[0])
    ap.add_argument("client", choices=("aiperf",))
    ap.add_argument("export", type=Path, help="aiperf's profile_export.jsonl")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)
    try:
        doc = from_aiperf(args.export)
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
