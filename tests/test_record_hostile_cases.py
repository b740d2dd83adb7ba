"""Named regression tests for the hostile inputs of the second reliability pass: each case that once gave a
traceback, an unclear line, a silent wrong output, a runaway or a half-published state now ends in one line naming
the file (or flag) and field, or is read right. In-process where possible; the CLI cases run the real command.

The counts by input kind and outcome are printed by test_the_hostile_cases_tally (run with -s to see them).
"""
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import time
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from scripts.audit.inputs import TEMPLATES, check_all, heal_vendor_cache
from scripts.bench.records import load_cluster_config
from scripts.record import schema
from scripts.record.anchors import check_stem
from scripts.record.inputs import InputError, read_json
from scripts.record.registry import extract
from scripts.record.vendor import verified_runtime
from scripts.serving.measures import results
from scripts.serving.workloads.trace import read_trace
from tests.conftest import ROOT

INPUTS = {"anchor": "anchor-model.json", "cited": "config/cited.json", "tokenizers": "config/tokenizers.json",
          "passages": "config/passages.json", "workloads": "config/workloads.json", "gpus": "config/gpus.json",
          "vendor": "config/vendor.json", "cluster": "config/cluster.yaml", "questions": "questions/C13-L5.md",
          "course": "config/course.json", "techniques": "config/techniques.json", "prefix": "config/prefix.json",
          "lab": "config/lab.json"}
BENCH = sorted((ROOT / "precomputed" / "bench").glob("*.json"))
VLLM = {"duration": 2.0, "ttfts": [0.1, 0.2], "itls": [[0.01], []], "input_lens": [10, 20], "output_lens": [2, 1],
        "errors": ["", ""], "latencies": [0.11, 0.2]}
TALLY: Counter = Counter()


@pytest.fixture
def root(tmp_path):
    """The inputs check_all reads, copied: each case breaks one of them."""
    for rel in [*INPUTS.values(), *TEMPLATES]:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, tmp_path / rel)
    (tmp_path / "precomputed" / "bench").mkdir(parents=True, exist_ok=True)
    for rec in BENCH:
        shutil.copy2(rec, tmp_path / "precomputed" / "bench" / rec.name)
    (tmp_path / "precomputed" / "serve").mkdir(parents=True, exist_ok=True)
    return tmp_path


def edit(root: Path, rel: str, change) -> None:
    doc = json.loads((root / rel).read_text(encoding="utf-8"))
    change(doc)
    (root / rel).write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")


def refused(root: Path, kind: str, rel: str, *words: str) -> str:
    """check_all must stop with one line that names `rel` (and each of `words`)."""
    with pytest.raises(InputError) as info:
        check_all(root)
    message = str(info.value)
    assert message.startswith(rel) or message.startswith((root / rel).as_posix()), message
    assert "\n" not in message and len(message) < 400, message
    for word in words:
        assert word in message, message
    TALLY[(kind, "clear error")] += 1
    return message


# --- Types, keys and bounds, by schema, before any semantic check -----------------------------------------------

@pytest.mark.parametrize("kind", ["anchor", "cited", "tokenizers", "passages", "workloads", "gpus", "vendor"])
def test_a_five_thousand_digit_integer_is_one_line(root, kind):
    rel = INPUTS[kind]
    text = (root / rel).read_text(encoding="utf-8")
    (root / rel).write_text(text.replace("{", '{"zz": ' + "9" * 5000 + ", ", 1), encoding="utf-8")
    refused(root, kind, rel, "thousands of digits")


