"""The server's slots decide how llama.cpp cuts an iteration into ubatches (stepmodel.split_equal, issue 43): the
cut as llama_batch_allocr::split_equal makes it, the price the step model puts on it, the slots' starting order in
the simulation, and the prediction that follows them."""
import json

import numpy as np
import pytest

from scripts.realengine.analyses import predict, stepfit, stepmodel
from scripts.realengine.analyses.settings import comparison_settings
from scripts.realengine.analyses.stepmodel import StepModel, split_equal
from scripts.realengine.investigations.slot_sweep import predicted_from_contiguous
from scripts.record.anchor_file import load
from scripts.record.inputs import InputError, read_json
from scripts.serving.engine.prefix import LlamaSlots
from tests.conftest import ROOT

D = StepModel((1.0, 2.0, 4.0, 8.0), (0.010, 0.020, 0.030, 0.040), 0.008, 0.001, 0.0, 0.0, 0.001)
SERVER = {"batch_tokens": 2048, "slots": 8, "ubatch_tokens": 512}


def sizes(ubatches):
    return [[(slot, k) for slot, _, k, _ in ub] for ub in ubatches]


def test_consecutive_slots_share_a_ubatch_and_others_do_not():
    assert sizes(split_equal([0, 1, 2, 3], [], 512)) == [[(0, 1), (1, 1), (2, 1), (3, 1)]]
    assert sizes(split_equal([4, 0, 2], [], 512)) == [[(0, 1)], [(2, 1)], [(4, 1)]]
    assert sizes(split_equal([0, 2, 3, 4, 6, 7], [], 512)) == [[(0, 1)], [(2, 1), (3, 1), (4, 1)], [(6, 1), (7, 1)]]
    assert sizes(split_equal([7, 0], [], 512)) == [[(0, 1)], [(7, 1)]]  # ids wrap to no run


def test_a_prompt_after_a_decoding_slot_gives_it_one_token_and_runs_the_rest_alone():
    cut = split_equal([0, 1], [(2, 100.0, 64)], 512)
    assert sizes(cut) == [[(0, 1), (1, 1), (2, 1)], [(2, 63)]]
    assert cut[1][0][1] == 101.0 and cut[1][0][3]  # the rest starts a token later, and is prompt work
    assert sizes(split_equal([0], [(3, 0.0, 64)], 512)) == [[(0, 1)], [(3, 64)]]


def test_prompts_in_neighbouring_slots_take_equal_shares_within_the_ubatch_size():
    assert sizes(split_equal([], [(3, 0.0, 100), (4, 0.0, 300)], 512)) == [[(3, 100), (4, 100)], [(4, 200)]]
    assert sizes(split_equal([], [(0, 0.0, 1200)], 512)) == [[(0, 512)], [(0, 512)], [(0, 176)]]
    assert sizes(split_equal([], [(0, 0.0, 400), (1, 0.0, 400)], 512)) == [[(0, 256), (1, 256)], [(0, 144), (1, 144)]]


def test_u_runs_from_d_at_one_slot_to_d_at_every_slot_and_prices_each_ubatch():
    m = stepmodel.with_ubatches(D, 8, 512)
    assert m.ubatch_seconds[0] == pytest.approx(0.010) and m.ubatch_seconds[-1] == pytest.approx(0.040)
    assert m.ubatch(2) == pytest.approx(0.010 + 0.030 / 7)
    assert m.decode_run(3, [0.0], [0, 2, 4])[0] == pytest.approx(3 * 0.010)  # three lone steps
    assert m.decode_run(3, [0.0], [0, 1, 2])[0] == pytest.approx(m.ubatch(3))
    assert m.decode_run(3, [0.0])[0] == pytest.approx(float(D.decode(3)))  # no slots: D as before
    assert m.seconds(3, 0.0, slots=[5, 6, 7]) == pytest.approx(m.ubatch(3))
    # a 64-token prompt after two decoding slots: a ubatch of three, then 63 tokens alone
    alone = m.seconds(2, 0.0, [(0, 64)], [0, 1], [2])
    assert alone == pytest.approx(m.ubatch(3) + D.chunk(0, 63))
    apart = m.seconds(2, 0.0, [(0, 64)], [0, 1], [5])
    assert apart == pytest.approx(m.ubatch(2) + D.chunk(0, 64))
    assert StepModel.from_dict(json.loads(json.dumps(m.as_dict()))) == m
    assert "ubatch_seconds" not in D.as_dict()  # a model without U writes what it wrote before


