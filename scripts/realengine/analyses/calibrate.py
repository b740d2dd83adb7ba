"""The calibration, separate from the load runs it predicts (other requests, other rates), through the same server
and client:
  lone steps   decode steps of b requests sent together (b in `decode_batches`, `decode_repeats` times, fresh
               prompts), at a short prompt and a long one (`long_context_prompt_tokens`): the median of their
               inter-token gaps; and lone prompts of each length in `prefill_prompt_tokens` (one output token,
               `prefill_repeats` times, fresh prompts so nothing is cached): the median TTFT. They give the
               attention cost per context token and the request's round trip.
  cached       (when the settings have `cached_prefill`) a lone prompt sent after its own first `prefix` tokens,
               so the slot reuses them and only `new` tokens are computed while attending to the prefix: the
               median TTFT per (prefix, new) pair, beside the lone `new`-token prompt above. The difference is the
               cost of attending to a cached prefix, which prompts computed from their first token (everything
               the load runs hold) cannot separate from the rest.
  load runs    one Poisson run per workload at a rate of its own (`load_runs`, seed `load_seed`), written like the
               measured cells (precomputed/serve/calibration/*-calibration-*.json): the engine's iterations under
               load, read off their token times, give the decode steps and the prompt costs.
`fit` turns the committed calibration into the step model (scripts/realengine/analyses/stepmodel.py); the comparison
calls it, so the model is recomputed from the committed files at every build."""
from __future__ import annotations

import asyncio
import dataclasses
import math
from pathlib import Path

import numpy as np

from scripts.realengine.analyses import stepfit, stepmodel
from scripts.realengine.analyses.settings import read_calibration
from scripts.realengine.harness import client
from scripts.serving.measures import results


def _spread(values) -> dict:
    v = np.asarray(values, dtype=float)
    q1, med, q3 = np.percentile(v, [25, 50, 75])
    return {"median_s": float(med), "q1_s": float(q1), "q3_s": float(q3), "n": int(len(v))}


def measure(port: int, c: dict, vocab: int, eot: int) -> dict:
    rng = np.random.default_rng(c.get("seed", 7))
    out_tokens = c["decode_output_tokens"]
    decode = []
    for prompt_len, batches in ((c["decode_prompt_tokens"], c["decode_batches"]),
                                (c["long_context_prompt_tokens"], c["long_context_batches"])):
        for b in batches:
            gaps = []
            for _ in range(c["decode_repeats"]):
                prompts = [client.prompt_ids(prompt_len, rng, vocab, eot) for _ in range(b)]
                outcomes, _ = asyncio.run(client.run_load("127.0.0.1", port, prompts, [out_tokens] * b, [0.0] * b))
                if not all(o.success for o in outcomes):
                    raise SystemExit(f"error: calibration decode batch {b} failed: {[o.error for o in outcomes]}")
                gaps.extend(g for o in outcomes for g in o.itl)
            decode.append({"batch": b, "prompt_tokens": prompt_len,
                           "mean_context": prompt_len + out_tokens / 2, **_spread(gaps)})
    prefill = measure_prefill(port, c["prefill_prompt_tokens"], c["prefill_repeats"], rng, vocab, eot)
    out = {"decode": decode, "prefill": prefill, "settings": c}
    if "cached_prefill" in c:
        out["cached_prefill"] = measure_cached(port, c["cached_prefill"], rng, vocab, eot)
    return out


def lone_step_ms(cal: dict) -> float:
    """The calibration's lone batch-1 decode step at its short prompt, ms: the engine's speed that hour."""
    short = cal["settings"]["decode_prompt_tokens"]
    return 1e3 * next(d["median_s"] for d in cal["decode"] if d["batch"] == 1 and d["prompt_tokens"] == short)


def load_rate_scale(cal: dict, follow: dict | None) -> float:
    """What the load runs' rates are multiplied by (config/real_engine.json calibration.rates_follow_speed): the
    reference lone step over this calibration's, to two decimals, so a slower hour gets proportionally fewer
    requests per second and each run keeps about the load it was chosen for (on 2026-12-05 a 20 % slower hour ran
    the fixed 5 req/s long_mix run at four times its usual TTFT p50). 1 without the block."""
    if not follow:
        return 1.0
    return round(float(follow["reference_lone_step_ms"]) / lone_step_ms(cal), 2)