@pytest.mark.parametrize(("path", "value", "words"), [
    (("page", "workload", "value"), ["chat"], ("page.workload.value", "type string")),
    (("sweep", "schedules", "value"), ["whole", "whole"], ("sweep.schedules.value", "repeat")),
    (("sweep", "percentiles", "value"), [50, 99], ("sweep.percentiles.value", "90")),
    (("sweep", "rates_per_gpu", "value"), [1, 1.0000001], ("rates_per_gpu.value[1]", "r1.json")),
    (("sweep", "rates_per_gpu", "value"), [round(0.5 + i * 0.01, 2) for i in range(2000)],
     ("rates_per_gpu.value", "at most 32")),
    (("sweep", "decode_gpus", "value"), 100_000_000, ("sweep.decode_gpus.value", "<= 64")),
    (("sweep", "prefill_gpus", "value"), 1_000_000_000, ("sweep.prefill_gpus.value",)),
    (("sweep", "requests", "value"), 1.5, ("sweep.requests.value", "integer")),
    (("workloads", "chat", "prompt_tokens", "assumption"), "   ", ("workloads.chat.prompt_tokens.assumption",)),
])
def test_workload_settings_that_crashed_a_rule_are_refused_up_front(root, path, value, words):
    def change(d):
        node = d
        for k in path[:-1]:
            node = node[k]
        node[path[-1]] = value
    edit(root, INPUTS["workloads"], change)
    refused(root, "workloads", INPUTS["workloads"], *words)


@pytest.mark.parametrize("wid", ["chat-2", "../../../x", "chat 2", "c" * 40, "聊天"])
def test_workload_ids_map_one_to_one_onto_file_names(root, wid):
    edit(root, INPUTS["workloads"], lambda d: d["workloads"].update({wid: d["workloads"]["chat"]}))
    refused(root, "workloads", INPUTS["workloads"], "workloads", "[A-Za-z0-9_]")


def test_long_prompts_without_a_max_is_refused(root):
    edit(root, INPUTS["workloads"], lambda d: d["workloads"]["chat_long"]["long_prompts"]["prompt_tokens"].pop("max"))
    refused(root, "workloads", INPUTS["workloads"], "workloads.chat_long.long_prompts.prompt_tokens.max", "missing")


def test_cited_works_take_no_extra_keys_so_nothing_overrides_a_number(root):
    edit(root, INPUTS["cited"], lambda d: d["works"]["distserve"].update(value=-5))
    refused(root, "cited", INPUTS["cited"], "works.distserve.value", "not a known field")


def test_a_cited_number_the_page_names_cannot_be_removed(root):
    edit(root, INPUTS["cited"], lambda d: d.update(numbers=[n for n in d["numbers"]
                                                            if n["id"] != "cited.distserve.more_requests_x"]))
    refused(root, "cited", INPUTS["cited"], "cited.distserve.more_requests_x")


def test_a_cited_denominator_of_zero_is_refused(root):
    edit(root, INPUTS["cited"], lambda d: [n.update(value=0) for n in d["numbers"]
                                           if n["id"] == "cited.course.qwen_tokens"])
    refused(root, "cited", INPUTS["cited"], "denominator")


@pytest.mark.parametrize(("change", "words"), [
    (lambda d: d["tokenizers"]["gpt2"].update(files={}), ("tokenizers.gpt2.files", "at least 1")),
    (lambda d: d["tokenizers"]["gpt2"].update(files=[]), ("tokenizers.gpt2.files", "type object")),
    (lambda d: d["tokenizers"]["gpt2"].update(archive="../../etc/x.tgz"), ("tokenizers.gpt2.archive",)),
])
def test_tokenizer_pins_that_crashed_are_refused(root, change, words):
    edit(root, INPUTS["tokenizers"], change)
    refused(root, "tokenizers", INPUTS["tokenizers"], *words)


def test_a_passage_set_without_zh_is_refused(root):
    edit(root, INPUTS["passages"], lambda d: d["passages"].pop("zh"))
    refused(root, "passages", INPUTS["passages"], "passages.zh", "missing")


@pytest.mark.parametrize(("change", "words"), [
    (lambda d: d["machine"].update(cores="5"), ("machine.cores",)),
    (lambda d: d["machine"].update(id=5), ("machine.id", "type string")),
    (lambda d: d["model"].pop("shape"), ("model.shape", "missing")),
    (lambda d: d["per_step"]["kv_cache"]["median_ms"].pop(), ("per_step.kv_cache.median_ms", "one per position")),
    (lambda d: [r.update(min_s=1e-300, q1_s=1e-300, median_s=1e-300) for r in d["results"][:1]],
     ("results[0]", ">= 1e-06")),
])
def test_bench_records_that_crashed_or_lied_are_refused(root, change, words):
    rel = f"precomputed/bench/{BENCH[0].name}"
    edit(root, rel, change)
    refused(root, "bench", rel, *words)


