"""The serving simulator: exact queueing, agreement with the page's roofline experiments, conservation,
vLLM's metric definitions, determinism, and bad traces and workload files."""
import copy
import json
import subprocess
import sys

import numpy as np
import pytest

from scripts.model import roofline as rl
from scripts.model import sizes
from scripts.model import timeline as tl
from scripts.record.inputs import InputError
from scripts.serving import engine, sweep
from scripts.serving.measures import metrics, results
from scripts.serving.workloads.config import load_workloads, sweep_settings
from scripts.serving.workloads.trace import read_trace
from scripts.serving.workloads.workload import Requests, arrival_times, generate
from tests.conftest import ROOT

P, OUT = 512, 8


def service_seconds(a, prompt=P, output=OUT):
    """One request alone: its prefill step, then output - 1 decode steps at growing context (from the roofline)."""
    return rl.iteration_seconds(a, 0, 0, [(0, prompt)]) + sum(rl.decode_step_seconds(a, 1, prompt + k)
                                                             for k in range(1, output))


def identical(arrivals):
    n = len(arrivals)
    return Requests(np.asarray(arrivals, dtype=float), np.full(n, P), np.full(n, OUT))


def test_one_at_a_time_waits_follow_lindleys_recursion(anchor):
    s = service_seconds(anchor)
    arr = arrival_times(np.random.default_rng(7), 3000, 0.7 / s, normalize=False)
    trace = engine.simulate(anchor, identical(arr), "whole", max_batch=1)
    waits = trace.admitted_s - arr
    expected = np.zeros(len(arr))
    for n in range(1, len(arr)):
        expected[n] = max(0.0, expected[n - 1] + s - (arr[n] - arr[n - 1]))
    assert np.all(np.abs(waits - expected) <= 1e-9 * s)
    assert np.allclose(trace.finish_s - trace.admitted_s, s, rtol=1e-9)
    assert (expected > 0).mean() > 0.3  # the queue really formed


@pytest.mark.parametrize(("rho", "n"), [(0.5, 50_000), pytest.param(0.8, 200_000, marks=pytest.mark.exhaustive)])
def test_mean_wait_matches_pollaczek_khinchine_for_md1(anchor, rho, n):
    s = service_seconds(anchor)
    arr = arrival_times(np.random.default_rng(2026), n, rho / s, normalize=False)
    trace = engine.simulate(anchor, identical(arr), "whole", max_batch=1)
    pk = rho * s / (2 * (1 - rho))
    assert (trace.admitted_s - arr).mean() == pytest.approx(pk, rel=0.05)


def test_steady_decode_at_the_memory_cap_matches_the_frontier(anchor):
    context = 4096
    cap = rl.max_batch_by_memory(anchor, context)
    reqs = Requests(np.zeros(cap), np.full(cap, context - 256), np.full(cap, 256))
    trace = engine.simulate(anchor, reqs, "whole")
    steps = np.diff(trace.iteration_end_s[0])  # first iteration prefills everyone; then all decode together
    assert len(trace.iteration_end_s[0]) == 256
    assert np.median(steps) == pytest.approx(rl.decode_step_seconds(anchor, cap, context), rel=0.02)


