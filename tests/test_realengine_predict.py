"""The prediction command (python -m scripts.realengine.analyses.predict): one committed run predicted with a step
model fitted on the other half's runs gives exactly the cross-prediction rule measured_vs_simulated_load committed for
it (the command and the rule share predict.compare_cell), the table names every compared metric, --out writes the same
numbers, and bad calls are refused in one line naming what is wrong."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

SERVE = ROOT / "precomputed" / "serve"
CALIBRATION = SERVE / "calibration" / "llamacpp-cpu-amd-epyc-2c-1t.json"


def predict(*args):
    return subprocess.run([sys.executable, "-m", "scripts.realengine.analyses.predict", *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def committed():
    doc = json.loads((ROOT / "precomputed" / "measured_vs_simulated_load.json").read_text(encoding="utf-8"))
    return doc["engines"][0]


def test_a_run_predicted_from_the_other_half_equals_the_committed_comparison(committed, tmp_path):
    cell = next(c for c in committed["cells"] if c["workload"] == "short" and c["rate"] == 6.0)
    run = cell["runs"][0]
    half = next(h for h in committed["halves"].values() if ["short", 6.0] in h["cells"])
    other = next(h for h in committed["halves"].values() if h is not half)
    fit_on = sorted(str(ROOT / r["file"]) for c in committed["cells"] if [c["workload"], c["rate"]] in other["cells"]
                    for r in c["runs"])
    assert len(fit_on) == 12
    out = tmp_path / "prediction.json"
    r = predict(ROOT / run["file"], "--calibration", CALIBRATION, "--fit-on", *fit_on, "--out", out)
    assert r.returncode == 0, r.stderr
    got = json.loads(out.read_text(encoding="utf-8"))
    assert got["step_model"] == other["step_model"]
    assert got["predicted"] == run["predicted"] and got["measured"] == run["measured"]
    assert got["saturated"] == run["saturated"]
    for metric in run["predicted"]:  # the printed table: one row per metric, its measured value first
        row = next(line for line in r.stdout.splitlines() if line.startswith(metric + " "))
        assert float(row.split()[1]) == pytest.approx(run["measured"][metric], rel=1e-3)


def test_the_default_fit_is_the_separate_calibration_and_a_cap_changes_the_prediction(committed, tmp_path):
    path = SERVE / "llamacpp-cpu-amd-epyc-2c-1t-short-r10-run1.json"
    base, capped = tmp_path / "base.json", tmp_path / "capped.json"
    assert predict(path, "--calibration", CALIBRATION, "--out", base).returncode == 0
    assert predict(path, "--calibration", CALIBRATION, "--max-concurrency", "1", "--out", capped).returncode == 0
    b, c = (json.loads(p.read_text(encoding="utf-8")) for p in (base, capped))
    assert b["step_model"] == committed["separate_calibration"]["step_model"]
    assert [p.split("/")[-1] for p in b["fitted_on"]] == [p.split("/")[-1] for p in
                                                         committed["separate_calibration"]["files"]]
    # one request in flight at a time: none waits inside the engine, so each one's TTFT is about a lone prompt's
    assert c["predicted"]["p99_ttft_ms"] < b["predicted"]["p99_ttft_ms"]
    assert c["max_concurrency"] == 1 and c["measured"] == b["measured"]


@pytest.mark.parametrize("args, says", [
    (["--max-concurrency", "0"], "--max-concurrency must be at least 1"),
    (["--fit-on", "RESULT"], "is one of the runs the step model is fitted on"),
    (["--calibration-missing"], "field server is missing"),
])
def test_bad_calls_are_refused_in_one_line(tmp_path, args, says):
    result = SERVE / "llamacpp-cpu-amd-epyc-2c-1t-short-r2-run1.json"
    calibration = CALIBRATION
    if args == ["--calibration-missing"]:
        calibration = tmp_path / "cal.json"
        doc = json.loads(CALIBRATION.read_text(encoding="utf-8"))
        del doc["server"]
        calibration.write_text(json.dumps(doc), encoding="utf-8")
        args = []
    args = [str(result) if a == "RESULT" else a for a in args]
    r = predict(result, "--calibration", calibration, *args)
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("error: ") and says in r.stderr, r.stderr


def test_a_trial_run_writes_outside_the_committed_records():
    """Issue 43 (tooling): --only-calibrate, scaled rates, other counts or one cell write under build/serve-trial/
    (build/serve-prefix-trial/ with --prefix) unless --out is given; the full run writes precomputed/serve/
    (precomputed/serve-prefix/)."""
    from types import SimpleNamespace

    from scripts.realengine.harness.run import OUT, PREFIX_OUT, PREFIX_TRIAL_OUT, TRIAL_OUT, out_dir

    def args(**kw):
        base = {"only_calibrate": False, "rates_scale": 1.0, "requests": None, "runs": None, "only": None,
                "out": None, "prefix": False}
        return SimpleNamespace(**{**base, **kw})

    assert out_dir(args()) == OUT == Path("precomputed/serve")
    assert out_dir(args(prefix=True)) == PREFIX_OUT == Path("precomputed/serve-prefix")
    for trial in ({"only_calibrate": True}, {"rates_scale": 0.5}, {"requests": 20}, {"runs": 1},
                  {"only": "short:2"}):
        assert out_dir(args(**trial)) == TRIAL_OUT, trial
        assert out_dir(args(prefix=True, **trial)) == PREFIX_TRIAL_OUT == Path("build/serve-prefix-trial"), trial
    assert out_dir(args(only_calibrate=True, out=Path("x"))) == Path("x")


def test_a_vllm_file_without_send_times_is_predicted_with_the_sends_vllm_makes(tmp_path):
    """Issue 43: vLLM's own result files save no send times. request_rate inf sends every request at 0 (exact);
    a finite rate is a fresh draw of vLLM's gamma process rescaled as vLLM rescales it (the last send at n / rate):
    said in the report, never silently."""
    from scripts.realengine.analyses.predict import assumed_send_times

    run = json.loads((SERVE / "llamacpp-cpu-amd-epyc-2c-1t-short-r2-run1.json").read_text(encoding="utf-8"))
    n = len(run["ttfts"])
    times, why = assumed_send_times({**run, "request_rate": "inf"})
    assert times == [0.0] * n and "inf" in why
    times, why = assumed_send_times({**run, "request_rate": 2.0, "burstiness": 1.0})
    assert times[-1] == pytest.approx(n / 2.0, rel=1e-12) and all(b > a for a, b in zip(times, times[1:],
                                                                                         strict=False))
    assert times == assumed_send_times({**run, "request_rate": 2.0})[0]  # seeded: the same draw every time
    assert "fresh draw" in why and "not recorded" in why
    even, _ = assumed_send_times({**run, "request_rate": 4.0, "burstiness": float("inf")})
    assert even == pytest.approx([(i + 1) / 4.0 for i in range(n)], rel=1e-12)
    with pytest.raises(ValueError, match="burstiness must be a positive number"):
        assumed_send_times({**run, "request_rate": 2.0, "burstiness": 0})
    bare = {k: v for k, v in run.items() if k != "send_times"}
    path = tmp_path / "vllm.json"
    path.write_text(json.dumps({**bare, "request_rate": "inf"}), encoding="utf-8")
    out = tmp_path / "p.json"
    r = predict(path, "--calibration", CALIBRATION, "--out", out)
    assert r.returncode == 0, r.stderr
    got = json.loads(out.read_text(encoding="utf-8"))
    assert got["send_times"].startswith("request_rate inf") and got["sent_rate"] is None and got["saturated"]
    assert "sent all at once" in r.stdout


def test_the_kolmogorov_smirnov_distance_is_the_largest_gap_between_the_two_distributions():
    from scripts.serving.measures.metrics import ks_distance

    assert ks_distance([1, 2, 3], [3, 2, 1]) == 0.0
    assert ks_distance([1, 2], [3, 4]) == 1.0
    assert ks_distance([1, 2, 3, 4], [3, 4, 5, 6]) == 0.5  # at x = 2: 2/4 of one sample, none of the other
    assert ks_distance([1.0], [1.0, 2.0]) == 0.5
    with pytest.raises(ValueError, match="two non-empty samples"):
        ks_distance([], [1.0])


def test_every_committed_run_carries_its_distribution_distance(committed):
    runs = [r for c in committed["cells"] for r in c["runs"]]
    assert len(runs) == 24
    for r in runs:
        assert set(r["ks"]) == {"ttft", "tpot"} and all(0 <= v <= 1 for v in r["ks"].values()), r["file"]


def test_requests_that_never_reached_the_server_are_not_simulated_as_served(tmp_path):
    """Issue 43: a request whose connection was never made (aiohttp's ClientConnectorError in vLLM's client,
    ConnectionRefusedError in the kit's) is failed when measured and absent from what the simulated server sees;
    a request the server failed is still simulated."""
    from scripts.realengine.analyses.predict import requests_of
    from scripts.serving.measures.results import never_reached

    run = json.loads((SERVE / "llamacpp-cpu-amd-epyc-2c-1t-short-r2-run1.json").read_text(encoding="utf-8"))
    n = len(run["ttfts"])
    doc = json.loads(json.dumps(run))
    for i, error in ((3, "ClientConnectorError: Cannot connect to host 127.0.0.1:8080"),
                     (7, "ConnectionRefusedError: [Errno 111] Connect call failed"),
                     (9, "HTTP 503: server busy")):
        doc["success"][i], doc["errors"][i], doc["ttfts"][i], doc["itls"][i] = False, error, 0.0, []
        doc["output_lens"][i], doc["latencies"][i] = 0, 0.0
    assert [i for i, x in enumerate(never_reached(doc)) if x] == [3, 7]
    assert len(requests_of(doc)) == n - 2 and len(requests_of(run)) == n
    path = tmp_path / "failed.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    out = tmp_path / "p.json"
    r = predict(path, "--calibration", CALIBRATION, "--out", out)
    assert r.returncode == 0, r.stderr
    assert json.loads(out.read_text(encoding="utf-8"))["never_reached"] == 2
    assert "2 request(s) never reached" in r.stdout


def test_out_naming_an_input_is_refused_and_the_input_is_kept(tmp_path, capsys):
    """Issue 63: `--out` equal to the calibration record (or the result) overwrote a committed file with the report.
    Now one line, exit 2, and the file's bytes unchanged; a runaway --noise-seeds is refused the same way. (In
    process: predict.main is the command.)"""
    from scripts.realengine.analyses.predict import main

    path = SERVE / "llamacpp-cpu-amd-epyc-2c-1t-short-r10-run1.json"
    for target, says in ((CALIBRATION, "is the --calibration"), (path, "is the result")):
        before = target.read_bytes()
        assert main([str(path), "--calibration", str(CALIBRATION), "--out", str(target)]) == 2
        assert says in capsys.readouterr().err
        assert target.read_bytes() == before
    # issue 80: a committed file that is not an input (the measured records), and a folder, are refused the same way
    records = ROOT / "precomputed" / "measured_records.json"
    before = records.read_bytes()
    assert main([str(path), "--calibration", str(CALIBRATION), "--out", str(records)]) == 2
    assert "the repository keeps this file" in capsys.readouterr().err and records.read_bytes() == before
    assert main([str(path), "--calibration", str(CALIBRATION), "--out", str(ROOT / "precomputed")]) == 2
    assert "is a folder" in capsys.readouterr().err
    assert main([str(path), "--calibration", str(CALIBRATION), "--noise-seeds", "1000000"]) == 2
    assert "--noise-seeds must be between 0 and 1000" in capsys.readouterr().err


@pytest.mark.parametrize("change, says", [
    (lambda d: d.update(send_times=d["send_times"][:-1]), "field send_times has"),
    (lambda d: d.update(send_times=[-1.0] + d["send_times"][1:]), "field send_times[0] must be a finite number"),
    (lambda d: d.update(send_times=list(reversed(d["send_times"]))), "requests are listed in the order they were sent"),
    (lambda d: (d.pop("send_times"), d.update(request_rate=[2])), "field request_rate must be a positive number"),
    (lambda d: (d.pop("send_times"), d.update(request_rate="abc")), "field request_rate must be a positive number"),
    (lambda d: (d.pop("send_times"), d.update(request_rate=0)), "field request_rate must be a positive number"),
    (lambda d: (d.pop("send_times"), d.update(request_rate=2.0, burstiness=0)), "field burstiness must be a positive"),
])
def test_bad_send_times_and_rates_are_one_line_naming_the_file(tmp_path, capsys, change, says):
    """Issue 63's rerun: send_times one short or a request_rate list gave tracebacks; negative or reversed sends were
    accepted; request_rate "abc" or 0 and burstiness 0 were refused without naming the file."""
    from scripts.realengine.analyses.predict import main

    src = SERVE / "llamacpp-cpu-amd-epyc-2c-1t-short-r10-run1.json"
    doc = json.loads(src.read_text(encoding="utf-8"))
    if "send_times" not in doc:
        pytest.skip("the committed run holds no send_times")
    change(doc)
    path = tmp_path / "run.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    assert main([str(path), "--calibration", str(CALIBRATION)]) == 2
    err = capsys.readouterr().err
    assert says in err and str(path) in err and len(err.strip().splitlines()) == 1, err


HELD_OUT = ROOT / "precomputed" / "serve-heldout"


def held_out(session: int, name: str = "long_answers-r1-run1") -> tuple[Path, Path]:
    folder = HELD_OUT / f"session-{session}"
    return (folder / f"llamacpp-cpu-amd-epyc-2c-1t-{name}.json",
            folder / "calibration" / "llamacpp-cpu-amd-epyc-2c-1t.json")


def test_a_run_within_its_calibrations_speed_is_predicted_and_says_its_ratio(tmp_path, capsys):
    """Issue 63: predict reads the run's own decode speed and holds it to speed_check_bound. A held-out cell from
    its own session's calibration reads about 1 (committed: 0.96-1.08 within a session)."""
    from scripts.realengine.analyses.predict import main

    run, cal = held_out(10)
    out = tmp_path / "p.json"
    assert main([str(run), "--calibration", str(cal), "--out", str(out)]) == 0
    speed = json.loads(out.read_text(encoding="utf-8"))["speed_vs_calibration"]
    assert speed["decoders"] == 1 and speed["iterations"] >= 100
    assert speed["ratio"] == pytest.approx(1.0, abs=0.05)
    assert "speed_check_bound" not in capsys.readouterr().err