@pytest.mark.parametrize("field", ["hbm_bandwidth_bytes_per_s", "pd_link_bytes_per_s", "peak_bf16_flops"])
def test_an_anchor_rate_so_small_it_divides_to_infinity_is_refused(root, field):
    """The anchor's own rate (its P/D link) in anchor-model.json; its GPU's in config/gpus.json, where they live."""
    if field == "pd_link_bytes_per_s":
        edit(root, INPUTS["anchor"], lambda d: d["hardware"][field].update(value=1e-300))
        refused(root, "anchor", INPUTS["anchor"], f"hardware.{field}.value")
    else:
        edit(root, INPUTS["gpus"], lambda d: d["gpus"]["h100_sxm"][field].update(value=1e-300))
        refused(root, "gpus", INPUTS["gpus"], f"gpus.h100_sxm.{field}.value")


def test_a_gpu_that_cannot_hold_the_weights_is_refused(root):
    edit(root, INPUTS["gpus"], lambda d: d["gpus"]["h100_sxm"]["hbm_bytes"].update(value=1e9))
    refused(root, "gpus", INPUTS["gpus"], "gpus.h100_sxm.hbm_bytes.value", "weights")


@pytest.mark.parametrize(("mark", "name"), [("\u200f", "right-to-left mark"), ("\u200b", "zero-width space"),
                                            ("\u2066", "left-to-right isolate")])
def test_invisible_and_direction_marks_in_names_are_refused(root, mark, name):
    edit(root, INPUTS["workloads"], lambda d: d["workloads"]["chat"].update(label=f"聊{mark}天"))
    refused(root, "workloads", INPUTS["workloads"], "workloads.chat.label", name)


def test_whitespace_only_sources_are_refused(root):
    edit(root, INPUTS["gpus"], lambda d: d["gpus"]["h200_sxm"]["hbm_bytes"].update(source=" \t "))
    refused(root, "gpus", INPUTS["gpus"], "gpus.h200_sxm.hbm_bytes.source")
    edit(root, INPUTS["anchor"], lambda d: d["model"]["hidden_size"].update(source="   "))


def test_every_input_refuses_unknown_keys(root):
    for kind in ("workloads", "gpus", "tokenizers", "passages", "vendor"):
        shutil.copy2(ROOT / INPUTS[kind], root / INPUTS[kind])
        edit(root, INPUTS[kind], lambda d: d.update(surprise=1))
        refused(root, kind, INPUTS[kind], "surprise", "not a known field")
        shutil.copy2(ROOT / INPUTS[kind], root / INPUTS[kind])


# --- Files: templates, cluster config, caches ---------------------------------------------------------------------

@pytest.mark.parametrize("rel", TEMPLATES)
def test_a_missing_or_non_utf8_template_stops_before_scheduling(root, rel):
    (root / rel).unlink()
    refused(root, "templates", rel, "cannot be read")
    (root / rel).write_bytes(b"ok \xff\xfe broken")
    refused(root, "templates", rel, "not UTF-8")


def test_a_billion_laughs_cluster_yaml_is_refused_at_once(root):
    levels = zip("abcdefgh", "bcdefghi", strict=True)
    bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{c}: &{c} [{', '.join([f'*{p}'] * 9)}]\n" for p, c in levels)
    (root / INPUTS["cluster"]).write_text(bomb, encoding="utf-8")
    start = time.perf_counter()
    refused(root, "cluster", INPUTS["cluster"], "anchors and aliases")
    assert time.perf_counter() - start < 5


@pytest.mark.parametrize(("text", "words"), [
    ("bench_partitions: [main\n", ("line", "not valid YAML")),
    ("bench_partitions: [main]\nbench_new_tokens: [32]\nbench_runs: 9\nbench_warmup: 2\nbench_threads: 0\n",
     ("bench_threads", ">= 1")),
    ("bench_partitions: ['../x']\nbench_new_tokens: [32]\nbench_runs: 9\nbench_warmup: 2\nbench_threads: 1\n",
     ("bench_partitions[0]",)),
])
def test_a_bad_cluster_yaml_names_itself_not_the_snakefile(root, text, words):
    (root / INPUTS["cluster"]).write_text(text, encoding="utf-8")
    refused(root, "cluster", INPUTS["cluster"], *words)