@pytest.mark.parametrize("schedule", ["whole", "chunked"])
def test_one_long_prompt_into_a_full_batch_matches_the_timeline(anchor, anchor_doc, schedule):
    sc = anchor_doc["scenario"]
    context, prompt, chunk = sc["context_tokens"]["value"], sc["prompt_tokens"]["value"], sc["chunk_tokens"]["value"]
    running = tl.running_decoders(anchor, context)
    n = running + 1
    decoders = Requests(np.zeros(running), np.full(running, context - 1), np.full(running, 800))
    room = running * rl.bytes_per_request(anchor, context + 800) + rl.bytes_per_request(anchor, prompt + 4)
    warm = engine.simulate(anchor, decoders, schedule, chunk_tokens=chunk, capacity_bytes=room)
    arrive = warm.first_token_s.max() + 1e-3  # the newcomer arrives once every running request is decoding
    reqs = Requests(np.concatenate([decoders.arrival_s, [arrive]]),
                    np.concatenate([decoders.prompt_tokens, [prompt]]),
                    np.concatenate([decoders.output_tokens, [4]]))
    trace = engine.simulate(anchor, reqs, schedule, chunk_tokens=chunk, capacity_bytes=room)
    ends = trace.iteration_end_s[0]
    new = n - 1
    during = (ends > trace.admitted_s[new]) & (ends <= trace.first_token_s[new] + 1e-12)
    steps = np.diff(ends)[during[1:]]
    ttft_from_admission = trace.first_token_s[new] - trace.admitted_s[new]
    if schedule == "whole":
        assert steps.max() == pytest.approx(tl.whole_prefill_stall_s(anchor, context, prompt), rel=0.05)
        assert ttft_from_admission == pytest.approx(tl.whole_ttft_s(anchor, context, prompt), rel=0.05)
    else:
        assert steps.max() == pytest.approx(tl.chunked_max_step_s(anchor, context, prompt, chunk), rel=0.05)
        assert ttft_from_admission == pytest.approx(tl.chunked_ttft_s(anchor, context, prompt, chunk), rel=0.05)


def test_disaggregated_ttft_alone_is_the_timelines(anchor, anchor_doc):
    """Alone, a P/D request's TTFT is the timeline's (prefill + transfer) plus, as vLLM's proxy streams it, the decode
    GPU's first step at the prompt's context; by DistServe's convention it is the prefill alone."""
    prompt = anchor_doc["scenario"]["prompt_tokens"]["value"]
    one = Requests(np.array([1.0]), np.array([prompt]), np.array([3]))
    trace = engine.simulate(anchor, one, "disagg")
    step = rl.decode_step_seconds(anchor, 1, prompt)
    assert trace.first_token_s[0] - 1.0 == pytest.approx(tl.disagg_ttft_s(anchor, prompt) + step, rel=1e-12)
    assert trace.finish_s[0] - trace.first_token_s[0] == pytest.approx(
        rl.decode_step_seconds(anchor, 1, prompt + 1) + rl.decode_step_seconds(anchor, 1, prompt + 2), rel=1e-12)
    trace = engine.simulate(anchor, one, "disagg", first_token="prefill")
    assert trace.first_token_s[0] - 1.0 == pytest.approx(rl.prefill_seconds(anchor, prompt), rel=1e-12)
    assert trace.finish_s[0] - 1.0 == pytest.approx(tl.disagg_ttft_s(anchor, prompt) + rl.decode_step_seconds(
        anchor, 1, prompt + 1) + rl.decode_step_seconds(anchor, 1, prompt + 2), rel=1e-12)


@pytest.fixture(scope="module")
def workloads():
    return load_workloads(ROOT / "config" / "workloads.json")


@pytest.mark.parametrize("schedule", engine.SCHEDULES)
def test_conservation_under_heavy_load(anchor, workloads, schedule):
    reqs = generate(workloads["workloads"]["chat_long"], 1500, 12.0, seed=3)
    trace = engine.simulate(anchor, reqs, schedule, prefill_gpus=4)  # enough prefill to fill the decode GPU
    out = reqs.output_tokens
    tokens = np.where(trace.dec_last >= 0, 1 + trace.dec_last - trace.dec_first + 1, 1)
    assert np.array_equal(tokens, out)  # every request gets exactly its output tokens
    assert np.all(trace.admitted_s >= reqs.arrival_s) and np.all(trace.first_token_s > reqs.arrival_s)
    assert np.all(trace.finish_s >= trace.first_token_s)
    assert trace.peak_reserved_bytes <= trace.capacity_bytes
    assert trace.peak_reserved_bytes > 0.9 * trace.capacity_bytes  # memory really was the limit
    for i in range(0, len(reqs), 97):  # token gaps add up to the decode time
        gaps = trace.token_gaps(i)
        assert len(gaps) == out[i] - 1 and np.all(gaps > 0)
        assert gaps.sum() == pytest.approx(trace.finish_s[i] - trace.first_token_s[i], rel=1e-9, abs=1e-12)


