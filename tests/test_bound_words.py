"""The request path's "受带宽限制 / 受算力限制" follows the roofline (issue 80, item 1): the words are chosen from
readouts (scripts/model/readouts.py decode_compute_bound_at_batch, prefill_compute_bound), not typed in the template."""
from dataclasses import replace

import pytest

from scripts.model import roofline as rl
from scripts.model.readouts import readouts
from tests.conftest import NEW_TOKENS, ROOT

H20 = {"hbm_bytes": 96e9, "hbm_bandwidth_bytes_per_s": 4.0e12, "peak_bf16_flops": 148e12}  # the H20


def at(anchor, batch, context=4096, prompt=32768):
    return readouts(anchor, batch=batch, context_tokens=context, tpot_slo_ms=50, prompt_tokens=prompt,
                    chunk_tokens=512, new_tokens=NEW_TOKENS)


def test_a_gpu_with_little_compute_makes_a_large_batch_compute_bound(anchor):
    h20 = replace(anchor, **H20)
    r = at(h20, 96)
    assert r["effective_batch"] == 96
    by_bytes = r["decode_gb_at_batch"] * 1e9 / H20["hbm_bandwidth_bytes_per_s"]
    by_flops = r["decode_gflop_at_batch"] * 1e9 / H20["peak_bf16_flops"]
    assert by_flops > by_bytes and r["decode_compute_bound_at_batch"] == 1.0
    assert r["step_ms_at_batch"] == pytest.approx(by_flops * 1e3)


def test_one_request_is_bandwidth_bound_and_a_long_prompt_compute_bound(anchor):
    r = at(anchor, 1)
    assert r["decode_compute_bound_at_batch"] == 0.0 and r["prefill_compute_bound"] == 1.0
    assert at(anchor, 1, prompt=1)["prefill_compute_bound"] == 0.0  # one token's prefill only reads the weights


def test_the_template_types_no_bound_words_outside_the_macro():
    text = (ROOT / "templates" / "index.html.j2").read_text(encoding="utf-8")
    macro = text[text.index("{% macro bound_words"):text.index("{% endmacro %}")]
    assert text.count("受带宽限制") == macro.count("受带宽限制") == 1
    assert text.count("受算力限制") == macro.count("受算力限制") == 1


def test_the_side_is_the_longer_time(anchor):
    unit = replace(anchor, hbm_bandwidth_bytes_per_s=1.0, peak_bf16_flops=1.0)
    assert rl.compute_bound(unit, 1.0, 2.0) is True and rl.compute_bound(unit, 2.0, 1.0) is False