def measure_prefill(port: int, lengths: list[int], repeats: int, rng, vocab: int, eot: int) -> list[dict]:
    """Per prompt length: `repeats` lone fresh prompts (nothing cached), one output token each; their TTFTs."""
    prefill = []
    for length in lengths:
        ttfts = []
        for _ in range(repeats):
            o = asyncio.run(client.send_one("127.0.0.1", port, client.prompt_ids(length, rng, vocab, eot), 1))
            if not o.success:
                raise SystemExit(f"error: calibration prompt {length} failed: {o.error}")
            ttfts.append(o.ttft)
        prefill.append({"prompt_tokens": length, **_spread(ttfts)})
    return prefill


def measure_cached(port: int, c: dict, rng, vocab: int, eot: int) -> list[dict]:
    """Per (prefix, new) pair: a fresh prefix sent alone (one output token; its slot then holds it), then the prefix
    plus `new` fresh tokens, whose TTFT is timed; the server must report the prefix reused
    (usage.prompt_tokens_details.cached_tokens), or the calibration stops."""
    points = []
    for prefix in c["prefix_tokens"]:
        for new in c["new_tokens"]:
            ttfts = []
            for _ in range(c["repeats"]):
                head = client.prompt_ids(prefix, rng, vocab, eot)
                for prompt in (head, head + client.prompt_ids(new, rng, vocab, eot)):
                    o = asyncio.run(client.send_one("127.0.0.1", port, prompt, 1))
                    if not o.success:
                        raise SystemExit(f"error: calibration cached prompt {prefix}+{new} failed: {o.error}")
                if o.cached_tokens != prefix:
                    raise SystemExit(f"error: calibration cached prompt {prefix}+{new}: the server reused "
                                     f"{o.cached_tokens} tokens, not the {prefix} it was sent before")
                ttfts.append(o.ttft)
            points.append({"prefix_tokens": prefix, "new_tokens": new, **_spread(ttfts)})
    return points


def speed_probe(port: int, c: dict, vocab: int, eot: int) -> float:
    """The engine's lone-request speed now (calibration.speed_probe): `requests` requests sent one at a time, each
    `prompt_tokens` long and asking for `output_tokens`; the median over them of each one's median inter-token gap,
    in ms (a median of medians: one noisy step moves neither)."""
    rng = np.random.default_rng(c["seed"])
    per = []
    for _ in range(c["requests"]):
        o = asyncio.run(client.send_one("127.0.0.1", port, client.prompt_ids(c["prompt_tokens"], rng, vocab, eot),
                                        c["output_tokens"]))
        if not o.success or not o.itl:
            raise SystemExit(f"error: speed probe failed: {o.error or 'no inter-token gaps'}")
        per.append(float(np.median(o.itl)) * 1e3)
    return float(np.median(per))


def order_slots(port: int, slots: int, vocab: int, eot: int) -> list[int]:
    """Puts the server's slots in a known least-recently-used order: one 1-token request pinned to each slot in turn
    (`id_slot`), 0 first, so the next unpinned request takes slot 0, the one after it slot 1, and so on
    (get_available_slot's LRU scan). Returns that order, which the prediction starts from (predict.slot_order_for):
    which slots the requests hold decides how llama.cpp cuts the batches (stepmodel.split_equal)."""
    rng = np.random.default_rng(0)
    for s in range(slots):
        o = asyncio.run(client.send_one("127.0.0.1", port, client.prompt_ids(1, rng, vocab, eot), 1, {"id_slot": s}))
        if not o.success:
            raise SystemExit(f"error: ordering the slots: the request pinned to slot {s} failed: {o.error}")
    return list(range(slots))


