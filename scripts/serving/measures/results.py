"""Read a `vllm bench serve --save-result --save-detailed` JSON file and compute the same metrics from it, so a
real measurement can sit beside a simulation. One line naming the file and the field on any problem."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from scripts.record import schema
from scripts.record.inputs import InputError
from scripts.record.schema import read_input
from scripts.serving.measures import metrics

PER_REQUEST = ("ttfts", "itls", "input_lens", "output_lens")
OPTIONAL_PER_REQUEST = ("latencies", "errors", "success", "generated_texts")
FREE_TEXT = ("generated_texts", "errors")


def load_result(path: Path, per_token: bool = True) -> dict:
    """schemas/vllm-result (types, bounds, at least one request, errors as strings), then what makes the file one
    run: every per-request list of one length, each request's E2EL >= its TTFT, the run at least as long as its
    longest request, and a successful request's inter-chunk gaps fewer than its output tokens: exactly one fewer
    when `per_token` (what the step-time campaign needs: every token's arrival), at most one fewer otherwise (vLLM
    writes one gap per chunk, and a chunk may bundle tokens: speculative decoding, a stream interval; its own
    calculate_metrics reads such files, TPOT from the output length and ITL from the list). The text vLLM saves
    (generated_texts, errors) is never shown, so it is not checked for control characters."""
    name = Path(path).as_posix()
    doc = read_input(path, schema.VLLM_RESULT, max_bytes=200 * 1024 * 1024, free_text=FREE_TEXT)
    n = len(doc["ttfts"])
    for key in PER_REQUEST + OPTIONAL_PER_REQUEST:
        if key in doc and len(doc[key]) != n:
            raise InputError(f"{name}: field {key} has {len(doc[key])} entries for {n} requests (ttfts): one per "
                             "request")
    success = successes(doc)
    e2el = latencies(doc)
    for i in range(n):
        if e2el[i] < doc["ttfts"][i]:
            raise InputError(f"{name}: field latencies[{i}] ({e2el[i]:g} s) is shorter than ttfts[{i}] "
                             f"({doc['ttfts'][i]:g} s): a request ends after its first token")
        gaps, tokens = len(doc["itls"][i]), doc["output_lens"][i]
        if success[i] and tokens >= 1 and (gaps > tokens - 1 or (per_token and gaps != tokens - 1)):
            raise InputError(f"{name}: field itls[{i}] has {gaps} gaps for output_lens[{i}] = {tokens} tokens: a "
                             "successful request has one gap fewer than tokens"
                             + ("" if gaps > tokens - 1 else " (tokens bundled into chunks: this reading needs "
                                "every token's arrival)"))
    if "send_times" in doc and (problem := send_times_problem(doc)):
        raise InputError(f"{name}: {problem}")
    longest = max(e2el[i] for i in range(n))
    if doc["duration"] < longest:
        raise InputError(f"{name}: field duration ({doc['duration']:g} s) is shorter than the longest request "
                         f"({longest:g} s)")
    return doc


def send_times_problem(doc: dict) -> str | None:
    """What is wrong with a file's send_times (the kit's clients write each request's send from the run's start),
    or None: one per request, each finite seconds >= 0."""
    sends = doc["send_times"]
    if not isinstance(sends, list) or len(sends) != len(doc["ttfts"]):
        return (f"field send_times has {len(sends) if isinstance(sends, list) else 'no list of'} entries for "
                f"{len(doc['ttfts'])} requests (ttfts): one per request")
    for i, t in enumerate(sends):
        if isinstance(t, bool) or not isinstance(t, int | float) or not 0 <= t < float("inf"):
            return f"field send_times[{i}] must be a finite number of seconds >= 0, not {t!r:.40}"
    return None


def successes(doc: dict) -> list[bool]:
    """Which requests succeeded: vLLM's own `success` list where saved; else an empty error string (vLLM writes
    `error = response.reason or ""` on failure, so a failed request may still carry "": then it produced no
    tokens and no first token, and counts as failed)."""
    n = len(doc["ttfts"])
    if "success" in doc:
        return list(doc["success"])
    errors = doc.get("errors", [""] * n)
    return [not errors[i] and doc["output_lens"][i] > 0 for i in range(n)]


# A failed request whose error is one of these never reached the server: the connection was not made (aiohttp's
# ClientConnectorError, whose message is "Cannot connect to host ...", in vLLM's client; the kit's client
# scripts/realengine/harness/client.py writes "ConnectionRefusedError: ..." from asyncio.open_connection), or its body
# was never written (aiohttp's ClientOSError "Can not write request body", seen from aiperf 0.13.0 against llama-server:
# the server's token counters did not count those requests), or it went out on a pooled keep-alive connection the
# server had already closed (aiohttp's ServerDisconnectedError with no first token: once on 2026-12-04, 0.5 ms after
# the send; llama-server's log counts 198 tasks for that closed loop's 198 successes of 200, so neither failure
# reached it).
NOT_CONNECTED = ("ClientConnectorError", "Cannot connect to host", "ConnectionRefusedError",
                 "Can not write request body", "ServerDisconnectedError")


def never_reached(doc: dict) -> list[bool]:
    """Per request: failed before its connection was made (no first token, a connection error), so no server saw
    it. A prediction leaves these out of what the simulated server serves (they still count as failed when
    measured). A request list without results (no `ttfts`: what the kit's calibration and tests simulate) has
    none."""
    if "ttfts" not in doc:
        return [False] * len(doc["input_lens"])
    ok, errors = successes(doc), doc.get("errors", [""] * len(doc["ttfts"]))
    return [not ok[i] and not doc["ttfts"][i] and any(m in (errors[i] or "") for m in NOT_CONNECTED)
            for i in range(len(ok))]



def seen_order(doc: dict) -> np.ndarray:
    """Indices of the requests the server saw, by send time: those that never reached it (never_reached)
    left out."""
    keep = np.flatnonzero(~np.asarray(never_reached(doc), dtype=bool))
    sends = np.asarray(doc["send_times"], float)[keep]
    return keep[np.argsort(sends, kind="stable")]


def named_slots(doc: dict) -> list[int] | None:
    """Per request, the server slot that ran it (`slots`: the kit's client with the request field `verbose`), or
    None when the file does not name every request's slot."""
    named = doc.get("slots")
    if not named or len(named) != len(doc["send_times"]) or min(named) < 0:
        return None
    return [int(s) for s in named]


def latencies(doc: dict) -> list[float]:
    if "latencies" in doc:
        return [float(v) for v in doc["latencies"]]
    return [doc["ttfts"][i] + sum(doc["itls"][i]) for i in range(len(doc["ttfts"]))]


def metrics_of(doc: dict, slo_ms: dict | None = None, percentiles=metrics.DEFAULT_PERCENTILES) -> dict:
    """vLLM's metrics recomputed from its per-request lists (failed requests: a non-empty `errors` entry)."""
    success = np.array(successes(doc), dtype=bool)
    ttft = np.asarray(doc["ttfts"], dtype=float)
    e2el = np.asarray(latencies(doc), dtype=float)
    itl = np.array([g for i, gaps in enumerate(doc["itls"]) if success[i] for g in gaps], dtype=float)
    out = metrics.compute(ttft, e2el, itl, np.asarray(doc["input_lens"]), np.asarray(doc["output_lens"]),
                          float(doc["duration"]), slo_ms, percentiles, success)
    # vLLM's peaks need each request's send time, which the file does not hold: taken as saved (newer vLLM only)
    out.update({k: doc[k] for k in ("max_output_tokens_per_s", "max_concurrent_requests") if k in doc})
    if doc.get("itls_evenly_spaced"):  # a client that kept only the first and last token (clients.py GuideLLM)
        out.update({k: None for k in out if k.endswith("_itl_ms")})
    return out


def summarize(paths: list[Path]) -> dict:
    """Every committed result file's metrics (vLLM's own SLO settings are not in the file: no goodput here)."""
    results = []
    for path in sorted(paths):
        doc = load_result(path)
        results.append({"file": Path(path).as_posix(), "model_id": doc.get("model_id"), "date": doc.get("date"),
                        "metrics": metrics_of(doc)})
    return {"schema_version": 1, "definitions": "scripts/serving/measures/metrics.py", "results": results}
