"""One run's latency and throughput as five benchmarking tools compute them: the lab's experiment D ("which TPOT?"),
twin of toolMetrics in templates/lab/model/tools.js (held equal by tests/test_tool_metrics.py). Pure: a run in the
`vllm bench serve --save-detailed` layout in (results.load_result, clients.from_aiperf or clients.from_guidellm, or
the lab's own run), one table of cells out.

Followed, file by file (each a release, or a commit on the main branch; how each was checked is in
docs/serving-notes.md, "Which TPOT"):

  vllm      vLLM 0.34.0 (PyPI sdist, sha256 fcad848b...), vllm/benchmarks/serve.py calculate_metrics: the metrics of
            successful requests; TTFT, TPOT ((E2EL - TTFT) / (output - 1), requests with output > 1), ITL (every
            chunk gap of every request, pooled) and E2EL summarised with numpy's mean and linear percentiles (an empty
            list reads as 0); throughput and goodput over the run's duration; goodput counts a one-token request's
            TPOT as 0. vLLM reports no attainment. TTFT is the first chunk carrying output
            (lib/endpoint_request_func.py _choice_has_streamed_output: the role-only chunk is not it).
  guidellm  GuideLLM 0.8.1 (PyPI wheel), guidellm/benchmark/schemas/metrics.py GenerativeMetrics.compile and
            _compile_goodput, guidellm/schemas/base/statistics.py (Percentiles.from_pdf, DistributionSummary.
            from_values, rate_distribution_from_timings), guidellm/schemas/base/request_stats.py: successful requests;
            TTFT weight 1; its TPOT = (last token - request start) / output, weighted by output tokens (the first
            token's wait spread over the output); its ITL = (last - first token) / (output - 1), weighted by output - 1
            (a one-token request weighs 0). Percentiles are the weighted inverted CDF, no interpolation
            (searchsorted(cdf, q, side="left")); the median is that p50; means are weighted. Rates ("total" in the
            console: errored and incomplete requests too) are the mean of a time-weighted rate distribution over the
            measurement window (first request start to last request end, no warm-up or cool-down): the events in it
            over the window after events within 0.1 ms merge. Goodput checks the TPOT objective against its ITL; a
            one-token request is undetermined (left out), an errored one counts as not met, an incomplete one is left
            out; attainment = met / determined, goodput = the rate of met requests' ends.
  aiperf    AIPerf 0.13.0 (PyPI wheel), aiperf/metrics/types/*.py and aiperf/metrics/metric_dicts.py
            metric_result_from_array: valid (successful) requests; ITL = (request latency - TTFT) / (output - 1) per
            request with output >= 2 (vLLM's TPOT under another name; AIPerf has no TPOT); linear percentiles (numpy's
            rule, written out); benchmark duration = last response - first request start (valid requests), so it
            needs send times; good_request_fraction = good / (valid + errored), a request without an ITL (one token)
            is not good; goodput = good / duration.
  llmperf   ray-project/llmperf main @ f1d6bed4 (2024-12-09), token_benchmark_ray.py metrics_summary and
            src/llmperf/ray_clients/openai_chat_completions_client.py: non-errored requests; inter_token_latency =
            (TTFT + every later content gap) / tokens_received, where tokens_received counts every SSE chunk (the role
            and finish chunks too): a file holds only the content chunks, so the figure here divides by those and is
            an upper bound; output tokens are re-counted with a Llama tokenizer (here: the file's count); pandas'
            quantile (linear, numpy's rule); throughput over the test's span (the run's duration here); completed
            requests per minute, shown per second. No goodput.
  inference-perf  kubernetes-sigs/inference-perf main @ 7de5ef2e (2026-08-19), inference_perf/reportgen/base.py
            summarize_requests, calculate_goodput_metrics and summarize: successful requests; TTFT and TPOT only for a
            request with more than one output token time (a one-token request has neither); TPOT = (last - first
            token) / (output - 1); normalized TPOT (NTPOT) = request latency / output, every successful request; ITL
            = every gap between output token times, pooled (tokens of one chunk share its time, so bundled tokens
            cannot be placed from a file); numpy mean and linear percentiles; rates over max end - min start of every
            request; goodput over successful requests only (goodput_percentage = good / successful), a request
            without a TPOT is not good.

A cell is a number (seconds, tokens or requests per second, or a fraction) or None; `notes` says why a cell is
None or only bounded, with one of NOTES (the page words each one in templates/lab.html.j2).
"""
from __future__ import annotations