def vllm_result():
    """Three successful requests and one failure, numbers chosen to be checked by hand."""
    return {"duration": 2.0, "ttfts": [0.1, 0.2, 0.5, 0.0], "itls": [[0.01, 0.02], [0.03], [], []],
            "input_lens": [10, 20, 30, 40], "output_lens": [3, 2, 1, 0], "latencies": [0.13, 0.23, 0.5, 0.0],
            "errors": ["", "", "", "timeout"]}


def test_metrics_of_a_vllm_result_file_equal_vllms_formulas_by_hand(tmp_path):
    path = tmp_path / "vllm.json"
    path.write_text(json.dumps(vllm_result()))
    m = results.metrics_of(results.load_result(path), {"ttft": 300, "tpot": 25}, [50, 99, 99.9])
    assert m["completed"] == 3 and m["failed"] == 1
    assert m["request_throughput"] == pytest.approx(1.5)
    assert m["output_throughput"] == pytest.approx(3.0) and m["total_token_throughput"] == pytest.approx(33.0)
    assert m["mean_ttft_ms"] == pytest.approx(800 / 3) and m["median_ttft_ms"] == pytest.approx(200)
    assert m["p99_ttft_ms"] == pytest.approx(494.0)  # 200 + 0.98 * 300
    assert m["mean_tpot_ms"] == pytest.approx(22.5)  # (15 + 30) / 2; the one-token request has no TPOT
    assert m["p99_tpot_ms"] == pytest.approx(29.85)
    assert "p99.9_tpot_ms" in m
    assert m["mean_itl_ms"] == pytest.approx(20.0) and m["p50_itl_ms"] == pytest.approx(20.0)
    assert m["mean_e2el_ms"] == pytest.approx(860 / 3)
    assert m["request_goodput"] == pytest.approx(0.5)  # only request 0 meets both targets
    assert m["slo_attainment"] == pytest.approx(1 / 3)


def test_one_token_requests_count_tpot_zero_for_goodput_as_vllm_does():
    m = metrics.compute([0.1], [0.1], [], [5], [1], 1.0, {"tpot": 1})
    assert m["request_goodput"] == 1.0 and m["mean_tpot_ms"] == 0.0


def test_sweep_percentiles_equal_numpys_over_its_own_records(anchor, workloads):
    s = sweep_settings(workloads)
    cell = sweep.run_cell(anchor, workloads["workloads"], s, "chat_long", "chunked", 4.0, replications=1)
    ttft, tpot, e2el = sweep.per_request_metrics(cell)
    many = np.array(cell["per_request"]["output_tokens"]) > 1
    for p in s["percentiles"]:
        assert cell["metrics"][f"p{p}_ttft_ms"] == pytest.approx(np.percentile(ttft, p) * 1000, rel=1e-12)
        assert cell["metrics"][f"p{p}_tpot_ms"] == pytest.approx(np.percentile(tpot[many], p) * 1000, rel=1e-12)
        assert cell["metrics"][f"p{p}_e2el_ms"] == pytest.approx(np.percentile(e2el, p) * 1000, rel=1e-12)
    good = metrics.meets_slo(ttft, tpot, e2el, s["slo_ms"])
    assert cell["metrics"]["slo_attainment"] == good.mean()


def test_committed_sweep_is_consistent_with_its_per_request_data():
    doc = json.loads((ROOT / "precomputed" / "serving.json").read_text(encoding="utf-8"))
    s = doc["settings"]
    assert len(doc["cells"]) == len(doc["workloads"]) * len(s["schedules"]) * len(s["rates_per_gpu"])
    q = doc["per_request"]["unit_ms"]
    for cell in doc["cells"][::7]:
        key = f"{cell['workload']}/{cell['schedule']}/{cell['rate_per_gpu']:g}"
        ttft = np.array(doc["per_request"]["ttft"][key]) * q
        assert len(ttft) == s["requests"]
        assert cell["metrics"]["p99_ttft_ms"] == pytest.approx(np.percentile(ttft, 99), abs=q)
    chat = doc["goodput"]["chat"]  # the lesson's claim: chunking carries more chat requests per GPU at the SLO
    assert chat["chunked"]["rate_per_gpu"] > chat["whole"]["rate_per_gpu"]


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "scripts.serving", *map(str, args)], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)


