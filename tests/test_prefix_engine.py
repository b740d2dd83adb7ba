"""Prefix caching in the engine (scripts/serving/engine/kv.py paged+apc and reserved+slots), on hand-worked cases:
requests sent one after another so that each finds the cache as the one before left it. Block size 16; times on the
roofline bound of the anchor (no overhead), so a request alone takes exactly its prefill's roofline time to its
first token."""
import numpy as np
import pytest

from scripts.model import roofline as rl
from scripts.model import sizes
from scripts.serving.engine import kv, simulate
from scripts.serving.workloads.workload import Requests

A, B, C = 101, 202, 303  # content ids of shared texts


def reqs(arrivals, segments, outputs, answer_ids=None):
    prompts = [sum(n for _, n in s) for s in segments]
    return Requests(np.array(arrivals, dtype=float), np.array(prompts), np.array(outputs), tuple(segments),
                    answer_ids)


def apart(n):  # far enough apart that each request runs alone
    return [1000.0 * k for k in range(n)]


def test_a_repeated_prefix_hits_whole_blocks_only(anchor):
    r = reqs(apart(3), [[(A, 40), (1, 9)], [(A, 40), (2, 30)], [(B, 40), (3, 5)]], [4, 4, 4])
    t = simulate(anchor, r, "vllm-v1", prefix_caching=True)
    # request 1 shares 40 tokens with request 0: two full blocks of 16 (the third block holds A's last 8 and 8 of
    # request 0's own text, a different block); request 2 shares nothing
    assert t.cached_tokens.tolist() == [0, 32, 0]


def test_the_cache_is_off_unless_asked_and_then_saves_the_prefill(anchor):
    r = reqs(apart(2), [[(A, 4096), (1, 64)], [(A, 4096), (2, 64)]], [2, 2])
    off = simulate(anchor, r, "vllm-v1")
    on = simulate(anchor, r, "vllm-v1", prefix_caching=True)
    assert off.cached_tokens is None
    assert on.cached_tokens.tolist() == [0, 4096]
    cost = rl.iteration_cost(anchor)
    full, rest = cost.seconds(0, 0.0, [(0, 4160)]), cost.seconds(0, 0.0, [(4096, 64)])
    ttft_off, ttft_on = (x.first_token_s[1] - x.requests.arrival_s[1] for x in (off, on))
    assert ttft_off == pytest.approx(full, rel=1e-12)
    assert ttft_on == pytest.approx(rest, rel=1e-12)  # attention still spans the cached 4,096 tokens
    assert on.prefill_saved_s.tolist() == pytest.approx([0.0, full - rest], rel=1e-12)


def test_a_whole_prompt_cached_still_computes_its_last_token(anchor):
    r = reqs(apart(2), [[(A, 64)], [(A, 64)]], [2, 2])
    t = simulate(anchor, r, "vllm-v1", prefix_caching=True)
    assert t.cached_tokens.tolist() == [0, 48]  # at most (64 - 1) // 16 = 3 blocks: the last token's logits


def test_the_next_turn_hits_the_answer_before_it(anchor):
    """Turn 2 re-sends turn 1's prompt (40 tokens) and its 20-token answer: 59 tokens had KV when turn 1 left (its
    last token was never fed back), 3 full blocks of them, all shared with turn 2."""
    r = reqs(apart(2), [[(A, 40)], [(A, 40), (900, 20), (B, 10)]], [20, 4], answer_ids=(900, 901))
    t = simulate(anchor, r, "vllm-v1", prefix_caching=True)
    assert t.cached_tokens.tolist() == [0, 48]


