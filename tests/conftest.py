import json
from pathlib import Path

import pytest

from scripts.record.anchor_file import load
from scripts.record.publish import scratch_checkout

ROOT = Path(__file__).resolve().parent.parent


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


def scratch_copy(work: Path) -> Path:
    """The files a fresh clone would have, plus the verified tokenizer cache, in `work` (as check-stale makes it)."""
    return scratch_checkout(ROOT, work)
