"""Other clients' results in the kit's layout (scripts/serving/measures/clients.py): an aiperf 0.13.0
profile_export.jsonl, written here in aiperf's own record layout (MetricRecordInfo: metadata, metrics as {value, unit}
in ms, error), is converted exactly (warmup left out, sends from the earliest start, seconds), reads as a vLLM result,
and a file whose chunks merged tokens or that is not aiperf's is refused in one line naming the line."""
import json
import re

import pytest

from scripts.record.inputs import InputError
from scripts.serving.measures import results
from scripts.serving.measures.clients import from_aiperf, main

T0 = 1_764_000_000_000_000_000  # a wall-clock time.time_ns()


def record(start_ms, ttft_ms, gaps_ms, isl, phase="profiling", error=None):
    osl = len(gaps_ms) + 1 if error is None else 0
    metrics = {"input_sequence_length": {"value": isl, "unit": "tokens"}}
    if error is None:
        metrics.update({"time_to_first_token": {"value": ttft_ms, "unit": "ms"},
                        "request_latency": {"value": ttft_ms + sum(gaps_ms), "unit": "ms"},
                        "output_sequence_length": {"value": osl, "unit": "tokens"}})
        if gaps_ms:
            metrics["inter_chunk_latency"] = {"value": gaps_ms, "unit": "ms"}
    end_ms = start_ms + (ttft_ms + sum(gaps_ms) if error is None else 3.0)
    return {"metadata": {"session_num": 0, "request_start_ns": T0 + int(start_ms * 1e6),
                         "request_end_ns": T0 + int(end_ms * 1e6), "worker_id": "w0", "record_processor_id": "r0",
                         "benchmark_phase": phase},
            "metrics": metrics, "error": error}


def write(tmp_path, records):
    path = tmp_path / "profile_export.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    return path


def test_an_aiperf_export_converts_exactly_and_reads_as_a_vllm_result(tmp_path):
    path = write(tmp_path, [
        record(-500.0, 90.0, [5.0, 5.0], 64, phase="warmup"),  # warmup: left out
        record(1000.0, 120.0, [10.0, 20.0, 30.0], 256),
        record(0.0, 100.0, [8.0], 128),  # the earliest start, though written second
        record(2000.0, 0.0, [], 256, error={"code": None, "type": "ClientOSError",
                                            "message": "ClientOSError: Can not write request body"}),
    ])
    doc = from_aiperf(path)
    assert doc["send_times"] == [0.0, 1.0, 2.0]
    assert doc["ttfts"] == pytest.approx([0.1, 0.12, 0.0])
    assert doc["itls"][0] == pytest.approx([0.008]) and doc["itls"][1] == pytest.approx([0.01, 0.02, 0.03])
    assert doc["latencies"] == pytest.approx([0.108, 0.18, 0.0])
    assert doc["output_lens"] == [2, 4, 0] and doc["input_lens"] == [128, 256, 256]
    assert doc["success"] == [True, True, False] and doc["errors"][2].startswith("ClientOSError")
    assert doc["duration"] == pytest.approx(2.003)
    out = tmp_path / "result.json"
    assert main(["aiperf", str(path), "--out", str(out)]) == 0
    again = results.load_result(out)  # the kit's reader takes it as a vLLM file
    m = results.metrics_of(again)
    assert m["completed"] == 2 and m["failed"] == 1
    assert m["median_ttft_ms"] == pytest.approx(110.0)
    assert results.never_reached(again) == [False, False, True]  # the body was never written: no server saw it


@pytest.mark.parametrize("records, says", [
    ([record(0.0, 100.0, [8.0], 128) | {"metrics": {"input_sequence_length": {"value": 9, "unit": "tokens"},
                                                       "time_to_first_token": {"value": 0.1, "unit": "s"},
                                                       "request_latency": {"value": 1.0, "unit": "ms"},
                                                       "output_sequence_length": {"value": 1, "unit": "tokens"}}}],
     "line 1: field metrics.time_to_first_token.unit"),
    ([{"id": 1}], "line 1: not an aiperf record"),
    ([record(0.0, 100.0, [8.0], 128, phase="warmup")], "no profiling records"),
])
def test_a_bad_aiperf_file_is_refused_in_one_line(tmp_path, records, says):
    with pytest.raises(InputError, match=says) as err:
        from_aiperf(write(tmp_path, records))
    assert "\n" not in str(err.value)


