"""Interrupted and concurrent builds: the last good page and data are never lost, and the next build heals.

A scratch copy is built and published once; then builds are killed (SIGKILL, SIGTERM, SIGINT to the whole process
group, as Ctrl-C does) while a given rule runs, the render included: site/ and precomputed/ must be byte-identical
afterwards, and the next build must succeed (clearing the dead build's Snakemake locks) and publish the same bytes.
"""
import fcntl
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from scripts.record import publish as pub
from scripts.record.lock import LOCK
from tests.conftest import ROOT, copy_of_built_kit, publishing_build

pytestmark = pytest.mark.slow
LOCKED = [sys.executable, "-m", "scripts.record.build_lock", "--", "--cores", "2", "--rerun-incomplete"]


def publish(work):
    run = subprocess.run([sys.executable, "-m", "scripts.record.publish"], cwd=work, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    return run


def build_and_publish(work):
    run = subprocess.run([*LOCKED, "all"], cwd=work, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-3000:]
    return publish(work)


def snapshot(work):
    return {p.relative_to(work).as_posix(): p.read_bytes() for top in ("site", "precomputed")
            for p in sorted((work / top).rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def kit(built_kit, tmp_path_factory):
    work = copy_of_built_kit(built_kit[0], tmp_path_factory.mktemp("interrupts"))
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


def live_members(group: int) -> list[int]:
    """PIDs in process group `group` that have not exited (a zombie has: it holds no files, no lock)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            stat = (entry / "stat").read_text()
        except (OSError, ValueError):
            continue
        fields = stat[stat.rindex(")") + 2:].split()  # state, ppid, pgrp, ... (the name may hold spaces)
        if entry.name.isdigit() and fields[2] == str(group) and fields[0] not in ("Z", "X"):
            found.append(int(entry.name))
    return found


def stop_group(work, proc, sig, seconds=60):
    """Send `sig` to the build's process group, as Ctrl-C or `kill -- -PGID` would, and return once every process
    in it has exited and the kit's lock is free. Waiting for the wrapper alone is not enough: on a loaded machine
    the killed Snakemake can still hold the inherited lock after its parent is reaped, and the next build then
    (rightly) stops with "another build is running"; CI failed that way once."""
    os.killpg(proc.pid, sig)
    try:
        proc.wait(timeout=120)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    deadline = time.time() + seconds
    while (alive := live_members(proc.pid)) and time.time() < deadline:
        time.sleep(0.05)
    assert not alive, f"processes of the stopped build still alive: {alive}"
    with open(work / LOCK, "a+") as fh:
        while True:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                assert time.time() < deadline, "the kit's build lock is still held after the build's processes exited"
                time.sleep(0.05)
        fcntl.flock(fh, fcntl.LOCK_UN)


# `make test` kills one data rule (Ctrl-C) and stops a publish at every step (below); `make test-all` kills every rule,
# the render included (its heal and its guard are the same publish-after-complete the data rule's case checks).
KILLS = [
    ("fetch_tokenizer", signal.SIGKILL), ("convert_qwen35", signal.SIGTERM), ("verify_qwen35", signal.SIGKILL),
    ("precomputed", signal.SIGKILL), ("tokenizer_counts", signal.SIGINT), ("bench_medians", signal.SIGKILL),
    ("simulate_cells", signal.SIGTERM), ("simulate_goodput", signal.SIGKILL), ("simulate_sweep", signal.SIGKILL),
    ("measured_results", signal.SIGTERM), ("manifest", signal.SIGTERM), ("manifest", signal.SIGINT),
    ("render_site", signal.SIGKILL), ("render_site", signal.SIGINT)]
# `make test`'s case is the data rule whose heal is cheapest, the manifest, stopped by Ctrl-C: its heal re-runs it alone
# (10 s in all, against 25 s for tokenizer_counts, whose heal re-runs the data and the render behind it, and 13 s to
# 142 s for a simulate_cells job, whose heal re-runs the goodput searches and engine comparisons behind it). The other
# rules' cases guard no other mechanism: the wrapper's signal handling and publish-after-complete are the same for
# every rule; SIGKILL of a rule is also `make test`'s, in the dead-lock case below.
IN_MAKE_TEST = {("manifest", signal.SIGINT)}


@pytest.mark.parametrize(("rule", "sig"), [
    kill if kill in IN_MAKE_TEST else pytest.param(*kill, marks=pytest.mark.exhaustive) for kill in KILLS])
def test_a_build_stopped_in_any_rule_loses_nothing_and_the_next_one_heals(kit, rule, sig):
    work, before = kit
    proc = start(work, "all", "--forcerun", rule)
    wait_for(proc, f"rule {rule}:")
    stop_group(work, proc, sig)
    assert snapshot(work) == before  # yesterday's page and data, byte for byte
    healed = build_and_publish(work)
    assert snapshot(work) == before, healed.stderr[-2000:]


def test_a_second_build_is_told_who_is_building(kit):
    work, _ = kit
    first = start(work, "all", "--forcerun", "simulate_cells", "--cores", "1")
    try:
        wait_for(first, "rule simulate_cells:")
        second = subprocess.run([*LOCKED, "all"], cwd=work, capture_output=True, text=True, timeout=60)
        assert second.returncode == 75
        assert "another build is running" in second.stderr and f"PID {first.pid}" in second.stderr
    finally:
        stop_group(work, first, signal.SIGKILL)


def test_a_dead_builds_snakemake_lock_is_cleared_with_a_note(kit):
    work, before = kit
    proc = start(work, "all", "--forcerun", "manifest")  # a leaf: the heal re-runs it alone
    wait_for(proc, "rule manifest:")
    stop_group(work, proc, signal.SIGKILL)  # Snakemake cannot clean up: its lock stays behind
    assert list((work / ".snakemake" / "locks").glob("*.lock")), "expected a stale Snakemake lock"
    run = subprocess.run([*LOCKED, "all"], cwd=work, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "stale Snakemake lock" in run.stderr
    publish(work)
    assert snapshot(work) == before


PUBLISHING = publishing_build()


@pytest.mark.parametrize("breakage", ["workload chat-2", "no templates/lesson.js"])
def test_a_build_that_cannot_make_every_output_publishes_nothing(kit, breakage):
    """Once, a workload Snakemake could not match, or a deleted template, let `make site` exit 0 and republish the
    old data with a re-stamped manifest. Now the input check stops it before Snakemake, in one line."""
    work, before = kit
    workloads, script = work / "config" / "workloads.json", work / "templates" / "lesson.js"
    saved = {p: p.read_bytes() for p in (workloads, script)}
    try:
        if breakage.startswith("workload"):
            doc = json.loads(workloads.read_text(encoding="utf-8"))
            doc["workloads"]["chat-2"] = doc["workloads"]["chat"]
            doc["sweep"]["requests"]["value"] = 50
            workloads.write_text(json.dumps(doc), encoding="utf-8")
        else:
            script.unlink()
        run = subprocess.run(PUBLISHING, cwd=work, capture_output=True, text=True, timeout=300)
        assert run.returncode == 2, run.stderr
        lines = run.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), run.stderr
        assert ("config/workloads.json" if breakage.startswith("workload") else "templates/lesson.js") in lines[0]
        assert snapshot(work) == before
    finally:
        for path, data in saved.items():
            path.write_bytes(data)


def test_publish_waits_for_every_output_to_be_current(kit):
    """The guard itself: data rebuilt but the page not (a narrower target) is never published."""
    work, before = kit
    passages = work / "config" / "passages.json"
    saved = passages.read_bytes()
    try:
        doc = json.loads(saved)
        doc["passages"]["zh"]["title"] = "中文段落(改)"
        passages.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
        run = subprocess.run([*PUBLISHING[:3], "--target", "data", "--publish", "--", "--cores", "2"], cwd=work,
                             capture_output=True, text=True, timeout=600)
        assert run.returncode == 1, run.stderr[-2000:]
        assert "the build is not complete" in run.stderr and "render_site" in run.stderr, run.stderr[-2000:]
        assert snapshot(work) == before
    finally:
        passages.write_bytes(saved)


def test_a_plain_snakemake_in_the_checkout_keeps_its_locks(kit):
    """A Snakemake started by hand holds .snakemake/locks without the kit's lock: it is alive, so its locks stay
    and the build stops, naming it."""
    work, before = kit
    locks = work / ".snakemake" / "locks"
    locks.mkdir(parents=True, exist_ok=True)
    fake_lock = locks / "0.input.lock"
    fake_lock.write_text("x")
    other = subprocess.Popen(["bash", "-c", "exec -a snakemake sleep 60"], cwd=work)
    try:
        time.sleep(0.3)
        run = subprocess.run(PUBLISHING, cwd=work, capture_output=True, text=True, timeout=120)
        assert run.returncode == 75, run.stderr
        assert f"a Snakemake run (PID {other.pid})" in run.stderr
        assert fake_lock.exists()
        assert snapshot(work) == before
    finally:
        other.kill()
        other.wait(timeout=10)
        fake_lock.unlink(missing_ok=True)


def test_a_lock_path_that_is_a_directory_and_an_unwritable_checkout_are_one_line(tmp_path):
    (tmp_path / ".snakemake" / "c13-build.lock").mkdir(parents=True)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    run = subprocess.run(PUBLISHING, cwd=tmp_path, capture_output=True, text=True, timeout=60, env=env)
    assert run.returncode != 0 and "Traceback" not in run.stderr, run.stderr
    assert run.stderr.strip().startswith("error: cannot open the build lock .snakemake/c13-build.lock"), run.stderr
    from scripts.record.build_lock import check_writable

    (tmp_path / "precomputed").write_text("a file where the directory should be")
    assert check_writable(tmp_path) == 2


def old_install_and_new_build(root):
    """Published files that say "old", a finished build of the same files that says "new", and a committed file
    in precomputed/ the build does not make (none is today: hand-edited inputs live in config/), which must survive
    every switch."""
    for name in ("precomputed/a.json", "precomputed/sub/b.json", "site/index.html", "site/lesson.js"):
        for where, content in (("", b"old"), ("build/default/", b"new")):
            (root / where / name).parent.mkdir(parents=True, exist_ok=True)
            (root / where / name).write_bytes(content)
    (root / "precomputed" / "kept.json").write_bytes(b"input")


OLD = {"precomputed/a.json": b"old", "precomputed/sub/b.json": b"old", "precomputed/kept.json": b"input",
       "site/index.html": b"old", "site/lesson.js": b"old"}
NEW = {"precomputed/a.json": b"new", "precomputed/sub/b.json": b"new", "precomputed/kept.json": b"input",
       "site/index.html": b"new", "site/lesson.js": b"new"}


def state(root):
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and p.relative_to(root).parts[0] in ("precomputed", "site")}


def publish_in(root, stop_at=None, swap=True):
    env = {**os.environ, "PYTHONPATH": str(ROOT), **({"C13_PUBLISH_STOP_AT": stop_at} if stop_at else {}),
           **({} if swap else {"C13_PUBLISH_NO_SWAP": "1"})}
    return subprocess.run([sys.executable, "-m", "scripts.record.publish"], cwd=root, env=env, capture_output=True,
                          text=True, timeout=60)


def whole(seen: dict, folder: str) -> str:
    """Which version a published folder holds, all of it: "old", "new", "missing", or "mixed"."""
    values = {v for n, v in seen.items() if n.startswith(folder + "/") and v != b"input"}
    return {frozenset(): "missing", frozenset({b"old"}): "old", frozenset({b"new"}): "new"}.get(frozenset(values),
                                                                                                "mixed")


# the two-rename path (a file system without RENAME_EXCHANGE): make test stops it where a folder is missing and after
# each switch; every step in make test-all
TWO_RENAME_IN_MAKE_TEST = ("switch-0-moved-old", "switch-1-moved-new")


@pytest.mark.parametrize("stop_at,swap", [(s, True) for s in pub.STEPS] + [
    (s, False) if s in TWO_RENAME_IN_MAKE_TEST else pytest.param(s, False, marks=pytest.mark.exhaustive)
    for s in pub.TWO_RENAME_STEPS])
def test_publish_killed_at_any_step_leaves_the_old_pair_or_is_finished_to_the_new_one(tmp_path, stop_at, swap):
    """Each step of a publish, with the directories swapped in one step (this file system) and by two renames (one
    that cannot swap). Issue 80: with the swap, a kill anywhere leaves precomputed/ and site/ both there and each
    whole; only between the two swaps are they of different builds, until the next build target recovers."""
    old_install_and_new_build(tmp_path)
    run = publish_in(tmp_path, stop_at, swap)
    assert run.returncode == 137, run.stderr  # stopped there, as SIGKILL would
    steps = pub.STEPS if swap else pub.TWO_RENAME_STEPS
    decided = steps.index(stop_at) >= steps.index("journal-written")
    seen = state(tmp_path)
    # Nothing is ever staged inside the published directories: whatever is there is old or new, never a stray.
    assert not [n for n in seen if n.endswith((".publishing", ".new", ".old"))], seen
    if not decided:
        assert seen == OLD
    if swap:
        folders = (whole(seen, "precomputed"), whole(seen, "site"))
        assert folders == {"switch-0-swapped": ("new", "old")}.get(stop_at, folders) and "missing" not in folders \
            and "mixed" not in folders, (stop_at, folders)
    pub.recover(tmp_path)  # what every build target does first
    assert state(tmp_path) == (NEW if decided else OLD)
    assert not (tmp_path / pub.STAGE).exists()
    again = publish_in(tmp_path)  # and the next publish completes from either
    assert again.returncode == 0, again.stderr
    assert state(tmp_path) == NEW


@pytest.mark.exhaustive
def test_publish_killed_by_a_real_signal_at_random_moments_never_mixes_the_pair(tmp_path):
    """SIGKILL at 12 moments spread over a publish of 1,000 files: after recovery, the old pair or the new. make test
    stops a publish at each of its steps instead (test_publish_killed_at_any_step_leaves_the_old_pair_or_is_finished_
    to_the_new_one, C13_PUBLISH_STOP_AT), which fails on the same mixed pair."""
    outcomes = []
    for n in range(12):
        root = tmp_path / f"r{n}"
        old_install_and_new_build(root)
        for i in range(1000):
            for where, content in (("", b"old"), ("build/default/", b"new")):
                (root / where / "precomputed" / "many" / f"{i}.json").parent.mkdir(parents=True, exist_ok=True)
                (root / where / "precomputed" / "many" / f"{i}.json").write_bytes(content)
        proc = subprocess.Popen([sys.executable, "-m", "scripts.record.publish"], cwd=root,
                                env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        time.sleep(0.05 + 0.04 * n)
        proc.kill()
        proc.wait(timeout=30)
        pub.recover(root)
        values = set(state(root).values()) - {b"input"}
        assert values in ({b"old"}, {b"new"}), (n, values)
        outcomes.append(values.pop())
    print(f"\nkilled publishes: {outcomes.count(b'old')} left the old pair, {outcomes.count(b'new')} the new")
