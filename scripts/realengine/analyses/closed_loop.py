"""A closed loop (aiperf --concurrency: `max_concurrency` requests kept in flight, each sent when a finish frees its
place) as the held-out family predicts it (heldout_comparison.py). Pure apart from the simulations it runs.

What the simulated client sends (`as_sent`: the client's measured turnaround, `client_turnaround`); the patterns a
loop of equal requests settles into from its start (`start_of`, `start_range`, `within_starts`) and from the order of
the server's slots when the harness did not set it (`slot_layouts`); the waves its sends make, measured and
simulated (`send_waves`, `simulated_waves`); and the TPOT of the requests that met the TTFT target
(`ttft_met_tpot_ms`), the ones that decide its attainment."""
from __future__ import annotations

import numpy as np

from scripts.realengine.analyses import predict
from scripts.serving.measures import metrics, results


def is_closed_loop(doc: dict) -> bool:
    return doc.get("max_concurrency") is not None


def as_sent(doc: dict, turnaround: bool = True) -> dict:
    """What the simulated client sends: a Poisson cell's own send times; a closed loop (aiperf --concurrency keeps
    `max_concurrency` in flight) with the client's measured turnaround (client_turnaround), or with `turnaround`
    False every request ready at 0 and each sent at the very finish that frees its slot."""
    if not is_closed_loop(doc):
        return doc
    if not turnaround:
        return {**doc, "send_times": [0.0] * len(doc["send_times"])}
    starts, delays = client_turnaround(doc)
    return {**doc, "send_times": starts, "release_delays": delays}


def client_turnaround(doc: dict) -> tuple[list[float], list[float]]:
    """A closed loop's client, as measured (the client's side of the cell, an input as a Poisson cell's send times
    are; nothing of the server's speed): the first `max_concurrency` requests the server saw go at their own send
    times (the client's start stagger); every later one, the k-th sent, is the one the (k - cap)-th finish let go
    (aiperf 0.13.0 aiperf/timing/concurrency.py DynamicConcurrencyLimit: an asyncio.Semaphore, one release per
    finish, its waiters woken first in first out), and its delay is its send less that finish (its end as the client
    saw it: send + E2EL). Returns, in the file's order, the send times (the held ones at the last start: the cap
    holds them) and the delays (0 for the starts and for requests that never reached the server)."""
    cap = int(doc["max_concurrency"])
    idx = results.seen_order(doc)
    sends = np.asarray(doc["send_times"], float)
    ends = np.sort(sends[idx] + np.asarray(results.latencies(doc), float)[idx])
    starts, delays = sends.copy(), np.zeros(len(sends))
    if len(idx) > cap:
        held = idx[cap:]
        starts[held] = sends[idx[cap - 1]]
        delays[held] = np.maximum(0.0, sends[held] - ends[:len(held)])
    return starts.tolist(), delays.tolist()


LAYOUT_SHOWN = ("mean_tpot_ms", "p99_tpot_ms", "median_ttft_ms", "slo_attainment")


def layout_orders(slots: int) -> dict[str, list[int]]:
    """Two start orders of the slots (least recently used first) at the two ends of what the server's choice can
    make of a closed loop's requests: `adjacent` (0, 1, 2, ...: each wave takes consecutive slots, one ubatch) and
    `apart` (the even slots, then the odd ones: no two of a wave adjacent while it fits in half the slots, a ubatch
    each: stepmodel.split_equal)."""
    return {"adjacent": list(range(slots)), "apart": list(range(0, slots, 2)) + list(range(1, slots, 2))}