def write_trace(path, rows, header="arrival_s,prompt_tokens,output_tokens"):
    path.write_text(header + "\n" + "\n".join(",".join(map(str, r)) for r in rows) + "\n", encoding="utf-8")
    return path


def test_cli_on_a_trace_is_deterministic_and_uses_vllm_keys(tmp_path):
    rows = [(i * 0.05, 100 + 37 * i % 900, 20 + i % 50) for i in range(300)]
    trace = write_trace(tmp_path / "t.csv", rows)
    outs = []
    for name in ("a.json", "b.json"):
        run = run_cli("--schedule", "chunked", "--trace", trace, "--out", tmp_path / name, "--slo", "ttft:2000,tpot:50")
        assert run.returncode == 0, run.stderr
        outs.append((tmp_path / name).read_bytes())
    assert outs[0] == outs[1]
    doc = json.loads(outs[0])
    assert len(doc["requests"]) == 300 and set(doc["requests"][0]) >= {"arrival_s", "first_token_s", "finish_s",
                                                                      "prompt_tokens", "output_tokens"}
    for key in ("mean_ttft_ms", "median_ttft_ms", "p99_ttft_ms", "mean_tpot_ms", "p99_tpot_ms", "mean_itl_ms",
                "mean_e2el_ms", "request_throughput", "output_throughput", "request_goodput"):
        assert isinstance(doc["metrics"][key], float), key


def test_detailed_output_reproduces_the_pooled_itl_percentiles(tmp_path):
    trace = write_trace(tmp_path / "t.csv", [(i * 0.2, 300 + 11 * i, 5 + i % 40) for i in range(120)])
    out = tmp_path / "d.json"
    run = run_cli("--schedule", "whole", "--trace", trace, "--out", out, "--save-detailed", "--percentiles", "50,99")
    assert run.returncode == 0, run.stderr
    doc = json.loads(out.read_text())
    itl = np.array([g for r in doc["requests"] for g in r["itl_s"]])
    assert all(len(r["itl_s"]) == r["output_tokens"] - 1 for r in doc["requests"])
    for p in (50, 99):
        assert doc["metrics"][f"p{p}_itl_ms"] == pytest.approx(np.percentile(itl, p) * 1000, rel=1e-12)


def test_same_seed_same_bytes(anchor, workloads):
    s = sweep_settings(workloads)
    a = sweep.run_cell(anchor, workloads["workloads"], s, "chat", "disagg", 3.0, replications=2)
    b = sweep.run_cell(anchor, workloads["workloads"], s, "chat", "disagg", 3.0, replications=2)
    assert json.dumps(a) == json.dumps(b)


def test_azure_trace_columns_are_read(anchor, tmp_path):
    path = tmp_path / "azure.csv"
    path.write_text("TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:47.1805900,900,10\n"
                    "2023-11-16 18:15:46.6805900,4808,10\n2023-11-16 18:15:50.0000000,25,1\n", encoding="utf-8")
    reqs = read_trace(path, anchor.max_position_embeddings)
    assert reqs.arrival_s.tolist() == pytest.approx([0.0, 0.5, 3.31941])
    assert reqs.prompt_tokens.tolist() == [4808, 900, 25]


