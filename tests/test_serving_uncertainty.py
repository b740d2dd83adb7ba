"""Intervals over replications (scripts/serving/measures/uncertainty.py): Student's t against its published table, the
interval's coverage of a known distribution's p99, the sweep's replications (seeds, replication 0 = the cell, each
replication re-simulates to its stored value) and the CLI's --seeds."""
from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from scripts.serving import sweep
from scripts.serving.measures import uncertainty
from scripts.serving.workloads.config import sweep_inputs

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(("df", "t95", "t99"), [(1, 12.706, 63.657), (2, 4.303, 9.925), (5, 2.571, 4.032),
                                                (9, 2.262, 3.250), (10, 2.228, 3.169), (30, 2.042, 2.750)])
def test_t_quantiles_match_the_published_table(df, t95, t99):
    assert uncertainty.t_quantile(0.95, df) == pytest.approx(t95, abs=6e-4)
    assert uncertainty.t_quantile(0.99, df) == pytest.approx(t99, abs=6e-4)
    assert uncertainty.t_two_sided(uncertainty.t_quantile(0.95, df), df) == pytest.approx(0.95, abs=1e-10)


def test_the_interval_covers_a_known_distributions_p99_in_about_95_of_200_trials():
    """Exponential service times (rate 1): the true p99 is ln 100. Each trial draws 10 replications of 2,000
    values, as a sweep cell does, and forms the 95% interval of their p99s. Coverage in 200 trials of a true 95%
    lies in [0.91, 0.99] with probability > 0.99 (binomial, sd 1.5%)."""
    rng = np.random.default_rng(7)
    true_p99 = math.log(100)
    covered = 0
    for _ in range(200):
        p99s = [float(np.percentile(rng.exponential(1.0, 2000), 99)) for _ in range(10)]
        iv = uncertainty.interval(p99s, 0.95)
        covered += iv["low"] <= true_p99 <= iv["high"]
    assert 0.91 <= covered / 200 <= 0.99, covered
    # the same trials with the normal factor (1.96) instead of t(9) (2.262) must cover less: the t factor matters
    narrow = uncertainty.interval([1.0, 2.0, 3.0], 0.95)
    assert narrow["high"] - narrow["mean"] == pytest.approx(uncertainty.t_quantile(0.95, 2) * 1.0 / math.sqrt(3))


def test_one_replication_gives_no_interval():
    assert uncertainty.interval([3.0])["low"] is None
    with pytest.raises(ValueError, match="confidence"):
        uncertainty.t_quantile(1.0, 5)


@pytest.fixture(scope="module")
def small():
    """The sweep's inputs with 300 requests per cell and 3 replications (the rules' code, a smaller sweep)."""
    a, workloads, settings = sweep_inputs(ROOT / "anchor-model.json", ROOT / "config" / "workloads.json")
    return a, workloads, {**settings, "requests": 300, "replications": 3}


def test_a_cells_replications_are_seeded_runs_whose_first_is_the_cell(small):
    a, workloads, s = small
    cell = sweep.run_cell(a, workloads, s, "chat", "chunked", 6.0)
    reps = cell["replications"]
    assert reps["seeds"] == [s["seed"] + 0, s["seed"] + 2, s["seed"] + 4]  # chat is the first of two workloads
    assert reps["seeds"][0] == cell["seed"]
    for metric, values in reps["values"].items():
        assert values[0] == cell["metrics"][metric]
        iv = reps["intervals"][metric]
        assert iv["low"] <= iv["mean"] <= iv["high"] and iv["replications"] == 3
    for r in (1, 2):  # every further replication is the seeded simulation it says
        trace = sweep.simulate_cell(a, workloads, s, "chat", "chunked", 6.0, replication=r)
        again = sweep.replication_metrics(trace, s["slo_ms"], s["percentiles"])
        assert again == {k: reps["values"][k][r] for k in again}
    assert len({tuple(v) for v in reps["values"].values()}) > 1  # the seeds differ: values are not copies


def test_goodput_replications_search_each_seed(small):
    a, workloads, s = small
    s = {**s, "rates_per_gpu": [1.0, 4.0, 8.0, 12.0], "bisection_steps": 3}
    cells = [sweep.run_cell(a, workloads, s, "chat", "whole", r) for r in s["rates_per_gpu"]]
    g = sweep.goodput_of(a, workloads, s, "chat", "whole", cells)
    reps = g["replications"]
    assert reps["rates_per_gpu"][0] == g["rate_per_gpu"]
    for r in (1, 2):
        swept = {c["rate_per_gpu"]: c["replications"]["values"]["slo_attainment"][r] for c in cells}
        alone = sweep.distserve_goodput(a, workloads, s, "chat", "whole", {}, replication=r)
        assert sweep.distserve_goodput(a, workloads, s, "chat", "whole", swept, replication=r) == alone
        assert reps["rates_per_gpu"][r] == alone["rate_per_gpu"]
    assert reps["interval"]["low"] <= reps["interval"]["mean"] <= reps["interval"]["high"]


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "scripts.serving", *map(str, args)], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)


