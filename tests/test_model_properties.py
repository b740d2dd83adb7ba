"""Monotonicity and consistency properties of the roofline and timeline math."""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scripts.model import roofline as rl
from scripts.model import sizes
from scripts.model import timeline as tl

contexts = st.sampled_from([1 << k for k in range(10, 18)])
prompts = st.sampled_from([1 << k for k in range(10, 18)])
chunks = st.sampled_from([1 << k for k in range(7, 15)])


@settings(max_examples=60, deadline=None)
@given(ctx=contexts, b=st.integers(1, 200))
def test_step_time_rises_with_batch_and_context(anchor, ctx, b):
    assert rl.decode_step_seconds(anchor, b + 1, ctx) > rl.decode_step_seconds(anchor, b, ctx)
    assert rl.decode_step_seconds(anchor, b, ctx * 2) > rl.decode_step_seconds(anchor, b, ctx)


@settings(max_examples=40, deadline=None)
@given(ctx=contexts)
def test_cap_never_exceeds_memory(anchor, ctx):
    cap = rl.max_batch_by_memory(anchor, ctx)
    weights = sizes.weight_bytes_total(anchor) + anchor.runtime_reserve_bytes
    assert weights + cap * rl.bytes_per_request(anchor, ctx) <= anchor.hbm_bytes
    assert weights + (cap + 1) * rl.bytes_per_request(anchor, ctx) > anchor.hbm_bytes


@settings(max_examples=40, deadline=None)
@given(ctx=contexts, slo_ms=st.integers(5, 100))
def test_max_batch_under_slo_is_the_largest_that_meets_it(anchor, ctx, slo_ms):
    b = rl.max_batch_under_slo(anchor, ctx, slo_ms / 1e3)
    assert 0 <= b <= rl.max_batch_by_memory(anchor, ctx)
    if b:
        assert rl.decode_step_seconds(anchor, b, ctx) <= slo_ms / 1e3
    if b < rl.max_batch_by_memory(anchor, ctx):
        assert rl.decode_step_seconds(anchor, b + 1, ctx) > slo_ms / 1e3


@settings(max_examples=40, deadline=None)
@given(prompt=prompts, chunk=chunks)
def test_chunked_ttft_is_at_least_whole_step_ttft(anchor, prompt, chunk):
    assert tl.chunked_ttft_s(anchor, 4096, prompt, chunk) >= tl.whole_ttft_s(anchor, 4096, prompt) * (1 - 1e-12)


@settings(max_examples=40, deadline=None)
@given(prompt=st.sampled_from([1 << k for k in range(14, 18)]), k=st.integers(7, 12))
def test_bigger_chunks_give_longer_stalls_and_shorter_ttft(anchor, prompt, k):
    small, big = 1 << k, 1 << (k + 1)
    stall_small, stall_big = (tl.chunked_max_step_s(anchor, 4096, prompt, c) for c in (small, big))
    # Tiny chunks leave the step memory-bound (the same bytes either way); past that, bigger is strictly longer.
    assert stall_big >= stall_small
    if k >= 9:
        assert stall_big > stall_small
    assert tl.chunked_ttft_s(anchor, 4096, prompt, big) < tl.chunked_ttft_s(anchor, 4096, prompt, small)


def test_chunk_larger_than_prompt_is_the_whole_step(anchor):
    assert tl.chunked_ttft_s(anchor, 4096, 1024, 16384) == tl.whole_ttft_s(anchor, 4096, 1024)


def test_timeline_lanes_are_contiguous_and_positive(anchor):
    bars = tl.lanes(anchor, 4096, 32768, 512)
    for lane in ("whole", "chunked", "disagg"):
        mine = [b for b in bars if b["lane"] == lane]
        assert all(b["end_s"] > b["start_s"] >= 0 for b in mine)
        assert all(abs(x["end_s"] - y["start_s"]) < 1e-12 for x, y in zip(mine, mine[1:], strict=False))


def test_the_simulators_iteration_cost_is_bit_identical_to_the_roofline(anchor):
    """roofline.IterationCost (the anchor's constants read once, for the serving engine) gives exactly
    iteration_seconds, for mixed iterations and for runs of pure-decode ones (its vectorised path), at the bound
    and derated; and a decode-only iteration is decode_step_seconds."""
    import numpy as np

    rng = np.random.default_rng(3)
    for a in (anchor, rl.derated(anchor, rl.Efficiency(0.6, 0.8, 0.0))):
        cost = rl.IterationCost(a)
        for _ in range(300):
            decoders = int(rng.integers(0, 200))
            ctx = float(rng.integers(0, 4000)) * decoders
            chunks = [(float(rng.integers(0, 3) * 512), float(rng.integers(1, 2048)))
                      for _ in range(rng.integers(0, 4))]
            assert cost.seconds(decoders, ctx, chunks) == rl.iteration_seconds(a, decoders, ctx, chunks)
        sums = np.arange(50, dtype=float) * 37 + 12345.0
        expect = [rl.iteration_seconds(a, 37, float(c)) for c in sums]
        assert cost.decode_run(37, sums).tolist() == expect
        assert rl.iteration_seconds(a, 37, 37 * 4096.0) == pytest.approx(rl.decode_step_seconds(a, 37, 4096.0),
                                                                         rel=1e-12)


def test_a_cached_prefix_is_not_prefilled_but_still_attended_to(anchor):
    """timeline.py with `cached`: the whole-prefill step is one chunk from the cached position (its tokens attend to
    the whole prompt: dearer than prefilling the new tokens alone, far cheaper than the whole prompt); chunks start
    there; cached = 0 is the uncached timeline, bar for bar."""
    ctx, p, new = 4096, 65536, 4000
    n = tl.running_decoders(anchor, ctx)
    cached = tl.cached_prefix(p, new)
    assert cached == 61536 and tl.cached_prefix(1024, new) == 0
    hit = tl.whole_ttft_s(anchor, ctx, p, cached)
    assert hit == rl.mixed_step_seconds(anchor, n, ctx, new, cached)
    assert rl.mixed_step_seconds(anchor, n, ctx, new, 0) < hit < tl.whole_ttft_s(anchor, ctx, p) / 5
    assert tl.chunk_starts(p, 512, cached) == list(range(cached, p, 512))
    assert tl.disagg_ttft_s(anchor, p, cached) == rl.mixed_step_seconds(anchor, 0, 0.0, new, cached) \
        + rl.transfer_seconds(anchor, p)  # the decode GPU still receives the whole prompt's KV
    assert tl.lanes(anchor, ctx, 32768, 512, 0) == tl.lanes(anchor, ctx, 32768, 512)
    saved = tl.prefix_saved_serves(anchor, ctx, p, new)
    assert saved == int((tl.whole_ttft_s(anchor, ctx, p) - hit) // hit) and saved >= 5