def test_u_needs_d_at_every_slot():
    with pytest.raises(ValueError, match="D at every slot"):
        stepmodel.with_ubatches(StepModel((1.0, 2.0, 4.0), (0.01, 0.02, 0.03), 0.0, 0.0, 0.0, 0.0, 0.0), 8, 512)
    with pytest.raises(ValueError, match="U needs"):
        StepModel((1.0, 2.0), (0.01, 0.02), 0.0, 0.0, 0.0, 0.0, 0.0, ubatch_seconds=(0.02, 0.01), ubatch_tokens=512)


def test_the_slots_start_in_the_given_order_and_refuse_a_wrong_one():
    slots = LlamaSlots(4, 0.1, [2, 0, 3, 1])
    taken = []
    for _ in range(4):
        s = slots.choose([(len(taken) + 1, 10)])
        slots.start(s, [(len(taken) + 1, 10)])
        taken.append(s.id)
    assert taken == [2, 0, 3, 1]
    fresh = LlamaSlots(4, 0.1)
    assert fresh.choose([(1, 10)]).id == 3  # none used yet: the LRU scan's tie ends on the highest id
    with pytest.raises(ValueError, match="each of the 4 slot ids once"):
        LlamaSlots(4, 0.1, [0, 1, 1, 2])


def test_the_order_a_run_shows_is_the_slots_it_first_took_then_the_rest():
    doc = {"send_times": [0.3, 0.1, 0.2, 0.4], "slots": [5, 2, 2, 0]}
    assert predict.recorded_slot_order(doc, 8) == [2, 5, 0, 1, 3, 4, 6, 7]
    assert predict.recorded_slot_order({"send_times": [0.1]}, 8) is None
    m = stepmodel.with_ubatches(D, 8, 512)
    assert predict.slot_order_for({"send_times": [0.1], "slot_order_at_start": list(range(8))}, m, 8, 3) == \
        list(range(8))
    drawn = predict.slot_order_for({"send_times": [0.1]}, m, 8, 3)
    assert sorted(drawn) == list(range(8)) and drawn == predict.slot_order_for({"send_times": [0.1]}, m, 8, 3)
    assert predict.slot_order_for({"send_times": [0.1]}, m, 8, None) is None
    assert predict.slot_order_for({"send_times": [0.1], "slots": [4]}, D, 8, 3) is None  # D prices no layout


def two_requests():
    return {"send_times": [0.0, 0.0], "input_lens": [16, 16], "output_lens": [64, 64], "ttfts": [0.1] * 2,
            "itls": [[0.01] * 63] * 2, "latencies": [0.7] * 2, "success": [True] * 2, "errors": [""] * 2}


def test_the_simulation_times_two_decoders_by_the_slots_they_hold():
    a = load(ROOT / "anchor-model.json")[0]
    m = stepmodel.with_ubatches(D, 8, 512)
    doc = two_requests()

    def tpot(order):
        trace = predict.simulate_cell(a, {**doc, "slot_order_at_start": order}, m, SERVER,
                                      slot_order=predict.slot_order_for({**doc, "slot_order_at_start": order}, m, 8,
                                                                        None))
        return float(np.median((trace.finish_s - trace.first_token_s) / 63))
    together = tpot([0, 1, 2, 3, 4, 5, 6, 7])  # slots 0 and 1: one ubatch of two
    apart = tpot([0, 2, 1, 3, 4, 5, 6, 7])  # slots 0 and 2: two lone ubatches
    assert together == pytest.approx(m.ubatch(2), rel=0.02)
    assert apart == pytest.approx(2 * m.ubatch(1), rel=0.02)
    plain = predict.simulate_cell(a, doc, D, SERVER)  # D: the slots are not followed
    assert float(np.median((plain.finish_s - plain.first_token_s) / 63)) == pytest.approx(0.020, rel=0.02)


