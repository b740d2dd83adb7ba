"""Issue 42's real-engine measurement, without the engine: the prefix-reuse workloads' plans and config checks,
the client against a stub that streams as llama-server does with `verbose` and `return_tokens` (each chunk's token
id, the final event's slot and usage.prompt_tokens_details.cached_tokens), a conversation that re-sends the
answers it was given, and the prediction's per-request reuse agreement on a run laid out as run.py --prefix writes
it."""
import asyncio
import copy
import json
from pathlib import Path

import numpy as np
import pytest

from scripts.realengine.analyses import accuracy, predict
from scripts.realengine.analyses.stepmodel import StepModel
from scripts.realengine.harness import prefix_load
from scripts.record.anchor_file import load
from scripts.record.inputs import InputError, read_json
from tests.test_realengine_client import read_request

ROOT = Path(__file__).resolve().parent.parent
BLOCK = read_json(ROOT / "config" / "real_engine.json")["prefix_load"]
VOCAB, EOT = 50257, 50256
STEP = StepModel(decode_batch=(1.0, 2.0, 8.0), decode_seconds=(0.005, 0.008, 0.02), prompt_chunk_s=0.002,
                 prompt_token_s=0.0008, prompt_pair_s=0.0, attention_s_per_token=0.0, request_overhead_s=0.001)
SERVER = {"slots": 2, "batch_tokens": 2048}


def test_committed_block_passes_its_checks():
    assert prefix_load.check(copy.deepcopy(BLOCK))["workloads"].keys() == {"system_prompts", "conversations"}


@pytest.mark.parametrize("edit, field", [
    (lambda b: b["workloads"]["system_prompts"].update(kind="other"), "workloads.system_prompts.kind"),
    (lambda b: b["workloads"]["system_prompts"].update(prefix_tokens=[0]), "workloads.system_prompts.prefix_tokens"),
    (lambda b: b["workloads"]["conversations"].update(turns=[3, 2]), "workloads.conversations.turns"),
    (lambda b: b["workloads"]["conversations"].pop("assumption"), "workloads.conversations.assumption"),
    (lambda b: b["workloads"]["conversations"].update(think_s=-1), "workloads.conversations.think_s"),
    (lambda b: b["rates"].update(conversations=[0]), "rates.conversations"),
    (lambda b: b.update(requests_per_cell=0), "requests_per_cell"),
])
def test_bad_fields_are_named(edit, field):
    block = copy.deepcopy(BLOCK)
    edit(block)
    with pytest.raises(InputError, match=rf"prefix_load: field {field}\b"):
        prefix_load.check(block)


def test_system_prompt_plan_segments_are_the_prompt():
    spec = BLOCK["workloads"]["system_prompts"]
    plan = prefix_load.system_prompt_plan(200, spec, 2.0, 5, VOCAB, EOT)
    again = prefix_load.system_prompt_plan(200, spec, 2.0, 5, VOCAB, EOT)
    assert plan == again  # seeded
    prefixes = {}
    for i, p in enumerate(plan):
        (k, n_prefix), (user_id, n_user) = p["segments"]
        assert n_prefix == spec["prefix_tokens"][k] and user_id == len(spec["prefix_tokens"]) + i
        assert len(p["prompt"]) == n_prefix + n_user and EOT not in p["prompt"]
        assert prefixes.setdefault(k, p["prompt"][:n_prefix]) == p["prompt"][:n_prefix]  # one text per prefix id
        lo, hi = spec["user_tokens"]
        assert lo <= n_user <= hi
    assert set(prefixes) == set(range(len(spec["prefix_tokens"])))
    offsets = [p["offset"] for p in plan]
    assert offsets == sorted(offsets) and len(plan) / offsets[-1] == pytest.approx(2.0, rel=0.2)


def test_conversation_plan_holds_the_requested_turns():
    spec = BLOCK["workloads"]["conversations"]
    sessions = prefix_load.conversation_plan(101, spec, 0.5, 5, VOCAB, EOT)
    assert sum(len(s["turns"]) for s in sessions) == 101
    assert all(spec["turns"][0] <= len(s["turns"]) <= spec["turns"][1] for s in sessions[:-1])
    think = [t["think"] for s in sessions for t in s["turns"]]
    assert np.mean(think) == pytest.approx(spec["think_s"], rel=0.3)


