"""The serving model as engines run it: step times below the roofline, P/D as deployed (first-token convention,
backpressure from full decode GPUs, the inbound link as a queue, the split search), where each request's time went,
and the engine comparison in serving.json. Hand-worked traces of a few requests, computed here from the rules the
engine's docstring states."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from scripts.model import roofline as rl
from scripts.model import sizes
from scripts.serving import engine, sweep
from scripts.serving.workloads.config import sweep_inputs
from scripts.serving.workloads.workload import Requests, generate

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def inputs():
    return sweep_inputs(ROOT / "anchor-model.json", ROOT / "config" / "workloads.json")


@pytest.fixture(scope="module")
def anchor(inputs):
    return inputs[0]


def test_realistic_step_times_derate_every_kernel_and_add_the_overhead_by_hand(anchor):
    eff = rl.Efficiency(0.5, 0.25, 0.002)
    slow = rl.derated(anchor, eff)
    assert slow.peak_bf16_flops == anchor.peak_bf16_flops * 0.5
    assert slow.hbm_bandwidth_bytes_per_s == anchor.hbm_bandwidth_bytes_per_s * 0.25
    one = Requests(np.array([0.0]), np.array([1000]), np.array([3]))
    trace = engine.simulate(anchor, one, "whole", efficiency=eff)
    t1 = rl.prefill_seconds(slow, 1000) + 0.002
    t2 = t1 + rl.decode_step_seconds(slow, 1, 1001) + 0.002
    t3 = t2 + rl.decode_step_seconds(slow, 1, 1002) + 0.002
    assert trace.first_token_s[0] == pytest.approx(t1, rel=1e-12)
    assert trace.finish_s[0] == pytest.approx(t3, rel=1e-12)
    assert trace.token_gaps(0) == pytest.approx([t2 - t1, t3 - t2], rel=1e-12)
    bound = engine.simulate(anchor, one, "whole", efficiency=rl.Efficiency(1.0, 1.0, 0.0))
    default = engine.simulate(anchor, one, "whole")
    assert bound.finish_s[0] == default.finish_s[0]  # factors of 1 and no overhead are the roofline itself
    assert rl.achieved(anchor) == rl.Efficiency(anchor.achieved_flops_fraction, anchor.achieved_bandwidth_fraction,
                                                anchor.iteration_overhead_s)
    with pytest.raises(ValueError, match="shares of peak"):
        rl.Efficiency(0.0, 1.0, 0.0)


def test_pd_backpressure_a_full_decode_gpu_holds_the_next_transfer_by_hand(anchor):
    """Two prompts at t=0, one prefill and one decode GPU whose memory holds one request: the second prompt is
    prefilled, then waits for the first request to finish before its KV may cross; the wait is in its TTFT."""
    prompt, out = np.array([2000, 1000]), np.array([10, 2])
    reqs = Requests(np.zeros(2), prompt, out)
    room = rl.bytes_per_request(anchor, 2010.0) * 1.5  # one request at a time
    trace = engine.simulate(anchor, reqs, "disagg", capacity_bytes=room)
    p0, p1 = rl.prefill_seconds(anchor, 2000), rl.prefill_seconds(anchor, 1000)
    x0, x1 = rl.transfer_seconds(anchor, 2000.0), rl.transfer_seconds(anchor, 1000.0)
    first0 = p0 + x0 + rl.decode_step_seconds(anchor, 1, 2000)  # decode convention: the decode GPU's first step
    end0 = first0 + sum(rl.decode_step_seconds(anchor, 1, c) for c in range(2001, 2010))
    assert end0 > p0 + p1  # request 1 is ready long before request 0 frees its memory
    first1 = end0 + x1 + rl.decode_step_seconds(anchor, 1, 1000)  # admitted only when request 0 frees its memory
    assert trace.first_token_s == pytest.approx([first0, first1], rel=1e-12)
    assert trace.admitted_s == pytest.approx([p0, end0], rel=1e-12)
    parts = {k: v[1] for k, v in trace.breakdown.items()}
    assert parts["queueing_s"] == pytest.approx(p0 + (end0 - (p0 + p1)), rel=1e-12)  # prefill queue + decode wait
    assert parts["prefill_s"] == pytest.approx(p1, rel=1e-12)
    assert parts["transfer_s"] == pytest.approx(x1, rel=1e-12)
    assert parts["decode_s"] == pytest.approx(trace.finish_s[1] - first1 + rl.decode_step_seconds(anchor, 1, 1000),
                                              rel=1e-12)


def test_pd_transfers_queue_on_the_decode_gpus_link_by_hand(anchor):
    """Two prompts prefilled at once on two prefill GPUs, one decode GPU: the second transfer starts when the first
    ends. DistServe's convention puts the first token at the prefill's end."""
    reqs = Requests(np.zeros(2), np.array([3000, 3000]), np.array([2, 2]))
    trace = engine.simulate(anchor, reqs, "disagg", prefill_gpus=2, first_token="prefill")
    p, x = rl.prefill_seconds(anchor, 3000), rl.transfer_seconds(anchor, 3000.0)
    assert trace.first_token_s == pytest.approx([p, p], rel=1e-12)
    assert trace.breakdown["transfer_s"] == pytest.approx([x, 2 * x], rel=1e-12)  # the second waited for the link
    # the first joins at p + x and decodes alone; the second joins at the first boundary after p + 2x
    step = rl.decode_step_seconds(anchor, 1, 3001)
    assert trace.finish_s[0] == pytest.approx(p + x + step, rel=1e-12)
    assert trace.finish_s[1] >= p + 2 * x + rl.decode_step_seconds(anchor, 1, 3001) - 1e-12
    one_token = Requests(np.zeros(1), np.array([3000]), np.array([1]))  # never reaches a decode GPU
    trace = engine.simulate(anchor, one_token, "disagg", first_token="prefill")
    assert trace.finish_s[0] == pytest.approx(p, rel=1e-12) and trace.breakdown["transfer_s"][0] == 0.0
    with pytest.raises(ValueError, match="first_token must be one of"):
        engine.simulate(anchor, one_token, "disagg", first_token="transfer")


def test_interference_is_what_another_requests_prefill_adds_to_an_iteration_by_hand(anchor):
    """R0 decodes alone; R1 arrives and is prefilled whole in an iteration that also gives R0 its token: R0's
    interference is that iteration minus a decode-only one."""
    reqs = Requests(np.array([0.0, 1e-9]), np.array([100, 4000]), np.array([3, 2]))
    trace = engine.simulate(anchor, reqs, "whole")
    t1 = rl.prefill_seconds(anchor, 100)  # R0 alone; R1 arrived during it
    mixed = rl.iteration_seconds(anchor, 1, 101.0, [(0, 4000)])
    alone = rl.iteration_seconds(anchor, 1, 101.0)
    assert trace.first_token_s[1] == pytest.approx(t1 + mixed, rel=1e-12)
    assert trace.breakdown["interference_s"][0] == pytest.approx(mixed - alone, rel=1e-9)
    assert trace.breakdown["queueing_s"][1] == pytest.approx(t1 - 1e-9, rel=1e-9)
    assert trace.breakdown["prefill_s"][1] == pytest.approx(mixed, rel=1e-12)


@pytest.mark.parametrize(("preset", "first_token"), [(p, "decode") for p in engine.PRESETS] + [("disagg", "prefill")])
def test_breakdown_sums_to_each_requests_e2el(inputs, preset, first_token):
    a, workloads, _ = inputs
    reqs = generate(workloads["chat_long"], 300, 4.0, seed=3)
    for eff in (rl.BOUND, rl.achieved(a)):
        trace = engine.simulate(a, reqs, preset, first_token=first_token, efficiency=eff, decode_gpus=2,
                                gpu_name="NVIDIA H100 SXM 80GB")
        total = sum(trace.breakdown[p] for p in engine.PARTS)
        assert np.abs(total - (trace.finish_s - reqs.arrival_s)).max() < 1e-9
        assert min(v.min() for v in trace.breakdown.values()) > -1e-9  # no part negative beyond float noise
        for i in range(len(reqs)):
            assert len(trace.token_gaps(i)) == reqs.output_tokens[i] - 1


def test_goodput_search_stops_at_the_first_miss_and_bisects():
    seen = []

    def attainment(rate):
        seen.append(rate)
        return 1.0 if rate <= 2.3 else 0.5

    g = sweep.goodput_search(attainment, [1.0, 2.0, 3.0, 4.0], 0.9, 4)
    assert seen[:3] == [1.0, 2.0, 3.0]  # 4.0 never simulated
    # bracket [2, 3]: 2.5 misses, 2.25 meets, 2.375 misses, 2.3125 misses
    assert (g["rate_per_gpu"], g["miss_rate"]) == (2.25, 2.3125)
    assert [p["rate_per_gpu"] for p in g["probes"]] == [2.5, 2.25, 2.375, 2.3125]
    assert sweep.goodput_search(lambda r: 1.0, [1.0, 2.0], 0.9, 4) == {
        "rate_per_gpu": 2.0, "bounded_by_sweep": True, "probes": [], "miss_rate": None}
    assert sweep.goodput_search(lambda r: 0.0, [1.0, 2.0], 0.9, 2)["rate_per_gpu"] == 0.0


def test_serving_json_compares_engines_and_splits_with_records():
    doc = json.loads((ROOT / "precomputed" / "serving.json").read_text(encoding="utf-8"))
    e, prov = doc["engines"], doc["provenance"]
    assert e["lesson_presets"] == engine.LESSON_PRESETS and e["first_token"] == "decode"
    assert set(e["step_times"]) == {"bound", "realistic"}
    for wid, by_step in e["goodput"].items():
        assert set(by_step["bound"]) == set(engine.PRESETS)
        for step, by_preset in by_step.items():
            for preset, rate in by_preset.items():
                assert prov[e["records"][wid][step][preset]]["value"] == rate
        for schedule, preset in engine.LESSON_PRESETS.items():  # at the bound, the sweep's own goodput
            assert by_step["bound"][preset] == doc["goodput"][wid][schedule]["rate_per_gpu"]
        assert all(by_step["realistic"][p] < by_step["bound"][p] for p in engine.PRESETS)  # slower steps, less
    splits = e["pd_splits"]
    assert splits["gpus"] == 4 and set(splits["bound"]) == {"1:3", "2:2", "3:1"}
    claims = {c["id"]: c for c in doc["claims"]}
    for step in ("bound", "realistic"):
        r = e["records"][splits["workload"]][step]
        gain = prov[r["sarathi"]]["value"] >= 1.5 * prov[r["orca"]]["value"]
        assert claims[f"engines.{step}.chunking_gain"]["holds"] == gain
    for row in doc["cells"]:  # the tail breakdown sums to the mean E2EL of its requests
        b = row["breakdown"]
        assert sum(b["all"].values()) * 1000 == pytest.approx(row["metrics"]["mean_e2el_ms"], rel=1e-9)


def test_cli_runs_presets_with_realistic_step_times_and_writes_the_breakdown(tmp_path):
    import subprocess
    import sys

    trace = tmp_path / "t.csv"
    trace.write_text("arrival_s,prompt_tokens,output_tokens\n0,1000,5\n0.01,3000,4\n0.02,500,3\n", encoding="utf-8")
    results = {}
    for name, flags in {"bound": [], "real": ["--efficiency", "realistic"],
                        "custom": ["--efficiency", "flops=0.6,bandwidth=0.8,overhead_ms=1"],
                        "prefill": ["--first-token", "prefill"]}.items():
        out = tmp_path / f"{name}.json"
        run = subprocess.run([sys.executable, "-m", "scripts.serving", "--preset", "disagg", "--trace", str(trace),
                              "--out", str(out), *flags], cwd=ROOT, capture_output=True, text=True)
        assert run.returncode == 0, run.stderr
        results[name] = json.loads(out.read_text(encoding="utf-8"))
    assert results["real"]["requests"] == results["custom"]["requests"]  # the anchor's realistic set, spelled out
    assert results["real"]["metrics"]["mean_e2el_ms"] > results["bound"]["metrics"]["mean_e2el_ms"]
    assert results["prefill"]["metrics"]["mean_ttft_ms"] < results["bound"]["metrics"]["mean_ttft_ms"]
    for row in results["bound"]["requests"]:
        assert sum(row[p] for p in engine.PARTS) == pytest.approx(row["finish_s"] - row["arrival_s"], abs=1e-12)


def test_paged_memory_preempts_the_latest_admitted_and_recomputes_by_hand(anchor):
    """Blocks of 4 tokens; room for five blocks and two states. Both 8-token prompts are admitted (two blocks each)
    and prefilled together; their first decode needs a third block each: six do not fit, so R1, the latest
    admitted, is preempted. R0 decodes alone to its end; R1 is readmitted, prefills its 8 + 1 tokens again (that
    recompute emits its second token) and decodes its last four."""
    mem = engine.Memory(block_size=4)
    block, state = 4 * sizes.kv_bytes_per_token(anchor), sizes.state_bytes_per_request(anchor)
    reqs = Requests(np.zeros(2), np.array([8, 8]), np.array([6, 6]))
    trace = engine.simulate(anchor, reqs, "whole", paged=True, memory=mem, capacity_bytes=5 * block + 2 * state + 1)
    d1 = rl.iteration_seconds(anchor, 0, 0.0, [(0, 8), (0, 8)])
    end0 = d1 + sum(rl.iteration_seconds(anchor, 1, float(c)) for c in range(9, 14))
    again = end0 + rl.iteration_seconds(anchor, 0, 0.0, [(0, 9)])
    end1 = again + sum(rl.iteration_seconds(anchor, 1, float(c)) for c in range(10, 14))
    assert list(trace.preemptions) == [0, 1]
    assert trace.first_token_s == pytest.approx([d1, d1], rel=1e-12)
    assert trace.finish_s == pytest.approx([end0, end1], rel=1e-12)
    times = trace.token_times(1)
    assert len(times) == 6 and times[1] == pytest.approx(again, rel=1e-12)
    assert trace.breakdown["preemption_s"][1] == pytest.approx(again - d1, rel=1e-12)  # the wait, then the recompute
    assert trace.breakdown["decode_s"][1] == pytest.approx(end1 - again, rel=1e-12)
    assert trace.breakdown["interference_s"][1] == pytest.approx(0.0, abs=1e-12)
    assert trace.peak_reserved_bytes <= trace.capacity_bytes
    assert engine.Memory().pool_bytes(anchor) == pytest.approx(
        0.9 * anchor.hbm_bytes - sizes.weight_bytes_total(anchor) - anchor.runtime_reserve_bytes, rel=1e-15)


@pytest.mark.parametrize(("preset", "paged"), [("vllm-v1", None), ("vllm-v0", None), ("sarathi", True),
                                               ("orca", True), ("disagg", True)])
def test_paged_memory_conserves_tokens_and_never_exceeds_the_pool(inputs, preset, paged):
    """A pool small enough that requests are preempted: every request still gets exactly its tokens, in order, the
    blocks in use never exceed the pool, and the breakdown still sums to each E2EL."""
    a, workloads, _ = inputs
    reqs = generate(workloads["chat_long"], 300, 8.0, seed=11)
    room = engine.Memory().blocks(float((reqs.prompt_tokens + reqs.output_tokens).max())) * 16 * \
        sizes.kv_bytes_per_token(a) * 2.5
    trace = engine.simulate(a, reqs, preset, paged=paged, capacity_bytes=room, gpu_name="NVIDIA H100 SXM 80GB")
    assert trace.preemptions.sum() > 0
    assert trace.peak_reserved_bytes <= trace.capacity_bytes
    for i in range(len(reqs)):
        times = trace.token_times(i) if reqs.output_tokens[i] > 1 else np.array([trace.first_token_s[i]])
        assert len(times) == reqs.output_tokens[i]
        assert np.all(np.diff(times) > 0) and times[-1] == trace.finish_s[i]
    total = sum(trace.breakdown[p] for p in engine.PARTS)
    assert np.abs(total - (trace.finish_s - reqs.arrival_s)).max() < 1e-9
    assert min(v.min() for v in trace.breakdown.values()) > -1e-9


def test_max_concurrency_sends_the_next_request_when_one_finishes_by_hand(anchor):
    """vllm bench serve --max-concurrency 1: the second request, due at t=0, is sent when the first finishes, and
    its latencies count from that send: alone on the GPU, its TTFT is its prefill."""
    reqs = Requests(np.zeros(2), np.array([1000, 2000]), np.array([3, 2]))
    trace = engine.simulate(anchor, reqs, "chunked", max_concurrency=1)
    end0 = sum(rl.iteration_seconds(anchor, 0, 0.0, [c]) for c in [(0, 512), (512, 488)]) + \
        rl.decode_step_seconds(anchor, 1, 1001) + rl.decode_step_seconds(anchor, 1, 1002)
    chunks = [(0, 512), (512, 512), (1024, 512), (1536, 464)]
    first1 = end0 + sum(rl.iteration_seconds(anchor, 0, 0.0, [c]) for c in chunks)
    assert trace.requests.arrival_s == pytest.approx([0.0, end0], rel=1e-12)
    assert trace.first_token_s[1] == pytest.approx(first1, rel=1e-12)
    assert trace.breakdown["queueing_s"][1] == pytest.approx(0.0, abs=1e-12)  # counted from the send, as vLLM does
    free = engine.simulate(anchor, reqs, "chunked")
    assert free.requests.arrival_s[1] == 0.0 and free.first_token_s[1] < first1
    with pytest.raises(ValueError, match="colocated"):
        engine.simulate(anchor, reqs, "disagg", max_concurrency=1)


def test_release_delays_send_each_held_request_its_turnaround_after_a_finish_by_hand(anchor):
    """A closed loop's client turnaround (loop.py release_delay): with --max-concurrency 1 the second request is sent
    0.05 s after the first one's finish, the third 0.02 s after the second's; alone on the GPU each one's TTFT is its
    prefill. With a cap of 2 and two requests finishing together, a request released sooner than the one before it
    is still sent after it (in order), and a refused delay names the keyword."""
    reqs = Requests(np.zeros(3), np.array([1000, 1000, 1000]), np.array([3, 3, 3]))
    trace = engine.simulate(anchor, reqs, "chunked", max_concurrency=1, release_delay_s=[0.0, 0.05, 0.02])
    end = trace.finish_s
    assert trace.requests.arrival_s == pytest.approx([0.0, end[0] + 0.05, end[1] + 0.02], rel=1e-12)
    alone = trace.first_token_s[0] - trace.requests.arrival_s[0]
    assert trace.first_token_s - trace.requests.arrival_s == pytest.approx([alone] * 3, rel=1e-12)
    pair = Requests(np.zeros(4), np.full(4, 100), np.full(4, 3))  # two prompts share one 512-token chunk
    t2 = engine.simulate(anchor, pair, "chunked", max_concurrency=2, release_delay_s=[0.0, 0.0, 0.03, 0.0])
    assert t2.finish_s[0] == t2.finish_s[1]
    assert t2.requests.arrival_s[2:] == pytest.approx([t2.finish_s[0] + 0.03] * 2, rel=1e-12)
    at_once = engine.simulate(anchor, pair, "chunked", max_concurrency=2)
    assert at_once.requests.arrival_s[2:] == pytest.approx([at_once.finish_s[0]] * 2, rel=1e-12)
    for bad, kw in (([0.0, 0.1], {"max_concurrency": 1}), ([0.0, -0.1, 0.0], {"max_concurrency": 1}),
                    ([0.0, 0.0, 0.0], {})):
        with pytest.raises(ValueError, match="release_delay_s"):
            engine.simulate(anchor, reqs, "chunked", release_delay_s=bad, **kw)


def test_random_settings_conserve_tokens_memory_and_the_breakdown(inputs):
    """20 seeded random settings (preset, paged or reserved memory and a small pool, step times, P/D split and
    convention, max concurrency): every request gets its tokens in order and ends at its last one, memory stays
    within the pool, and the breakdown sums to each E2EL."""
    a, workloads, _ = inputs
    rng = np.random.default_rng(20261202)
    for trial in range(20):
        wid = ("chat", "chat_long")[trial % 2]
        reqs = generate(workloads[wid], 120, float(rng.uniform(1, 12)), int(rng.integers(1_000_000)))
        preset = engine.PRESETS[trial % len(engine.PRESETS)]
        kw = {}
        if preset == "disagg":
            kw = {"prefill_gpus": int(rng.integers(1, 3)), "decode_gpus": int(rng.integers(1, 3)),
                  "first_token": engine.FIRST_TOKEN[trial % 2]}
        elif trial % 3 == 0:
            kw = {"max_concurrency": int(rng.integers(1, 20))}
        paged = bool(rng.integers(0, 2))
        room = None
        if paged:
            room = engine.Memory().blocks(float((reqs.prompt_tokens + reqs.output_tokens).max())) * 16 * \
                sizes.kv_bytes_per_token(a) * float(rng.uniform(1.2, 4)) + 2 * sizes.state_bytes_per_request(a)
        eff = rl.achieved(a) if trial % 4 == 0 else rl.BOUND
        trace = engine.simulate(a, reqs, preset, paged=paged, capacity_bytes=room, efficiency=eff,
                                gpu_name="NVIDIA H100 SXM 80GB", **kw)
        r = trace.requests
        total = sum(trace.breakdown[p] for p in engine.PARTS)
        assert np.abs(total - (trace.finish_s - r.arrival_s)).max() < 1e-9, (trial, preset)
        assert trace.peak_reserved_bytes <= trace.capacity_bytes
        for i in range(len(r)):
            times = trace.token_times(i) if r.output_tokens[i] > 1 else np.array([trace.first_token_s[i]])
            assert len(times) == r.output_tokens[i] and np.all(np.diff(times) >= 0), (trial, preset, i)
            assert times[-1] == trace.finish_s[i] and trace.first_token_s[i] >= r.arrival_s[i]
