"""Interrupted and concurrent builds: the last good page and data are never lost, and the next build heals.

A scratch copy is built and published once; then builds are killed (SIGKILL, SIGTERM, SIGINT to the whole process
group, as Ctrl-C does) while a given rule runs, the render included: site/ and precomputed/ must be byte-identical
afterwards, and the next build must succeed (clearing the dead build's Snakemake locks) and publish the same bytes.
"""
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from scripts.record import publish as pub
from tests.conftest import scratch_copy

pytestmark = pytest.mark.slow
LOCKED = [sys.executable, "-m", "scripts.record.build_lock", "--", "--cores", "2", "--rerun-incomplete"]


def build_and_publish(work):
    run = subprocess.run([*LOCKED, "all"], cwd=work, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-3000:]
    run = subprocess.run([sys.executable, "-m", "scripts.record.publish"], cwd=work, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    return run


def snapshot(work):
    return {p.relative_to(work).as_posix(): p.read_bytes() for top in ("site", "precomputed")
            for p in sorted((work / top).rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def kit(tmp_path_factory):
    work = scratch_copy(tmp_path_factory.mktemp("kit"))
    build_and_publish(work)
    assert (work / "site" / "index.html").is_file()
    return work, snapshot(work)


def start(work, *args):
    return subprocess.Popen([*LOCKED, *args], cwd=work, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)


def wait_for(proc, text, seconds=300):
    seen, deadline = "", time.time() + seconds
    while time.time() < deadline and proc.poll() is None:
        seen += proc.stdout.readline()
        if text in seen:
            return seen
    raise AssertionError(f"never saw {text!r}: {seen[-2000:]}")


@pytest.mark.parametrize(("rule", "sig"), [
    ("fetch_tokenizer", signal.SIGKILL), ("convert_qwen35", signal.SIGTERM), ("verify_qwen35", signal.SIGKILL),
    ("precomputed", signal.SIGKILL), ("tokenizer_counts", signal.SIGTERM), ("bench_medians", signal.SIGKILL),
    ("serving_cell", signal.SIGINT), ("serving_goodput", signal.SIGKILL), ("serving_sweep", signal.SIGKILL),
    ("serve_results", signal.SIGTERM), ("manifest", signal.SIGTERM), ("render_site", signal.SIGKILL),
    ("render_site", signal.SIGINT)])
def test_a_build_stopped_in_any_rule_loses_nothing_and_the_next_one_heals(kit, rule, sig):
    work, before = kit
    proc = start(work, "all", "--forcerun", rule)
    wait_for(proc, f"rule {rule}:")
    os.killpg(proc.pid, sig)
    try:
        proc.wait(timeout=120)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    assert snapshot(work) == before  # yesterday's page and data, byte for byte
    healed = build_and_publish(work)
    assert snapshot(work) == before, healed.stderr[-2000:]


def test_a_second_build_is_told_who_is_building(kit):
    work, _ = kit
    first = start(work, "all", "--forcerun", "serving_cell", "--cores", "1")
    try:
        wait_for(first, "rule serving_cell:")
        second = subprocess.run([*LOCKED, "all"], cwd=work, capture_output=True, text=True, timeout=60)
        assert second.returncode == 75
        assert "another build is running" in second.stderr and f"PID {first.pid}" in second.stderr
    finally:
        os.killpg(first.pid, signal.SIGKILL)
        first.wait(timeout=30)


def test_a_dead_builds_snakemake_lock_is_cleared_with_a_note(kit):
    work, before = kit
    proc = start(work, "all", "--forcerun", "precomputed")
    wait_for(proc, "rule precomputed:")
    os.killpg(proc.pid, signal.SIGKILL)  # Snakemake cannot clean up: its lock stays behind
    proc.wait(timeout=30)
    assert list((work / ".snakemake" / "locks").glob("*.lock")), "expected a stale Snakemake lock"
    run = subprocess.run([*LOCKED, "all"], cwd=work, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "stale Snakemake lock" in run.stderr
    build_and_publish(work)
    assert snapshot(work) == before


def old_install_and_new_build(root):
    """Published files that say "old", and a finished build of the same files that say "new"."""
    for name in ("precomputed/a.json", "precomputed/b.json", "site/index.html"):
        for where, content in (("", b"old"), ("build/", b"new")):
            (root / where / name).parent.mkdir(parents=True, exist_ok=True)
            (root / where / name).write_bytes(content)


def state(root):
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and not p.relative_to(root).as_posix().startswith("build/")}


def test_publish_stopped_before_its_journal_leaves_the_old_version(tmp_path, monkeypatch):
    old_install_and_new_build(tmp_path)
    old = state(tmp_path)

    def crash(*_):
        raise KeyboardInterrupt
    monkeypatch.setattr(pub, "write_bytes_atomic", crash)
    with pytest.raises(KeyboardInterrupt):
        pub.publish(tmp_path)
    monkeypatch.undo()
    pub.recover(tmp_path)  # what the next run does first
    assert state(tmp_path) == old


def test_publish_stopped_after_its_journal_is_finished_by_the_next_run(tmp_path, monkeypatch):
    old_install_and_new_build(tmp_path)
    calls = []
    real = os.replace

    def crash_after_one(a, b):
        calls.append(a)
        if len(calls) > 1 and str(a).endswith(pub.STAGED):
            raise KeyboardInterrupt
        return real(a, b)
    monkeypatch.setattr(pub.os, "replace", crash_after_one)
    with pytest.raises(KeyboardInterrupt):
        pub.publish(tmp_path)
    monkeypatch.undo()
    assert json.loads((tmp_path / pub.JOURNAL).read_text())["renames"]
    pub.recover(tmp_path)
    assert state(tmp_path) == {"precomputed/a.json": b"new", "precomputed/b.json": b"new", "site/index.html": b"new"}