BAD_TRACES = {
    "header": ("a,b,c\n1,2,3\n", "header must name"),
    "empty": ("arrival_s,prompt_tokens,output_tokens\n", "no requests"),
    "float tokens": ("arrival_s,prompt_tokens,output_tokens\n0,10.5,3\n", "row 2 column prompt_tokens"),
    "zero output": ("arrival_s,prompt_tokens,output_tokens\n0,10,3\n1,10,0\n", "row 3 column output_tokens"),
    "negative time": ("arrival_s,prompt_tokens,output_tokens\n-1,10,3\n", "row 2 column arrival_s"),
    "nan time": ("arrival_s,prompt_tokens,output_tokens\nnan,10,3\n", "row 2 column arrival_s"),
    "text tokens": ("arrival_s,prompt_tokens,output_tokens\n0,ten,3\n", "row 2 column prompt_tokens"),
    "too long": ("arrival_s,prompt_tokens,output_tokens\n0,262000,1000\n", "more than the model's context"),
    "bad timestamp": ("TIMESTAMP,ContextTokens,GeneratedTokens\nyesterday,10,3\n", "row 2 column TIMESTAMP"),
}


@pytest.mark.parametrize("case", sorted(BAD_TRACES))
def test_bad_trace_is_one_line_naming_file_row_and_column(anchor, tmp_path, case):
    text, expected = BAD_TRACES[case]
    path = tmp_path / "bad.csv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as err:
        read_trace(path, anchor.max_position_embeddings)
    message = str(err.value)
    assert message.startswith(f"{path.as_posix()}: ") and expected in message and "\n" not in message


