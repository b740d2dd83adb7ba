"""Confidence intervals over independent replications: the same cell simulated with R seeds. Pure: no I/O.

A simulated cell's p99 is one draw of a random quantity: another seed gives other requests and another p99. The
method of independent replications (Law & Kelton, "Simulation Modeling and Analysis", ch. 9) runs R seeds and
treats their R estimates as independent and about normal (each is a statistic over 2,000 requests), so
mean +/- t(1 - (1 - confidence)/2, R - 1) * sd / sqrt(R) covers the estimator's expectation with probability
`confidence`. Requests within one run are correlated (a queue), so an interval from one run's order statistics
would be too narrow; across seeds they are independent by construction.

Student's t is computed here (no SciPy in the kit): its two-sided CDF for whole degrees of freedom in closed form
(Abramowitz & Stegun 26.7.3 and 26.7.4), inverted by bisection to 1e-12.
"""
from __future__ import annotations

import math
from functools import lru_cache

CONFIDENCE = 0.95  # the default; the sweep's is config/workloads.json sweep.confidence


def t_two_sided(x: float, df: int) -> float:
    """P(|T| <= x) for Student's t with `df` (whole, >= 1) degrees of freedom."""
    if df < 1 or int(df) != df:
        raise ValueError(f"degrees of freedom must be a whole number >= 1, not {df!r}")
    if x <= 0:
        return 0.0
    theta = math.atan(x / math.sqrt(df))
    c2, s = math.cos(theta) ** 2, math.sin(theta)
    if df % 2 == 1:  # A&S 26.7.3
        if df == 1:
            return 2 * theta / math.pi
        term, total = 1.0, 1.0
        for k in range(1, (df - 3) // 2 + 1):  # terms 2/3 cos^2, (2*4)/(3*5) cos^4, ...
            term *= c2 * (2 * k) / (2 * k + 1)
            total += term
        return 2 / math.pi * (theta + s * math.cos(theta) * total)
    term, total = 1.0, 1.0  # A&S 26.7.4: 1 + 1/2 cos^2 + (1*3)/(2*4) cos^4 + ...
    for k in range(1, (df - 2) // 2 + 1):
        term *= c2 * (2 * k - 1) / (2 * k)
        total += term
    return s * total


@lru_cache(maxsize=64)  # every interval of a sweep asks for the same one or two factors
def t_quantile(confidence: float, df: int) -> float:
    """x with P(|T| <= x) = confidence: the factor of a two-sided `confidence` interval (2.262 for 0.95, df 9)."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie in (0, 1), not {confidence!r}")
    lo, hi = 0.0, 1.0
    while t_two_sided(hi, df) < confidence:
        hi *= 2
    while hi - lo > 1e-12 * max(1.0, hi):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if t_two_sided(mid, df) < confidence else (lo, mid)
    return (lo + hi) / 2


def interval(values: list[float], confidence: float = CONFIDENCE) -> dict:
    """The replications' mean and its two-sided t interval. Fewer than two values give no interval (None)."""
    n = len(values)
    if n < 2:
        return {"replications": n, "confidence": confidence, "mean": float(values[0]) if n else None,
                "low": None, "high": None}
    mean = math.fsum(values) / n
    sd = math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (n - 1))
    half = t_quantile(confidence, n - 1) * sd / math.sqrt(n)
    return {"replications": n, "confidence": confidence, "mean": mean, "low": mean - half, "high": mean + half}
