"""Other clients' results in the kit's layout (scripts/serving/clients.py): an aiperf 0.13.0 profile_export.jsonl,
written here in aiperf's own record layout (MetricRecordInfo: metadata, metrics as {value, unit} in ms, error), is
converted exactly (warmup left out, sends from the earliest start, seconds), reads as a vLLM result, and a file whose
chunks merged tokens or that is not aiperf's is refused in one line naming the line."""
import json

import pytest

from scripts.record.inputs import InputError
from scripts.serving import results
from scripts.serving.clients import from_aiperf, main

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
