"""Request metrics exactly as `vllm bench serve` computes them (vllm/benchmarks/serve.py, calculate_metrics and
process_one_metric). Pure: arrays in, a dict with vLLM's own result keys out.

Per successful request i, times in seconds (reported in ms):
  TTFT_i = first token time - send time
  E2EL_i = last token time - send time ("latency")
  TPOT_i = (E2EL_i - TTFT_i) / (output_i - 1), only for output_i > 1; for goodput a request with one output
           token counts TPOT 0 (vLLM's `all_tpots`)
  ITL    = every gap between consecutive tokens of every request, pooled into one list (not averaged per request)
Each metric: mean, median, std (population, numpy's default) and the requested percentiles, all with numpy's
default linear interpolation (`np.percentile`), under keys mean_ttft_ms, median_ttft_ms, std_ttft_ms,
p99_ttft_ms ... (a percentile's key is p{int(p)} when p is whole, else p{p}: p99.9_ttft_ms).
  request_throughput = completed / duration;  output_throughput = total output tokens / duration;
  total_token_throughput = (input + output tokens) / duration, where duration runs from the start of the run
  (before the first request is sent) to the last response.
  request_goodput = requests meeting every given SLO (ttft, tpot, e2el in ms; a request meets one when its value
  is <= the target) / duration, None when no SLO is given. slo_attainment (ours, not vLLM's) = that count /
  completed: the fraction DistServe's goodput is defined on.
  max_output_tokens_per_s, max_concurrent_requests (vLLM's newer keys; `peaks`, followed line by line from
  calculate_metrics in vllm/benchmarks/serve.py at commit def9ce85): over successful requests, one-second buckets
  from the first send; a token at send + TTFT + the running sum of its ITLs (added one by one, as vLLM does) counts
  in bucket int(t - first send); a request counts as concurrent in every bucket from int(send - first send) to
  int(send + E2EL - first send), both included. They need each request's send time, which a saved result file
  does not hold: from a file they are read as saved (scripts/serving/measures/results.py).
"""
from __future__ import annotations

import numpy as np

METRICS = ("ttft", "tpot", "itl", "e2el")
DEFAULT_PERCENTILES = (50.0, 90.0, 99.0)


def percentile_key(metric: str, p: float) -> str:
    word = str(int(p)) if int(p) == p else str(p)
    return f"p{word}_{metric}_ms"


def _stats(metric: str, values: np.ndarray, percentiles) -> dict:
    v = values if len(values) else np.zeros(1)  # vLLM: np.mean(x or 0)
    out = {f"mean_{metric}_ms": float(np.mean(v)) * 1000, f"median_{metric}_ms": float(np.median(v)) * 1000,
           f"std_{metric}_ms": float(np.std(v)) * 1000}
    out.update({percentile_key(metric, p): float(np.percentile(v, p)) * 1000 for p in percentiles})
    return out


def per_request_tpot(ttft_s: np.ndarray, e2el_s: np.ndarray, output_lens: np.ndarray) -> np.ndarray:
    """vLLM's `all_tpots`: (E2EL - TTFT) / (output - 1) when output > 1, else 0."""
    out = np.zeros(len(ttft_s))
    many = output_lens > 1
    out[many] = (e2el_s[many] - ttft_s[many]) / (output_lens[many] - 1)
    return out


def ks_distance(a, b) -> float:
    """The two-sample Kolmogorov-Smirnov distance: the largest gap between the two empirical distribution functions
    (0: the same distribution of values; 1: disjoint). Exact, over every value either sample holds."""
    a, b = np.sort(np.asarray(a, dtype=float)), np.sort(np.asarray(b, dtype=float))
    if not len(a) or not len(b):
        raise ValueError("a Kolmogorov-Smirnov distance needs two non-empty samples")
    x = np.concatenate([a, b])
    return float(np.max(np.abs(np.searchsorted(a, x, side="right") / len(a)
                               - np.searchsorted(b, x, side="right") / len(b))))


def meets_slo(ttft_s, tpot_s, e2el_s, slo_ms: dict) -> np.ndarray:
    """Per request: True when every given target (ms) holds, as vLLM's goodput counts it."""
    ok = np.ones(len(ttft_s), dtype=bool)
    for key, values in (("ttft", ttft_s), ("tpot", tpot_s), ("e2el", e2el_s)):
        if key in slo_ms:
            ok &= slo_ms[key] / 1000 >= np.asarray(values)
    return ok


