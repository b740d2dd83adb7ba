"""The real-engine client against a stub server that streams known timings, the result layout it writes (read
back by the kit's vLLM reader), and the step model and prediction on known inputs."""
import asyncio
import json
import re
from pathlib import Path

import numpy as np
import pytest

from scripts.realengine.analyses import accuracy, predict, stepfit, stepmodel
from scripts.realengine.analyses.settings import comparison_settings
from scripts.realengine.analyses.stepmodel import StepModel
from scripts.realengine.harness import client
from scripts.serving import engine
from scripts.serving.measures import metrics, results

ROOT = Path(__file__).resolve().parent.parent

TTFT_S, GAP_S = 0.060, 0.020


async def read_request(reader) -> dict:
    """An HTTP/1.1 POST's JSON body, read off the stream (the stub servers' one parser)."""
    head = b""
    while b"\r\n\r\n" not in head:
        head += await reader.read(1)
    length = int([ln for ln in head.decode().split("\r\n") if ln.lower().startswith("content-length")][0]
                 .split(":")[1])
    return json.loads(await reader.readexactly(length))


class Stub:
    """A streaming /v1/completions server: the first token after TTFT_S, then one chunk every GAP_S, then
    llama-server's closing chunk (empty text, finish_reason, usage). `drop` chunks go missing from the stream."""

    def __init__(self, drop=0, status=200):
        self.drop, self.status, self.bodies = drop, status, []

    async def handle(self, reader, writer):
        body = await read_request(reader)
        self.bodies.append(body)
        if self.status != 200:
            writer.write(b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 5\r\n\r\nboom!")
            await writer.drain()
            writer.close()
            return
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")

        async def event(obj):
            data = f"data: {json.dumps(obj)}\n\n".encode()
            writer.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            await writer.drain()

        await asyncio.sleep(TTFT_S)
        n = body["max_tokens"]
        for k in range(n - self.drop):
            if k:
                await asyncio.sleep(GAP_S)
            await event({"choices": [{"text": f"t{k}", "index": 0, "finish_reason": None}]})
        await event({"choices": [{"text": "", "index": 0, "finish_reason": "length"}],
                     "usage": {"completion_tokens": n, "prompt_tokens": len(body["prompt"])}})
        data = b"data: [DONE]\n\n"
        writer.write(f"{len(data):x}\r\n".encode() + data + b"\r\n0\r\n\r\n")
        await writer.drain()
        writer.close()


async def _serve_and_run(stub, prompts, outputs, offsets):
    server = await asyncio.start_server(stub.handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server:
        return await client.run_load("127.0.0.1", port, prompts, outputs, offsets)


def test_client_times_a_stream_as_vllm_does(tmp_path):
    stub = Stub()
    prompts = [[1, 2, 3], [4] * 10, [5] * 7]
    outcomes, duration = asyncio.run(_serve_and_run(stub, prompts, [5, 1, 3], [0.0, 0.05, 0.1]))
    assert [o.success for o in outcomes] == [True, True, True]
    assert [o.output_tokens for o in outcomes] == [5, 1, 3]
    assert [len(o.itl) for o in outcomes] == [4, 0, 2]  # the closing empty chunk is not a token
    for o in outcomes:
        assert o.ttft == pytest.approx(TTFT_S, abs=0.03)
        assert all(g == pytest.approx(GAP_S, abs=0.03) for g in o.itl)
        assert o.latency == pytest.approx(o.ttft + sum(o.itl), abs=1e-9)
    assert [o.send_s for o in outcomes] == pytest.approx([0.0, 0.05, 0.1], abs=0.03)
    assert duration >= max(o.send_s + o.latency for o in outcomes)
    assert stub.bodies[0]["prompt"] == [1, 2, 3] and stub.bodies[0]["ignore_eos"] is True
    doc = client.result_document(outcomes, duration, {"model_id": "stub"})
    path = tmp_path / "r.json"
    path.write_text(json.dumps(doc))
    m = results.metrics_of(results.load_result(path))
    assert m["completed"] == 3 and m["total_output_tokens"] == 9 and m["total_input_tokens"] == 20
    assert m["mean_tpot_ms"] == pytest.approx(GAP_S * 1000, abs=30)


def test_missing_chunks_and_errors_fail_the_request():
    outcomes, _ = asyncio.run(_serve_and_run(Stub(drop=2), [[1, 2]], [4], [0.0]))
    assert not outcomes[0].success and "2 token chunks for 4 completion tokens" in outcomes[0].error
    outcomes, _ = asyncio.run(_serve_and_run(Stub(status=500), [[1, 2]], [4], [0.0]))
    assert not outcomes[0].success and outcomes[0].error.startswith("HTTP 500")


def test_arrivals_and_lengths_are_seeded():
    a, b = client.poisson_offsets(20000, 4.0, 42), client.poisson_offsets(20000, 4.0, 42)
    assert np.array_equal(a, b) and a[0] == 0.0
    assert np.mean(np.diff(a)) == pytest.approx(0.25, rel=0.03)
    spec = {"prompt_tokens": [32, 128], "output_tokens": [16, 32], "long_fraction": 0.1, "long_prompt_tokens": 1024}
    p, o = client.request_lengths(5000, spec, 42)
    assert np.mean(p == 1024) == pytest.approx(0.1, abs=0.015)
    short = p[p != 1024]
    assert short.min() >= 32 and short.max() <= 128 and o.min() >= 16 and o.max() <= 32
    ids = client.prompt_ids(10000, np.random.default_rng(0), 50257, 50256)
    assert 50256 not in ids and max(ids) <= 50256 and min(ids) >= 0


def _known_model():
    """D: 5 ms alone, 11 ms for two, ... 26 ms for eight; a prompt chunk 6 ms + 0.7 ms per token; attention 2e-6 s
    per context token; a 2 ms round trip."""
    return StepModel((1.0, 2.0, 4.0, 8.0), (0.005, 0.011, 0.020, 0.026), 0.006, 0.0007, 0.0, 2e-6, 0.002)


def _doc_from_simulation(a, step, n=240, seed=3, rate=6.0):
    """A result document as the client would write it, from the simulator's own trace on `step`."""
    rng = np.random.default_rng(seed)
    send = np.sort(rng.uniform(0, n / rate, n))
    doc = {"send_times": send.tolist(), "input_lens": rng.integers(16, 65, n).tolist(),
           "output_lens": rng.integers(8, 17, n).tolist()}
    trace = predict.simulate_cell(a, doc, step, {"batch_tokens": 2048, "slots": 8})
    ttft, e2el = metrics.latencies(trace)
    return doc | {"ttfts": ttft.tolist(), "latencies": e2el.tolist(), "success": [True] * n,
                  "itls": [trace.token_gaps(i).tolist() for i in range(n)], "duration": float(trace.finish_s.max())}


def test_step_model_times_iterations_as_documented():
    m = _known_model()
    assert m.seconds(3, 300.0, [(0, 50)]) == pytest.approx(0.0155 + 0.006 + 0.035 + 2e-6 * 300)  # D(3) interpolated
    assert m.seconds(0, 0.0, [(0, 100)]) == pytest.approx(0.006 + 0.07)
    assert float(m.decode(10)) == pytest.approx(0.026 + 2 * 0.0015)  # linear past the last knot
    assert float(m.decode(0)) == 0.0
    with pytest.raises(ValueError):
        StepModel((1.0, 8.0), (0.02, 0.01), 0.0, 0.0, 0.0, 0.0, 0.0)
    attn, trip = stepfit.lone_attention_and_overhead({1: 0.005, 2: 0.011}, {1: 0.007, 2: 0.015}, 100.0, 1100.0,
                                                      0.009)
    assert attn == pytest.approx(2e-6) and trip == pytest.approx(0.004)


def test_the_prompt_cost_fit_is_exact_and_machine_independent():
    """The least squares behind a, b and c is solved in rational arithmetic: an exactly representable answer comes
    back bit for bit, a noisy one agrees with LAPACK to its rounding, and dependent columns are one clear error."""
    rng = np.random.default_rng(7)
    rows = [[1.0, float(n), n * n / 2] for n in rng.integers(1, 900, size=200)]
    exact = [0.0078125, 0.0006103515625, 2.384185791015625e-07]  # powers of two: every product is exact
    y = [sum(c * x for c, x in zip(exact, row, strict=True)) for row in rows]
    assert stepfit.least_squares(rows, y) == exact
    noisy = [v + e for v, e in zip(y, rng.normal(0, 1e-4, size=len(y)), strict=True)]
    lapack = np.linalg.lstsq(np.array(rows), np.array(noisy), rcond=None)[0]
    assert stepfit.least_squares(rows, noisy) == pytest.approx(lapack, rel=1e-9)
    with pytest.raises(ValueError, match="not independent"):
        stepfit.least_squares([[1.0, 2.0], [2.0, 4.0]], [1.0, 2.0])


def test_iterations_read_off_token_times_recover_the_step_model(anchor):
    """The simulator's trace on a known step model, seen as the client sees it: every iteration of known duration
    is timed exactly, and the fit gives back D and the prompt costs."""
    truth = _known_model()
    doc = _doc_from_simulation(anchor, truth)
    settings = comparison_settings(json.loads((ROOT / "config" / "real_engine.json").read_text(encoding="utf-8")))
    steps = stepmodel.iterations(doc, settings["iteration_gap_s"])
    assert len(steps) > 500
    for s in steps:
        chunks = [(0, n) for n in s["prompts"]]
        assert s["seconds"] == pytest.approx(truth.seconds(s["decoders"], s["context_sum"], chunks), abs=2e-9)
    fitted, quality = stepfit.fit(steps, truth.attention_s_per_token, truth.request_overhead_s,
                                    settings["min_iterations_per_knot"])
    for b, sec in zip(fitted.decode_batch, fitted.decode_seconds, strict=True):
        assert sec == pytest.approx(float(truth.decode(b)), rel=1e-6)
    assert fitted.prompt_chunk_s == pytest.approx(0.006, rel=1e-4)
    assert fitted.prompt_token_s == pytest.approx(0.0007, rel=1e-4)
    assert quality["median_abs_rel_error"] < 1e-6


def test_simulator_on_a_step_model_and_the_comparison(anchor):
    """A lone request: TTFT = round trip + its prompt chunk, each later token D(1) + attention x context; and a
    result file written from the simulator's own trace is predicted with zero error."""
    a, step = anchor, _known_model()
    server = {"batch_tokens": 2048, "slots": 8}
    doc = {"send_times": [0.0], "input_lens": [64], "output_lens": [3]}
    t = predict.simulate_cell(a, doc, step, server)
    assert t.first_token_s[0] == pytest.approx(0.002 + 0.006 + 0.0007 * 64)
    assert np.diff(t.token_times(0)) == pytest.approx([0.005 + 2e-6 * 65, 0.005 + 2e-6 * 66])
    doc = _doc_from_simulation(a, step, n=60, rate=2.0)
    cell = predict.compare_cell(a, doc, step, server, {"ttft": 200, "tpot": 40}, saturated_below=0.9)
    errors = accuracy.cell_errors(cell)
    assert all(abs(v) < 1e-9 for v in errors.values()), errors
    assert not cell["saturated"]
    with pytest.raises(ValueError, match="step_cost"):
        engine.simulate(a, predict.requests_of(doc), "disagg", step_cost=step)


def test_halves_alternate_each_workloads_rates():
    from scripts.realengine.analyses.comparison import folds_of

    docs = [{"workload": "a", "request_rate": r} for r in (3.0, 1.0, 2.0, 4.0, 1.0)] + \
        [{"workload": "b", "request_rate": 5.0}]
    assert folds_of(docs) == {("a", 1.0): 0, ("a", 2.0): 1, ("a", 3.0): 0, ("a", 4.0): 1, ("b", 5.0): 0}


def test_committed_comparison_reads_as_page_records():
    """The committed measurement (if any) as the page shows it: each cell's measured numbers are `measured`
    records naming their run file and machine, each prediction a `calibrated` record whose data the audit can
    find; the summary against the goals is computed, not stated."""
    from scripts.realengine.records import SHOWN, page_block
    from tests.conftest import ROOT

    path = ROOT / "precomputed" / "measured_vs_simulated_load.json"
    comparison = json.loads(path.read_text(encoding="utf-8"))
    if not comparison["engines"]:
        pytest.skip("no real-engine measurement committed")
    block = page_block(comparison)
    e, prov = block["engines"][0], block["provenance"]
    assert len(e["rows"]) >= 12 and set(e["workloads"]) == {"short", "long_mix"}
    for row in e["rows"]:
        for key in SHOWN:
            m, p = prov[f"{row['id']}.{key}.measured"], prov[f"{row['id']}.{key}.predicted"]
            assert m["kind"] == "measured" and m["runs"] == 2 and (ROOT / m["file"]).exists()
            assert p["kind"] == "calibrated" and all(any(ROOT.glob(f)) for f in p["data"])
    s = comparison["engines"][0]["summary"]
    below = [c for c in comparison["engines"][0]["cells"] if not c["saturated"]]
    errors = sorted(abs(c["error"][k]) for c in below for k in ("median_ttft_ms", "mean_tpot_ms", "median_e2el_ms"))
    assert s["central_median_abs_error"] == pytest.approx(float(np.median(errors)))
    assert s["meets"]["central"] == (s["central_median_abs_error"] <= comparison["goals"]["central_median_abs_error"])


def test_the_pages_goal_sentences_agree_with_the_comparisons_verdicts():
    """Each "达到/没达到 … 的目标" on the validation page turns on a claim in measured_records.json, settled over its
    records (the error in percent against the goal in percent); each must agree with the comparison's own verdict
    (comparison.goals_met, over fractions), the two computed apart."""
    from tests.conftest import ROOT

    def read(name):
        return json.loads((ROOT / "precomputed" / name).read_text(encoding="utf-8"))

    holds = {c["id"]: c["holds"] for c in read("measured_records.json")["claims"]}
    verdicts = {}
    for e in read("measured_vs_simulated_load.json")["engines"]:
        verdicts.update({f"realengine.load.{e['machine']['id']}.summary.meets.{k}": v
                         for k, v in e["summary"]["meets"].items()})
    for e in read("measured_vs_simulated_prefix.json")["engines"]:
        verdicts.update({f"realengine.prefix.{e['machine']['id']}.summary.meets.{k}": v
                         for k, v in e["summary"]["meets"].items()})
    held = read("measured_vs_simulated_heldout.json")
    for e in held["engines"]:
        if e["session"] == "session-1":
            for tag, key in (("held", "held_out"), ("noisy", "held_out_noisy")):
                verdicts.update({f"realengine.heldout.{e['machine']['id']}.{tag}.meets.{k}": v
                                 for k, v in e["summaries"][key]["meets"].items() if k != "closed_loop"})
    for rep in held["repeats"]:
        verdicts.update({f"realengine.heldout.{rep['machine']}.rep.mean.meets.{k}": v
                         for k, v in rep["summary"]["mean"]["meets"].items()})
    if not verdicts:
        pytest.skip("no real-engine measurement committed")
    assert {cid: holds.get(cid) for cid in verdicts} == verdicts
    assert len(verdicts) == 14 and {True, False} <= set(verdicts.values())  # both wordings are on the page


@pytest.mark.parametrize("field, value, says", [
    ("saturated_below", 1.5, "config/real_engine.json: field comparison.saturated_below.value must be <= 1"),
    ("min_iterations_per_knot", 2.5,
     "config/real_engine.json: field comparison.min_iterations_per_knot.value must be of type integer"),
    ("iteration_gap_ms", None, "config/real_engine.json: field comparison.iteration_gap_ms is missing"),
    ("speed_check_bound", 2.0, "config/real_engine.json: field comparison.speed_check_bound.value must be <= 1"),
    ("step_noise_seeds", 51, "config/real_engine.json: field comparison.step_noise_seeds.value must be <= 50"),
    ("iteration_gap_ms", "",
     "config/real_engine.json: field comparison.iteration_gap_ms.assumption must have at least 1 characters"),
    ("attention_tile_rows", -64, "config/real_engine.json: field comparison.attention_tile_rows.value must be >= 0")])
def test_the_comparisons_choices_are_checked_config_fields(field, value, says):
    """The comparison's modelling choices live in config/real_engine.json, each with its assumption; a bad one
    stops with the file and field named."""
    from scripts.record.inputs import InputError
    config = json.loads((ROOT / "config" / "real_engine.json").read_text(encoding="utf-8"))
    good = comparison_settings(config)
    assert good == {"goals": {"central_median_abs_error": 0.1, "tail_median_abs_error": 0.2,
                              "attainment_abs_error": 0.05, "closed_loop_attainment_abs_error": 0.1,
                              "reuse_equal_share": 0.95}, "saturated_below": 0.9, "iteration_gap_s": 0.0015,
                    "min_iterations_per_knot": 5,
                    "speed_check_bound": 0.1, "ks_flag_above": 0.5, "noise_seeds": 0, "held_out_noise_seeds": 5,
                    "attention_tile_rows": 64, "ubatch_layout": (8, 512)}
    if value is None:
        del config["comparison"][field]
    elif value == "":
        config["comparison"][field]["assumption"] = value
    else:
        config["comparison"][field]["value"] = value
    with pytest.raises(InputError, match=re.escape(says)):
        comparison_settings(config)


def test_a_cells_errors_are_relative_but_the_attainments_and_a_family_summarizes_them():
    """accuracy.CellErrors: relative errors per metric, the attainment's absolute, a metric the client did not give
    None; as a comparison file holds it (every metric, COMPARED's order) and read back; FamilyErrors over two cells."""
    from scripts.realengine.analyses.accuracy import COMPARED, CellErrors
    from scripts.realengine.analyses.comparison import FamilyErrors

    measured = {**dict.fromkeys(COMPARED, 100.0), "p99_itl_ms": None, "slo_attainment": 0.90}
    over = CellErrors.of(measured, {**dict.fromkeys(COMPARED, 110.0), "slo_attainment": 0.85})
    under = CellErrors.of(measured, {**dict.fromkeys(COMPARED, 70.0), "slo_attainment": 0.97})
    assert over.median_ttft_ms == pytest.approx(0.10) and under.mean_tpot_ms == pytest.approx(-0.30)
    assert over.p99_itl_ms is None and over.slo_attainment == pytest.approx(-0.05)
    assert list(over.as_dict()) == list(COMPARED) and CellErrors.read(over.as_dict()) == over
    family = FamilyErrors.of([over, under])
    assert family.central_median_abs_error == pytest.approx(0.20)  # three 0.10s and three 0.30s
    assert family.tail_median_abs_error == pytest.approx(0.20)  # p99 ITL left out: three of each again
    assert family.attainment_max_abs_error == pytest.approx(0.07)
    assert FamilyErrors.of([]).as_dict() == dict.fromkeys(
        ("central_median_abs_error", "tail_median_abs_error", "attainment_max_abs_error"))
