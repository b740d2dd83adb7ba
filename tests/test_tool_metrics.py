"""Experiment D: one run under five tools' definitions (scripts/serving/experiments/tool_metrics.py, each worked by
hand from the tool's source on a run with unequal lengths, a one-token request, a failed request, bundled tokens and
send times), the page's twin (templates/lab/model/tools.js) equal on every cell, and any client's file read the same way
by Python (clients.read_any) and by the page (readers.js), malformed files refused by both."""
import json

import numpy as np
import pytest

from scripts.record.inputs import InputError
from scripts.serving.experiments.tool_metrics import KEYS, TOOLS, tool_metrics
from scripts.serving.measures.clients import read_any
from tests.test_clients import gl_report, gl_request, record
from tests.test_lab_model import lab_js, node  # noqa: F401  (lab_js: the built lab-model.js, a fixture)

# A: 3 tokens one per chunk; B: one token; C: 5 tokens in 2 chunks (bundled); D: failed. Sends known; run 0.4 s.
HAND = {"duration": 0.4, "send_times": [0.0, 0.05, 0.1, 0.12], "ttfts": [0.1, 0.2, 0.05, 0.0],
        "latencies": [0.15, 0.2, 0.09, 0.0], "itls": [[0.02, 0.03], [], [0.04], []], "input_lens": [8, 9, 10, 11],
        "output_lens": [3, 1, 5, 0], "errors": ["", "", "", "boom"], "success": [True, True, True, False]}


def cells(doc, slo=20):
    return tool_metrics(doc, slo)["cells"]


def test_vllm_as_calculate_metrics_computes_it():
    v = cells(HAND)["vllm"]
    assert v["ttft_mean"] == pytest.approx(0.35 / 3) and v["ttft_p50"] == pytest.approx(0.1)
    assert v["tpot_mean"] == pytest.approx((0.025 + 0.01) / 2)  # A (0.05 / 2) and C (0.04 / 4); B has no TPOT
    assert v["itl_mean"] == pytest.approx(0.03)  # the three chunk gaps, pooled
    assert v["output_throughput"] == pytest.approx(9 / 0.4) and v["request_throughput"] == pytest.approx(3 / 0.4)
    assert v["goodput"] == pytest.approx(2 / 0.4)  # B counts TPOT 0 and meets 20 ms; C meets; A (25 ms) does not
    assert v["attainment"] is None and v["ntpot_mean"] is None


def test_guidellm_weights_tokens_and_takes_percentiles_without_interpolating():
    g = tool_metrics(HAND, 20)
    c = g["cells"]["guidellm"]
    assert c["ttft_p50"] == pytest.approx(0.1) and c["ttft_p90"] == pytest.approx(0.2)  # a value of the run
    assert c["tpot_mean"] == pytest.approx((0.15 + 0.2 + 0.09) / 9)  # (last token - start) / n, weighted by n
    assert c["tpot_p50"] == pytest.approx(0.018)  # C's 0.018 holds 5 of the 9 tokens
    assert c["itl_mean"] == pytest.approx((0.025 * 2 + 0.01 * 4) / 6) and c["itl_p90"] == pytest.approx(0.025)
    assert c["request_throughput"] == pytest.approx(4 / 0.25)  # every request, errored too, over 0 .. 0.25 s
    assert c["output_throughput"] == pytest.approx(9 / 0.25)
    assert c["attainment"] == pytest.approx(1 / 3)  # C met; A did not; D errored counts; B undetermined
    assert c["goodput"] == pytest.approx(1 / 0.25)
    assert g["notes"]["guidellm"]["e2el_p50"] == "response_end"


def test_aiperf_times_from_the_first_send_and_counts_errors_against_goodput():
    a = tool_metrics(HAND, 20)
    c = a["cells"]["aiperf"]
    assert c["tpot_mean"] is None and a["notes"]["aiperf"]["tpot_mean"] == "not_reported"
    assert c["itl_mean"] == pytest.approx(0.0175)  # vLLM's TPOT under AIPerf's ITL name
    assert c["output_throughput"] == pytest.approx(9 / 0.25) and c["request_throughput"] == pytest.approx(3 / 0.25)
    assert c["attainment"] == pytest.approx(1 / 4)  # good / (valid + errored): B has no ITL, so it is not good
    assert c["goodput"] == pytest.approx(1 / 0.25)
    blind = tool_metrics({k: v for k, v in HAND.items() if k != "send_times"}, 20)
    assert blind["cells"]["aiperf"]["output_throughput"] is None
    assert blind["notes"]["aiperf"]["output_throughput"] == "no_send_times"


