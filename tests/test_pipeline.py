"""The pipeline as CI sees it: a scratch copy of the tracked files rebuilds byte-identical data.

The copy (conftest's `built_kit`, built once per session) sits at a path with a space, and Snakemake runs under an
interpreter reached through one, as in a checkout at `~/lesson kit/` (Snakemake leaves that interpreter unquoted:
scripts/record/snakemake_compat.py).
"""
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, copy_of_built_kit

pytestmark = pytest.mark.slow


PYTHON = Path(sys.executable)  # replaced by `scratch` with built_kit's interpreter (under a path with a space)


def snakemake(cwd, *args):
    return subprocess.run([PYTHON, "-m", "snakemake", "--cores", "2", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=900)


@pytest.fixture(scope="module")
def scratch(built_kit, tmp_path_factory):
    global PYTHON
    built, PYTHON = built_kit
    work = copy_of_built_kit(built, tmp_path_factory.mktemp("pipeline"))
    run = snakemake(work, "all", "-n")  # data and page current: each test below leaves them so (a test that did
    # not would show as extra jobs in the next one's dry run; a restored input's checksum is Snakemake's own check)
    assert run.returncode == 0 and "Nothing to be done" in run.stdout + run.stderr, run.stdout[-3000:]
    return work


def scheduled_jobs(log: str) -> set[str]:
    """Job names from the first 'Job stats' table of a dry run."""
    table = log.split("Job stats:", 1)[1].split("total", 1)[0]
    return {line.split()[0] for line in table.splitlines()[3:] if line.strip()}


def built_files(work):
    build = work / "build" / "default" / "precomputed"
    return {p.relative_to(build).as_posix(): p.read_bytes() for p in sorted(build.rglob("*.json"))}


def test_committed_data_matches_a_fresh_build(scratch):
    """The data built in a fresh-clone copy equals precomputed/, byte for byte (run alone, pytest rebuilds it from
    scratch, as `make check-stale` does; under `make test` the copy starts from the checkout's build, which
    `publish --check-built` has just compared with the committed precomputed/)."""
    fresh = built_files(scratch)
    assert fresh, "the build produced nothing"
    stale = [name for name, data in fresh.items() if (ROOT / "precomputed" / name).read_bytes() != data]
    assert not stale, f"committed precomputed/ is stale: {stale} (run `make site` and commit)"


def test_make_tests_staleness_check_fails_on_edited_committed_data(scratch):
    """`make test` builds with `build_lock --fail-if-stale --publish`: the build is compared with precomputed/
    before the publish; a committed file that differs fails it, naming the file, and is not overwritten. (That the
    untouched checkout passes the same command is what every `make test` shows first, on the checkout itself: its
    staleness build; this test ran it on the copy too until issue 61.)"""
    check = [PYTHON, "-m", "scripts.record.build_lock", "--target", "all", "--fail-if-stale", "--publish", "--",
             "--cores", "2", "--quiet", "rules"]
    target = scratch / "precomputed" / "serving.json"
    original = target.read_bytes()
    edited = original.replace(b'"requests":2000', b'"requests":2001', 1)
    try:
        target.write_bytes(edited)
        stale = subprocess.run(check, cwd=scratch, capture_output=True, text=True, timeout=300)
        assert stale.returncode == 1 and "stale: precomputed/serving.json" in stale.stderr, stale.stderr
        assert target.read_bytes() == edited  # nothing was published over it
    finally:
        target.write_bytes(original)


@pytest.mark.exhaustive  # in `make test`, the test above compares a fresh build with the data `make site` committed
def test_two_builds_are_byte_identical(scratch):
    first = built_files(scratch)
    run = snakemake(scratch, "data", "--forceall")
    assert run.returncode == 0, run.stderr[-3000:]
    assert built_files(scratch) == first


def test_up_to_date_tree_schedules_nothing(scratch):
    run = snakemake(scratch, "data", "-n")
    assert run.returncode == 0
    assert "Nothing to be done" in run.stdout + run.stderr


def test_a_dry_run_checks_and_deletes_nothing(scratch, tmp_path):
    """`snakemake -n` only plans: a tampered cache file stays (a real run deletes and re-fetches it) and a broken
    input is not reported by the dry run (the build checks it before Snakemake starts)."""
    cached = scratch / ".cache" / "vendor" / "vega.min.js"
    original, gpus = cached.read_bytes(), (scratch / "config" / "gpus.json").read_bytes()
    try:
        cached.write_bytes(original + b"\n// tampered")
        (scratch / "config" / "gpus.json").write_text("{", encoding="utf-8")
        run = snakemake(scratch, "data", "-n")
        assert run.returncode == 0 and "error:" not in run.stderr, run.stderr[-2000:]
        assert cached.read_bytes() == original + b"\n// tampered"
        real = snakemake(scratch, "data")  # a real run checks first: one line, and nothing runs
        assert real.returncode == 2 and real.stderr.startswith("error: config/gpus.json"), real.stderr[-2000:]
    finally:
        cached.write_bytes(original)
        (scratch / "config" / "gpus.json").write_bytes(gpus)


def test_snakemake_lint_is_clean(scratch):
    run = subprocess.run([PYTHON, "-m", "snakemake", "--lint"], cwd=scratch, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr


@pytest.mark.exhaustive  # make test: test_editing_a_package_module_reruns_exactly_its_rules[scripts/common/display.py]
def test_changing_a_helper_module_reruns_the_rule(scratch):  # edits the same module and asserts the exact job set
    helper = scratch / "scripts" / "common" / "display.py"
    original = helper.read_text()
    helper.write_text(original + "\n")
    try:
        run = snakemake(scratch, "data", "-n")
        assert "precomputed" in scheduled_jobs(run.stdout + run.stderr)
    finally:
        helper.write_text(original)
        run = snakemake(scratch, "data", "--touch")  # mtime only: the content is back as it was


def test_no_wall_clock_time_in_derived_outputs(scratch):
    import re

    for name, data in built_files(scratch).items():
        assert not re.search(rb"20\d\d-\d\d-\d\dT\d\d:\d\d", data), name


def test_changed_passage_reruns_only_the_tokenizer_rules(scratch):
    import json

    path = scratch / "config" / "passages.json"
    original = path.read_text(encoding="utf-8")
    doc = json.loads(original)
    doc["passages"]["running"]["text"] += "!"
    path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    try:
        run = snakemake(scratch, "data", "-n")
        assert scheduled_jobs(run.stdout + run.stderr) == {"tokenizer_counts", "shared_data", "manifest", "data"}
    finally:
        path.write_text(original, encoding="utf-8")


# One module per package: editing it must rerun the rules whose scripts import it, then only what consumes their
# outputs. Stated by hand from what each rule's script does (the Snakefile derives its inputs from the imports).
PAGE = {"render_site", "all"}
EDITS = {
    "scripts/model/roofline.py": ({"precomputed", "manifest", "simulate_cells", "simulate_goodput", "simulate_engines",
                                   "measured_vs_simulated_load", "measured_vs_simulated_prefix",
                                   "measured_vs_simulated_heldout", "simulate_prefix"},
                                  PAGE | {"simulate_sweep", "measured_records", "shared_data"}),
    "scripts/lesson/precomputed.py": ({"precomputed", "manifest"}, PAGE),
    "scripts/tokens/corpus.py": ({"verify_qwen35", "manifest"}, {"tokenizer_counts", "shared_data"} | PAGE),
    "scripts/bench/records.py": ({"bench_medians", "manifest"}, PAGE | {"shared_data"}),
    # the measuring code is hashed, never rerun by a build; the lab page's records derive the tiny model's parameter
    # count with it (scripts/page/lab.py, Derivation.TINYGPT), so the render runs again
    "scripts/bench/tinygpt.py": ({"manifest", "render_site"}, {"all"}),
    "scripts/page/charts.py": ({"render_site"}, {"all"}),
    "scripts/common/display.py": ({"precomputed", "tokenizer_counts", "bench_medians", "manifest", "simulate_sweep",
                                   "simulate_prefix", "measured_records"},
                                  PAGE | {"shared_data"}),
    "scripts/record/provenance.py": ({"precomputed", "tokenizer_counts", "bench_medians", "manifest", "simulate_sweep",
                                      "simulate_prefix", "measured_records"},
                                     PAGE | {"shared_data"}),
    "scripts/common/names.py": ({"simulate_cells", "simulate_goodput", "simulate_engines", "simulate_sweep",
                                 "render_site", "manifest", "measured_vs_simulated_load",
                                 "measured_vs_simulated_prefix", "measured_vs_simulated_heldout", "precomputed",
                                 "simulate_prefix"},
                                {"all", "measured_records", "shared_data"}),
    "scripts/serving/engine/loop.py": ({"simulate_cells", "simulate_goodput", "simulate_engines", "simulate_sweep",
                                        "manifest", "measured_vs_simulated_load", "measured_vs_simulated_prefix",
                                        "measured_vs_simulated_heldout", "simulate_prefix"},
                                       PAGE | {"measured_records", "shared_data"}),
    "scripts/audit/report.py": (set(), set()),
    # a page section's template (it was once missing from render_site's inputs: edited, the page stayed stale)
    "templates/realengine_heldout_section.html.j2": ({"render_site"}, {"all"}),
}


def directly_scheduled(log: str) -> set[str]:
    """Rules a dry run schedules because one of their own input files changed."""
    return set(re.findall(r"rule (\w+):\n(?:    (?!reason:).*\n)*    reason: [^\n]*Updated input files", log))


# many, some (a page template: the render alone), none; the other modules' cases are make test-all's
IN_MAKE_TEST = {"scripts/common/display.py", "scripts/audit/report.py", "templates/realengine_heldout_section.html.j2"}


@pytest.mark.parametrize("module", [m if m in IN_MAKE_TEST else pytest.param(m, marks=pytest.mark.exhaustive)
                                    for m in sorted(EDITS)])
def test_editing_a_package_module_reruns_exactly_its_rules(scratch, module):  # or a page template
    users, downstream = EDITS[module]
    path = scratch / module
    original = path.read_text(encoding="utf-8")
    path.write_text(original + "\n# edited\n", encoding="utf-8")
    try:
        run = snakemake(scratch, "all", "-n")
        assert run.returncode == 0, run.stderr[-2000:]
        log = run.stdout + run.stderr
        if not users:
            assert "Nothing to be done" in log
            return
        assert scheduled_jobs(log) == users | downstream
        assert directly_scheduled(log) <= users and directly_scheduled(log), log[-3000:]
    finally:
        path.write_text(original, encoding="utf-8")


def test_two_site_builds_give_the_same_dist_archive(scratch):
    from scripts.record.dist import archive_bytes

    first = archive_bytes(scratch / "build" / "default" / "site", 1_700_000_000)
    run = snakemake(scratch, "all", "--forcerun", "render_site")
    assert run.returncode == 0, run.stderr[-2000:]
    assert archive_bytes(scratch / "build" / "default" / "site", 1_700_000_000) == first


def test_every_command_in_the_readmes_table_exists():
    """Issue 63: the README's commands table is run as far as a test can without its cost: every `make` target it
    names is a target of the Makefile (make -n: its recipe resolves), every `python -m` module answers --help."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    table = re.search(r"## Commands\n\n(.*?)\n\n", readme, re.S).group(1)
    targets = set(re.findall(r"`make ([a-z-]+)`", table))
    modules = set(re.findall(r"`python -m ([a-z_.]+)", table))
    assert {"site", "test", "audit", "dist", "bench-lab"} <= targets and len(modules) >= 3, (targets, modules)
    for target in sorted(targets):
        run = subprocess.run(["make", "-n", target], cwd=ROOT, capture_output=True, text=True, timeout=60)
        assert run.returncode == 0 and "No rule to make target" not in run.stderr, (target, run.stderr[-500:])
    for module in sorted(modules):
        run = subprocess.run([sys.executable, "-m", module, "--help"], cwd=ROOT, capture_output=True, text=True,
                             timeout=60)
        assert run.returncode == 0 and "usage:" in run.stdout, (module, run.stderr[-500:])


def test_the_readmes_dist_check_passes_as_written(tmp_path):
    """Issue 63: the README's `sha256sum -c SHA256SUMS`, run where it said, failed for every file inside the archive
    (they exist only once it is unpacked). The README's deploy block, run line by line in a copy of dist/."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"check\s+the archive, unpack it.*?```sh\n(.*?)```", readme, re.S).group(1)
    from tests.test_record_dist import committed_site, dist

    out = tmp_path / "dist"
    repo, _ = committed_site(tmp_path)
    made = dist(repo, "--out", str(out))
    assert made.returncode == 0, made.stderr
    run = subprocess.run(["bash", "-euo", "pipefail", "-c", block], cwd=out, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stdout[-1000:] + run.stderr[-1000:]
    assert run.stdout.count(": OK") == len((out / "SHA256SUMS").read_text(encoding="utf-8").splitlines()) + 1