def test_a_run_from_a_faster_machine_is_refused_unless_rescaled_or_forced(tmp_path, capsys):
    """Issue 63: a run whose engine is twice as fast (a committed held-out cell with every time halved: sends,
    TTFTs, token gaps, latencies) read against the committed calibration. Exit 3 in one line with both numbers;
    --force predicts and flags it; --rescale scales the decode times by the ratio read (about 0.5): every central
    error at most half the forced one's (forced: 3-8x off, the run saturating a half-speed model; rescaled still
    0.4-1.3x: the prompt costs stay the calibration's, as speed.py says)."""
    from scripts.realengine.analyses.predict import main

    src, cal = held_out(10)
    doc = json.loads(src.read_text(encoding="utf-8"))
    for key in ("send_times", "ttfts", "latencies"):
        doc[key] = [t / 2 for t in doc[key]]
    doc["itls"] = [[t / 2 for t in gaps] for gaps in doc["itls"]]
    doc["duration"] /= 2
    run = tmp_path / "faster.json"
    run.write_text(json.dumps(doc), encoding="utf-8")
    assert main([str(run), "--calibration", str(cal)]) == 3
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and str(run) in err and "past speed_check_bound (10%)" in err, err
    assert "0.5" in err and "--rescale" in err and "--force" in err
    forced, rescaled = tmp_path / "forced.json", tmp_path / "rescaled.json"
    assert main([str(run), "--calibration", str(cal), "--force", "--out", str(forced)]) == 0
    assert "warning: the run's lone decode steps took" in capsys.readouterr().err
    assert main([str(run), "--calibration", str(cal), "--rescale", "--out", str(rescaled)]) == 0
    f, r = (json.loads(p.read_text(encoding="utf-8")) for p in (forced, rescaled))
    assert f["rescaled_by"] is None and r["rescaled_by"] == pytest.approx(0.5, abs=0.05)
    for k in ("median_ttft_ms", "mean_tpot_ms", "median_itl_ms", "median_e2el_ms"):  # the prompt costs stay the
        assert abs(r["error"][k]) < abs(f["error"][k]) / 2, k  # calibration's (speed.py): nearer, not right
    assert any("Kolmogorov-Smirnov" in line for line in f["flags"])  # the TPOTs twice the run's: flagged


