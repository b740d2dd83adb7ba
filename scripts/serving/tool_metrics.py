"""One run's latency and throughput as four benchmarking tools define them: the lab's experiment D ("which TPOT?"),
twin of toolMetrics in templates/lab/model/model.js. Pure: per-request times in, one dict per tool out.

A request: send (s, None when unknown), ttft (s), e2el (s, send to the last token), gaps (s, between consecutive
tokens), output (tokens). A run: start and end (s). Followed, file by file:

  vllm      vllm/benchmarks/serve.py calculate_metrics (commit def9ce85; scripts/serving/metrics.py holds the whole of
            it): TPOT = (E2EL - TTFT) / (output - 1) per request with output > 1, averaged over those requests; ITL =
            every gap of every request pooled; throughput = completed requests or output tokens / (last response -
            run start); a request with one output token counts TPOT 0 against an SLO.
  guidellm  vllm-project/guidellm src/guidellm/schemas/request_stats.py (commit 06cef291) and
            src/guidellm/schemas/benchmark/goodput.py (commit 1a145a40): time_per_output_token_ms = (last token -
            request start) / output, so it includes the TTFT; inter_token_latency_ms = (last token - first token) /
            (output - 1); its TPOT objective is checked against inter_token_latency_ms, and a request with one token
            is undetermined (left out of the share). Its throughputs are rates over time windows, not recomputed here.
  aiperf    ai-dynamo/aiperf src/aiperf/metrics/types/inter_token_latency_metric.py (commit 58dd5dea),
            benchmark_duration_metric.py and output_token_throughput_metric.py: inter_token_latency = (request latency
            - TTFT) / (output - 1) per request (vLLM's TPOT under another name); benchmark duration = last response -
            first request sent (not the run's start), so it needs the send times.
  llmperf   ray-project/llmperf src/llmperf/ray_clients/openai_chat_completions_client.py (commit 0451d33b) and
            token_benchmark_ray.py (commit 004d3afb): inter_token_latency = (TTFT + every later gap) / output, so it
            includes the TTFT; output throughput = output tokens / (test end - test start).
TTFT's median is numpy's linear percentile for all four (pandas' quantile for llmperf: the same interpolation).
"""
from __future__ import annotations

import numpy as np

from scripts.serving import metrics

TOOLS = ("vllm", "guidellm", "aiperf", "llmperf")


def _mean(values) -> float | None:
    values = list(values)
    return sum(values) / len(values) if values else None


def tool_metrics(reqs: list[dict], start: float, end: float, tpot_slo_ms: float) -> dict[str, dict]:
    """Per tool: ttft_p50, tpot_mean (the metric each tool calls its TPOT or ITL-per-request), itl_mean,
    output_throughput, request_throughput and tpot_attainment, None where the tool has no such figure."""
    many = [r for r in reqs if r["output"] > 1]
    out = sum(r["output"] for r in reqs)
    slo = tpot_slo_ms / 1000

    # vLLM's own per-request TPOT and SLO test (scripts/serving/metrics.py: all_tpots, meets_slo)
    ttfts, e2els = np.array([r["ttft"] for r in reqs]), np.array([r["e2el"] for r in reqs])
    all_tpots = metrics.per_request_tpot(ttfts, e2els, np.array([r["output"] for r in reqs]))
    vllm_tpots = [float(t) for r, t in zip(reqs, all_tpots, strict=True) if r["output"] > 1]  # reported: output > 1

    def with_ttft(r):
        return (r["ttft"] + sum(r["gaps"])) / r["output"]

    def between(r):
        return sum(r["gaps"]) / (r["output"] - 1)

    ttft_p50 = float(np.percentile([r["ttft"] for r in reqs], 50))
    span = end - start
    sends = [r["send"] for r in reqs]
    aiperf_span = (max(r["send"] + r["e2el"] for r in reqs) - min(sends)) if None not in sends else None
    return {
        "vllm": {"ttft_p50": ttft_p50, "tpot_mean": _mean(vllm_tpots),
                 "itl_mean": _mean(g for r in reqs for g in r["gaps"]), "output_throughput": out / span,
                 "request_throughput": len(reqs) / span,
                 "tpot_attainment": float(metrics.meets_slo(ttfts, all_tpots, e2els, {"tpot": tpot_slo_ms}).mean())},
        "guidellm": {"ttft_p50": ttft_p50, "tpot_mean": _mean(map(with_ttft, reqs)),
                     "itl_mean": _mean(map(between, many)), "output_throughput": None, "request_throughput": None,
                     "tpot_attainment": sum(between(r) <= slo for r in many) / len(many) if many else None},
        "aiperf": {"ttft_p50": ttft_p50, "tpot_mean": _mean(vllm_tpots),
                   "itl_mean": _mean(vllm_tpots),
                   "output_throughput": out / aiperf_span if aiperf_span else None,
                   "request_throughput": len(reqs) / aiperf_span if aiperf_span else None, "tpot_attainment": None},
        "llmperf": {"ttft_p50": ttft_p50, "tpot_mean": _mean(map(with_ttft, reqs)), "itl_mean": None,
                    "output_throughput": out / span, "request_throughput": len(reqs) / span,
                    "tpot_attainment": None},
    }