def test_the_sweep_predicts_a_layout_from_the_contiguous_ones():
    rows = [{"slots": [0], "step_ms": 10.0}, {"slots": [0, 1], "step_ms": 15.0}, {"slots": [0, 2, 3], "step_ms": 26.0},
            {"slots": [0, 2, 4, 6], "step_ms": 41.0}]
    predicted_from_contiguous(rows, 512)
    assert rows[2]["ubatches"] == [1, 2] and rows[2]["predicted_ms"] == 25.0
    assert rows[3]["predicted_ms"] == 40.0 and "predicted_ms" in rows[0]


def test_the_layout_switch_is_read_from_the_config_and_a_bad_one_stops():
    config = read_json(ROOT / "config/real_engine.json")
    assert comparison_settings(config)["ubatch_layout"] == (8, 512)  # committed: on
    on = json.loads(json.dumps(config))
    on["comparison"]["ubatch_layout"]["value"] = False
    assert comparison_settings(on)["ubatch_layout"] is None
    on["comparison"]["ubatch_layout"]["value"] = True
    del on["server"]["ubatch_tokens"]
    with pytest.raises(InputError, match="field server.ubatch_tokens must be a positive integer"):
        comparison_settings(on)
    on["comparison"]["ubatch_layout"]["value"] = "yes"
    with pytest.raises(InputError, match="ubatch_layout"):
        comparison_settings(on)


def test_u_between_its_ends_is_read_off_iterations_whose_decoders_held_consecutive_slots():
    steps = [{"decoders": 2, "context_sum": 0.0, "prompts": [], "seconds": 0.013, "decoder_slots": [3, 4]}] * 3
    steps += [{"decoders": 2, "context_sum": 0.0, "prompts": [], "seconds": 0.020, "decoder_slots": [0, 2]}] * 5
    steps += [{"decoders": 4, "context_sum": 0.0, "prompts": [], "seconds": 0.022, "decoder_slots": [4, 5, 6, 7]}]
    m = stepmodel.with_ubatches(D, 8, 512, steps, min_samples=3)
    assert m.ubatch(2) == pytest.approx(0.013)  # the two-slot runs; slots 0, 2 are two ubatches and do not count
    assert m.ubatch(4) == pytest.approx(0.013 + (0.040 - 0.013) * 2 / 6)  # one iteration: below min_samples
    assert m.ubatch(1) == pytest.approx(0.010) and m.ubatch(8) == pytest.approx(0.040)


def test_d_leaves_out_decode_iterations_that_may_have_prefilled_a_waiting_request_unseen():
    def it(decoders, seconds, unseen=0, prompts=()):
        return {"decoders": decoders, "context_sum": 0.0, "prompts": list(prompts), "seconds": seconds,
                "unseen_prompts": unseen}
    steps = [it(1, 0.010)] * 5 + [it(1, 0.045, unseen=2)] * 9 + [it(4, 0.030)] * 5 + [it(4, 0.050, unseen=1)] * 9
    steps += [it(8, 0.040, unseen=3)] * 5 + [it(0, 0.02, prompts=[n]) for n in (16, 32, 64, 128)]
    model, _ = stepfit.fit(steps, 0.0, 0.0, 5)
    assert model.decode(1) == pytest.approx(0.010) and model.decode(4) == pytest.approx(0.030)
    assert model.decode(8) == pytest.approx(0.040)  # every slot decoding: the waiting requests could not start