def test_chunks_that_merged_tokens_are_refused(tmp_path):
    bad = record(0.0, 100.0, [8.0], 128)
    bad["metrics"]["output_sequence_length"]["value"] = 5  # 2 chunks for 5 tokens
    with pytest.raises(InputError, match="line 1: 2 content chunks for 5 output tokens"):
        from_aiperf(write(tmp_path, [bad]))
    out = tmp_path / "never.json"
    assert main(["aiperf", str(write(tmp_path, [bad])), "--out", str(out)]) == 2 and not out.exists()


# GuideLLM 0.8.1: a benchmarks.json report (GenerativeBenchmarksReport -> benchmarks[].requests.{successful, errored,
# incomplete}, each GenerativeRequestStats with info.timings in Unix seconds and the computed prompt/output tokens)
S0 = 1_764_000_000.0


def gl_request(start, first, last, osl, isl, iterations=None, error=None, status="completed"):
    timings = {"targeted_start": S0 + start, "request_start": S0 + start, "request_end": S0 + last + 0.001,
               "first_token_iteration": None if error else S0 + first,
               "last_token_iteration": None if error else S0 + last,
               "token_iterations": 0 if error else (iterations or osl)}
    return {"type_": "generative_request_stats", "request_id": f"r{start}",
            "info": {"timings": timings, "status": status, "error": error},
            "input_metrics": {"text_tokens": isl}, "output_metrics": {"text_tokens": None if error else osl},
            "prompt_tokens": isl, "output_tokens": None if error else osl,
            "time_to_first_token_ms": None if error else 1000 * (first - start)}


def gl_report(tmp_path, successful, errored=(), incomplete=(), totals=None, benchmarks=1):
    bench = {"type_": "generative_benchmark",
             "requests": {"successful": list(successful), "errored": list(errored), "incomplete": list(incomplete)},
             "metrics": {"request_totals": totals or {"successful": len(successful), "errored": len(errored),
                                                      "incomplete": len(incomplete)}}}
    path = tmp_path / "benchmarks.json"
    path.write_text(json.dumps({"benchmarks": [bench] * benchmarks}), encoding="utf-8")
    return path


def test_a_guidellm_report_converts_what_it_measured_and_withholds_the_itl(tmp_path):
    from scripts.serving.measures.clients import from_guidellm

    path = gl_report(tmp_path, [gl_request(1.0, 1.2, 1.5, 4, 256), gl_request(0.5, 0.6, 0.7, 2, 128)],
                     errored=[gl_request(2.0, 0, 0, 0, 64, error="HTTP 500", status="errored")])
    doc = from_guidellm(path)
    assert doc["send_times"] == pytest.approx([0.0, 0.5, 1.5])
    assert doc["ttfts"] == pytest.approx([0.1, 0.2, 0.0]) and doc["latencies"] == pytest.approx([0.2, 0.5, 0.0])
    assert doc["itls_evenly_spaced"] is True and doc["itls"][1] == pytest.approx([0.1, 0.1, 0.1])
    assert doc["success"] == [True, True, False] and doc["errors"][2] == "errored: HTTP 500"
    out = tmp_path / "result.json"
    assert main(["guidellm", str(path), "--out", str(out)]) == 0
    m = results.metrics_of(results.load_result(out))
    assert m["completed"] == 2 and m["failed"] == 1
    assert m["median_ttft_ms"] == pytest.approx(150.0)
    assert m["mean_tpot_ms"] == pytest.approx((100.0 + 100.0) / 2)  # (E2EL - TTFT) / (n - 1), both requests
    assert m["median_e2el_ms"] == pytest.approx(350.0)
    assert all(m[k] is None for k in m if k.endswith("_itl_ms"))  # GuideLLM kept no per-token times


@pytest.mark.parametrize("make, says", [
    (lambda p: gl_report(p, [gl_request(0.0, 0.1, 0.2, 2, 9)], totals={"successful": 50}),
     r"requests.successful keeps 1 of the 50 requests it counted .*sample_size"),
    (lambda p: gl_report(p, [gl_request(0.0, 0.1, 0.2, 2, 9)], benchmarks=3), r"holds 3 benchmarks; pick one"),
    (lambda p: gl_report(p, [gl_request(0.0, 0.3, 0.2, 2, 9)]), r"successful\[0\]: needs request_start <="),
    (lambda p: gl_report(p, [{"info": {}}]), r"successful\[0\]: field info.timings is missing"),
])
def test_a_bad_guidellm_report_is_refused_in_one_line(tmp_path, make, says):
    from scripts.serving.measures.clients import from_guidellm

    with pytest.raises(InputError, match=says) as err:
        from_guidellm(make(tmp_path))
    assert "\n" not in str(err.value)
    assert main(["guidellm", str(make(tmp_path)), "--benchmark", "7", "--out", str(tmp_path / "x.json")]) == 2
    assert not (tmp_path / "x.json").exists()


