"""All of lesson.js's roofline math held equal to the Python of the same meaning, not only the readouts: the
timeline's bars (`lanes`, scripts/model/timeline.py) and the frontier's rows (`frontierRows`, the per-batch rows of
scripts/lesson/precomputed.py `frontier_rows` up to the memory cap), on 120 generated slider states each, within 1e-9
relative. The states come from a seeded generator over the sliders' own ranges (anchor-model.json `scenario`)."""
import numpy as np
import pytest

from scripts.lesson.precomputed import frontier_rows
from scripts.model import roofline as rl
from scripts.model.timeline import lanes

pytestmark = pytest.mark.browser
CASES = 120


def slider_states(anchor_doc, seed: int) -> list[dict]:
    """Log-uniform over each slider's range (the sliders step in powers of two; the math must hold between them)."""
    rng = np.random.default_rng(seed)
    sc = anchor_doc["scenario"]

    def draw(name):
        lo, hi = sc[name]["min"], sc[name]["max"]
        return int(round(float(np.exp(rng.uniform(np.log(lo), np.log(hi))))))

    states = [{"context": draw("context_tokens"), "prompt": draw("prompt_tokens"), "chunk": draw("chunk_tokens"),
               "slo_ms": float(rng.uniform(sc["tpot_slo_ms"]["min"], sc["tpot_slo_ms"]["max"]))} for _ in range(CASES)]
    for s in states:  # half with a cached prefix (the timeline's switch), of any length short of the prompt
        s["cached"] = int(rng.integers(0, s["prompt"])) if rng.random() < 0.5 else 0
    return states


def close(a: float, b: float) -> bool:
    return a == pytest.approx(b, rel=1e-9, abs=1e-15)


def test_lanes_equal_the_python_timeline(lesson_page, anchor, anchor_doc):
    page = lesson_page
    states = slider_states(anchor_doc, 2026)
    got = page.evaluate("cs => cs.map(c => window.lessonMath.lanes(c.context, c.prompt, c.chunk, c.cached))", states)
    bars = 0
    for state, js in zip(states, got, strict=True):
        want = lanes(anchor, state["context"], state["prompt"], state["chunk"], state["cached"])
        assert len(js) == len(want), state
        for j, w in zip(js, want, strict=True):
            assert (j["lane"], j["kind"]) == (w["lane"], w["kind"]), state
            assert close(j["start_s"], w["start_s"]) and close(j["end_s"], w["end_s"]), (state, j, w)
            assert close(j["duration_ms"], (w["end_s"] - w["start_s"]) * 1e3), (state, j, w)
        bars += len(js)
    print(f"\nlanes: {bars} bars compared")
    assert bars > 20 * CASES  # chunked prefill of long prompts: many bars, all compared


def test_frontier_rows_equal_the_python_frontier(lesson_page, anchor, anchor_doc):
    page = lesson_page
    states = slider_states(anchor_doc, 2027)
    got = page.evaluate("cs => cs.map(c => window.lessonMath.frontierRows(c.context, c.slo_ms))", states)
    rows, statuses = 0, set()
    for state, js in zip(states, got, strict=True):
        cap = rl.max_batch_by_memory(anchor, state["context"])
        want = [r for r in frontier_rows(anchor, [state["context"]], cap) if r["fits"]]
        assert len(js) == len(want) == cap, state
        for j, w in zip(js, want, strict=True):
            assert j["batch"] == w["batch"] and j["is_cap"] == (w["batch"] == cap)
            assert close(j["step_ms"], w["step_ms"]) and close(j["throughput_tok_s"], w["throughput_tok_s"]), (state, j)
            assert j["slo_status"] == ("达标" if w["step_ms"] <= state["slo_ms"] else "超标"), (state, j, w)
            statuses.add(j["slo_status"])
        rows += len(js)
    assert statuses == {"达标", "超标"} and rows > CASES
