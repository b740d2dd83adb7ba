import json
from pathlib import Path

import pytest

from scripts.anchor import load

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