def compute(ttft_s, e2el_s, itl_s, input_lens, output_lens, duration_s: float, slo_ms: dict | None = None,
            percentiles=DEFAULT_PERCENTILES, success=None) -> dict:
    """The metrics of one run; arrays are per request (ITLs pooled), `success` marks completed requests."""
    ttft_s, e2el_s = np.asarray(ttft_s, dtype=float), np.asarray(e2el_s, dtype=float)
    input_lens, output_lens = np.asarray(input_lens), np.asarray(output_lens)
    ok = np.ones(len(ttft_s), dtype=bool) if success is None else np.asarray(success, dtype=bool)
    ttft, e2el, inp, outp = ttft_s[ok], e2el_s[ok], input_lens[ok], output_lens[ok]
    all_tpots = per_request_tpot(ttft, e2el, outp)
    tpots = all_tpots[outp > 1]
    completed = int(ok.sum())
    good = int(meets_slo(ttft, all_tpots, e2el, slo_ms).sum()) if slo_ms else None
    out = {"duration": float(duration_s), "completed": completed, "failed": int(len(ok) - completed),
           "total_input_tokens": int(inp.sum()), "total_output_tokens": int(outp.sum()),
           "request_throughput": completed / duration_s,
           "request_goodput": good / duration_s if slo_ms else None,
           "output_throughput": float(outp.sum()) / duration_s,
           "total_token_throughput": float(inp.sum() + outp.sum()) / duration_s}
    for metric, values in (("ttft", ttft), ("tpot", tpots), ("itl", np.asarray(itl_s, dtype=float)),
                           ("e2el", e2el)):
        out.update(_stats(metric, values, percentiles))
    if slo_ms:
        out["slo_attainment"] = good / completed if completed else 0.0
    return out


def peaks(send_s, ttft_s, e2el_s, itls, success=None) -> dict:
    """vLLM's max_output_tokens_per_s and max_concurrent_requests (see the module docstring); 0.0 and 0 when no
    request succeeded, as vLLM initialises them."""
    ok = np.ones(len(send_s), dtype=bool) if success is None else np.asarray(success, dtype=bool)
    ids = np.flatnonzero(ok)
    if not len(ids):
        return {"max_output_tokens_per_s": 0.0, "max_concurrent_requests": 0}
    send, ttft, e2el = (np.asarray(x, dtype=float)[ids] for x in (send_s, ttft_s, e2el_s))
    start = float(send.min())
    buckets = int(np.ceil(float((send + e2el).max()) - start)) + 1
    concurrent = np.zeros(buckets + 1)
    token_buckets = []
    for k, i in enumerate(ids):
        times = np.cumsum(np.concatenate(([send[k] + ttft[k]], np.asarray(itls[i], dtype=float))))  # left to right
        token_buckets.append(np.trunc(times - start).astype(np.int64))  # int(): toward zero, as vLLM's int()
        concurrent[int(send[k] - start)] += 1
        concurrent[int((send[k] + e2el[k]) - start) + 1] -= 1
    b = np.concatenate(token_buckets)
    tokens = np.bincount(b[(b >= 0) & (b < buckets)], minlength=buckets)  # each token counted in its second
    return {"max_output_tokens_per_s": float(np.max(tokens)),
            "max_concurrent_requests": int(np.max(np.cumsum(concurrent)[:buckets]))}


def latencies(trace) -> tuple[np.ndarray, np.ndarray]:
    """Per request of a simulated run: TTFT and E2EL in seconds, from its send."""
    r = trace.requests
    return trace.first_token_s - r.arrival_s, trace.finish_s - r.arrival_s


def from_trace(trace, slo_ms: dict | None = None, percentiles=DEFAULT_PERCENTILES) -> dict:
    """Metrics of a simulated run; the run starts at t = 0, as vLLM's clock starts before the first send."""
    r = trace.requests
    ttft, e2el = latencies(trace)
    gaps = [trace.token_gaps(i) for i in range(len(r))]
    out = compute(ttft, e2el, np.concatenate(gaps or [np.empty(0)]), r.prompt_tokens, r.output_tokens,
                  float(trace.finish_s.max()), slo_ms, percentiles)
    return {**out, **peaks(r.arrival_s, ttft, e2el, gaps)}