import numpy as np

from scripts.serving.measures import results

TOOLS = ("vllm", "guidellm", "aiperf", "llmperf", "inference_perf")
GROUPS = ("ttft", "tpot", "itl", "ntpot", "e2el")
STATS = (("mean", None), ("p50", 50), ("p90", 90), ("p99", 99))
SINGLES = ("output_throughput", "request_throughput", "goodput", "attainment")
KEYS = tuple(f"{g}_{s}" for g in GROUPS for s, _ in STATS) + SINGLES
NOTES = ("not_reported", "no_send_times", "chunks_unknown", "bundled", "evenly_spaced", "response_end", "no_values",
         "window_assumed")
MERGE_S = 1e-4  # GuideLLM rate_distribution_from_timings: events within 0.1 ms merge


def requests_of(doc: dict) -> list[dict]:
    """The run's requests: ok, send (None when the file has no send_times), ttft, e2el, gaps (between chunks),
    output, incomplete (GuideLLM's cancelled-at-the-end requests, which clients.from_guidellm marks)."""
    ok, e2el = results.successes(doc), results.latencies(doc)
    sends = doc.get("send_times")
    errors = doc.get("errors", [""] * len(ok))
    return [{"ok": bool(ok[i]), "send": float(sends[i]) if sends is not None else None,
             "ttft": float(doc["ttfts"][i]), "e2el": float(e2el[i]), "gaps": [float(g) for g in doc["itls"][i]],
             "output": int(doc["output_lens"][i]), "incomplete": str(errors[i] or "").startswith("incomplete:")}
            for i in range(len(ok))]


def _linear(values: list[float]) -> dict:
    """numpy's mean and linear percentiles (vLLM, AIPerf, llmperf's pandas, inference-perf)."""
    v = np.asarray(values, dtype=float)
    return {"mean": float(np.mean(v)), **{s: float(np.percentile(v, p)) for s, p in STATS if p}}


def _weighted(pairs: list[tuple[float, float]]) -> dict | None:
    """GuideLLM's DistributionSummary.from_values over (value, weight): equal values merge, zero weights drop, the
    weights normalise to a pdf; the mean is weighted, a percentile is the first value whose cumulative probability
    reaches it (no interpolation)."""
    totals: dict[float, float] = {}
    for value, weight in pairs:
        totals[value] = totals.get(value, 0.0) + weight
    kept = [(v, w) for v, w in sorted(totals.items()) if w > 0]
    if not kept:
        return None
    values = np.array([v for v, _ in kept])
    weights = np.array([w for _, w in kept])
    if weights.sum() <= 1e-6:
        weights = np.ones_like(values)
    probs = weights / weights.sum()
    cdf = np.cumsum(probs)
    out = {"mean": float(np.sum(values * probs))}
    out.update({s: float(values[np.searchsorted(cdf, p / 100, side="left")]) for s, p in STATS if p})
    return out


def _put(cells: dict, group: str, summary: dict | None):
    for s, _ in STATS:
        cells[f"{group}_{s}"] = None if summary is None else summary[s]


def _summaries(cells: dict, notes: dict, lists: dict, summarise):
    """cells[group_stat] from each group's list; an empty list gives None and the note no_values."""
    for group, values in lists.items():
        _put(cells, group, summarise(values) if len(values) else None)
        if not len(values):
            notes.update({f"{group}_{s}": "no_values" for s, _ in STATS})


def _blank(tool_notes: dict, keys, code: str, cells: dict):
    for key in keys:
        cells[key] = None
        tool_notes[key] = code


def _group_keys(*groups):
    return [f"{g}_{s}" for g in groups for s, _ in STATS]


def vllm(reqs: list[dict], duration: float, slo_s: float, evenly: bool) -> tuple[dict, dict]:
    ok = [r for r in reqs if r["ok"]]
    tpot = [(r["e2el"] - r["ttft"]) / (r["output"] - 1) if r["output"] > 1 else 0.0 for r in ok]
    cells, notes = {}, {}
    many = [t for r, t in zip(ok, tpot, strict=True) if r["output"] > 1]
    for group, values in (("ttft", [r["ttft"] for r in ok]), ("tpot", many),
                          ("itl", [g for r in ok for g in r["gaps"]]), ("e2el", [r["e2el"] for r in ok])):
        _put(cells, group, _linear(values or [0.0]))  # vLLM: np.mean(x or 0)
    if evenly:
        _blank(notes, _group_keys("itl"), "evenly_spaced", cells)
    _blank(notes, _group_keys("ntpot") + ["attainment"], "not_reported", cells)
    good = sum(t <= slo_s for t in tpot)
    cells.update(output_throughput=sum(r["output"] for r in ok) / duration, request_throughput=len(ok) / duration,
                 goodput=good / duration)
    return cells, notes


