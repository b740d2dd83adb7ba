import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from scripts.record.anchor_file import load
from scripts.record.publish import scratch_checkout

ROOT = Path(__file__).resolve().parent.parent
# what a prompt adds to its cached prefix on the timeline's prefix-cache switch (the cited Kimi K3 figure)
NEW_TOKENS = next(e["value"] for e in json.loads((ROOT / "config" / "cited.json").read_text(encoding="utf-8"))
                  ["numbers"] if e["id"] == "cited.kimi.new_tokens")


MODULE_SECONDS = ROOT / "tests" / "module_seconds.json"  # scripts/bench/test_seconds.py (make test-seconds)


def pytest_collection_modifyitems(config, items):
    """The longest modules first (their measured seconds), each module's cases in their own order: pytest-xdist's
    `--dist loadfile --no-loadscope-reorder` then hands the workers the long modules while the short ones fill the
    end, instead of ordering by case count (which left a one-case 25-s module to start last)."""
    seconds = json.loads(MODULE_SECONDS.read_text(encoding="utf-8"))["seconds"] if MODULE_SECONDS.is_file() else {}
    items.sort(key=lambda item: -seconds.get(Path(item.nodeid.split("::")[0]).stem, 0.0))


@pytest.fixture(scope="session")
def anchor():
    return load(ROOT / "anchor-model.json")[0]


@pytest.fixture(scope="session")
def anchor_doc():
    return json.loads((ROOT / "anchor-model.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="session")
def precomputed():
    return json.loads((ROOT / "precomputed" / "precomputed.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def browser():
    """Debian Chromium through Playwright, one per test module (a test module may override it)."""
    from playwright.sync_api import sync_playwright

    from tests.browser import CHROMIUM, FLAGS

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield b
        b.close()


@pytest.fixture(scope="module")
def sim_page(browser, tmp_path_factory):
    """A page holding only the built simulator (site/serving-sim.js, what the page's worker runs), one per module."""
    d = tmp_path_factory.mktemp("twin")
    (d / "serving-sim.js").write_bytes((ROOT / "site" / "serving-sim.js").read_bytes())
    (d / "index.html").write_text('<!doctype html><script src="serving-sim.js"></script>', encoding="utf-8")
    page = browser.new_page()
    page.goto((d / "index.html").as_uri())
    yield page
    page.close()


@pytest.fixture(scope="module")
def lesson_page(browser):
    """The built lesson page (site/index.html), ready, one tab per test module; no console error by its end."""
    from tests.browser import open_page

    pg, watch = open_page(browser, (ROOT / "site" / "index.html").as_uri())
    yield pg
    assert watch.errors == []
    pg.close()


def scratch_copy(work: Path) -> Path:
    """The files a fresh clone would have, plus the verified tokenizer cache, in `work` (as check-stale makes it)."""
    return scratch_checkout(ROOT, work)


def publishing_build(python: Path | str = sys.executable) -> list:
    """`make site`'s build under the kit's lock, then publish (what the shared kit and the interrupt tests run)."""
    return [python, "-m", "scripts.record.build_lock", "--target", "all", "--publish", "--", "--cores", "2", "--quiet",
            "rules"]


def interpreter_behind_a_space(where: Path) -> Path:
    """This virtual environment, linked as `where/kit env/`; its Python still finds the environment's packages
    (Snakemake 9.27.1 leaves the interpreter of `script:` rules unquoted: scripts/record/snakemake_compat.py)."""
    assert sys.prefix != sys.base_prefix, "the tests run in the kit's virtual environment (.venv)"
    env = where / "kit env"
    env.symlink_to(sys.prefix, target_is_directory=True)
    python = env / "bin" / Path(sys.executable).name
    prefix = subprocess.run([python, "-c", "import sys, snakemake; print(sys.prefix)"], capture_output=True,
                            text=True, check=True).stdout.strip()
    assert prefix == str(env)
    return python


REUSE_BUILD = "C13_REUSE_BUILD"  # `make test` sets it: its own build of these files has just run and been checked


def reuse_checkout_build(work: Path) -> None:
    """Seed the copy with the checkout's finished build of the default anchor (its outputs and Snakemake's records
    of them, times kept), so the copy's build has nothing left to run. Only for `make test`, right after its build
    of the same files was checked against precomputed/ (publish --check-built); alone, pytest builds from scratch."""
    page = ROOT / "build" / "default" / "site"  # rendered again in the copy: the page names the checkout's commit
    for rel in ("build/default", "build/shared", "build/tokenizers", ".snakemake/metadata"):
        if (ROOT / rel).is_dir():
            shutil.copytree(ROOT / rel, work / rel, dirs_exist_ok=True, symlinks=True,
                            ignore=lambda d, names: names if Path(d) == page else [])


@pytest.fixture(scope="session")
def built_kit(tmp_path_factory, worker_id):
    """A fresh-clone copy of the kit, every rule built and published once per test session, as a checkout at
    `~/lesson kit/` under an interpreter reached through a path with a space would be (under `make test`, from the
    checkout's own build: reuse_checkout_build). Tests that change files take `copy_of_built_kit(...)` of it, never
    the original. Under pytest-xdist the workers of one session share it: the first to ask builds it in the
    session's common temporary folder, under a file lock, and the others wait and use it (each build took ~12 s)."""
    if worker_id == "master":
        return build_kit(tmp_path_factory.mktemp("py"), tmp_path_factory.mktemp("built"))
    from filelock import FileLock

    shared = tmp_path_factory.getbasetemp().parent  # pytest-<n>/, above each worker's popen-gw<k>/
    with FileLock(shared / "built-kit.lock"):
        done = shared / "built-kit.json"
        if not done.exists():
            work, python = build_kit(shared / "kit-py", shared / "kit-built")
            done.write_text(json.dumps([str(work), str(python)]), encoding="utf-8")
        work, python = json.loads(done.read_text(encoding="utf-8"))
    return Path(work), Path(python)


def build_kit(py_dir: Path, built_dir: Path) -> tuple[Path, Path]:
    """built_kit's build: the interpreter linked under `py_dir`, the kit at `built_dir/lesson kit/`."""
    py_dir.mkdir(parents=True, exist_ok=True)
    python = interpreter_behind_a_space(py_dir)
    work = built_dir / "lesson kit"
    work.mkdir(parents=True)
    scratch_copy(work)
    if os.environ.get(REUSE_BUILD) == "1":
        reuse_checkout_build(work)
    run = subprocess.run(publishing_build(python), cwd=work, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-3000:]
    assert (work / "site" / "index.html").is_file()
    assert (work / "build" / "default" / "precomputed" / "MANIFEST.json").is_file()
    return work, python


def copy_of_built_kit(built: Path, dest: Path) -> Path:
    """The built kit copied with its Snakemake state and file times, so the copy is up to date as the original is."""
    work = dest / "lesson kit"
    shutil.copytree(built, work, symlinks=True)
    for lock in (work / ".snakemake" / "locks").glob("*"):
        lock.unlink()
    return work