def test_bad_trace_through_the_cli_writes_nothing(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_bytes(b"arrival_s,prompt_tokens,output_tokens\n0,\xff\xfe,3\n")
    out = tmp_path / "out.json"
    run = run_cli("--schedule", "whole", "--trace", path, "--out", out)
    assert run.returncode == 2 and run.stderr.count("\n") == 1 and "not UTF-8" in run.stderr
    assert not out.exists()


def test_request_too_big_for_memory_is_refused(anchor):
    reqs = Requests(np.array([0.0]), np.array([200_000]), np.array([10]))
    for schedule in engine.SCHEDULES:  # 13 GB of KV and state against 5 GB free
        with pytest.raises(ValueError, match="GB free for requests|does not fit"):
            engine.simulate(anchor, reqs, schedule, capacity_bytes=5e9)


WORKLOAD_BREAKS = {
    "no source": (lambda d: d["workloads"]["chat"]["prompt_tokens"].pop("assumption"),
                  "workloads.chat.prompt_tokens needs exactly one"),
    "bad dist": (lambda d: d["workloads"]["chat"]["output_tokens"].update(dist="zipf"), "output_tokens.dist"),
    "min over max": (lambda d: d["workloads"]["chat"]["output_tokens"].update(min=5000), "output_tokens.min"),
    "nan sigma": (lambda d: d["workloads"]["chat"]["prompt_tokens"].update(sigma=float("nan")), "sigma"),
    "fraction": (lambda d: d["workloads"]["chat_long"]["long_prompts"].update(fraction=2), "fraction"),
    "rates unsorted": (lambda d: d["sweep"]["rates_per_gpu"].update(value=[2, 1]), "rates_per_gpu.value"),
    "schedule": (lambda d: d["sweep"]["schedules"].update(value=["fifo"]), "schedules.value"),
    "requests": (lambda d: d["sweep"]["requests"].update(value=0), "requests.value"),
    "slo key": (lambda d: d["sweep"]["slo_ms"].update(value={"ttfb": 1}), "slo_ms.value"),
    "target": (lambda d: d["sweep"]["attainment_target"].update(value=90), "attainment_target.value"),
}


@pytest.mark.parametrize("case", sorted(WORKLOAD_BREAKS))
def test_bad_workload_file_is_one_line_naming_the_field(tmp_path, case):
    doc = json.loads((ROOT / "config" / "workloads.json").read_text(encoding="utf-8"))
    broken = copy.deepcopy(doc)
    WORKLOAD_BREAKS[case][0](broken)
    path = tmp_path / "workloads.json"
    path.write_text(json.dumps(broken), encoding="utf-8")
    with pytest.raises(InputError) as err:
        load_workloads(path)
    assert WORKLOAD_BREAKS[case][1] in str(err.value) and str(err.value).startswith(path.as_posix())


def test_arrivals_follow_vllms_gamma_and_rescaling():
    rng_a, rng_b = np.random.default_rng(5), np.random.default_rng(5)
    times = arrival_times(rng_a, 1000, rate=4.0, burstiness=0.5)
    gaps = rng_b.gamma(shape=0.5, scale=1 / (4.0 * 0.5), size=1000)
    expected = np.cumsum(gaps) * (1000 / 4.0) / np.cumsum(gaps)[-1]
    assert np.allclose(times, expected, rtol=1e-15) and times[-1] == pytest.approx(250.0)


@pytest.mark.parametrize(("strategy", "burstiness"), [("linear", 1.0), ("exponential", 1.0), ("linear", 0.5)])
def test_ramped_arrivals_follow_vllms_get_request(strategy, burstiness):
    """vLLM's loop (get_request and _get_current_request_rate, vllm/benchmarks/serve.py, commit def9ce85), one draw
    per request at that request's rate, summed, not rescaled, against ours from the same generator state."""
    n, start, end = 500, 1.0, 8.0
    ref, delay_ts, rates = np.random.default_rng(11), [], []
    for i in range(n):
        progress = i / max(n - 1, 1)
        rate = start + (end - start) * progress if strategy == "linear" else start * ((end / start) ** progress)
        rates.append(rate)
        delay_ts.append(ref.gamma(shape=burstiness, scale=1.0 / (rate * burstiness)))
    for i in range(1, n):
        delay_ts[i] += delay_ts[i - 1]
    ours = arrival_times(np.random.default_rng(11), n, rate=4.0, burstiness=burstiness, ramp=(strategy, start, end))
    assert np.allclose(ours, delay_ts, rtol=1e-12, atol=0)
    assert rates[0] == start and rates[-1] == pytest.approx(end)
    # the first tenth arrives at about 1-2 req/s, the last tenth at 7-8: the gaps shrink as the ramp climbs
    assert np.mean(np.diff(ours[:50])) > 3 * np.mean(np.diff(ours[-50:]))
    with pytest.raises(ValueError, match="ramp-up strategy"):
        arrival_times(np.random.default_rng(0), 10, 1.0, ramp=("step", 1.0, 2.0))


def vllm_peaks(start, ttft, latency, itls):
    """The reference: vLLM's own loop, line for line (vllm/benchmarks/serve.py calculate_metrics, commit
    def9ce85), over successful outputs with absolute start times."""
    min_start_time = min(start)
    max_end_time = max(s + lat for s, lat in zip(start, latency, strict=True))
    duration_seconds = int(np.ceil(max_end_time - min_start_time)) + 1
    tokens_per_second = np.zeros(duration_seconds)
    concurrent_requests_per_second = np.zeros(duration_seconds)
    for s, t, lat, gaps in zip(start, ttft, latency, itls, strict=True):
        token_times = [s + t]
        current_time = token_times[0]
        for itl_value in gaps:
            current_time += itl_value
            token_times.append(current_time)
        for token_time in token_times:
            second_bucket = int(token_time - min_start_time)
            if 0 <= second_bucket < duration_seconds:
                tokens_per_second[second_bucket] += 1
        for second in range(int(s - min_start_time), int((s + lat) - min_start_time) + 1):
            concurrent_requests_per_second[second] += 1
    return float(np.max(tokens_per_second)), int(np.max(concurrent_requests_per_second))


def test_peak_tokens_and_concurrency_as_vllm_counts_them():
    from scripts.serving.measures.metrics import peaks

    # by hand: A sends at 0.2 s, tokens at 0.5, 0.9, 1.4; B sends at 0.7 s, tokens at 1.1, 1.2, 1.3, 2.6
    got = peaks([0.2, 0.7], [0.3, 0.4], [1.2, 1.9], [[0.4, 0.5], [0.1, 0.1, 1.3]])
    # buckets from 0.2 s: A -> 0, 0, 1; B -> 0, 1, 1, 2 => 3 tokens in [0.2, 1.2) and in [1.2, 2.2); concurrency:
    # A spans buckets 0..1, B 0..2 => 2
    assert got == {"max_output_tokens_per_s": 3.0, "max_concurrent_requests": 2}
    assert peaks([0.0], [0.1], [0.1], [[]], success=[False]) == {"max_output_tokens_per_s": 0.0,
                                                                   "max_concurrent_requests": 0}
    rng = np.random.default_rng(7)
    for _ in range(200):
        n = int(rng.integers(1, 40))
        start = np.sort(rng.uniform(1000.0, 1030.0, n))  # absolute clocks, like time.perf_counter()
        ttft = rng.exponential(0.5, n)
        itls = [list(rng.exponential(0.03, int(rng.integers(0, 60)))) for _ in range(n)]
        latency = [t + sum(g) for t, g in zip(ttft, itls, strict=True)]  # vLLM: latency ends at the last token
        want = vllm_peaks(start, ttft, latency, itls)
        got = peaks(start, ttft, latency, itls)
        assert (got["max_output_tokens_per_s"], got["max_concurrent_requests"]) == want


def test_a_simulated_run_reports_vllms_peaks(anchor, workloads):
    reqs = generate(workloads["workloads"]["chat"], 300, 4.0, seed=3)
    trace = engine.simulate(anchor, reqs, "chunked")
    m = metrics.from_trace(trace)
    gaps = [list(trace.token_gaps(i)) for i in range(len(reqs))]
    ttft, e2el = trace.first_token_s - reqs.arrival_s, trace.finish_s - reqs.arrival_s
    assert (m["max_output_tokens_per_s"], m["max_concurrent_requests"]) == vllm_peaks(reqs.arrival_s, ttft, e2el, gaps)
    assert m["max_concurrent_requests"] >= 2 and m["max_output_tokens_per_s"] > m["output_throughput"]


def test_vllm_v1_preset_shares_one_token_budget_by_hand(anchor):
    """Two requests at t = 0 (prompts 5 and 6, outputs 3 and 2), max_num_batched_tokens 8, max_num_seqs 4, worked
    out from vLLM V1's rule: running decodes first, then prefill tokens FCFS with what is left of the budget."""
    reqs = Requests(np.zeros(2), np.array([5, 6]), np.array([3, 2]))
    trace = engine.simulate(anchor, reqs, "vllm-v1", max_num_batched_tokens=8, max_batch=4)
    t1 = rl.iteration_seconds(anchor, 0, 0.0, [(0, 5), (0, 3)])  # no decode yet: R0 whole, R1's first 3 tokens
    t2 = t1 + rl.iteration_seconds(anchor, 1, 6.0, [(3, 3)])  # R0 decodes (context 6), 7 tokens left: R1's last 3
    t3 = t2 + rl.iteration_seconds(anchor, 2, 14.0)  # both decode at context 7
    assert trace.first_token_s == pytest.approx([t1, t2], rel=1e-12)
    assert trace.finish_s == pytest.approx([t3, t3], rel=1e-12)
    assert trace.token_gaps(0) == pytest.approx([t2 - t1, t3 - t2], rel=1e-12)


def test_vllm_v0_preset_runs_prefill_only_iterations_by_hand(anchor):
    """vLLM V0 without chunked prefill: waiting prompts are prefilled whole, FCFS, while they fit the budget
    (10 tokens here), in iterations that give running decodes no token."""
    reqs = Requests(np.zeros(2), np.array([6, 6]), np.array([3, 2]))
    trace = engine.simulate(anchor, reqs, "vllm-v0", max_num_batched_tokens=10, max_batch=4)
    t1 = rl.iteration_seconds(anchor, 0, 0.0, [(0, 6)])  # R1's 6 tokens do not fit the 4 left: it waits
    t2 = t1 + rl.iteration_seconds(anchor, 0, 0.0, [(0, 6)])  # prefill-only: R0, already running, gets no token
    t3 = t2 + rl.iteration_seconds(anchor, 2, 14.0)  # decode-only: both at context 7; R1 is done
    t4 = t3 + rl.iteration_seconds(anchor, 1, 8.0)  # R0's last token
    assert trace.first_token_s == pytest.approx([t1, t2], rel=1e-12)
    assert trace.finish_s == pytest.approx([t4, t3], rel=1e-12)
    assert trace.token_gaps(0) == pytest.approx([t3 - t1, t4 - t3], rel=1e-12)  # the stall shows in R0's ITL
    orca = engine.simulate(anchor, reqs, "orca")  # Orca/`whole`: R0 would decode in R1's prefill iteration
    assert orca.finish_s[0] < trace.finish_s[0]
    with pytest.raises(ValueError, match="shorter than the longest prompt"):
        engine.simulate(anchor, reqs, "vllm-v0", max_num_batched_tokens=5)
    with pytest.raises(ValueError, match="must not exceed max_num_batched_tokens"):
        engine.simulate(anchor, reqs, "vllm-v1", max_num_batched_tokens=8, max_batch=9)


def test_vllm_v1_defaults_follow_vllms_engine_arguments():
    assert engine.vllm_v1_defaults(80e9, "NVIDIA H100 SXM 80GB") == (8192, 1024)  # 74.5 GiB >= 70 GiB
    assert engine.vllm_v1_defaults(80e9, "NVIDIA A100 SXM 80GB") == (2048, 256)  # vLLM excludes the A100 by name
    assert engine.vllm_v1_defaults(48e9, "NVIDIA L40S") == (2048, 256)
    assert engine.LESSON_PRESETS == {"whole": "orca", "chunked": "sarathi", "disagg": "disagg"}


@pytest.mark.parametrize("preset", ["orca", "sarathi", "vllm-v1", "vllm-v0"])
def test_presets_conserve_tokens_under_load(anchor, workloads, preset):
    reqs = generate(workloads["workloads"]["chat_long"], 400, 6.0, seed=5)
    trace = engine.simulate(anchor, reqs, preset, gpu_name="NVIDIA H100 SXM 80GB")
    assert np.all(np.isfinite(trace.finish_s)) and np.all(trace.first_token_s >= reqs.arrival_s)
    for i in range(len(reqs)):  # every request gets exactly its tokens, one per decode iteration after the first
        assert len(trace.token_gaps(i)) == reqs.output_tokens[i] - 1
    assert trace.peak_reserved_bytes <= trace.capacity_bytes


def test_the_lessons_schedules_are_presets_and_the_table_reads_them(anchor, workloads):
    from scripts.serving.compare import goodput_table

    settings = {**sweep_settings(workloads), "requests": 150, "rates_per_gpu": [1.0, 4.0, 16.0], "bisection_steps": 2}
    table = goodput_table(anchor, {"chat": workloads["workloads"]["chat"]}, settings,
                          presets=("orca", "sarathi", "whole", "chunked", "vllm-v1"))["chat"]
    assert table["orca"] == table["whole"] and table["sarathi"] == table["chunked"]  # the same engine, by name
    assert all(1.0 <= v <= 16.0 for v in table.values())


def test_a_prompts_recurrent_state_is_counted_alike_everywhere(anchor):
    """One cost model: a whole prefill alone costs what prefill_seconds says (the state written once, as it starts
    at zero), and only a later chunk reads and writes it (the engine counted it twice before)."""
    state = sizes.state_bytes_per_request(anchor)
    assert state > 0  # the default anchor's Gated DeltaNet layers
    for prompt in (512.0, 4096.0, 32768.0):
        assert rl.iteration_seconds(anchor, 0, 0.0, [(0, prompt)]) == pytest.approx(
            rl.prefill_seconds(anchor, prompt), rel=1e-15)
    first, later = (rl.iteration_bytes(anchor, 0, 0.0, 512.0, rl.state_passes(s)) for s in (0, 512))
    assert later - first == pytest.approx(state, rel=1e-12)
    assert rl.mixed_step_seconds(anchor, 0, 0.0, 512.0, 0.0) == pytest.approx(
        rl.iteration_seconds(anchor, 0, 0.0, [(0, 512.0)]), rel=1e-15)