def test_the_shipped_cluster_yaml_reads_as_snakemake_read_it():
    import yaml

    assert load_cluster_config(ROOT / INPUTS["cluster"]) == yaml.safe_load((ROOT / INPUTS["cluster"]).read_text())


def test_a_tampered_vendored_runtime_is_fetched_again_and_never_shipped(root, capsys):
    cached = root / ".cache" / "vendor" / "vega.min.js"
    cached.parent.mkdir(parents=True)
    cached.write_text("/* vega */ fetch('https://evil.example/')", encoding="utf-8")
    with pytest.raises(InputError, match="sha256 does not match"):
        verified_runtime(cached, root / INPUTS["vendor"])
    heal_vendor_cache(root)
    assert not cached.exists() and "fetching it again" in capsys.readouterr().err
    cached.write_bytes(b"")  # an emptied file too
    heal_vendor_cache(root)
    assert not cached.exists()
    TALLY[("vendor cache", "clear error")] += 1


def test_a_vendor_file_not_in_the_archive_is_one_line(tmp_path):
    archive = tmp_path / "vega-6.2.0.tgz"
    with tarfile.open(archive, "w:gz") as tf:
        data = b"x"
        info = tarfile.TarInfo("package/build/other.js")
        info.size = len(data)
        tf.addfile(info, io.BytesIO(data))
    with pytest.raises(InputError, match=r"vega-6\.2\.0\.tgz: holds no file 'package/build/vega\.min\.js'"):
        extract(archive, "package/build/vega.min.js")
    TALLY[("vendor", "clear error")] += 1


# --- Measured and served data: plausibility -------------------------------------------------------------------

def vllm_file(tmp_path: Path, **changes) -> Path:
    doc = {**json.loads(json.dumps(VLLM)), **changes}
    path = tmp_path / "result.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


@pytest.mark.parametrize(("changes", "words"), [
    ({"latencies": [0.05, 0.2]}, ("latencies[0]", "shorter than ttfts[0]")),
    ({"duration": 1e-300}, ("duration", ">= 0.001")),
    ({"duration": 0.15}, ("duration", "longest request")),
    ({"errors": [None, ""]}, ("errors[0]", "type string")),
    ({"errors": [0, ""]}, ("errors[0]",)),
    ({"errors": [{}, ""]}, ("errors[0]",)),
    ({"ttfts": [], "itls": [], "input_lens": [], "output_lens": [], "errors": [], "latencies": []}, ("ttfts",
                                                                                                    "at least 1")),
    ({"itls": [[], []]}, ("itls[0]", "one gap fewer")),
    ({"output_lens": [2, 1, 3]}, ("output_lens", "one per request")),
])
def test_implausible_vllm_results_are_refused(tmp_path, changes, words):
    with pytest.raises(InputError) as info:
        results.load_result(vllm_file(tmp_path, **changes))
    for word in words:
        assert word in str(info.value), str(info.value)
    TALLY[("vllm result", "clear error")] += 1


def test_vllm_generated_text_may_hold_anything_the_model_said(tmp_path):
    doc = results.load_result(vllm_file(tmp_path, generated_texts=["\x1b[31m\u202e", "\x00"],
                                        errors=["", "\x07 bell"], output_lens=[2, 0], itls=[[0.01], []]))
    assert doc["generated_texts"][1] == "\x00"
    TALLY[("vllm result", "accepted right")] += 1


def test_a_failed_request_with_an_empty_error_is_not_completed(tmp_path):
    """vLLM writes `error = response.reason or ""`: a failure can carry "". `success`, when saved, is the truth;
    without it, a request with no output tokens did not complete."""
    m = results.metrics_of(results.load_result(vllm_file(tmp_path, output_lens=[2, 0], ttfts=[0.1, 0.0],
                                                         latencies=[0.11, 0.0])))
    assert m["completed"] == 1
    m = results.metrics_of(results.load_result(vllm_file(tmp_path, success=[True, False])))
    assert m["completed"] == 1
    TALLY[("vllm result", "accepted right")] += 2