def test_llmperf_spreads_the_first_token_over_the_chunks_and_says_it_is_a_bound():
    m = tool_metrics(HAND, 20)
    c = m["cells"]["llmperf"]
    assert c["itl_mean"] == pytest.approx((0.15 / 3 + 0.2 / 1 + 0.09 / 2) / 3)  # C: 2 content chunks
    assert m["notes"]["llmperf"]["itl_mean"] == "chunks_unknown"
    assert c["output_throughput"] == pytest.approx(9 / 0.4) and c["goodput"] is None


def test_inference_perf_leaves_one_token_requests_out_of_ttft_and_cannot_place_bundled_tokens():
    m = tool_metrics(HAND, 20)
    c = m["cells"]["inference_perf"]
    assert c["ttft_mean"] == pytest.approx(0.075)  # A and C: B has a single token time
    assert c["tpot_mean"] == pytest.approx(0.0175)
    assert c["ntpot_mean"] == pytest.approx((0.05 + 0.2 + 0.018) / 3)
    assert c["itl_mean"] is None and m["notes"]["inference_perf"]["itl_mean"] == "bundled"
    assert c["attainment"] == pytest.approx(1 / 3) and c["goodput"] == pytest.approx(1 / 0.25)
    assert c["output_throughput"] == pytest.approx(9 / 0.25)
    per_token = {**HAND, "itls": [[0.02, 0.03], [], [0.01, 0.01, 0.01, 0.01], []]}
    assert cells(per_token)["inference_perf"]["itl_mean"] == pytest.approx((0.05 + 0.04) / 6)