def test_rescaling_moves_only_the_decode_times():
    """speed.scaled: D, U and the attention per context token times the factor; prompt costs and round trip kept."""
    from scripts.realengine.analyses.speed import scaled
    from scripts.realengine.analyses.stepmodel import StepModel

    step = StepModel((1, 2), (0.01, 0.015), 0.002, 0.001, 1e-6, 2e-6, 0.003, ubatch_seconds=(0.01, 0.012),
                     ubatch_tokens=512)
    s = scaled(step, 0.5)
    assert s.decode_seconds == (0.005, 0.0075) and s.ubatch_seconds == (0.005, 0.006)
    assert s.attention_s_per_token == pytest.approx(1e-6)
    assert (s.prompt_chunk_s, s.prompt_token_s, s.prompt_pair_s, s.request_overhead_s) == (0.002, 0.001, 1e-6, 0.003)
    with pytest.raises(ValueError, match="positive factor"):
        scaled(step, 0.0)


def test_every_family_of_measured_runs_follows_the_one_pattern():
    """scripts/realengine/analyses/family.py: each family module has `compare(calibration_paths, result_paths, anchor,
    settings, ...)` and `summary(cells, goals, ...)`, and each rule that writes measured_vs_simulated_<name>.json
    drives its family through the one main."""
    import importlib
    import inspect

    from scripts.realengine.analyses.family import FAMILIES

    for name, module in FAMILIES.items():
        family = importlib.import_module(module)
        compare, summary = inspect.signature(family.compare), inspect.signature(family.summary)
        assert list(compare.parameters)[:4] == ["calibration_paths", "result_paths", "anchor", "settings"], name
        assert [p.name for p in list(summary.parameters.values())[:2]] == [list(summary.parameters)[0], "goals"], name
        assert all(p.default is not inspect.Parameter.empty for p in list(compare.parameters.values())[4:]), name
        entry = (ROOT / "scripts" / f"measured_vs_simulated_{name}.py").read_text(encoding="utf-8")
        assert f"from {module} import compare" in entry, name
