"""The lesson data's words: labels.json beside this file (every record's label and every claim's sentence), read
once."""
import json
from pathlib import Path

LABELS = json.loads((Path(__file__).parent / "labels.json").read_text(encoding="utf-8"))  # the records' labels
CLAIM_WORDS = LABELS["claims"]  # what each claim of the page says, by claim id ({fields} filled here)