def random_doc(seed: int, n: int = 40) -> dict:
    """A run with every case: sends, unequal lengths, one-token requests, failures, bundled chunks."""
    rng = np.random.default_rng(seed)
    doc = {k: [] for k in ("send_times", "ttfts", "latencies", "itls", "input_lens", "output_lens", "errors",
                           "success")}
    for i in range(n):
        send, out = float(rng.uniform(0, 3)), int(rng.integers(1, 12))
        ok = rng.random() > 0.1
        chunks = out if rng.random() > 0.3 else max(1, out // 2)
        gaps = rng.exponential(0.02, chunks - 1).tolist() if ok else []
        ttft = float(rng.exponential(0.2)) if ok else 0.0
        for k, v in (("send_times", send), ("ttfts", ttft), ("latencies", ttft + sum(gaps) if ok else 0.0),
                     ("itls", gaps), ("input_lens", 16), ("output_lens", out if ok else 0),
                     ("errors", "" if ok else f"HTTP 500 #{i}"), ("success", ok)):
            doc[k].append(v)
    doc["duration"] = max(s + e for s, e in zip(doc["send_times"], doc["latencies"], strict=True)) + 0.05
    return doc


def assert_same_table(js: dict, py: dict):
    for tool in TOOLS:
        assert js["notes"][tool] == py["notes"][tool], tool
        for key in KEYS:
            a, b = js["cells"][tool][key], py["cells"][tool][key]
            assert (a is None) == (b is None), (tool, key)
            if b is not None:
                assert a == pytest.approx(b, rel=1e-9, abs=1e-12), (tool, key)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_page_computes_every_cell_as_the_python_twin(lab_js, seed):  # noqa: F811
    docs = [HAND, random_doc(seed), {k: v for k, v in random_doc(seed + 10).items() if k != "send_times"},
            {**random_doc(seed + 20), "itls_evenly_spaced": True}]
    js = node(lab_js, f"console.log(JSON.stringify({json.dumps(docs)}.map((d) => L.toolMetrics(d, 20))));")
    for doc, got in zip(docs, js, strict=True):
        assert_same_table(got, tool_metrics(doc, 20))


def client_files(tmp_path) -> list:
    """One file per client: vLLM (send times, bundled chunks, a failure, a one-token request), aiperf (a warm-up
    record, bundled chunks, an error) and GuideLLM (errored and incomplete requests)."""
    vllm = tmp_path / "vllm.json"
    vllm.write_text(json.dumps(HAND), encoding="utf-8")
    bundled = record(5.0, 90.0, [12.0, 15.0], 64)
    bundled["metrics"]["output_sequence_length"]["value"] = 7
    aiperf = tmp_path / "profile_export.jsonl"
    aiperf.write_text("\n".join(json.dumps(r) for r in [
        record(0.0, 100.0, [5.0], 32, phase="warmup"), record(1.0, 120.0, [10.0, 11.0, 9.0], 128), bundled,
        record(7.0, 80.0, [], 16), record(9.0, 0, [], 40, error={"message": "HTTP 500", "type": "Error"})]) + "\n",
        encoding="utf-8")
    guidellm = gl_report(tmp_path, [gl_request(1.0, 1.2, 1.5, 4, 256), gl_request(0.5, 0.6, 0.7, 2, 128),
                                    gl_request(0.7, 0.75, 0.75, 1, 64)],
                         errored=[gl_request(2.0, 0, 0, 0, 64, error="HTTP 500", status="errored")],
                         incomplete=[gl_request(2.2, 0, 0, 0, 64, error="cancelled", status="incomplete")])
    return [vllm, aiperf, guidellm]


def test_any_clients_file_gives_the_same_table_in_the_page(lab_js, tmp_path):  # noqa: F811
    files = client_files(tmp_path)
    texts = [[p.name, p.read_text(encoding="utf-8")] for p in files]
    js = node(lab_js, f"console.log(JSON.stringify({json.dumps(texts)}.map(([n, t]) => "
                      "L.readRunFile(n, t, null)).map((r) => ({client: r.client, table: L.toolMetrics(r.doc, 20)}))));")
    assert [r["client"] for r in js] == ["vllm", "aiperf", "guidellm"]
    for path, got in zip(files, js, strict=True):
        assert_same_table(got["table"], tool_metrics(read_any(path), 20))
    aiperf = tool_metrics(read_any(files[1]), 20)
    assert aiperf["notes"]["inference_perf"]["itl_mean"] == "bundled"  # 3 chunks for 7 tokens
    assert aiperf["cells"]["aiperf"]["attainment"] == pytest.approx(2 / 4)  # ITL 10 and 4.5 ms; one token; an error
    gl = tool_metrics(read_any(files[2]), 20)
    assert gl["notes"]["vllm"]["itl_mean"] == "evenly_spaced"
    assert gl["cells"]["guidellm"]["attainment"] == 0.0  # 100 ms gaps; the errored counts, the incomplete does not


def vllm_text(**change) -> str:
    doc = {k: v for k, v in HAND.items()}
    doc.update(change)
    return json.dumps({k: v for k, v in doc.items() if v is not None})


REFUSED = [("run.json", "{not json"), ("run.json", "[1, 2]"), ("run.json", vllm_text(itls=None)),
           ("run.json", vllm_text(output_lens=[3])), ("run.json", vllm_text(itls=[[0.02, 0.03, 0.01], [], [], []])),
           ("run.json", vllm_text(latencies=[0.05, 0.2, 0.09, 0.0])), ("run.json", vllm_text(duration=0.1)),
           ("run.json", vllm_text(ttfts=[])), ("run.json", vllm_text(ttfts=["x", 0.2, 0.05, 0.0])),
           ("run.json", vllm_text(send_times=[0.0, 0.1])), ("run.json", vllm_text(send_times=[0, -1, 0, 0])),
           ("e.jsonl", json.dumps({"metadata": {}})), ("e.jsonl", "{\n"),
           ("e.jsonl", json.dumps(record(0.0, 10.0, [1.0, 1.0], 8) | {"metrics": {"input_sequence_length": {
               "value": 8, "unit": "tokens"}, "output_sequence_length": {"value": 1, "unit": "tokens"},
               "time_to_first_token": {"value": 1, "unit": "ms"}, "request_latency": {"value": 3, "unit": "ms"},
               "inter_chunk_latency": {"value": [1.0, 1.0], "unit": "ms"}}})),
           ("b.json", json.dumps({"benchmarks": []})), ("b.json", json.dumps({"benchmarks": [{"requests": 3}]}))]


def test_malformed_files_are_refused_by_both_readers(lab_js, tmp_path):  # noqa: F811
    out = node(lab_js, f"console.log(JSON.stringify({json.dumps(REFUSED)}.map(([n, t]) => {{"
                       "try { L.readRunFile(n, t, null); return null; } catch (err) { return err.message; } })));")
    for (name, text), message in zip(REFUSED, out, strict=True):
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        with pytest.raises(InputError) as err:
            read_any(path)
        assert "\n" not in str(err.value)
        assert isinstance(message, str) and message, (name, text[:60])


def test_a_served_run_is_a_vllm_result_the_page_reads(lab_js, tmp_path):  # noqa: F811
    """A short run of the Python server: the file passes the kit's vLLM-result reader, and the page's drop-in reader
    gives vLLM's mean TPOT and output throughput as the file states them."""
    from scripts.bench.serve_tiny import main
    from scripts.serving.measures.results import load_result

    out = tmp_path / "run.json"
    main(["--out", str(out), "--rate", "200", "--requests", "12", "--prompt", "16", "--output", "6"])
    doc = load_result(out)
    text = json.dumps(out.read_text(encoding="utf-8"))
    js = node(lab_js, f"""const r = L.readRunFile("run.json", {text});
console.log(JSON.stringify(L.toolMetrics(r.doc, 20).cells.vllm));""")
    assert js["tpot_mean"] * 1000 == pytest.approx(doc["mean_tpot_ms"], rel=1e-9)
    assert js["output_throughput"] == pytest.approx(doc["output_throughput"], rel=1e-9)


def as_aiperf(doc: dict, path):
    """A per-token run written as aiperf 0.13.0's profile_export.jsonl (send times to the nanosecond)."""
    lines = []
    for i, send in enumerate(doc["send_times"]):
        ms = [g * 1000 for g in doc["itls"][i]]
        rec = record(send * 1000, doc["ttfts"][i] * 1000, ms, doc["input_lens"][i],
                     error=None if doc["success"][i] else {"message": doc["errors"][i]})
        lines.append(json.dumps(rec))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_the_same_run_from_each_clients_file_gives_the_same_cells(tmp_path):
    """One run as a vLLM result and as an aiperf export: every cell agrees (to the export's nanoseconds) except
    those needing the run's start, which aiperf's file does not hold (it starts at the first send)."""
    doc = random_doc(5)
    doc["itls"] = [g if len(g) == out - 1 else [0.01] * (out - 1) for g, out in zip(doc["itls"], doc["output_lens"],
                                                                                    strict=True)]
    doc["latencies"] = [t + sum(g) if ok else 0.0 for t, g, ok in zip(doc["ttfts"], doc["itls"], doc["success"],
                                                                       strict=True)]
    doc["duration"] = max(s + e for s, e in zip(doc["send_times"], doc["latencies"], strict=True)) + 0.05
    order = sorted(range(len(doc["ttfts"])), key=lambda i: doc["send_times"][i])
    doc = {k: ([v[i] for i in order] if isinstance(v, list) else v) for k, v in doc.items()}
    vllm = tmp_path / "vllm.json"
    vllm.write_text(json.dumps(doc), encoding="utf-8")
    a, b = tool_metrics(read_any(vllm), 20), tool_metrics(read_any(as_aiperf(doc, tmp_path / "run.jsonl")), 20)
    run_start = {("vllm", k) for k in ("output_throughput", "request_throughput", "goodput")} | {
        ("llmperf", k) for k in ("output_throughput", "request_throughput")}
    for tool in TOOLS:
        for key in KEYS:
            x, y = a["cells"][tool][key], b["cells"][tool][key]
            if (tool, key) in run_start or x is None:
                continue
            assert y == pytest.approx(x, rel=1e-5, abs=1e-6), (tool, key)


def test_the_table_prints_from_any_file_and_a_bad_one_is_one_line(tmp_path, capsys):
    from scripts.serving.experiments.tool_table import main

    good = tmp_path / "run.json"
    good.write_text(json.dumps(HAND), encoding="utf-8")
    assert main([str(good)]) == 0
    rows = {line.split()[0]: line.split()[1:] for line in capsys.readouterr().out.splitlines()[1:]}
    assert rows["tpot_mean"][:2] == ["17.50", "48.89"] and rows["itl_mean"][3] == "<=98.33"
    bad = tmp_path / "bad.json"
    bad.write_text(vllm_text(duration=0.1), encoding="utf-8")
    assert main([str(bad)]) == 2
    err = capsys.readouterr().err
    assert "bad.json: field duration" in err and len(err.strip().splitlines()) == 1
