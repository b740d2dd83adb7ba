"""The under-load experiment's math (scripts/serving/experiments/load_page.py) and claims as data
(scripts/record/claims.py)."""
import json
import random

import numpy as np
import pytest

from scripts.common.names import TAIL_PARTS
from scripts.record.claims import check, failures
from scripts.record.inputs import InputError
from scripts.serving.experiments import load_page
from tests.conftest import ROOT


@pytest.fixture(scope="module")
def serving():
    return json.loads((ROOT / "precomputed" / "serving.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("n", [1, 2, 3, 7, 100, 2000])
def test_percentile_is_numpys_linear_percentile(n):
    rng = random.Random(n)
    values = sorted(rng.randint(0, 2_000_000) * 0.1 for _ in range(n))
    for q in (0, 0.5, 1, 25, 50, 90, 99, 99.9, 100):
        assert load_page.percentile(values, q) == pytest.approx(float(np.percentile(values, q)), rel=1e-15, abs=0)


def test_cell_encoding_round_trips_the_pairs():
    ttft, tpot = [50, 10, 10, 400, 7], [300, 310, 290, 0, 150]
    enc = load_page.encode_cell(ttft, tpot)
    got = load_page.decode_cell(enc)
    assert sorted(zip(*got, strict=True)) == sorted(zip(ttft, tpot, strict=True))
    assert enc["ttft_delta"][0] == 7 and all(d >= 0 for d in enc["ttft_delta"])


def test_cell_readouts_follow_vllms_rules():
    # TTFT 10, 20, 30 ms; TPOT 0 (a one-token answer: not in the TPOT percentiles, but counts 0 for the SLO), 25, 35
    r = load_page.cell_readouts([100, 200, 300], [0, 250, 350], 0.1, 2.0, ttft_slo_ms=25, tpot_slo_ms=30)
    assert r["mean_ttft_ms"] == pytest.approx(20) and r["p50_ttft_ms"] == pytest.approx(20)
    assert r["mean_tpot_ms"] == pytest.approx(30) and r["p99_tpot_ms"] == pytest.approx(34.9)
    assert r["attainment"] == pytest.approx(2 / 3) and r["request_goodput"] == pytest.approx(1.0)


def test_the_goodput_readout_is_the_one_goodput_search():
    """Swept attainments up to the first miss, then bisection through probes: the probes asked for are the
    midpoints, and the answer is sweep.goodput_search's (no interpolation anywhere)."""
    page = {"unit_ms": 0.1, "rates_per_gpu": [1, 2, 3, 4], "bisection_steps": 3, "cells": {}}
    swept = {1: 1.0, 2: 0.95, 3: 0.85, 4: 0.2}
    for s in load_page.SCHEDULES:
        for r, att in swept.items():  # ten requests each: attainment in tenths
            good = round(att * 10)
            page["cells"][load_page.cell_key("chat", s, r)] = {
                "duration_s": 10.0, "tail_ms": {p: 0.0 for p in TAIL_PARTS},
                **load_page.encode_cell([1] * 10, [1] * good + [10 ** 6] * (10 - good))}
    asked = []

    def probe(schedule, rate):
        asked.append((schedule, rate))
        return 1.0 if rate <= 2.6 else 0.0
    r = load_page.readouts(page, "chat", 1, 2000, 30, 0.9, probe)
    assert [x for _, x in asked if _ == "whole"] == [2.5, 2.75, 2.625]  # between 2 (met) and 3 (the first miss)
    assert r["goodput_rate.whole"] == 2.5 and r["goodput_gain.chunked"] == 1.0
    assert "goodput_rate.whole" not in load_page.readouts(page, "chat", 1, 2000, 30, 0.9)  # no probe, no goodput


def test_opening_readouts_match_the_records_and_the_cells(serving):
    values = load_page.opening_readouts(serving)
    for name, v in values.items():
        assert serving["provenance"][f"readout.{name}"]["value"] == pytest.approx(v, rel=1e-12)
    o = serving["page_opening"]
    cell = next(c for c in serving["cells"] if (c["workload"], c["schedule"], c["rate_per_gpu"]) ==
                (o["workload"], "whole", o["request_rate"]))
    # the quantized requests (0.1 ms, rounded up) give the simulator's own percentiles to within a quantum, and
    # exactly its attainment: every verdict against the whole-ms targets is the exact one
    assert 0 <= values["p99_tpot_ms.whole"] - cell["metrics"]["p99_tpot_ms"] <= 0.1
    for s in ("whole", "chunked", "disagg"):
        cell = next(c for c in serving["cells"] if (c["workload"], c["schedule"], c["rate_per_gpu"]) ==
                    (o["workload"], s, o["request_rate"]))
        assert values[f"attainment.{s}"] == pytest.approx(cell["metrics"]["slo_attainment"], rel=1e-12)
    # the grid's goodput is near the bisected one (both read the same attainment curve)
    assert values["goodput_rate.chunked"] == pytest.approx(
        serving["goodput"][o["workload"]]["chunked"]["rate_per_gpu"], rel=0.05)


def test_the_experiments_claims_hold_and_are_recorded(serving):
    ids = {c["id"] for c in serving["claims"]}
    engines = {f"engines.{step}.{c}" for step in ("bound", "realistic")
               for c in ("chunking_gain", "v1_keeps_gain", "pd_beats_whole", "sarathi_beats_pd", "pd_split_best")}
    assert ids == {"load.mean_fine_p99_not", "load.chunking_gains", "load.chunking_gains_every_seed",
                   "load.pd_wins_tight_tpot",
                   "load.pd_loses_tight_ttft"} | engines
    assert failures(serving["claims"], serving["provenance"]) == []
    assert all(c["numbers"] for c in serving["claims"])


def test_a_false_claim_stops_with_one_line_naming_claim_numbers_and_field(serving):
    records = json.loads(json.dumps(serving["provenance"]))
    records["readout.p99_tpot_ms.whole"].update(value=12.0, display="12.0")
    claim = next(c for c in serving["claims"] if c["id"] == "load.mean_fine_p99_not")
    with pytest.raises(InputError) as err:
        check([claim], records)
    line = str(err.value)
    assert "\n" not in line and line.startswith("claim load.mean_fine_p99_not")
    assert "readout.p99_tpot_ms.whole = 12.0" in line and "config/workloads.json page.request_rate" in line


def test_a_claim_naming_a_missing_record_is_reported():
    assert failures([{"id": "x", "says": "s", "all": [["nope", "<", 1]], "fix": "f"}], {}) == [
        "claim x: reads record 'nope', which does not exist"]


def test_the_pages_verdicts_are_the_simulations_exact_ones():
    """Rounding each TPOT to the nearest 0.1 ms flipped verdicts (chat, P/D, 3 req/s per GPU, TPOT <= 20 ms:
    1,340 met where the exact values give 1,273; with the first token at the transfer's end, as before P/D's
    first-token convention, 1,303 for 1,231); rounded up, every verdict against a whole-ms target is exact."""
    from scripts.serving.aggregate import QUANTUM_MS, quantize_ms
    from scripts.serving.sweep import per_request_metrics, run_cell
    from scripts.serving.workloads.config import sweep_inputs

    a, workloads, settings = sweep_inputs(ROOT / "anchor-model.json", ROOT / "config" / "workloads.json")
    ttft, tpot, _ = per_request_metrics(run_cell(a, workloads, settings, "chat", "disagg", 3.0, replications=1))
    q_ttft, q_tpot = np.array(quantize_ms(ttft)), np.array(quantize_ms(tpot))
    assert int(((ttft * 1e3 <= 2000) & (tpot * 1e3 <= 20)).sum()) == 1273
    assert int(((ttft * 1e3 <= 2000) & (np.round(tpot * 1e4) / 10 <= 20)).sum()) == 1340  # what rounding did
    for ttft_slo in (100, 300, 2000, 10000):
        for tpot_slo in range(10, 101):
            exact = int(((ttft * 1e3 <= ttft_slo) & (tpot * 1e3 <= tpot_slo)).sum())
            page = sum(1 for x, y in zip(q_ttft, q_tpot, strict=True)
                       if x * QUANTUM_MS <= ttft_slo and y * QUANTUM_MS <= tpot_slo)  # as cell_readouts counts
            assert page == exact, (ttft_slo, tpot_slo)
    assert quantize_ms(np.array([0.02, 0.02000000000000001, 0.0200001])) == [200, 200, 201]
