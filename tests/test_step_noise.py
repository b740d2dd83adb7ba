"""Step-time noise as data (issue 43; scripts/realengine/analyses/stepmodel.py StepNoise, Noisy): the quantiles of
measured / modelled iteration time per decode batch, only from iterations during which no request waited for its first
token, the client's read jitter taken out by the lag-one covariance and each row scaled to mean 1; seeded draws that
stretch each simulated iteration (engine loop), so a closed loop of equal requests no longer moves in lockstep; the
same seed gives the same run; factors of exactly 1 give the noiseless run bit for bit; the prediction command
reports the median and range over seeds."""
import json
import subprocess
import sys

import numpy as np
import pytest

from scripts.realengine.analyses import predict, stepfit, stepmodel
from scripts.realengine.analyses.stepmodel import NOISE_QUANTILES, Noisy, StepModel, StepNoise
from scripts.record.anchor_file import load
from tests.conftest import ROOT

STEP = StepModel((1.0, 2.0, 4.0, 8.0), (0.005, 0.011, 0.020, 0.026), 0.006, 0.0007, 0.0, 0.0, 0.002)
SERVER = {"batch_tokens": 2048, "slots": 4}
LEVELS = np.linspace(0.0, 1.0, NOISE_QUANTILES + 1)


def flat(factor: float, batches=(1,)) -> StepNoise:
    row = (factor,) * (NOISE_QUANTILES + 1)
    return StepNoise(tuple(batches), (row,) * len(batches), row)


def equal_requests(n=24):
    """A closed loop's file: n equal requests, all sent at 0 (vllm bench serve --request-rate inf)."""
    return {"send_times": [0.0] * n, "input_lens": [64] * n, "output_lens": [32] * n, "ttfts": [0.1] * n,
            "itls": [[0.01] * 31] * n, "latencies": [0.4] * n, "success": [True] * n, "errors": [""] * n}


def test_the_quantiles_are_the_ratios_and_iterations_with_a_waiting_prompt_are_left_out():
    ratios = np.linspace(0.8, 1.2, 41)
    steps = [{"decoders": 2, "context_sum": 0.0, "prompts": [], "seconds": 0.011 * r, "unseen_prompts": 0}
             for r in ratios]
    steps += [{"decoders": 2, "context_sum": 0.0, "prompts": [], "seconds": 0.011 * 40, "unseen_prompts": 1}]
    steps += [{"decoders": 1, "context_sum": 0.0, "prompts": [100], "seconds": (0.005 + 0.006 + 0.07) * r,
               "unseen_prompts": 0} for r in ratios]
    noise = stepfit.step_noise(steps, STEP, min_samples=5)
    assert noise.batches == (2,)  # batch 1 never ran decode-only here
    assert noise.decode[0] == pytest.approx(tuple(np.quantile(ratios, LEVELS)), rel=1e-12)
    assert noise.decode[0][-1] == pytest.approx(1.2)  # the 40x iteration (a prompt the client could not see) is out
    assert noise.prompt == pytest.approx(tuple(np.quantile(ratios, LEVELS)), rel=1e-12)
    assert StepNoise.from_dict(json.loads(json.dumps(noise.as_dict()))) == noise
    with pytest.raises(ValueError, match="too few iterations"):
        stepfit.step_noise(steps[:3], STEP, min_samples=5)


def test_an_iteration_while_a_request_waits_for_its_first_token_is_marked():
    # A decodes alone from 0.1 s every 10 ms; B is sent at 0.155 s and its first token comes at 0.2 s
    a = {"sent": 0.0, "ttft": 0.1, "itls": [0.01] * 19}
    b = {"sent": 0.155, "ttft": 0.045, "itls": [0.01] * 5}
    doc = {"send_times": [a["sent"], b["sent"]], "ttfts": [a["ttft"], b["ttft"]], "itls": [a["itls"], b["itls"]],
           "input_lens": [8, 8], "success": [True, True]}
    its = stepmodel.iterations(doc, 0.0015)
    ends = np.cumsum([0.1] + [0.01] * 19)
    unseen = {round(float(e), 3): it["unseen_prompts"] for e, it in zip(ends[1:], its, strict=False)}
    assert unseen[0.16] == 0  # B was sent after it began
    assert unseen[0.17] == 1 and unseen[0.19] == 1  # B waiting: its prompt may be in them, unseen
    assert unseen[0.2] == 0 and unseen[0.21] == 0  # B's first token is in the one ending at 0.2 s: seen
    assert [it["prompts"] for it in its if it["prompts"]] == [[8]]  # B's first token rides at 0.2 s


