"""The step model and its noise fitted from a calibration's iterations (scripts/realengine/analyses/calibrate.py
drives it; stepmodel.py holds what is fitted and reads the iterations off the client's token times). Pure.

D(m) is the median of decode-only iterations with m decoders (their attention removed); a, b and c a least-squares
fit, kept non-negative, of what the mixed iterations took beyond D and attention, solved exactly in rational
arithmetic (`least_squares`): a BLAS solver's last digits depend on the CPU's vector unit, and the committed
data must rebuild byte for byte on any machine. Attention and the round trip come from lone requests
(`lone_attention_and_overhead`). The noise (`step_noise`) is measured / modelled time on the same iterations, less
the client's own jitter (`engine_share`), over the iterations that carried no prompt work the client could not
see (`counted`)."""
from __future__ import annotations

from fractions import Fraction

import numpy as np

from scripts.realengine.analyses.stepmodel import LEVELS, NOISE_QUANTILES, StepModel, StepNoise


def lone_attention_and_overhead(decode_short: dict[int, float], decode_long: dict[int, float],
                                short_context: float, long_context: float, prompt_1_s: float) -> tuple[float, float]:
    """From lone-request measurements: attention per context token (long minus short decode steps, mean over the
    batches both have, at least 0) and the round trip (a 1-token prompt's TTFT less a lone decode step)."""
    both = sorted(set(decode_short) & set(decode_long))
    if not both:
        raise ValueError("step model: no batch measured at both contexts")
    attn = float(np.mean([(decode_long[b] - decode_short[b]) / (b * (long_context - short_context)) for b in both]))
    return max(attn, 0.0), max(prompt_1_s - decode_short[1], 0.0)


def least_squares(rows: list[list[float]], y: list[float]) -> list[float]:
    """The exact least-squares solution (normal equations in Fractions, Gauss-Jordan), each coefficient rounded
    once to a float: the same bits on every machine. Columns must be linearly independent."""
    a = [[Fraction(v) for v in row] for row in rows]
    b = [Fraction(v) for v in y]
    n = len(a[0])
    m = [[sum((r[i] * r[j] for r in a), Fraction(0)) for j in range(n)]
         + [sum((r[i] * t for r, t in zip(a, b, strict=True)), Fraction(0))] for i in range(n)]
    for col in range(n):
        pivot = next((r for r in range(col, n) if m[r][col] != 0), None)
        if pivot is None:
            raise ValueError(f"step model: the prompt terms are not independent (column {col} of {n})")
        m[col], m[pivot] = m[pivot], m[col]
        for r in range(n):
            if r != col and m[r][col] != 0:
                factor = m[r][col] / m[col][col]
                m[r] = [x - factor * p for x, p in zip(m[r], m[col], strict=True)]
    return [float(m[i][n] / m[i][i]) for i in range(n)]


def fit(steps: list[dict], attention: float, overhead: float, min_samples: int) -> tuple[StepModel, dict]:
    """The step model from calibration iterations (`iterations` of the load runs), with the lone-request
    attention and round trip; and the fit's own quality (how well it times the iterations it was fitted on). A
    decode batch size becomes a knot of D with at least `min_samples` decode-only iterations."""
    pure: dict[int, list[float]] = {}
    full = max((s["decoders"] for s in steps), default=0)  # every slot decoding: a waiting request cannot start
    for s in steps:  # an iteration while a request waited with a slot free may have prefilled it unseen (`counted`)
        if s["decoders"] and not s["prompts"] and (not s.get("unseen_prompts", 0) or s["decoders"] >= full):
            pure.setdefault(s["decoders"], []).append(s["seconds"] - attention * s["context_sum"])
    knots = sorted(b for b, v in pure.items() if len(v) >= min_samples)
    if len(knots) < 2 or knots[0] != 1:
        raise ValueError(f"step model: decode-only iterations for batches {sorted(pure)} (with at least "
                         f"{min_samples} each: {knots}); need batch 1 and one more")
    seconds = np.maximum.accumulate([float(np.median(pure[b])) for b in knots])
    d = StepModel(tuple(float(b) for b in knots), tuple(float(x) for x in seconds), 0.0, 0.0, 0.0, attention,
                  overhead)
    mixed = [s for s in steps if s["prompts"]]
    if not mixed:
        raise ValueError("step model: no iteration carried a prompt")
    rows = [[len(s["prompts"]), sum(s["prompts"]), sum(n * n / 2 for n in s["prompts"])] for s in mixed]
    y = [s["seconds"] - float(d.decode(s["decoders"])) - attention * s["context_sum"] for s in mixed]
    active = [0, 1, 2]
    while True:  # least squares, dropping a term that would come out negative
        coef = np.array(least_squares([[row[k] for k in active] for row in rows], y))
        if (coef >= 0).all() or len(active) == 1:
            break
        active.pop(int(np.argmin(coef)))
    full = np.zeros(3)
    full[active] = np.maximum(coef, 0.0)
    model = StepModel(d.decode_batch, d.decode_seconds, float(full[0]), float(full[1]), float(full[2]), attention,
                      overhead)
    predicted = np.array([model.seconds(s["decoders"], s["context_sum"], [(0, n) for n in s["prompts"]])
                          for s in steps])
    measured = np.array([s["seconds"] for s in steps])
    rel = np.abs(predicted - measured) / measured
    quality = {"iterations": len(steps), "decode_only": int(sum(len(v) for v in pure.values())),
               "with_prompts": len(mixed), "median_abs_rel_error": float(np.median(rel)),
               "p90_abs_rel_error": float(np.percentile(rel, 90)),
               "decode_samples": {str(b): len(pure[b]) for b in knots}}
    return model, quality