def _merged_end(times: list[float], start: float, end: float) -> float:
    """The window's last time after GuideLLM's merge: groups of times within MERGE_S of their first time keep the
    first; the window runs from `start` (always a group's first) to the last group's first time."""
    ordered = sorted({start, end, *[t for t in times if start <= t <= end]})
    i, last = 0, start
    while i < len(ordered):
        last = ordered[i]
        j = i + 1
        while j < len(ordered) and ordered[j] <= last + MERGE_S:
            j += 1
        i = j
    return last


def _rate(events: list[tuple[float, float]], start: float, end: float) -> float:
    """GuideLLM's rate_distribution_from_timings(...).mean: the weights of the events inside [start, end] over the
    merged window (0 when it holds a single time)."""
    inside = [(t, w) for t, w in events if start <= t <= end]
    last = _merged_end([t for t, _ in inside], start, end)
    return sum(w for _, w in inside) / (last - start) if last > start else 0.0


def _token_events(r: dict) -> list[tuple[float, float]]:
    """GuideLLM's output_tokens_timings: the first token at its time, then the other chunks evenly spaced from the
    first token to the last, sharing the remaining tokens; one timing at the end when there is one chunk."""
    first, last = r["send"] + r["ttft"], r["send"] + r["e2el"]
    chunks = len(r["gaps"]) + 1
    if not r["ok"] or chunks <= 1 or r["output"] <= 1:
        return [(last, float(r["output"] if r["ok"] else 0))]
    each = (r["output"] - 1) / (chunks - 1)
    return [(first, 1.0)] + [(float(t), each) for t in np.linspace(first, last, num=chunks)[1:]]


def guidellm(reqs: list[dict], duration: float, slo_s: float) -> tuple[dict, dict]:
    ok = [r for r in reqs if r["ok"]]
    cells, notes = {}, {}
    itl = [((r["e2el"] - r["ttft"]) / (r["output"] - 1), r["output"] - 1.0) for r in ok if r["output"] > 1]
    _summaries(cells, notes, {"ttft": [(r["ttft"], 1.0) for r in ok],
                              "tpot": [(r["e2el"] / r["output"], float(r["output"])) for r in ok if r["output"] > 0],
                              "itl": itl, "e2el": [(r["e2el"], 1.0) for r in ok]}, _weighted)
    notes.update({k: "response_end" for k in _group_keys("e2el")})
    _blank(notes, _group_keys("ntpot"), "not_reported", cells)
    known = all(r["send"] is not None for r in reqs)
    if not known:  # the window cannot be placed: take the run as starting at 0 and lasting its duration
        reqs = [{**r, "send": 0.0} for r in reqs]
    ends = [r["send"] + (r["e2el"] if r["ok"] else 0.0) for r in reqs]
    start, end = (min(r["send"] for r in reqs), max(ends)) if known else (0.0, duration)
    met = [e for r, e in zip(reqs, ends, strict=True) if r["ok"] and r["output"] > 1
           and 1000 * (r["e2el"] - r["ttft"]) / (r["output"] - 1) <= 1000 * slo_s]
    determined = sum(r["ok"] and r["output"] > 1 for r in reqs) + sum(not r["ok"] and not r["incomplete"] for r in reqs)
    cells.update(request_throughput=_rate([(e, 1.0) for e in ends], start, end),
                 output_throughput=_rate([ev for r in reqs for ev in _token_events(r)], start, end),
                 goodput=_rate([(e, 1.0) for e in met], start, end) if determined else None,
                 attainment=len(met) / determined if determined else None)
    if not known:
        notes.update({k: "window_assumed" for k in ("request_throughput", "output_throughput", "goodput")})
    if not determined:
        notes.update(goodput="no_values", attainment="no_values")
    return cells, notes