def test_an_iteration_whose_tokens_the_client_read_apart_is_left_out():
    """llama.cpp decodes every generating slot in each iteration (server-context.cpp update_slots). A and B decode
    together every 10 ms; once the client reads B's token 3 ms after A's (past the 1.5 ms gap), that group lacks B,
    which was generating across it: the iterations starting or ending at either half are left out, the others kept.
    A request that ends, then another's first token alone, is no fragment (nothing was generating across)."""
    a = {"sent": 0.0, "ttft": 0.1, "itls": [0.01] * 9}  # tokens at 0.10, 0.11, ..., 0.19
    b_times = [0.1 + 0.01 * k for k in range(10)]
    b_times[5] += 0.003  # the 0.15 s iteration: B's token read at 0.153 s
    b_itls = list(np.diff(b_times))
    c = {"sent": 0.21, "ttft": 0.01, "itls": [0.01] * 3}  # after both ended: first token at 0.22 s, alone
    doc = {"send_times": [a["sent"], 0.0, c["sent"]], "ttfts": [a["ttft"], 0.1, c["ttft"]],
           "itls": [a["itls"], b_itls, c["itls"]], "input_lens": [8, 8, 8], "success": [True, True, True]}
    its = stepmodel.iterations(doc, 0.0015)
    ends = [round(it["end"], 4) for it in its]
    assert all(it["decoders"] == 2 for it in its if it["end"] < 0.195)  # never A or B alone
    assert 0.14 in ends and 0.17 in ends  # whole iterations around the split one are kept
    assert not any(0.1495 < e < 0.1625 for e in ends)  # 0.14 -> 0.15 (A alone), 0.15 -> 0.153, 0.153 -> 0.16: out
    assert [it["decoders"] for it in its if it["end"] > 0.2] == [1, 1, 1]  # C decodes alone after A and B ended
    b_times[5] -= 0.003  # read together: every iteration of A and B is kept
    doc["itls"][1] = list(np.diff(b_times))
    assert len([it for it in stepmodel.iterations(doc, 0.0015) if it["end"] < 0.195]) == 9


def test_a_closed_loop_of_equal_requests_leaves_lockstep_with_noise_and_a_seed_repeats_its_run():
    a = load(ROOT / "anchor-model.json")[0]
    doc = equal_requests()
    plain = predict.simulate_cell(a, doc, STEP, SERVER, max_concurrency=4)
    ttft = plain.first_token_s - plain.requests.arrival_s
    noise = StepNoise((1, 4), ((0.7,) * 10 + (1.0,) + (1.4,) * 10, tuple(np.linspace(0.6, 1.8, 21))),
                      tuple(np.linspace(0.8, 1.3, 21)))
    runs = [predict.simulate_cell(a, doc, Noisy(STEP, noise, seed), SERVER, max_concurrency=4) for seed in (0, 0, 1)]
    noisy = [r.first_token_s - r.requests.arrival_s for r in runs]
    lockstep = np.median(ttft) == pytest.approx(np.percentile(ttft, 99))
    assert lockstep  # the noiseless loop: every wave of four the same
    assert np.percentile(noisy[0], 99) > 1.05 * np.median(noisy[0])
    assert np.array_equal(noisy[0], noisy[1]) and not np.array_equal(noisy[0], noisy[2])
    for part, seconds in runs[0].breakdown.items():  # a stretched iteration's decode-only time is stretched alike
        assert seconds.min() >= -1e-12, part
    total = sum(runs[0].breakdown.values())
    seen = runs[0].requests.arrival_s + STEP.request_overhead_s  # the parts count from when the engine saw it
    assert np.allclose(total, runs[0].finish_s - seen, rtol=1e-9)


def test_factors_of_one_give_the_noiseless_run_and_factors_of_two_double_a_lone_requests_steps():
    a = load(ROOT / "anchor-model.json")[0]
    doc = equal_requests(6)
    plain = predict.simulate_cell(a, doc, STEP, SERVER)
    one = predict.simulate_cell(a, doc, Noisy(STEP, flat(1.0, (1, 2)), 3), SERVER)
    assert np.array_equal(plain.first_token_s, one.first_token_s) and np.array_equal(plain.finish_s, one.finish_s)
    lone = {k: [v[0]] for k, v in equal_requests(1).items()}
    p1 = predict.simulate_cell(a, lone, STEP, SERVER)
    p2 = predict.simulate_cell(a, lone, Noisy(STEP, flat(2.0), 0), SERVER)
    assert (p2.finish_s[0] - STEP.request_overhead_s) == pytest.approx(2 * (p1.finish_s[0] - STEP.request_overhead_s))