def cached_context_cost(cal: dict, tile: int = 0) -> tuple[float, float]:
    """(e, p): what a prompt chunk pays for the cached tokens before it (stepmodel.StepModel.context_cost). For each
    (prefix, new) point, its TTFT less the lone TTFT of `new` tokens, over the prefix: a point whose `new` reaches
    the engine's attention tile (`tile` rows) gives e, per cached token per tile of the chunk; a shorter one gives p,
    per cached token per new token; each the median over its points, at least 0. With `tile` 0, e is the median over
    every point and p is 0 (one cost per cached token whatever the chunk's length, as before the tile was measured).
    (0, 0) when the calibration has no cached points (the pair term then prices earlier tokens)."""
    points = cal.get("cached_prefill")
    if not points:
        return 0.0, 0.0
    lone = {p["prompt_tokens"]: p["median_s"] for p in cal["prefill"]}
    missing = sorted({p["new_tokens"] for p in points} - set(lone))
    if missing:
        raise ValueError(f"calibration: cached points need the lone prompt of {missing} tokens (prefill_prompt_tokens)")

    def extra(p):
        return (p["median_s"] - lone[p["new_tokens"]]) / p["prefix_tokens"]
    if not tile:
        return max(float(np.median([extra(p) for p in points])), 0.0), 0.0
    tiled = [extra(p) / math.ceil(p["new_tokens"] / tile) for p in points if p["new_tokens"] >= tile]
    rows = [extra(p) / p["new_tokens"] for p in points if p["new_tokens"] < tile]
    if not tiled or not rows:
        have = sorted({p["new_tokens"] for p in points})
        raise ValueError(f"calibration: cached points need new_tokens both below and at or above the attention tile "
                         f"of {tile} rows (cached_prefill.new_tokens are {have})")
    return max(float(np.median(tiled)), 0.0), max(float(np.median(rows)), 0.0)


def fit(cal: dict, load_docs: list[dict], settings: dict) -> tuple[stepmodel.StepModel, dict]:
    """The step model from the lone steps (`cal`, the calibration record's `calibration`) and the calibration load
    runs' result documents; with the fit's quality on the iterations it was fitted on and its step-time noise
    (`quality["noise"]`: stepmodel.StepNoise as a dict, or None). `settings`:
    settings.comparison_settings (the iteration gap, the iterations a knot needs)."""
    s = cal["settings"]
    short_len, long_len, out = s["decode_prompt_tokens"], s["long_context_prompt_tokens"], s["decode_output_tokens"]
    short = {d["batch"]: d["median_s"] for d in cal["decode"] if d["prompt_tokens"] == short_len}
    long = {d["batch"]: d["median_s"] for d in cal["decode"] if d["prompt_tokens"] == long_len}
    prompt_1 = next(p["median_s"] for p in cal["prefill"] if p["prompt_tokens"] == 1)
    attention, overhead = stepfit.lone_attention_and_overhead(short, long, short_len + out / 2, long_len + out / 2,
                                                                 prompt_1)
    layout = settings.get("ubatch_layout")  # (slots, ubatch tokens): the server's ubatches priced
    steps = [it for doc in load_docs for it in with_slots(stepmodel.iterations(doc, settings["iteration_gap_s"]),
                                                          doc if layout else {})]
    model, quality = stepfit.fit(steps, attention, overhead, settings["min_iterations_per_knot"])
    if layout:
        model = stepmodel.with_ubatches(model, *layout, steps, settings["min_iterations_per_knot"])
    try:  # the step-time noise on the same iterations (stepmodel.StepNoise); None when too few to say
        quality["noise"] = stepfit.step_noise(steps, model, settings["min_iterations_per_knot"]).as_dict()
    except ValueError:
        quality["noise"] = None
    tile = settings.get("attention_tile_rows", 0)
    per_tile, per_pair = cached_context_cost(cal, tile)
    return dataclasses.replace(model, prompt_context_s=per_tile, prompt_context_pair_s=per_pair,
                               context_tile_rows=tile if (per_tile or per_pair) else 0), quality


def fitted_in(folder: Path, settings: dict):
    """Each calibration record in `folder` (committed files only) with the load runs beside it
    (<record>-calibration-*.json), read, and the step model `fit` on them as the comparisons fit it: yields
    (record path, run paths, run documents, step model)."""
    for record in sorted(p for p in folder.glob("*.json") if "-calibration-" not in p.name):
        runs = sorted(folder.glob(record.stem + "-calibration-*.json"))
        docs = [results.load_result(p) for p in runs]
        model, _ = fit(read_calibration(record)["calibration"], docs, settings)
        yield record, runs, docs, model


def with_slots(steps: list[dict], doc: dict) -> list[dict]:
    """`steps` with each iteration's `decoder_slots` and `prompt_slots` when `doc` names every request's slot
    (client.result_document `slots`), so a model with U prices it by its ubatches; else as they are."""
    named = results.named_slots(doc)
    if named is None:
        return steps
    return [{**s, "decoder_slots": [named[i] for i in s["decoder_requests"]],
             "prompt_slots": [named[i] for i in s["prompt_requests"]]} for s in steps]
