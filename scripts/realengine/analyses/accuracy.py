"""How far a prediction is from its measurement, per cell (predict.py makes the prediction; the families sum these
up). Pure. The metrics compared (`COMPARED`) and each one's error (`CellErrors`: relative, the attainment's
absolute), how much runs of one cell differ among themselves (`run_spread`), how far the predicted distributions are
from the measured ones (`distribution_distance`, Kolmogorov-Smirnov) and, for prefix reuse, whether the server and
the simulated slots reused the same tokens (`reuse_agreement`). Metrics on both sides are
scripts/serving/measures/metrics.py (vLLM's definitions)."""
from __future__ import annotations

import dataclasses

import numpy as np

from scripts.serving.measures import metrics, results

COMPARED = ("median_ttft_ms", "p90_ttft_ms", "p99_ttft_ms", "mean_tpot_ms", "p99_tpot_ms", "median_itl_ms",
            "p99_itl_ms", "median_e2el_ms", "p99_e2el_ms", "request_throughput", "slo_attainment")
CENTRAL = ("median_ttft_ms", "mean_tpot_ms", "median_e2el_ms")  # goal: median |error| <= 10 % below saturation
TAIL = ("p99_ttft_ms", "p99_tpot_ms", "p99_itl_ms", "p99_e2el_ms")  # goal: <= 20 %


def in_flight_at_send(doc: dict) -> np.ndarray:
    """Per request (the file's order), how many earlier-sent requests were still in flight when it was sent, as the
    client measured (sent, and their last token not yet arrived)."""
    send = np.asarray(doc["send_times"], float)
    end = send + np.asarray(results.latencies(doc), float)
    return np.array([int(((send < s) & (end > s)).sum()) for s in send])


def reuse_agreement(doc: dict, trace, slots: int) -> dict:
    """Prompt tokens reused per request, the server's count (usage.prompt_tokens_details.cached_tokens) against the
    simulated slots' (trace.cached_tokens), over the requests the server reported it for: how many agree exactly,
    the token hit rate both ways, and how many of the disagreeing requests were sent while every slot was busy
    (then which slot frees first, a matter of timing, picks the slot they land in), and how many others were a
    conversation's turn sent (at its measured time) before the simulation had finished the previous turn, whose slot
    was then still busy."""
    idx = results.seen_order(doc)
    measured = np.asarray(doc["cached_tokens"], dtype=np.int64)[idx]
    predicted = np.asarray(trace.cached_tokens, dtype=np.int64)
    prompt = np.asarray(doc["input_lens"], dtype=np.int64)[idx]
    busy = in_flight_at_send(doc)[idx] >= slots
    told = measured >= 0
    n = int(told.sum())
    differ = told & (measured != predicted)
    behind = np.zeros(len(idx), dtype=bool)  # a conversation's turn sent before its previous turn's simulated end
    if "sessions" in doc and "turns" in doc:
        where = {(doc["sessions"][i], doc["turns"][i]): j for j, i in enumerate(idx)}
        for j, i in enumerate(idx):
            prev = where.get((doc["sessions"][i], doc["turns"][i] - 1))
            behind[j] = prev is not None and trace.finish_s[prev] > trace.requests.arrival_s[j]
    return {"requests": n, "equal": n - int(differ.sum()),
            "equal_share": float(1 - differ.sum() / n) if n else float("nan"),
            "differ_all_slots_busy": int((differ & busy).sum()),
            "differ_previous_turn_running": int((differ & behind & ~busy).sum()),
            "measured_hit": float(measured[told].sum() / prompt[told].sum()) if n else float("nan"),
            "predicted_hit": float(predicted[told].sum() / prompt[told].sum()) if n else float("nan")}


def distribution_distance(doc: dict, trace) -> dict:
    """Per request metric, how far the predicted distribution is from the measured one: the Kolmogorov-Smirnov
    distance of the successful requests' TTFTs and TPOTs (vLLM's per-request TPOT), as published simulator
    validations report beside percentile errors."""
    ok = np.asarray(results.successes(doc), dtype=bool)
    m_ttft = np.asarray(doc["ttfts"], dtype=float)
    m_tpot = metrics.per_request_tpot(m_ttft, np.asarray(results.latencies(doc), dtype=float),
                                      np.asarray(doc["output_lens"]))
    sent = trace.requests
    p_ttft, p_e2el = trace.first_token_s - sent.arrival_s, trace.finish_s - sent.arrival_s
    p_tpot = metrics.per_request_tpot(p_ttft, p_e2el, np.asarray(sent.output_tokens))
    many_m, many_p = ok & (np.asarray(doc["output_lens"]) > 1), np.asarray(sent.output_tokens) > 1
    return {"ttft": metrics.ks_distance(m_ttft[ok], p_ttft),
            "tpot": metrics.ks_distance(m_tpot[many_m], p_tpot[many_p])}


def relative_error(predicted: float, measured: float) -> float:
    return (predicted - measured) / measured if measured else float("nan")


@dataclasses.dataclass(frozen=True)
class CellErrors:
    """A cell's prediction errors, metric by metric (COMPARED, in its order): relative, (predicted - measured) /
    measured, but the attainment's, which is absolute (predicted - measured shares); None where the measurement
    does not give the metric (a client that kept no per-token times: no ITL)."""
    median_ttft_ms: float | None
    p90_ttft_ms: float | None
    p99_ttft_ms: float | None
    mean_tpot_ms: float | None
    p99_tpot_ms: float | None
    median_itl_ms: float | None
    p99_itl_ms: float | None
    median_e2el_ms: float | None
    p99_e2el_ms: float | None
    request_throughput: float | None
    slo_attainment: float

    @classmethod
    def of(cls, measured: dict, predicted: dict) -> CellErrors:
        m, p = measured, predicted
        return cls(**{k: None if m[k] is None else relative_error(p[k], m[k]) for k in COMPARED
                      if k != "slo_attainment"}, slo_attainment=p["slo_attainment"] - m["slo_attainment"])

    @classmethod
    def read(cls, held: dict) -> CellErrors:
        """As a comparison file holds them (as_dict)."""
        return cls(**{k: held[k] for k in COMPARED})

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)

    def __getitem__(self, metric: str) -> float | None:
        """A metric's error by name, as the files' dicts give it (comparison.median_abs_error reads either)."""
        return getattr(self, metric)


def cell_errors(cell: dict) -> dict:
    """CellErrors of a cell (its `measured` and `predicted` metrics), as the comparison files hold them."""
    return CellErrors.of(cell["measured"], cell["predicted"]).as_dict()


def run_spread(runs: list[dict]) -> dict:
    """Runs of one cell (two load runs, or a held-out cell's sessions), metric by metric: (max - min) / their mean
    (attainment: max - min, absolute); None where a run lacks the metric."""
    out = {}
    for k in COMPARED:
        v = [r[k] for r in runs]
        if any(x is None for x in v):
            out[k] = None
        elif k == "slo_attainment":
            out[k] = float(max(v) - min(v))
        else:
            mean = float(np.mean(v))
            out[k] = float((max(v) - min(v)) / mean) if mean else 0.0
    return out