def test_the_least_recently_used_prefix_is_evicted_first(anchor):
    """A pool of 294 blocks (each request also holds its 144-block recurrent state, which the pool does not book).
    A and B (65 tokens: 4 full blocks and a partial one) leave 286 uncached blocks at the free queue's head and
    their full blocks at its tail, freed in reverse: A's #3, #2, #1, #0, then B's #3 .. #0. 32 distinct requests of
    145 tokens (9 full blocks + 1) each take 10 blocks and give back their partial one at the head: 9 fewer uncached
    blocks each, 7 left before the 32nd, which evicts A's #3, #2, #1. A again hits its #0 (16 tokens) and, taking 4
    new blocks, evicts the partial one and B's #3, #2, #1; B again hits its #0."""
    block_bytes = 16 * sizes.kv_bytes_per_token(anchor)
    segments = [[(A, 64), (1, 1)], [(B, 64), (2, 1)]]
    segments += [[(1000 + k, 144), (2000 + k, 1)] for k in range(32)]
    segments += [[(A, 64), (3, 1)], [(B, 64), (4, 1)]]
    r = reqs(apart(len(segments)), segments, [1] * len(segments))
    t = simulate(anchor, r, "vllm-v1", prefix_caching=True, capacity_bytes=294 * block_bytes)
    assert t.cached_tokens.tolist() == [0] * 34 + [16, 16]
    roomy = simulate(anchor, r, "vllm-v1", prefix_caching=True, capacity_bytes=400 * block_bytes)
    assert roomy.cached_tokens.tolist()[-2:] == [64, 64]  # a larger pool evicts nothing


def test_a_preempted_request_hits_its_own_blocks_when_readmitted(anchor, monkeypatch):
    hits = []
    original = kv.PrefixPagedKV.prefix_hit

    def spy(self, i, tokens):
        got = original(self, i, tokens)
        hits.append((i, tokens, got))
        return got

    monkeypatch.setattr(kv.PrefixPagedKV, "prefix_hit", spy)
    block_bytes = 16 * sizes.kv_bytes_per_token(anchor)
    state = sizes.state_bytes_per_request(anchor)
    capacity = 2 * state + 40 * block_bytes  # two requests fit at their start, not at their end
    r = reqs([0.0, 0.0], [[(1, 256)], [(2, 256)]], [200, 200])
    t = simulate(anchor, r, "vllm-v1", prefix_caching=True, capacity_bytes=capacity)
    assert t.preemptions.sum() >= 1
    again = [(i, tokens, hit) for i, tokens, hit in hits if tokens > 256]  # readmissions: prompt + generated so far
    assert again
    for _, tokens, hit in again:  # everything it had computed (tokens - 1: the newest one was never fed back)
        assert hit == (tokens - 1) // 16 * 16


def test_llama_cpp_takes_the_slot_sharing_the_longest_prefix(anchor):
    """Two slots; A and B fill them; a later A request goes to A's slot (similarity 64/80 > 0.1) and reuses 64
    tokens; a request sharing nothing takes the least recently used slot and reuses none."""
    segments = [[(A, 64), (1, 16)], [(B, 64), (2, 16)], [(A, 64), (3, 16)], [(C, 64), (4, 16)], [(B, 64), (5, 16)]]
    r = reqs(apart(5), segments, [1, 1, 1, 1, 1])
    t = simulate(anchor, r, "llama.cpp", max_batch=2, max_num_batched_tokens=2048, prefix_caching=True)
    # 3 hits A's slot; 4 (C) takes the LRU idle slot, B's (used at t = 1000, A's at 2000); 5 (B) then finds no slot
    # holding B: A's slot holds A, the other C; similarity 0 both: the LRU one, A's
    assert t.cached_tokens.tolist() == [0, 0, 64, 0, 0]


def test_refusals_say_what_prefix_caching_needs(anchor):
    r = reqs(apart(1), [[(A, 10)]], [2])
    with pytest.raises(ValueError, match="vLLM .paged memory"):
        simulate(anchor, r, "orca", prefix_caching=True)
    with pytest.raises(ValueError, match="not P/D"):
        simulate(anchor, r, "disagg", prefix_caching=True)
    bad = Requests(np.array([0.0]), np.array([11]), np.array([2]), (((A, 10),),))
    with pytest.raises(ValueError, match="request 0: its segments hold 10 tokens, its prompt 11"):
        simulate(anchor, bad, "vllm-v1", prefix_caching=True)
    with pytest.raises(ValueError, match="carry their prompts' segments"):
        simulate(anchor, Requests(np.array([0.0]), np.array([10]), np.array([2])), "vllm-v1", prefix_caching=True)