def test_a_committed_run_told_as_guidellm_gives_the_same_ttft_tpot_e2el_and_predicts(tmp_path, capsys):
    """One of the kit's real-engine runs written as GuideLLM would have recorded it (first and last token times
    only), converted back: every metric GuideLLM's data supports equals the original's, and the prediction command
    takes the file, marking the ITL rows as not measured."""
    from pathlib import Path

    from scripts.realengine.analyses import predict

    root = Path(__file__).resolve().parent.parent
    src = sorted((root / "precomputed" / "serve").glob("llamacpp-*-short-r2-run1.json"))[0]
    doc = results.load_result(src)
    rows = [gl_request(s, s + t, s + e, n, isl) for s, t, e, n, isl, ok in
            zip(doc["send_times"], doc["ttfts"], results.latencies(doc), doc["output_lens"], doc["input_lens"],
                results.successes(doc), strict=True) if ok]
    out = tmp_path / "result.json"
    assert main(["guidellm", str(gl_report(tmp_path, rows)), "--out", str(out)]) == 0
    a, b = results.metrics_of(doc), results.metrics_of(results.load_result(out))
    for k in ("median_ttft_ms", "p99_ttft_ms", "mean_tpot_ms", "p99_tpot_ms", "median_e2el_ms", "p99_e2el_ms"):
        assert b[k] == pytest.approx(a[k], abs=1e-3), k  # Unix seconds as doubles: ~0.2 us steps near 1.7e9
    cal = sorted((root / "precomputed" / "serve" / "calibration").glob("llamacpp-*-2c-1t.json"))[0]
    assert predict.main([str(out), "--calibration", str(cal)]) == 0
    printed = capsys.readouterr().out
    assert re.search(r"median_itl_ms\s+—\s+\S+\s+—", printed)


@pytest.mark.parametrize("error", [
    {"type": "ClientOSError", "message": "ClientOSError(None, 'Can not write request body for "
                                         "http://127.0.0.1:1/v1/completions')"},
    {"type": "ServerDisconnectedError", "message": "ServerDisconnectedError('Server disconnected')"}])
def test_a_request_that_never_reached_the_server_may_lack_its_token_count(tmp_path, error):
    """With --use-server-token-count aiperf has no prompt count for a request whose body was never written, or that
    went out on a keep-alive connection the server had closed (both seen on 2026-12-04 against llama-server): it
    stays failed with 0 prompt tokens and is left out of the simulated set; any other record without the count is
    still refused."""
    lost = record(500.0, 0.0, [], 64, error=error)
    del lost["metrics"]["input_sequence_length"]
    doc = from_aiperf(write(tmp_path, [record(0.0, 100.0, [8.0], 128), lost]))
    assert doc["input_lens"] == [128, 0] and doc["success"] == [True, False]
    assert results.never_reached(doc) == [False, True]
    other = record(500.0, 0.0, [], 64, error={"type": "TimeoutError", "message": "timed out"})
    del other["metrics"]["input_sequence_length"]
    with pytest.raises(InputError, match=re.escape("line 2: field metrics.input_sequence_length is missing")):
        from_aiperf(write(tmp_path, [record(0.0, 100.0, [8.0], 128), other]))


def _metric_set(rec: dict, tag: str, value) -> dict:
    rec["metrics"][tag]["value"] = value
    return rec


