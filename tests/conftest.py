import json
import shutil
import subprocess
from pathlib import Path

import pytest

from scripts.record.anchor_file import load

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


def scratch_copy(work: Path) -> Path:
    """The files a fresh clone would have (tracked and not ignored), plus the verified tokenizer cache, in `work`."""
    out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout
    for name in out.splitlines():
        if name and (ROOT / name).is_file():
            (work / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, work / name)
    if (ROOT / ".cache").is_dir():  # verified downloads; the build re-checks their hashes
        shutil.copytree(ROOT / ".cache", work / ".cache")
    return work