def test_the_cli_serves_a_mooncake_trace_with_prefix_caching(tmp_path):
    """Request 1 repeats request 0's three blocks (its third partial, 476 tokens) and adds one: 93 full blocks of
    16 are shared (request 0's 1,519 computed tokens fill 94 blocks, the 94th mixing its prompt's last 12 tokens with
    its answer); request 2 shares the first 512-token block."""
    import json
    import subprocess
    import sys

    from tests.conftest import ROOT

    trace = tmp_path / "slice.jsonl"
    trace.write_text("\n".join(json.dumps(r) for r in [
        {"timestamp": 0, "input_length": 1500, "output_length": 20, "hash_ids": [1, 2, 3]},
        {"timestamp": 5000, "input_length": 1600, "output_length": 20, "hash_ids": [1, 2, 3, 4]},
        {"timestamp": 9000, "input_length": 700, "output_length": 20, "hash_ids": [1, 9]}]) + "\n")
    out = tmp_path / "out.json"
    subprocess.run([sys.executable, "-m", "scripts.serving", "--schedule", "vllm-v1", "--trace", str(trace),
                    "--prefix-caching", "--out", str(out), "--anchor", str(ROOT / "anchor-model.json")],
                   cwd=ROOT, check=True, capture_output=True)
    doc = json.loads(out.read_text())
    assert [r["cached_tokens"] for r in doc["requests"]] == [0, 1488, 512]
    assert doc["prefix_cache"]["token_hit_rate"] == pytest.approx(2000 / 3800)
    assert doc["prefix_cache"]["request_hit_rate"] == pytest.approx(2 / 3)


def test_admission_by_class_keeps_a_burst_of_long_prompts_from_taking_every_iteration(anchor):
    """schedulers.py class_budget: prompts of at least 4,096 tokens share 1,024 of vLLM V1's 8,192-token budget.
    Hand-worked chunks: with two long prompts ahead of a short one, the first long takes its class's 1,024, the
    second finds the share spent and is passed over, the short one takes its 300 tokens in the same iteration."""
    from scripts.serving.engine.schedulers import VllmV1

    s = VllmV1(1024, 8192)
    s.class_budget = (4096, 1024)
    assert s.prefill_chunks([0, 1, 2], [32768, 32768, 300], [0, 0, 0], 0) == [(0, 0, 1024), (2, 0, 300)]
    s.class_budget = None
    assert s.prefill_chunks([0, 1, 2], [32768, 32768, 300], [0, 0, 0], 0) == [(0, 0, 8192)]
    # in a run: 8 long prompts arrive together, then short ones; the short ones' first tokens come far sooner
    arrivals = [0.0] * 8 + [0.05 * k + 0.1 for k in range(20)]
    segments = [[(5000 + i, 32768)] for i in range(8)] + [[(6000 + i, 300)] for i in range(20)]
    r = reqs(arrivals, segments, [16] * 28)
    plain = simulate(anchor, r, "vllm-v1")
    split = simulate(anchor, r, "vllm-v1", class_budget=(4096, 1024))
    short_ttft = [(t.first_token_s - t.requests.arrival_s)[8:].max() for t in (plain, split)]
    long_ttft = [(t.first_token_s - t.requests.arrival_s)[:8].max() for t in (plain, split)]
    assert short_ttft[1] < short_ttft[0] / 3 and long_ttft[1] > long_ttft[0]  # 15.5 s -> 4.6 s; the long pay
    with pytest.raises(ValueError, match="class_budget applies"):
        simulate(anchor, r, "orca", class_budget=(4096, 1024))
    with pytest.raises(ValueError, match="less one"):
        simulate(anchor, r, "vllm-v1", class_budget=(4096, 8192))