@pytest.mark.parametrize("make, says", [
    (lambda: _metric_set(record(0.0, 100.0, [8.0], 128), "input_sequence_length", "abc"),
     "metrics.input_sequence_length.value must be a whole number of tokens"),
    (lambda: _metric_set(record(0.0, 100.0, [8.0], 128), "input_sequence_length", 127.6),
     "metrics.input_sequence_length.value must be a whole number"),
    (lambda: _metric_set(record(0.0, 100.0, [8.0], 128), "time_to_first_token", [100.0]),
     "metrics.time_to_first_token.value must be a finite number"),
    (lambda: _metric_set(record(0.0, 100.0, [8.0], 128), "time_to_first_token", float("nan")),
     "metrics.time_to_first_token.value must be a finite number"),
    (lambda: record(0.0, 100.0, [8.0], 128) | {"metrics": [1, 2]}, "field metrics must be an object"),
    (lambda: record(0.0, 100.0, [8.0], 128) | {"metadata": {"request_start_ns": T0 + 10, "request_end_ns": T0}},
     "request_end_ns is before request_start_ns"),
    (lambda: record(0.0, 100.0, [8.0], 128) | {"metadata": {"request_start_ns": True, "request_end_ns": T0}},
     "field metadata.request_start_ns must be a whole number of nanoseconds"),
])
def test_hostile_aiperf_records_are_one_line(tmp_path, make, says):
    """Issue 63's rerun: these gave tracebacks (a string, a list or NaN where a number goes) or were read wrong (a
    fractional token count truncated, a request ending before it starts)."""
    path = tmp_path / "profile_export.jsonl"
    path.write_text(json.dumps(make(), allow_nan=True) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=re.escape(says)) as err:
        from_aiperf(path)
    assert "\n" not in str(err.value) and "line 1" in str(err.value)


def test_an_aiperf_error_given_as_a_plain_string_is_its_message(tmp_path):
    failed = record(1.0, 0.0, [], 0, error="connection reset")
    failed["metrics"]["input_sequence_length"]["value"] = 64
    doc = from_aiperf(write(tmp_path, [record(0.0, 100.0, [8.0], 128), failed]))
    assert doc["errors"] == ["", "connection reset"] and doc["success"] == [True, False]


@pytest.mark.parametrize("change, says", [
    (lambda b: b.update(metrics=[1]), "benchmarks[0]: field metrics must be an object"),
    (lambda b: b["requests"]["successful"][0].update(info=[1]), "successful[0]: field info must be an object"),
    (lambda b: b["requests"]["successful"][0]["info"]["timings"].update(request_start=1e17),
     "request_start must be a finite number of seconds"),
    (lambda b: b["requests"]["successful"][0].update(prompt_tokens=12.5), "prompt_tokens must be a whole number"),
    (lambda b: b["requests"]["successful"][0].update(output_tokens="4"), "output_tokens must be a whole number"),
])
def test_hostile_guidellm_reports_are_one_line(tmp_path, change, says):
    from scripts.serving.measures.clients import from_guidellm

    path = gl_report(tmp_path, [gl_request(0.0, 0.1, 0.3, 4, 32)])
    doc = json.loads(path.read_text(encoding="utf-8"))
    change(doc["benchmarks"][0])
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(InputError, match=re.escape(says)) as err:
        from_guidellm(path)
    assert "\n" not in str(err.value)


def test_json_lines_edge_cases_are_read_or_refused_in_one_line(tmp_path):
    """Issue 63's rerun: a raw U+2028 inside a string split a valid aiperf line (str.splitlines); duplicate keys were
    read (the last one won); 100,000 nested arrays raised RecursionError. The shared JSON Lines reader now splits at
    \\n only, refuses duplicate keys and deep nesting in one line naming the line (aiperf and Mooncake traces alike)."""
    from scripts.serving.workloads.trace import read_mooncake

    ok = record(0.0, 100.0, [8.0], 128)
    ok["metadata"]["worker_id"] = "w\u20280"
    path = tmp_path / "sep.jsonl"
    path.write_text(json.dumps(ok, ensure_ascii=False) + "\n", encoding="utf-8")
    assert from_aiperf(path)["ttfts"] == pytest.approx([0.1])
    twice = json.dumps(ok).replace('"benchmark_phase": "profiling"', '"benchmark_phase": "profiling", '
                                                                      '"benchmark_phase": "warmup"')
    for body, says in ((twice, "line 1: key 'benchmark_phase' appears twice"),
                       ("[" * 100_000 + "]" * 100_000, "line 1: nested too deeply")):
        for reader in (from_aiperf, lambda p: read_mooncake(p, 4096)):
            path.write_text(body + "\n", encoding="utf-8")
            with pytest.raises(InputError, match=re.escape(says)) as err:
                reader(path)
            assert "\n" not in str(err.value)