class SlotStub:
    """A one-slot llama-server stand-in: streams one token per chunk with its id under __verbose (the layout
    llama-server writes for verbose + return_tokens), then the final event with
    usage.prompt_tokens_details.cached_tokens = the common prefix of the prompt with the slot's tokens (its last
    prompt and all but the last generated token), less one when all of it matches. Answers are ids 1000 + k."""

    def __init__(self):
        self.slot_tokens, self.bodies = [], []

    async def handle(self, reader, writer):
        body = await read_request(reader)
        self.bodies.append(body)
        prompt, n = body["prompt"], body["max_tokens"]
        shared = 0
        for a, b in zip(self.slot_tokens, prompt, strict=False):
            if a != b:
                break
            shared += 1
        if shared == len(prompt):
            shared -= 1
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")

        async def event(obj):
            data = f"data: {json.dumps(obj)}\n\n".encode()
            writer.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            await writer.drain()

        answer = [1000 + k for k in range(n)]
        for k, tok in enumerate(answer):
            await asyncio.sleep(0.002)
            await event({"choices": [{"text": f"t{k}", "index": 0, "finish_reason": None}],
                         "__verbose": {"tokens": [tok], "stop": False, "id_slot": -1}})
        await event({"choices": [{"text": "", "index": 0, "finish_reason": "length"}],
                     "usage": {"completion_tokens": n, "prompt_tokens": len(prompt),
                               "prompt_tokens_details": {"cached_tokens": shared}},
                     "__verbose": {"tokens": [], "stop": True, "id_slot": 0}})
        self.slot_tokens = prompt + answer[:-1]
        data = b"data: [DONE]\n\n"
        writer.write(f"{len(data):x}\r\n".encode() + data + b"\r\n0\r\n\r\n")
        await writer.drain()
        writer.close()


def _conversation_doc(turns: int):
    spec = {"kind": "conversations", "turns": [turns, turns], "user_tokens": [5, 9], "output_tokens": [3, 6],
            "think_s": 0.0, "assumption": "test"}
    block = {"seed": 3, "requests_per_cell": turns, "runs_per_cell": 1, "workloads": {"c": spec}, "rates": {"c": [1.0]}}
    stub = SlotStub()

    async def measure():
        server = await asyncio.start_server(stub.handle, "127.0.0.1", 0)
        async with server:
            return await prefix_load.measure_cell("127.0.0.1", server.sockets[0].getsockname()[1], block, "c", 1.0, 1,
                                                  VOCAB, EOT, {"machine_id": "m", "label": "llamacpp"})

    doc = asyncio.run(measure())
    return doc, stub


def test_conversation_resends_the_answers_and_records_the_reuse():
    doc, stub = _conversation_doc(4)
    assert doc["completed"] == 4 and doc["slots"] == [0, 0, 0, 0]
    for t in range(1, 4):  # each turn = the previous prompt + its answer (the ids streamed) + a new message
        prev, now = stub.bodies[t - 1]["prompt"], stub.bodies[t]["prompt"]
        answer = [1000 + k for k in range(doc["output_lens"][t - 1])]
        assert now[:len(prev) + len(answer)] == prev + answer
        # the slot held the previous prompt and all but the last answer token
        assert doc["cached_tokens"][t] == len(prev) + len(answer) - 1
    assert doc["cached_tokens"][0] == 0
    for segs, n in zip(doc["segments"], doc["input_lens"], strict=True):
        assert sum(k for _, k in segs) == n
    assert doc["segments"][2][:3] == [doc["segments"][1][0], [doc["answer_ids"][0], doc["output_lens"][0]],
                                      doc["segments"][1][2]]


def test_prediction_reuse_matches_a_one_slot_server():
    doc, _ = _conversation_doc(5)
    anchor = load(ROOT / "anchor-model.json")[0]
    cell = predict.compare_cell(anchor, doc, STEP, {**SERVER, "slots": 1}, {"ttft": 400, "tpot": 50}, 0.9)
    assert cell["reuse"]["requests"] == 5 and cell["reuse"]["equal"] == 5
    assert cell["reuse"]["predicted_hit"] == pytest.approx(cell["reuse"]["measured_hit"])
    wrong = {**doc, "cached_tokens": [0] * 5}
    assert predict.compare_cell(anchor, wrong, STEP, {**SERVER, "slots": 1}, {"ttft": 400, "tpot": 50},
                                0.9)["reuse"]["equal"] == 1  # only the first turn reuses nothing