def aiperf(reqs: list[dict], slo_s: float) -> tuple[dict, dict]:
    ok = [r for r in reqs if r["ok"]]
    cells, notes = {}, {}
    itl = [(r["e2el"] - r["ttft"]) / (r["output"] - 1) for r in ok if r["output"] >= 2]
    _summaries(cells, notes, {"ttft": [r["ttft"] for r in ok], "itl": itl, "e2el": [r["e2el"] for r in ok]}, _linear)
    _blank(notes, _group_keys("tpot", "ntpot"), "not_reported", cells)
    good = sum(t <= slo_s for t in itl)
    cells["attainment"] = good / len(reqs)
    if ok and all(r["send"] is not None for r in ok):
        span = max(r["send"] + r["e2el"] for r in ok) - min(r["send"] for r in ok)
        cells.update(output_throughput=sum(r["output"] for r in ok) / span, request_throughput=len(ok) / span,
                     goodput=good / span)
    else:
        _blank(notes, ("output_throughput", "request_throughput", "goodput"), "no_send_times", cells)
    return cells, notes


def llmperf(reqs: list[dict], duration: float) -> tuple[dict, dict]:
    ok = [r for r in reqs if r["ok"]]
    cells, notes = {}, {}
    itl = [r["e2el"] / (len(r["gaps"]) + 1) for r in ok]
    _summaries(cells, notes, {"ttft": [r["ttft"] for r in ok], "itl": itl, "e2el": [r["e2el"] for r in ok]}, _linear)
    notes.update({k: "chunks_unknown" for k in _group_keys("itl")})
    notes.update({k: "response_end" for k in _group_keys("e2el")})
    _blank(notes, _group_keys("tpot", "ntpot") + ["goodput", "attainment"], "not_reported", cells)
    cells.update(output_throughput=sum(r["output"] for r in ok) / duration, request_throughput=len(ok) / duration)
    return cells, notes


def inference_perf(reqs: list[dict], slo_s: float, per_token: bool) -> tuple[dict, dict]:
    ok = [r for r in reqs if r["ok"]]
    cells, notes = {}, {}
    streamed = [r for r in ok if r["output"] > 1]
    tpot = [(r["e2el"] - r["ttft"]) / (r["output"] - 1) for r in streamed]
    _summaries(cells, notes, {"ttft": [r["ttft"] for r in streamed], "tpot": tpot,
                              "itl": [g for r in streamed for g in r["gaps"]],
                              "ntpot": [r["e2el"] / r["output"] if r["output"] > 0 else 0.0 for r in ok],
                              "e2el": [r["e2el"] for r in ok]}, _linear)
    notes.update({k: "response_end" for k in _group_keys("e2el", "ntpot")})
    if not per_token:
        _blank(notes, _group_keys("itl"), "bundled", cells)
    good = sum(t <= slo_s for t in tpot)
    cells["attainment"] = good / len(ok) if ok else None
    if all(r["send"] is not None for r in reqs) and ok:
        total = max(r["send"] + (r["e2el"] if r["ok"] else 0.0) for r in reqs) - min(r["send"] for r in reqs)
        span_ok = max(r["send"] + r["e2el"] for r in ok) - min(r["send"] for r in ok)
        cells.update(output_throughput=sum(r["output"] for r in ok) / total, request_throughput=len(ok) / total,
                     goodput=good / span_ok if span_ok > 0 else 0.0)
    else:
        _blank(notes, ("output_throughput", "request_throughput", "goodput"), "no_send_times", cells)
    if not ok:
        notes["attainment"] = "no_values"
    return cells, notes


def tool_metrics(doc: dict, tpot_slo_ms: float) -> dict:
    """{"cells": {tool: {key: value}}, "notes": {tool: {key: note}}} for a run in the vLLM layout (module docstring).
    The TPOT target is each tool's TPOT-like objective: vLLM's tpot, GuideLLM's tpot (checked against its ITL), AIPerf's
    inter_token_latency, inference-perf's tpot."""
    reqs, slo = requests_of(doc), tpot_slo_ms / 1000
    duration = float(doc["duration"])
    per_token = all(len(r["gaps"]) == r["output"] - 1 for r in reqs if r["ok"] and r["output"] >= 1)
    evenly = bool(doc.get("itls_evenly_spaced"))
    made = {"vllm": vllm(reqs, duration, slo, evenly), "guidellm": guidellm(reqs, duration, slo),
            "aiperf": aiperf(reqs, slo), "llmperf": llmperf(reqs, duration),
            "inference_perf": inference_perf(reqs, slo, per_token and not evenly)}
    if evenly:
        made["inference_perf"][1].update({k: "evenly_spaced" for k in _group_keys("itl")})
    return {"cells": {t: {k: made[t][0].get(k) for k in KEYS} for t in TOOLS},
            "notes": {t: {k: v for k, v in sorted(made[t][1].items())} for t in TOOLS}}
