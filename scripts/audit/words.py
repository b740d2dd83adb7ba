"""The audit's `words` check (issue 63): a page says nothing about a model its anchor is not. Every number on a page
is already held to its record (embedded.check_numbers) and every worded sentence to its claim (report.check_claims);
this reads the pages' text for what those cannot see, from data:
  - a word that names a model feature (config/model_words.json `features`: DeltaNet on a dense model) appears only
    when the anchor has the feature (scripts/model/features.py);
  - a tokenizer marked 锚点 is one config/tokenizers.json says the anchor's model uses (`models`);
  - a sentence that says a number moved (从 A 降到 B, config/model_words.json `change_words`) shows two different
    numbers."""
from __future__ import annotations

import re
from pathlib import Path

from scripts.model.features import FEATURES, features
from scripts.page.scan import page_text
from scripts.record.inputs import InputError, read_json

WORDS = Path("config/model_words.json")
TOKENIZERS = Path("config/tokenizers.json")
NUMBER = r"([0-9][0-9,]*(?:\.[0-9]+)?)"


def load_words(root: Path) -> dict:
    """config/model_words.json, checked: each feature one scripts/model/features.py knows, with a list of words and
    its source; `change_words.value` a list of words. A bad one is one line naming the file and field."""
    doc = read_json(root / WORDS)
    where = WORDS.as_posix()

    def words_list(value, field):
        if not (isinstance(value, list) and value and all(isinstance(w, str) and w.strip() for w in value)):
            raise InputError(f"{where}: field {field} must be a list of words")

    for fid, entry in (doc.get("features") or {}).items() if isinstance(doc, dict) else ():
        if fid not in FEATURES:
            raise InputError(f"{where}: field features.{fid} is not a feature scripts/model/features.py knows "
                             f"({', '.join(FEATURES)})")
        words_list(entry.get("words") if isinstance(entry, dict) else None, f"features.{fid}.words")
        if not (isinstance(entry.get("source"), str) and entry["source"].strip()):
            raise InputError(f"{where}: field features.{fid}.source must say where the feature is read from")
    words_list(((doc.get("change_words") or {}) if isinstance(doc, dict) else {}).get("value"), "change_words.value")
    return doc


def feature_problems(text: str, has: set[str], words: dict) -> list[str]:
    return [f"names {w!r}, but the anchor has no {fid} ({entry['source'][:80]}…)"
            for fid, entry in words["features"].items() if fid not in has for w in entry["words"] if w in text]


def tokenizer_problems(text: str, anchor_name: str, tokenizers: dict) -> list[str]:
    return [f"marks {e['label']} as the anchor's tokenizer, but config/tokenizers.json tokenizers.{tid}.models does "
            f"not name {anchor_name}" for tid, e in tokenizers["tokenizers"].items()
            if f"{e['label']}(锚点)" in text and anchor_name not in e.get("models", ())]


def change_problems(text: str, change_words: list[str]) -> list[str]:
    moved = "|".join(map(re.escape, change_words))
    pattern = re.compile(rf"从\s*{NUMBER}[^。;0-9]{{0,12}}?(?:{moved})\s*{NUMBER}")
    return [f"says a number moved but shows the same one twice: {m.group(0)!r}" for m in pattern.finditer(text)
            if m.group(1) == m.group(2)]


def check_words(pages: list[Path], anchor, anchor_name: str, root: Path) -> list[str]:
    """Every problem on `pages` (module docstring), each naming its page."""
    words, tokenizers = load_words(root), read_json(root / TOKENIZERS)
    has = features(anchor)
    problems = []
    for page in pages:
        if not page.exists():
            continue
        text = page_text(page.read_text(encoding="utf-8"))
        found = (feature_problems(text, has, words) + tokenizer_problems(text, anchor_name, tokenizers)
                 + change_problems(text, words["change_words"]["value"]))
        problems += [f"{page.name} {p}" for p in found]
    return problems