def test_cached_context_cost_prices_earlier_tokens_per_chunk():
    """With no attention tile (tile 0, as before it was measured): one cost per cached token, whatever the chunk."""
    from dataclasses import replace

    from scripts.realengine.analyses import calibrate

    model = replace(STEP, prompt_pair_s=1e-7)
    e = 2.2e-5
    lone = {16: 0.022, 64: 0.060}
    points = [{"prefix_tokens": p, "new_tokens": n, "median_s": lone[n] + e * p} for p in (512, 1024) for n in (16, 64)]
    points[0]["median_s"] += 0.004  # one noisy point: the median holds
    cal = {"prefill": [{"prompt_tokens": n, "median_s": s} for n, s in lone.items()], "cached_prefill": points}
    assert calibrate.cached_context_cost(cal) == pytest.approx((e, 0.0), rel=1e-9)
    fitted = replace(model, prompt_context_s=e)
    for new in (16, 64):
        assert fitted.chunk(1024, new) - fitted.chunk(0, new) == pytest.approx(e * 1024)
    assert model.chunk(1024, 16) - model.chunk(0, 16) == pytest.approx(1e-7 * 16 * 1024)  # unmeasured: pairs
    assert fitted.seconds(0, 0.0, [(0, 64)]) == pytest.approx(model.seconds(0, 0.0, [(0, 64)]))  # nothing cached
    newer = ("prompt_context_s", "prompt_context_pair_s", "context_tile_rows")
    assert StepModel.from_dict({k: v for k, v in model.as_dict().items() if k not in newer}) == model
    assert calibrate.cached_context_cost({"prefill": cal["prefill"]}) == (0.0, 0.0)  # an older calibration
    with pytest.raises(ValueError, match=r"lone prompt of \[64\] tokens"):
        calibrate.cached_context_cost({"prefill": cal["prefill"][:1], "cached_prefill": points})


def test_cached_tokens_cost_per_new_token_below_the_attention_tile_and_per_tile_from_it():
    """ggml's CPU flash attention runs a chunk of fewer than 64 query rows one row at a time (each cached token costs
    p per new token) and a longer one in tiles of 64 (e per cached token per tile): measured here 2026-12-05, 1,024
    cached tokens then 63 new took 235 ms to the first token, 64 took 108 ms (python -m
    scripts.realengine.investigations.tile_sweep).
    The calibration's points fall one on each side (16 and 64 new tokens) and give both coefficients."""
    from dataclasses import replace

    from scripts.realengine.analyses import calibrate

    p, e = 2.4e-6, 2.7e-5
    lone = {16: 0.028, 64: 0.079}
    points = [{"prefix_tokens": c, "new_tokens": n, "median_s": lone[n] + c * (p * n if n < 64 else e)}
              for c in (512, 1024) for n in (16, 64)]
    cal = {"prefill": [{"prompt_tokens": n, "median_s": s} for n, s in lone.items()], "cached_prefill": points}
    per_tile, per_pair = calibrate.cached_context_cost(cal, 64)
    assert per_tile == pytest.approx(e, rel=1e-9) and per_pair == pytest.approx(p, rel=1e-9)
    model = replace(STEP, prompt_context_s=per_tile, prompt_context_pair_s=per_pair, context_tile_rows=64)
    extra = {n: model.chunk(1024, n) - model.chunk(0, n) for n in (16, 63, 64, 65, 128, 129)}
    assert extra[16] == pytest.approx(p * 16 * 1024) and extra[63] == pytest.approx(p * 63 * 1024)
    assert extra[64] == pytest.approx(e * 1024) and extra[63] > 2 * extra[64]  # one more token, a quarter of the time
    assert extra[65] == extra[128] == pytest.approx(2 * e * 1024) and extra[129] == pytest.approx(3 * e * 1024)
    assert StepModel.from_dict(model.as_dict()) == model
    one_side = {"prefill": cal["prefill"], "cached_prefill": [q for q in points if q["new_tokens"] == 64]}
    with pytest.raises(ValueError, match=r"new_tokens both below and at or above the attention tile of 64 rows"):
        calibrate.cached_context_cost(one_side, 64)


