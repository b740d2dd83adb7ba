"""The workflow through a real Slurm (run by `make test-cluster`, which boots a one-node Slurm and stops it after).

A reduced sweep (a few cells, each its (workload, schedule)'s job of every rate; one of another anchor, as
`make anchors-cluster` runs them) and a reduced benchmark
run as Slurm jobs through snakemake-executor-plugin-slurm;
the same targets run with the local executor in another scratch copy. Sweep cells must be byte-identical, the
benchmark records must pass the schema with identical tokens, Slurm itself must know the jobs, and a job that fails
must fail the run with its log path, within a time limit.
"""
import json
import re
import subprocess
import sys

import pytest

from scripts.bench.gather import gather
from scripts.bench.records import check_record
from tests.conftest import scratch_copy

pytestmark = pytest.mark.cluster

CELLS = ["build/default/serving/cells/chat/whole/r2.json", "build/default/serving/cells/chat/chunked/r2.json",
         "build/default/serving/cells/chat_long/disagg/r1.json",
         "build/llama-2-7b-a100/serving/cells/chat_long/chunked/r2.json"]  # another anchor's job, keyed by its name
BENCH = "build/bench/main.json"
SMOKE_BENCH = "bench_partitions: [main]\nbench_new_tokens: [4, 8]\nbench_runs: 3\nbench_warmup: 1\nbench_threads: 1\n"
CONFIG = ["--configfile", "smoke-bench.yaml"]  # a tiny benchmark, on top of config/cluster.yaml
SLURM = ["--profile", "profiles/slurm", "--slurm-init-seconds-before-status-checks", "2", "--jobs", "3",
         "--seconds-between-status-checks", "2", "--slurm-no-account"]  # a test cluster has no accounts


def snakemake(cwd, *args, timeout=600):
    return subprocess.run([sys.executable, "-m", "snakemake", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout)


def slurm_jobs() -> list[dict]:
    """Every job slurmctld still remembers (MinJobAge keeps finished ones), as key=value dicts."""
    out = subprocess.run(["scontrol", "show", "job", "-o"], capture_output=True, text=True, timeout=30).stdout
    return [dict(re.findall(r"(\w+)=(\S*)", line)) for line in out.splitlines() if line.startswith("JobId=")]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    assert subprocess.run(["sinfo", "-h"], capture_output=True, timeout=30).returncode == 0, \
        "no Slurm: run `make test-cluster`, which starts one"
    on_slurm = scratch_copy(tmp_path_factory.mktemp("slurm"))
    here = scratch_copy(tmp_path_factory.mktemp("local"))
    for work in (on_slurm, here):
        (work / "smoke-bench.yaml").write_text(SMOKE_BENCH)
    before = {j["JobId"] for j in slurm_jobs()}
    slurm = snakemake(on_slurm, *SLURM, *CONFIG, "--", *CELLS, BENCH)
    assert slurm.returncode == 0, slurm.stdout[-3000:] + slurm.stderr[-3000:]
    local = snakemake(here, "--profile", "profiles/local", *CONFIG, "--", *CELLS, BENCH)
    assert local.returncode == 0, local.stderr[-3000:]
    return {"slurm": on_slurm, "local": here, "new_jobs": [j for j in slurm_jobs() if j["JobId"] not in before]}


def test_sweep_cells_from_slurm_equal_the_local_ones(runs):
    for cell in CELLS:
        assert (runs["slurm"] / cell).read_bytes() == (runs["local"] / cell).read_bytes(), cell


def test_benchmark_records_from_both_pass_the_schema_with_identical_tokens(runs):
    slurm, local = (json.loads((runs[k] / BENCH).read_text()) for k in ("slurm", "local"))
    for name, rec in (("slurm", slurm), ("local", local)):
        check_record(rec, f"{name}:{BENCH}")
        assert all(r["tokens_identical"] for r in rec["results"])
        assert {r["new_tokens"] for r in rec["results"]} == {4, 8} and all(r["runs"] == 3 for r in rec["results"])
    assert slurm["machine"]["slurm_job_id"] and slurm["machine"]["slurm_partition"] == "main"
    assert local["machine"]["slurm_job_id"] is None
    assert set(slurm["machine"]) == set(local["machine"]) and slurm["model"] == local["model"]


def test_slurm_itself_ran_the_jobs(runs):
    mine = [j for j in runs["new_jobs"] if j.get("WorkDir", "").startswith(str(runs["slurm"]))]
    assert len(mine) >= len(CELLS) + 1, runs["new_jobs"]
    assert all(j["JobState"] == "COMPLETED" and j["Partition"] == "main" for j in mine), mine
    bench = json.loads((runs["slurm"] / BENCH).read_text())
    assert bench["machine"]["slurm_job_id"] in {j["JobId"] for j in mine}


def test_gathered_record_lands_where_make_bench_puts_one(runs, tmp_path):
    (out,) = gather([runs["slurm"] / BENCH], tmp_path)
    rec = json.loads(out.read_text())
    assert out.name == f"{rec['machine']['id']}.json" and out.read_bytes() == (runs["slurm"] / BENCH).read_bytes()


def test_a_failing_job_fails_the_run_with_its_log_path(runs, tmp_path):
    """A job whose script raises (planted in a fresh copy: the sweep's own inputs cannot make a cell fail) fails
    the run, and the run names the job's Slurm log."""
    work = scratch_copy(tmp_path)
    script = work / "scripts" / "simulate_cells.py"
    script.write_text(script.read_text(encoding="utf-8") + "\nraise SystemExit('planted failure')\n",
                      encoding="utf-8")
    run = snakemake(work, *SLURM, "--", "build/default/serving/cells/chat/whole/r2.json", timeout=300)
    assert run.returncode != 0
    text = run.stdout + run.stderr
    logs = re.findall(r"\S*slurm_logs/rule_simulate_cells/\S+\.log", text)
    assert logs, text[-3000:]
    assert any((work / path.split(str(work) + "/")[-1]).exists() or
               __import__("pathlib").Path(path).exists() for path in logs)
