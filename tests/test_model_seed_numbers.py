"""Every derived number the seed states, reproduced from anchor-model.json at the seed's display rounding."""
import pytest

from scripts.common.display import format_number
from scripts.model import roofline as rl
from scripts.model import sizes
from scripts.model import timeline as tl

CTX = 4096


@pytest.mark.parametrize("batch, tok_s, step_ms", [(1, "65", "15.5"), (8, "480", "16.7"), (27, "1,357", "19.9"),
                                                   (58, "2,304", "25.2")])
def test_batch_table(anchor, batch, tok_s, step_ms):
    assert format_number(rl.decode_throughput_tok_s(anchor, batch, CTX), "int") == tok_s
    assert format_number(rl.decode_step_seconds(anchor, batch, CTX) * 1e3, "f1") == step_ms


def test_memory_cap_is_58_at_4096(anchor):
    assert rl.max_batch_by_memory(anchor, CTX) == 58


def test_gain_from_batch_1_to_the_cap_is_about_35x(anchor):
    gain = rl.throughput_gain_over_batch1(anchor, 58, CTX)
    assert 35 <= gain < 36  # the seed's "35x" is 2,304 / 65 of its rounded displays; unrounded it is 35.6


def test_tpot_20ms_allows_27_requests_at_1357_tok_s(anchor):
    b = rl.max_batch_under_slo(anchor, CTX, 0.020)
    assert b == 27
    assert format_number(rl.decode_throughput_tok_s(anchor, b, CTX), "int") == "1,357"


def test_tpot_30ms_fits_all_58_at_about_40_tok_s_each(anchor):
    b = rl.max_batch_under_slo(anchor, CTX, 0.030)
    assert b == 58
    assert format_number(rl.per_user_tok_s(anchor, b, CTX), "int") == "40"


def test_about_10_fit_at_32k(anchor):
    assert rl.max_batch_by_memory(anchor, 32768) == 10


def test_running_users_are_cap_minus_one(anchor):
    assert tl.running_decoders(anchor, CTX) == 57


def test_whole_step_prefill_of_32k_stalls_1_91_s(anchor):
    assert format_number(tl.whole_prefill_stall_s(anchor, CTX, 32768), "f2") == "1.91"


def test_chunk_512_gives_36_ms_steps_and_2_11_s_ttft(anchor):
    assert format_number(tl.chunked_max_step_s(anchor, CTX, 32768, 512) * 1e3, "int") == "36"
    assert format_number(tl.chunked_ttft_s(anchor, CTX, 32768, 512), "f2") == "2.11"


def test_chunk_8192_longer_steps_shorter_ttft(anchor):
    assert tl.chunked_max_step_s(anchor, CTX, 32768, 8192) > tl.chunked_max_step_s(anchor, CTX, 32768, 512)
    assert tl.chunked_ttft_s(anchor, CTX, 32768, 8192) < tl.chunked_ttft_s(anchor, CTX, 32768, 512)


def test_131072_prompt_in_one_step_takes_over_10_s(anchor):
    assert tl.whole_prefill_stall_s(anchor, CTX, 131072) > 10


def test_hybrid_attention_accounting(anchor):
    assert sizes.full_attention_layers(anchor) == 16 and sizes.linear_attention_layers(anchor) == 48
    assert sizes.kv_bytes_per_token(anchor) == 65536
    assert sizes.state_bytes_per_request(anchor) == 150_994_944
    assert sizes.total_params(anchor) / 1e9 == pytest.approx(26.89, abs=0.01)
    assert sizes.params_read_per_step(anchor) / 1e9 == pytest.approx(25.62, abs=0.01)


def test_decode_is_memory_bound_across_the_slider_range(anchor):
    for ctx in (1024, 4096, 131072):
        for b in range(1, rl.max_batch_by_memory(anchor, ctx) + 1):
            assert rl.decode_step_bytes(anchor, b, ctx) / anchor.hbm_bandwidth_bytes_per_s > \
                rl.decode_step_flops(anchor, b, ctx) / anchor.peak_bf16_flops


def test_precomputed_json_carries_the_seed_numbers(precomputed):
    p = precomputed["provenance"]
    assert p["frontier.c4096.b58.throughput_tok_s"]["display"] == "2,304"
    assert p["slo.20ms.max_batch"]["display"] == "27"
    assert p["timeline.chunk512.ttft_s"]["display"] == "2.11"
    assert p["mem.cap.c32768"]["display"] == "10"
