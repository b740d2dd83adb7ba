"""The serving records' labels and the sentences of the claims about them: labels.json beside this file, read once
(words only: the code fills the {fields})."""
from __future__ import annotations

import json
from pathlib import Path

LABELS: dict = json.loads((Path(__file__).parent / "labels.json").read_text(encoding="utf-8"))


def claim(claim_id: str, test: list, fix: str) -> dict:
    """A claim (scripts/record/claims.py) whose sentence is labels.json's `claims[claim_id]`."""
    return {"id": claim_id, "says": LABELS["claims"][claim_id], "all": test, "fix": fix}
