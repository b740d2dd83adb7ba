"""A check against GuideLLM's own code, run by hand (not by pytest: it needs GuideLLM 0.8.1 importable, which the
kit does not install). scripts/serving/experiments/tool_metrics.py reimplements GuideLLM's weighted percentiles, means
and time-weighted rates; this compares them with DistributionSummary.from_values and rate_distribution_from_timings on
the hand-worked run and 20 random runs of tests/test_tool_metrics.py.

  python3 -m venv /tmp/gv && /tmp/gv/bin/pip install loguru pydantic pydantic-settings numpy jsonschema pytest
  pip download --no-deps guidellm==0.8.1 -d /tmp/pkgs && unzip /tmp/pkgs/guidellm-0.8.1-*.whl -d /tmp/pkgs/guidellm
  PYTHONPATH=/tmp/pkgs/guidellm:. /tmp/gv/bin/python tests/guidellm_source_check.py

Last run (2026-12-07): worst relative difference 4.0e-16.
"""
import sys
import types

sys.modules.setdefault("torch", types.ModuleType("torch"))  # tests.test_lab_model imports it for other tests

from guidellm.schemas.base.statistics import DistributionSummary  # noqa: E402

from scripts.serving.experiments import tool_metrics as tm  # noqa: E402
from tests.test_tool_metrics import HAND, random_doc  # noqa: E402


def worst_difference() -> float:
    worst = 0.0
    for doc in [HAND] + [random_doc(s, 60) for s in range(20)]:
        reqs = tm.requests_of(doc)
        ok = [r for r in reqs if r["ok"]]
        itl = [((r["e2el"] - r["ttft"]) / (r["output"] - 1), r["output"] - 1.0) for r in ok if r["output"] > 1]
        for pairs in ([(r["ttft"], 1.0) for r in ok], [(r["e2el"] / r["output"], float(r["output"])) for r in ok], itl):
            mine, theirs = tm._weighted(pairs), DistributionSummary.from_values(pairs)
            for s, v in (("p50", theirs.percentiles.p50), ("p90", theirs.percentiles.p90),
                         ("p99", theirs.percentiles.p99), ("mean", theirs.mean)):
                worst = max(worst, abs(mine[s] - v) / abs(v))
        ends = [r["send"] + (r["e2el"] if r["ok"] else 0.0) for r in reqs]
        start, end = min(r["send"] for r in reqs), max(ends)
        for events in ([(e, 1.0) for e in ends], [ev for r in reqs for ev in tm._token_events(r)]):
            theirs = DistributionSummary.rate_distribution_from_timings(events, start_time=start, end_time=end).mean
            worst = max(worst, abs(tm._rate(events, start, end) - theirs) / theirs)
    return worst


if __name__ == "__main__":
    print(f"worst relative difference from guidellm 0.8.1: {worst_difference():.1e}")