def test_cli_seeds_reports_replications_and_refuses_a_trace(tmp_path, small):
    a, workloads, s = small
    out = tmp_path / "r.json"
    run = run_cli("--preset", "sarathi", "--workload", "chat", "--rate", 5, "--requests", 300, "--seeds", 3,
                  "--slo", "ttft:2000,tpot:30", "--out", out)
    assert run.returncode == 0, run.stderr
    doc = json.loads(out.read_text())
    reps = doc["replications"]
    assert reps["seeds"] == [s["seed"], s["seed"] + 2, s["seed"] + 4] and len(doc["requests"]) == 300
    trace = sweep.simulate_cell(a, workloads, s, "chat", "chunked", 5.0, replication=2)  # sarathi = chunked
    assert reps["values"]["p99_ttft_ms"][2] == sweep.replication_metrics(trace, None, [99])["p99_ttft_ms"]
    assert reps["values"]["p99_ttft_ms"][0] == doc["metrics"]["p99_ttft_ms"]
    trace_file = tmp_path / "t.csv"
    trace_file.write_text("arrival_s,prompt_tokens,output_tokens\n0,100,5\n", encoding="utf-8")
    for args, says in ((("--trace", trace_file, "--seeds", 3), "--seeds: a trace file is one sample"),
                       (("--workload", "nope", "--rate", 1), "--workload 'nope'"),
                       (("--workload", "chat"), "--rate"),
                       (("--trace", trace_file, "--workload", "chat", "--rate", 1), "either --trace or --workload")):
        bad = run_cli("--preset", "orca", *args, "--out", tmp_path / "x.json")
        assert bad.returncode == 2 and says in bad.stderr and not (tmp_path / "x.json").exists(), bad.stderr


def test_committed_sweep_carries_intervals_for_every_cell_and_goodput():
    doc = json.loads((ROOT / "precomputed" / "serving.json").read_text(encoding="utf-8"))
    n = doc["settings"]["replications"]
    assert n >= 10 and doc["settings"]["confidence"] == 0.95
    for cell in doc["cells"]:
        for metric in ("p90_ttft_ms", "p99_ttft_ms", "p90_tpot_ms", "p99_tpot_ms", "slo_attainment"):
            low, high = cell["intervals"][metric]
            assert low <= high
    for wid, by_schedule in doc["goodput"].items():
        for schedule, g in by_schedule.items():
            rec = doc["provenance"][f"serving.{wid}.{schedule}.goodput_rate"]
            assert len(rec["interval"]["values"]) == n and rec["interval"]["values"][0] == g["rate_per_gpu"]
            assert g["interval"] == [rec["interval"]["low"], rec["interval"]["high"]]


def test_the_audit_refuses_an_interval_that_is_not_its_replications():
    from scripts.audit.simulated import check_interval
    from scripts.record.anchor_file import load
    from scripts.serving.workloads.config import sweep_settings, workloads_for

    doc = json.loads((ROOT / "precomputed" / "serving.json").read_text(encoding="utf-8"))
    anchor = load(ROOT / "anchor-model.json")[0]
    wdoc = workloads_for(ROOT / "config" / "workloads.json", anchor)
    settings, workloads = sweep_settings(wdoc), wdoc["workloads"]
    rid = "serving.chat.whole.4.p99_ttft_ms"
    rec = doc["provenance"][rid]
    assert check_interval(rid, rec, settings, workloads) == []
    iv = rec["interval"]
    narrower = {**rec, "interval": {**iv, "high": iv["high"] - 1}}
    assert "is not the 0.95 t interval" in check_interval(rid, narrower, settings, workloads)[0]
    other_values = {**rec, "interval": {**iv, "values": [iv["values"][0]] + [v + 5 for v in iv["values"][1:]]}}
    assert check_interval(rid, other_values, settings, workloads)
    other_seeds = {**rec, "interval": {**iv, "seeds": [s + 1 for s in iv["seeds"]]}}
    assert "seeds differ" in check_interval(rid, other_seeds, settings, workloads)[0]
    not_first = {**rec, "interval": {**iv, "values": iv["values"][::-1]}}
    assert "replication 0" in check_interval(rid, not_first, settings, workloads)[0]


def test_cli_ramps_the_generated_arrivals_as_vllm_bench_serve(tmp_path, small):
    """--ramp-up-strategy with start and end rps (instead of --rate): the arrivals are workload.generate's under
    that ramp with the sweep's seed (vLLM's get_request rule, tested in test_serving.py); --rate beside a ramp, or a
    ramp without both ends, is refused in one line and writes nothing."""
    from scripts.serving.workloads.workload import generate

    a, workloads, s = small
    out = tmp_path / "ramp.json"
    run = run_cli("--preset", "orca", "--workload", "chat", "--ramp-up-strategy", "linear", "--ramp-up-start-rps", 1,
                  "--ramp-up-end-rps", 12, "--requests", 200, "--out", out)
    assert run.returncode == 0, run.stderr
    doc = json.loads(out.read_text())
    want = generate(workloads["chat"], 200, 12.0, s["seed"], s["burstiness"], ("linear", 1.0, 12.0))
    assert [r["arrival_s"] for r in doc["requests"]] == want.arrival_s.tolist()
    assert doc["ramp_up"] == {"strategy": "linear", "start_rps": 1.0, "end_rps": 12.0}
    gaps = np.diff(want.arrival_s)
    assert gaps[:50].mean() > 3 * gaps[-50:].mean()  # the rate rises along the run
    for args, says in ((("--ramp-up-start-rps", 1, "--ramp-up-end-rps", 4, "--rate", 2), "instead of --rate"),
                       (("--ramp-up-start-rps", 1), "must both be given")):
        bad = run_cli("--preset", "orca", "--workload", "chat", "--ramp-up-strategy", "exponential", *args,
                      "--out", tmp_path / "x.json")
        assert bad.returncode == 2 and says in bad.stderr and not (tmp_path / "x.json").exists(), bad.stderr