def step_noise(steps: list[dict], model: StepModel, min_samples: int) -> StepNoise:
    """The noise of `model` on the iterations it was fitted on: quantiles of measured / modelled seconds for each
    decode batch with at least `min_samples` decode-only iterations (D's knots), and for the iterations with prompt
    work. Only iterations during which no other request was waiting for its first token count: llama.cpp prefills
    a waiting prompt in chunks that ride with the decodes, and the client sees such an iteration as decode-only
    (on the committed long-prompt runs, 5 % of the batch-1 iterations were 3-78 times the model's)."""
    groups: dict = {}  # a decode batch size, or "prompt" -> the ratios of its counted iterations
    clean = counted(steps, model)  # (step, its group, its ratio) of every counted iteration, in order
    for _, group, ratio in clean:
        groups.setdefault(group, []).append(ratio)
    prompt = groups.get("prompt", [])
    batches = sorted(b for b, v in groups.items() if b != "prompt" and len(v) >= min_samples)
    if not batches or len(prompt) < min_samples:
        raise ValueError(f"step noise: too few iterations (decode batches with {min_samples}+: {batches}; "
                         f"with prompts: {len(prompt)})")
    medians = {g: float(np.median(v)) for g, v in groups.items()}
    share = engine_share(clean, medians)

    def q(group):  # the quantiles, their spread around the median scaled to the engine's share, then mean 1
        row = medians[group] + (np.quantile(np.asarray(groups[group], float), LEVELS) - medians[group]) * share
        return tuple(float(x) for x in row / float(np.sum((row[1:] + row[:-1]) / 2) / NOISE_QUANTILES))
    return StepNoise(tuple(batches), tuple(q(b) for b in batches), q("prompt"), share)


def counted(steps: list[dict], model: StepModel) -> list[tuple[dict, object, float]]:
    """(step, group, measured / modelled seconds) of each iteration the noise counts, in order: its group is its
    decode batch size, or "prompt" when it carried prompt work; an iteration that may have carried prompt work the
    client could not see (`unseen_prompts`) is not noise."""
    out = []
    for s in steps:  # with its slots when known (calibrate.fit): priced by its ubatches if the model has U
        modelled = model.seconds(s["decoders"], s["context_sum"], [(0, n) for n in s["prompts"]],
                                 s.get("decoder_slots"), s.get("prompt_slots", ()))
        group = "prompt" if s["prompts"] else s["decoders"] or None
        if group is None or modelled <= 0 or s["seconds"] <= 0 or s.get("unseen_prompts", 0):
            continue
        out.append((s, group, s["seconds"] / modelled))
    return out


def engine_share(clean: list, medians: dict) -> float:
    """How much of the iterations' spread is the engine's: the client reads each iteration's end with a jitter c,
    so an iteration it sees lasts e + c_j - c_(j-1); its variance is the engine's plus twice the client's, and two
    consecutive iterations share one c with opposite signs (their covariance is minus the client's variance). Over
    the consecutive pairs of counted iterations (one's end is the other's start), on the ratios less their group's
    median: engine variance = variance + 2 x lag-one covariance; the share is its square root over the standard
    deviation's, in [0, 1] (1 when no pairs)."""
    u = [(s, r - medians[g]) for s, g, r in clean]
    pairs = [(a, b) for (sa, a), (sb, b) in zip(u, u[1:], strict=False)
             if sb.get("start") is not None and sb.get("start") == sa.get("end")]
    if len(pairs) < 2:
        return 1.0
    var = float(np.mean([x * x for _, x in u]))
    cov = float(np.mean([a * b for a, b in pairs]))
    if var <= 0:
        return 1.0
    return float(np.sqrt(min(max(var + 2 * cov, 0.0) / var, 1.0)))