# --- Traces: units and zones ------------------------------------------------------------------------------------

@pytest.mark.parametrize(("stamps", "seconds"), [
    (["2023-11-16 18:15:46.6805900", "2023-11-16 18:15:47.1805900", "2023-11-16 18:19:06.6805900"], [0, 0.5, 200]),
    (["2023-11-16 18:15:46", "2023-11-16 18:19:06"], [0, 200]),
    (["2024-05-10 00:00:00.009930+00:00", "2024-05-10 00:03:20.009930+00:00"], [0, 200]),
    (["2024-05-10 02:00:00+02:00", "2024-05-10 00:00:30+00:00"], [0, 30]),
    (["2024-05-10 00:00:00", "2024-05-10 00:00:01Z"], [0, 1]),
])
def test_azure_timestamps_keep_their_units_and_zones(tmp_path, stamps, seconds):
    path = tmp_path / "azure.csv"
    path.write_text("TIMESTAMP,ContextTokens,GeneratedTokens\n" + "".join(f"{s},100,10\n" for s in stamps),
                    encoding="utf-8")
    reqs = read_trace(path, max_context=4096)
    np.testing.assert_allclose(np.sort(reqs.arrival_s), seconds, rtol=0, atol=1e-6)
    TALLY[("trace", "accepted right")] += 1


def test_a_bad_azure_timestamp_names_its_row(tmp_path):
    path = tmp_path / "azure.csv"
    path.write_text("TIMESTAMP,ContextTokens,GeneratedTokens\n2024-05-10 00:00:00,1,1\nyesterday,1,1\n")
    with pytest.raises(InputError, match=r"row 3 column TIMESTAMP: 'yesterday' is not an ISO 8601"):
        read_trace(path, max_context=4096)
    TALLY[("trace", "clear error")] += 1


# --- The serving CLI: bounded, regular files only, never overwriting its input -----------------------------------