def test_bad_noise_is_refused():
    with pytest.raises(ValueError, match="quantiles"):
        StepNoise((1,), ((1.0,) * 3,), (1.0,) * (NOISE_QUANTILES + 1))
    with pytest.raises(ValueError, match="positive non-decreasing"):
        StepNoise((1,), (tuple(np.linspace(1.2, 0.8, NOISE_QUANTILES + 1)),), (1.0,) * (NOISE_QUANTILES + 1))
    with pytest.raises(ValueError, match="batches increasing"):
        StepNoise((2, 1), ((1.0,) * 21, (1.0,) * 21), (1.0,) * 21)


def test_the_prediction_command_reports_the_median_and_range_over_seeds(tmp_path):
    run = ROOT / "precomputed" / "serve" / "llamacpp-cpu-amd-epyc-2c-1t-short-r8-run1.json"
    cal = ROOT / "precomputed" / "serve" / "calibration" / "llamacpp-cpu-amd-epyc-2c-1t.json"
    out = tmp_path / "p.json"
    predict = "scripts.realengine.analyses.predict"
    r = subprocess.run([sys.executable, "-m", predict, str(run), "--calibration", str(cal),
                        "--noise-seeds", "3", "--out", str(out)], cwd=ROOT, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    got = json.loads(out.read_text(encoding="utf-8"))
    assert got["noise_seeds"] == 3 and got["fit_quality"]["noise"]["batches"][0] == 1
    for metric, (low, high) in got["predicted_spread"].items():
        assert low <= got["predicted"][metric] <= high, metric
    assert "seeds:" in next(line for line in r.stdout.splitlines() if line.startswith("p99_ttft_ms"))
    bad = subprocess.run([sys.executable, "-m", predict, str(run), "--calibration", str(cal),
                          "--noise-seeds", "-1"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2 and bad.stderr.strip() == "error: --noise-seeds must be between 0 and 1000, not -1"


def test_the_clients_part_of_the_spread_is_taken_out_and_each_row_has_mean_one():
    """Iterations seen as e_j + c_j - c_(j-1): with the engine exact (e = the model) and only client jitter c, the
    lag-one covariance cancels the whole spread (engine share 0): every factor is 1."""
    rng = np.random.default_rng(5)
    c = rng.normal(0.0, 0.001, 4001)
    t, steps = 0.0, []
    for j in range(4000):
        seconds = 0.011 + c[j + 1] - c[j]
        steps.append({"decoders": 2, "context_sum": 0.0, "prompts": [] if j % 4 else [10], "seconds": seconds,
                      "unseen_prompts": 0, "start": t, "end": t + seconds})
        t += seconds
    model = StepModel((1.0, 2.0), (0.005, 0.011), 0.0, 0.0, 0.0, 0.0, 0.0)
    noise = stepfit.step_noise(steps, model, min_samples=5)
    assert noise.engine_share < 0.3  # 0 up to the estimate's sampling error (a square root of a small difference)
    for row in (*noise.decode, noise.prompt):
        assert float(np.sum((np.array(row[1:]) + row[:-1]) / 2) / NOISE_QUANTILES) == pytest.approx(1.0, rel=1e-12)
        assert max(row) / min(row) < 1.25
    alone = stepfit.step_noise([{k: v for k, v in s.items() if k not in ("start", "end")} for s in steps], model, 5)
    assert alone.engine_share == 1.0 and max(alone.decode[0]) / min(alone.decode[0]) > 1.5  # no pairs: kept whole


def test_a_slow_stretch_shows_above_its_shuffle_and_independent_draws_do_not():
    """stretches.spread: window medians of measured / modelled time. A run whose middle third is 8 % slower spreads
    well above the same iterations shuffled in time; independent draws spread like their shuffle."""
    from scripts.realengine.investigations import stretches

    rng = np.random.default_rng(1)
    t = np.arange(3000) * 0.01  # 30 s of 10 ms iterations
    flat = rng.lognormal(0, 0.05, t.size)
    slow = flat * np.where((t >= 10) & (t < 20), 1.08, 1.0)
    shuffled = [stretches.spread(t, rng.permutation(slow), 2.0) for _ in range(20)]
    assert stretches.spread(t, slow, 2.0) > 0.06 > 3 * np.median(shuffled)
    assert stretches.spread(t, flat, 2.0) < 2 * np.median([stretches.spread(t, rng.permutation(flat), 2.0)
                                                            for _ in range(20)])
    assert stretches.spread(t[:30], flat[:30], 2.0) is None  # too few iterations per window