@pytest.mark.parametrize("edit, says", [
    (lambda d: d.pop("segments"), r"field segments is missing"),
    (lambda d: d["segments"].__setitem__(3, [[1, 5]]), r"field segments\[3\] must be \[content id, tokens\] pairs"),
    (lambda d: d["cached_tokens"].pop(), r"field cached_tokens must hold one entry per request"),
    (lambda d: d["cached_tokens"].__setitem__(0, 10 ** 6), r"field cached_tokens\[0\] must be a whole number"),
])
def test_a_broken_prefix_run_is_refused_naming_file_and_field(tmp_path, edit, says):
    from scripts.realengine.analyses import prefix_comparison
    from scripts.realengine.analyses.settings import comparison_settings

    runs = sorted((ROOT / "precomputed" / "serve-prefix").glob("*-conversations-r*-run1.json"))
    cals = sorted((ROOT / "precomputed" / "serve-prefix" / "calibration").glob("*.json"))
    doc = json.loads(runs[0].read_text(encoding="utf-8"))
    edit(doc)
    bad = tmp_path / runs[0].name
    bad.write_text(json.dumps(doc), encoding="utf-8")
    settings = comparison_settings(read_json(ROOT / "config" / "real_engine.json"))
    with pytest.raises(InputError, match=says) as err:
        prefix_comparison.compare(cals, [bad], load(ROOT / "anchor-model.json")[0], settings)
    assert bad.name in str(err.value) and "\n" not in str(err.value)


def test_a_run_whose_engine_speed_moved_is_marked_and_left_out_of_the_errors():
    from scripts.realengine.analyses import comparison, prefix_comparison

    doc = {"speed_check": {"before_itl_ms": 10.0, "after_itl_ms": 11.5}}
    assert predict.speed_moved(doc, 0.10) is True  # 15 % > 10 %
    assert predict.speed_moved(doc, 0.20) is False
    assert predict.speed_moved({}, 0.10) is None and predict.speed_moved(doc, None) is None  # no check, no bound
    err = {k: 0.5 for k in accuracy.COMPARED} | {"slo_attainment": 0.0}
    good = {k: 0.02 for k in accuracy.COMPARED} | {"slo_attainment": 0.0}
    rows = [{"workload": "w", "rate": 1.0, "saturated": False, "speed_moved": True, "error": err, "spread": None,
             "measured": {"slo_attainment": 1.0}, "predicted": {"slo_attainment": 1.0}},
            {"workload": "w", "rate": 2.0, "saturated": False, "speed_moved": False, "error": good, "spread": None,
             "measured": {"slo_attainment": 1.0}, "predicted": {"slo_attainment": 1.0}}]
    goals = json.loads((ROOT / "config" / "real_engine.json").read_text(encoding="utf-8"))["comparison"]["goals"]
    s = comparison.summary(rows, goals["value"])
    assert s["speed_moved"] == 1 and s["below_saturation"] == 1
    assert s["central_median_abs_error"] == pytest.approx(0.02)  # the moved cell's 50 % left out
    cells = [dict(r, reuse={"requests": 10, "equal": 10, "differ_all_slots_busy": 0,
                            "differ_previous_turn_running": 0}) for r in rows]
    p = prefix_comparison.summary(cells, goals["value"])
    assert p["speed_moved"] == 1 and p["central_median_abs_error"] == pytest.approx(0.02)


def test_the_speed_probe_is_a_median_of_medians_against_a_streaming_stub():
    from scripts.realengine.analyses import calibrate
    from tests.test_realengine_client import GAP_S, Stub

    async def probe():
        stub = Stub()
        server = await asyncio.start_server(stub.handle, "127.0.0.1", 0)
        async with server:
            port = server.sockets[0].getsockname()[1]
            return await asyncio.to_thread(calibrate.speed_probe, port, {"requests": 3, "prompt_tokens": 8,
                                                                         "output_tokens": 6, "seed": 1}, VOCAB, EOT)

    assert asyncio.run(probe()) == pytest.approx(GAP_S * 1e3, abs=15.0)  # the stub's gap, in ms