def cli(*args, cwd=ROOT, timeout=30):
    return subprocess.run([sys.executable, "-m", "scripts.serving", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout)


@pytest.fixture
def trace(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("arrival_s,prompt_tokens,output_tokens\n0,100,10\n0.5,200,20\n", encoding="utf-8")
    return path


def one_line_error(run, *words):
    assert run.returncode == 2, run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") or "usage:" in run.stderr, run.stderr
    for word in words:
        assert word in run.stderr, run.stderr
    assert "Traceback" not in run.stderr
    TALLY[("serving CLI", "clear error")] += 1


def test_cli_refuses_a_device_and_a_fifo_without_reading_them(tmp_path):
    start = time.perf_counter()
    one_line_error(cli("--schedule", "whole", "--trace", "/dev/zero", "--out", str(tmp_path / "o.json")),
                   "not a regular file")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    one_line_error(cli("--schedule", "whole", "--trace", str(fifo), "--out", str(tmp_path / "o.json")),
                   "not a regular file")
    assert time.perf_counter() - start < 20


@pytest.mark.parametrize(("flag", "value"), [("--decode-gpus", "100000000"), ("--prefill-gpus", "1000000000"),
                                             ("--chunk-tokens", str(10 ** 20)), ("--chunk-tokens", "1e20"),
                                             ("--max-batch", "0"), ("--efficiency", "flops=2"),
                                             ("--efficiency", "flops=0.5,speed=2"), ("--efficiency", "overhead_ms=x"),
                                             ("--first-token", "transfer"), ("--block-size", "0"),
                                             ("--gpu-memory-utilization", "1.5"), ("--memory", "virtual"),
                                             ("--max-concurrency", "0")])
def test_cli_bounds_every_size(tmp_path, trace, flag, value):
    one_line_error(cli("--schedule", "disagg", "--trace", str(trace), "--out", str(tmp_path / "o.json"), flag, value),
                   flag)


def test_cli_out_is_never_a_directory_nor_the_input(tmp_path, trace):
    before = trace.read_bytes()
    one_line_error(cli("--schedule", "whole", "--trace", str(trace), "--out", str(tmp_path)), "is a directory")
    one_line_error(cli("--schedule", "whole", "--trace", str(trace), "--out", str(trace)), "is the --trace input")
    one_line_error(cli("--schedule", "whole", "--trace", str(trace), "--out", str(tmp_path / "no" / "o.json")),
                   "does not exist")
    assert trace.read_bytes() == before


# --- Names that would collide with the site's own files -----------------------------------------------------------

@pytest.mark.parametrize("name", ["source.json", "index.html.json", "lesson.js.json", "..json", "my anchor.json",
                                  "Qwen.json", "x.new.json", "report.html.json", "a..b.json", "default.json",
                                  "shared.json", "logs.json"])
def test_anchor_stems_cannot_replace_the_default_site(tmp_path, name):
    with pytest.raises(InputError):
        check_stem(tmp_path / name)
    TALLY[("anchor name", "clear error")] += 1


def test_the_shipped_anchor_stems_are_fine():
    for path in sorted((ROOT / "anchors").glob("*.json")):
        assert check_stem(path) == path.stem


# --- Reading: a byte cap while reading, regular files only ----------------------------------------------------

def test_json_inputs_are_read_with_a_cap_and_only_from_regular_files(tmp_path):
    with pytest.raises(InputError, match="not a regular file"):
        read_json(Path("/dev/zero"))
    with pytest.raises(InputError, match="not a regular file"):
        read_json(tmp_path)
    big = tmp_path / "big.json"
    big.write_text("[" + "1," * 600_000 + "1]")
    with pytest.raises(InputError, match="more than the"):
        read_json(big, max_bytes=1_000_000)


def test_every_schema_is_valid_and_every_shipped_input_satisfies_it():
    shipped = {schema.WORKLOADS: ["config/workloads.json", *map(str, (ROOT / "anchors" / "workloads").glob("*.json"))],
               schema.GPUS: ["config/gpus.json"], schema.CITED: ["config/cited.json"],
               schema.TOKENIZERS: ["config/tokenizers.json"], schema.PASSAGES: ["config/passages.json"],
               schema.VENDOR: ["config/vendor.json"], schema.BENCH_RECORD: [str(p) for p in BENCH],
               schema.COURSE: ["config/course.json"], schema.REAL_ENGINE: ["config/real_engine.json"],
               schema.TECHNIQUES: ["config/techniques.json"], schema.PREFIX: ["config/prefix.json"],
               schema.ANCHOR: ["anchor-model.json", *map(str, (ROOT / "anchors").glob("*.json"))]}
    for name in schema.ALL:
        schema.validator(name)
        for rel in shipped.get(name, []):
            schema.validate(read_json(ROOT / rel), name, rel)
        described = json.dumps(json.loads((schema.SCHEMAS / f"{name}.schema.json").read_text()))
        assert '"description"' in described, name  # bounds say why


def test_the_hostile_cases_tally():
    """Printed with -s: the cases above by input kind and outcome (every one is a clear error or read right)."""
    print("\nhostile cases:", dict(sorted((f"{k} / {o}", n) for (k, o), n in TALLY.items())))
    assert all(outcome in ("clear error", "accepted right") for _, outcome in TALLY)


@pytest.mark.parametrize("body, words", [("[1, 2]", "holds a list"), ('{"schema_version": 1}', "without it")])
def test_a_workloads_file_that_is_not_an_object_of_workloads_is_one_line(root, body, words):
    """Issue 63 (a regression): config/workloads.json as a top-level list gave an AttributeError, because the
    techniques check reads it before the workloads file's own check."""
    (root / "config" / "workloads.json").write_text(body, encoding="utf-8")
    refused(root, "workloads", "config/workloads.json", "field workloads", words)


@pytest.mark.parametrize("href", ["\\\\evil.example/x", "/\\evil.example/x", "..\\C13-L4\\index.html"])
def test_a_course_link_with_a_backslash_is_refused(root, href):
    """Issue 63: browsers read \\\\host and /\\host as //host, so these hrefs passed the schema and left the site."""
    edit(root, INPUTS["course"], lambda d: d["links"]["lab"].update(href=href))
    refused(root, "course", INPUTS["course"], "links.lab.href")


def test_a_course_file_without_lab_commands_is_refused_by_its_own_name(root):
    """Issue 63: a missing lab_commands was reported against the templates."""
    edit(root, INPUTS["course"], lambda d: d.pop("lab_commands"))
    refused(root, "course", INPUTS["course"], "lab_commands")


def test_a_lab_command_with_full_width_digits_is_refused(root):
    """Issue 63's rerun: `--rate ４０` in a lab command was accepted; the student copies it and the shell refuses it."""
    edit(root, INPUTS["course"], lambda d: d["lab_commands"][0].update(command="make bench RATE=４０"))
    refused(root, "course", INPUTS["course"], "lab_commands[0].command")


def test_a_burst_the_anchor_cannot_hold_is_left_out_and_said(tmp_path):
    """Issue 63's rerun: a 300,000-token burst prompt in config/prefix.json passed the schema, then the simulation
    crashed. (Refusing it instead stopped every anchor with a short context: Llama-2's 4,096 cannot hold the
    committed 32,768-token burst.) Now the burst is not run where the context cannot hold it: no admission rows
    or claims, and the records the report's sentence names (the burst's length, the model's context)."""
    from scripts.serving.experiments.prefix_runs import build

    doc = json.loads((ROOT / "config" / "prefix.json").read_text(encoding="utf-8"))
    doc["admission"]["burst"]["value"].update(prompt_tokens=300_000)
    doc["experiment"]["requests"]["value"] = 100  # what is checked does not depend on the runs' size (14 s -> 2 s)
    path = tmp_path / "prefix.json"
    path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    out = build(ROOT / "anchor-model.json", ROOT / "config" / "workloads.json", path)
    assert out["admission"] is None and not any(c["id"].startswith("admission.") for c in out["claims"])
    recs = out["provenance"]
    assert recs["admission.burst.prompt_tokens"]["value"] == 300_000
    assert recs["admission.model_context"]["value"] == 262_144
    assert not any(r.startswith(("admission.shared.", "admission.classes.")) for r in recs)


def test_a_system_prompt_too_long_for_the_gpu_is_one_line_naming_the_prefix_config(tmp_path):
    """Issue 63's rerun: a 250,000-token system prompt passed the schema, then the simulation stopped with a message
    that named no file. Now the engine's own refusal (more memory than the GPU has free) is said against
    config/prefix.json and its fields."""
    from scripts.serving.experiments.prefix_runs import build

    doc = json.loads((ROOT / "config" / "prefix.json").read_text(encoding="utf-8"))
    doc["workloads"]["system_prompt"]["prefixes"].update(value=[250_000])
    path = tmp_path / "prefix.json"
    path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    with pytest.raises(InputError, match="the simulation refused") as err:
        build(ROOT / "anchor-model.json", ROOT / "config" / "workloads.json", path)
    assert str(err.value).startswith(path.as_posix()) and "\n" not in str(err.value)


def test_a_gpu_figure_that_makes_a_lesson_claim_false_stops_before_any_rule(root):
    """Issue 80: an anchor's GPU with 1e17 FLOP/s (within the schema's order of magnitude) was refused only after
    the whole sweep, by a line that named anchor-model.json scenario.chunk_tokens. The lesson's claims are settled
    in the up-front check now (the precomputed rule's own code, 0.1 s), and the line names the GPU file too."""
    edit(root, "config/gpus.json", lambda d: d["gpus"]["h100_sxm"]["peak_bf16_flops"].update(value=1e17))
    with pytest.raises(InputError) as info:
        check_all(root)
    message = str(info.value)
    assert message.startswith("claim timeline.") and "\n" not in message, message
    assert "anchor-model.json scenario.chunk_tokens (or the GPU's figures in config/gpus.json" in message


def test_a_workload_of_one_token_outputs_is_refused_by_its_field(root):
    """Issue 80: every output one token long (no request has a TPOT) was refused by a line naming a template."""
    edit(root, "config/workloads.json",
         lambda d: d["workloads"]["chat"]["output_tokens"].update(min=1, max=1, median=1))
    refused(root, "workloads", "config/workloads.json", "workloads.chat.output_tokens.max (1) must be at least 2")