def slot_layouts(anchor, sent: dict, step, cal: dict, settings: dict, kw: dict, measured: dict) -> dict:
    """A closed loop run before the harness put the slots in a known order (no `slot_order_at_start`: held-out
    sessions 1-4): its prediction from each of layout_orders' starts, the band the unknown slots leave, and whether
    the measured mean TPOT and attainment lie in it, above or below (`measured`), and which layout's attainment the
    measured one is nearer (slots apart make each decode step several forward passes)."""
    out = {}
    for name, order in layout_orders(int(cal["server"]["slots"])).items():
        c = predict.compare_cell(anchor, {**sent, "slot_order_at_start": order}, step, cal["server"], cal["slo_ms"],
                                 settings["saturated_below"], **kw)
        out[name] = {"order": order, **{k: c["predicted"][k] for k in LAYOUT_SHOWN}}

    def side(key):
        low, high = sorted(out[n][key] for n in ("adjacent", "apart"))
        return "below" if measured[key] < low else "above" if measured[key] > high else "within"

    nearer = min(("adjacent", "apart"), key=lambda n: abs(out[n]["slo_attainment"] - measured["slo_attainment"]))
    return {**out, "measured": {"mean_tpot_ms": side("mean_tpot_ms"), "slo_attainment": side("slo_attainment")},
            "attainment_nearer": nearer}


def first_together(doc: dict, sent: dict, k: int) -> dict:
    """A closed loop's sends (as_sent) with its first `k` requests reaching the server at the same instant, the
    first one's send; everything after them as measured."""
    idx = results.seen_order(doc)
    times = list(sent["send_times"])
    for j in idx[1:k]:
        times[j] = times[idx[0]]
    return {**sent, "send_times": times}


def start_of(k: int, cell: dict, trace) -> dict:
    """One start of a closed loop's prediction (noiseless): its first `k` requests together (k = 1: the start as
    measured, the others a few milliseconds behind), the attainment, TTFT p50 / p99 and the waves' first prefill
    sizes it settles into. A closed loop of equal requests keeps whichever pattern its first wave sets (each wave's
    finishes release the next one alike), so the starts give every settled pattern the model has, and what each
    predicts; the client's timestamps do not say which one a run is in, or when it switches."""
    waves = simulated_waves(trace)
    parts = waves["first_part"] if waves else None
    return {"together": k, **{m: cell["predicted"][m] for m in ("slo_attainment", "median_ttft_ms", "p99_ttft_ms")},
            "first_part": parts, "main_part": max(parts, key=parts.get) if parts else None}


def start_range(starts: list[dict] | None) -> dict | None:
    """The starts (start_of) predicting the lowest and the highest attainment: the bounds the model gives."""
    if not starts:
        return None
    return {"low": min(starts, key=lambda s: s["slo_attainment"]),
            "high": max(starts, key=lambda s: s["slo_attainment"])}


def within_starts(c: dict) -> bool | None:
    """Whether a closed loop's measured attainment lies within its start_range (None without starts)."""
    bounds = start_range(c.get("starts"))
    if bounds is None:
        return None
    return bounds["low"]["slo_attainment"] <= c["measured"]["slo_attainment"] <= bounds["high"]["slo_attainment"]


SPLIT_RATIO = 1.5  # a wave is split when its slowest TTFT is over 1.5x its fastest (one prefill vs two: ~2x here)


def send_waves(doc: dict) -> dict | None:
    """How a closed loop's requests reached the server, as measured (waves_of over the file's successful requests)."""
    good = np.asarray(doc["success"], bool)
    return waves_of(np.asarray(doc["send_times"], float)[good], np.asarray(doc["ttfts"], float)[good],
                    np.asarray(doc["latencies"], float)[good])


def simulated_waves(trace) -> dict | None:
    """waves_of over a simulated closed loop (its sends, TTFTs and E2ELs)."""
    sent = trace.requests.arrival_s
    return waves_of(sent, trace.first_token_s - sent, trace.finish_s - sent)


