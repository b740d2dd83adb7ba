"""The simulator's prediction of each measured load run, and its error. Pure apart from reading the records.

For a measured cell the simulator gets the same requests (each one's send time, prompt and requested output
tokens from the result file), llama.cpp's scheduling as a preset of the serving model and a step model fitted on
runs it does not predict (scripts/realengine/comparison.py: the other half of the rates):
  llama.cpp (tools/server/server-context.cpp of the vendored tree, update_slots, read for this kit: generating
  slots' tokens are added first, then prompt tokens while the batch is below n_batch): each iteration carries one token
  for every generating slot, then fills the batch with waiting prompt tokens up to `-b` (n_batch), a longer prompt
  continuing in later iterations; at most `-np` requests hold a slot, the rest queue FIFO. That is the serving
  model's `vllm-v1` rule with max_num_batched_tokens = -b and max_num_seqs = -np; each slot's context (-c / -np
  tokens) holds any request of these workloads, so memory never limits (capacity unbounded).
Metrics on both sides are scripts/serving/metrics.py (vLLM's definitions)."""
from __future__ import annotations

import dataclasses

import numpy as np

from scripts.serving import engine, metrics, results
from scripts.serving.stepmodel import StepModel
from scripts.serving.workload import Requests

PRESET_RULE = "vllm-v1"  # llama.cpp's iteration rule in the serving model (see the docstring)
COMPARED = ("median_ttft_ms", "p90_ttft_ms", "p99_ttft_ms", "mean_tpot_ms", "p99_tpot_ms", "median_itl_ms",
            "p99_itl_ms", "median_e2el_ms", "p99_e2el_ms", "request_throughput", "slo_attainment")
CENTRAL = ("median_ttft_ms", "mean_tpot_ms", "median_e2el_ms")  # goal: median |error| <= 10 % below saturation
TAIL = ("p99_ttft_ms", "p99_tpot_ms", "p99_itl_ms", "p99_e2el_ms")  # goal: <= 20 %


def requests_of(doc: dict) -> Requests:
    order = np.argsort(np.asarray(doc["send_times"]), kind="stable")
    out = np.asarray(doc.get("requested_output_lens", doc["output_lens"]))
    return Requests(np.asarray(doc["send_times"], float)[order], np.asarray(doc["input_lens"])[order], out[order])


def simulate_cell(a, doc: dict, step: StepModel, server: dict):
    """The engine sees each request `step.request_overhead_s` after the client sent it (the round trip inside a
    lone TTFT); TTFT and E2EL are then measured from the send, as the client does."""
    sent = requests_of(doc)
    seen = Requests(sent.arrival_s + step.request_overhead_s, sent.prompt_tokens, sent.output_tokens)
    trace = engine.simulate(a, seen, PRESET_RULE, max_num_batched_tokens=server["batch_tokens"],
                            max_batch=server["slots"], paged=False, capacity_bytes=float("inf"), step_cost=step)
    return dataclasses.replace(trace, requests=sent)


def compare_cell(a, doc: dict, step: StepModel, server: dict, slo_ms: dict, saturated_below: float) -> dict:
    """A run measured and predicted; `saturated` when it completed fewer than `saturated_below` times the requests
    per second it was sent (config/real_engine.json comparison.saturated_below)."""
    measured = results.metrics_of(doc, slo_ms)
    predicted = metrics.from_trace(simulate_cell(a, doc, step, server), slo_ms)
    sent_rate = len(doc["send_times"]) / max(doc["send_times"])
    return {"measured": {k: measured[k] for k in COMPARED}, "predicted": {k: predicted[k] for k in COMPARED},
            "sent_rate": sent_rate, "saturated": measured["request_throughput"] < saturated_below * sent_rate}


def relative_error(predicted: float, measured: float) -> float:
    return (predicted - measured) / measured if measured else float("nan")


def cell_errors(cell: dict) -> dict:
    m, p = cell["measured"], cell["predicted"]
    out = {k: relative_error(p[k], m[k]) for k in COMPARED if k != "slo_attainment"}
    out["slo_attainment"] = p["slo_attainment"] - m["slo_attainment"]  # absolute
    return out


def run_spread(a: dict, b: dict) -> dict:
    """Two runs of one cell: |a - b| / their mean (attainment: |a - b|)."""
    out = {}
    for k in COMPARED:
        if k == "slo_attainment":
            out[k] = abs(a[k] - b[k])
        else:
            mean = (a[k] + b[k]) / 2
            out[k] = abs(a[k] - b[k]) / mean if mean else 0.0
    return out