def waves_of(sends: np.ndarray, ttft: np.ndarray, e2el: np.ndarray) -> dict | None:
    """A closed loop's sends split into waves wherever consecutive sends are more than half the median E2EL apart (a
    wave: the requests released by completions in one iteration, or a few close ones). A wave of two or more is
    `split` when its slowest TTFT is over SPLIT_RATIO times its fastest (its requests were prefilled in more than one
    iteration: some reached the server after the iteration that took the first ones had begun); `first_part`: how
    many waves had how many requests in their first prefill (those within SPLIT_RATIO of the wave's fastest TTFT; a
    wave not split counts whole). Per split wave, its fastest and slowest TTFT (medians over them); the lead of a
    wave's first send over its second (median over all waves)."""
    if len(sends) < 2:
        return None
    order = np.argsort(sends, kind="stable")
    sends, ttft = sends[order], ttft[order]
    cuts = np.flatnonzero(np.diff(sends) > 0.5 * float(np.median(e2el))) + 1
    waves = [w for w in np.split(np.arange(len(sends)), cuts) if len(w) >= 2]
    if not waves:
        return None
    split = [(ttft[w].min(), ttft[w].max()) for w in waves if ttft[w].max() > SPLIT_RATIO * ttft[w].min()]
    firsts = [int((ttft[w] <= SPLIT_RATIO * ttft[w].min()).sum()) for w in waves]
    return {"waves": len(waves), "split": len(split),
            "first_part": {str(k): firsts.count(k) for k in sorted(set(firsts))},
            "lead_ms": float(np.median([(sends[w[1]] - sends[w[0]]) * 1e3 for w in waves])),
            "split_fast_ttft_ms": float(np.median([a for a, _ in split]) * 1e3) if split else None,
            "split_slow_ttft_ms": float(np.median([b for _, b in split]) * 1e3) if split else None}


def ttft_met_tpot_ms(doc: dict, trace, slo_ms: dict) -> dict:
    """The median TPOT (vLLM's per request) of the requests that met the TTFT target, measured and predicted (the
    noiseless trace), beside the TPOT target: in a closed loop those are the ones whose TPOT decides the attainment."""
    ok = np.asarray(doc["success"], bool)
    m_ttft, m_e2el = np.asarray(doc["ttfts"], float)[ok], np.asarray(doc["latencies"], float)[ok]
    m_tpot = metrics.per_request_tpot(m_ttft, m_e2el, np.asarray(doc["output_lens"])[ok])
    sent = trace.requests
    p_ttft = trace.first_token_s - sent.arrival_s
    p_tpot = metrics.per_request_tpot(p_ttft, trace.finish_s - sent.arrival_s, np.asarray(sent.output_tokens))
    limit = slo_ms["ttft"] / 1e3

    def med(tpot, ttft):
        met = ttft <= limit
        return float(np.median(tpot[met]) * 1e3) if met.any() else None

    return {"measured": med(m_tpot, m_ttft), "predicted": med(p_tpot, p_ttft), "target": float(slo_ms["tpot"])}


def details(anchor, doc: dict, sent: dict, predicted: tuple, step, cal: dict, settings: dict, kw: dict) -> dict:
    """A closed loop's detail beside its prediction (`predicted`: predict.compare_cell's cell and trace for `sent`):
    its waves measured and simulated, the client's turnaround, the TPOT of the requests that met the TTFT target, the
    prediction with every request released at the very finish, the two slot layouts' band when the harness did not
    order the slots, and every start (start_of). Five more simulations at least; `kw`: compare_cell's keywords."""
    plain, trace = predicted
    cap = int(doc["max_concurrency"])
    out = {"send_waves": send_waves(doc), "predicted_waves": simulated_waves(trace),
           "ttft_met_tpot_ms": ttft_met_tpot_ms(doc, trace, cal["slo_ms"])}
    held = np.asarray(sent["release_delays"])[results.seen_order(doc)[cap:]] * 1e3
    out["turnaround_ms"] = {"median": float(np.median(held)), "p95": float(np.percentile(held, 95)),
                            "max": float(held.max()), "requests": len(held)} if len(held) else None
    at_once = predict.compare_cell(anchor, as_sent(doc, turnaround=False), step, cal["server"], cal["slo_ms"],
                                   settings["saturated_below"], **kw)
    out["released_at_once"] = {k: at_once["predicted"][k] for k in ("median_ttft_ms", "p99_ttft_ms", "slo_attainment")}
    if "slot_order_at_start" not in doc and getattr(step, "prices_layout", False):
        out["slot_layouts"] = slot_layouts(anchor, sent, step, cal, settings, kw, plain["measured"])
    out["starts"] = [start_of(1, plain, trace)] + [
        start_of(k, *predict.compare_cell(anchor, first_together(doc, sent, k), step, cal["server"], cal["slo_ms"],
                                          settings["saturated_below"], **kw, with_trace=True))
        for k in range(2, cap + 1)]
    return out
