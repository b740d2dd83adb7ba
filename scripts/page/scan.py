"""Read numbers out of the built page's HTML (stdlib parser). Pure: text in, findings out.

A number is a run of digits not glued to a Latin letter: "1.91" and "2,304" are numbers, while "C13-L5",
"GPT-2", "p99" and "Qwen3.5" are names. Text inside an element with data-prov is registered; inside
data-formula (a formula's own constants), data-meta (build commit, dates, package versions, and the readers'
questions from questions/C13-L5.md: their words, not the kit's numbers) or data-choice (a control's own option
labels, e.g. the P/D split's "2:2", from config/workloads.json page.engine_controls) it is exempt. `page_text`
gives the page's words for the audit's words check (scripts/audit/words.py), the readers' questions left out.
"""
from __future__ import annotations

import json
import re
from html.parser import HTMLParser

# letters, digits and joiners; a comma only as a thousands separator (digit before, three digits after)
TOKEN = re.compile(r"(?:[0-9A-Za-z_.\-+]|(?<=[0-9]),(?=[0-9]{3}))+")
LETTER = re.compile(r"[A-Za-z]")
SKIP_TAGS = {"script", "style"}
VOID = {"meta", "link", "br", "img", "input", "hr", "source", "wbr"}


def numbers_in(text: str) -> list[str]:
    found = []
    for tok in TOKEN.findall(text):
        tok = tok.strip(".,-+")
        if tok and not LETTER.search(tok) and any(c.isdigit() for c in tok):
            found.append(tok)
    return found


class _Walker(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, dict]] = []
        self.prov: list[list] = []  # [rid, text, where] per data-prov element, text filled as we go
        self.loose: list[tuple[str, str]] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag in VOID:
            return
        self.stack.append((tag, a))
        if "data-prov" in a and not self._skipping():
            self.prov.append([a["data-prov"], "", f"line {self.getpos()[0]}", len(self.stack)])

    def handle_endtag(self, tag):
        while self.stack:
            t, _ = self.stack.pop()
            if t == tag:
                break

    def _skipping(self) -> bool:
        return any(t in SKIP_TAGS for t, _ in self.stack)

    def handle_data(self, data):
        if self._skipping() or not data.strip():
            return
        attrs = [a for _, a in self.stack]
        if any("data-prov" in a for a in attrs):
            depth = max(i for i, a in enumerate(attrs, 1) if "data-prov" in a)
            for entry in reversed(self.prov):
                if entry[3] == depth:
                    entry[1] += data
                    break
            return
        if any("data-formula" in a or "data-meta" in a or "data-choice" in a for a in attrs):
            return
        for num in numbers_in(data):
            self.loose.append((num, f"line {self.getpos()[0]} near {data.strip()[:40]!r}"))


def _walk(html: str) -> _Walker:
    w = _Walker()
    w.feed(html)
    w.close()
    return w


def page_numbers(html: str) -> list[tuple[str, str, str]]:
    """(provenance id, shown text, where) for every [data-prov] element."""
    return [(rid, text, where) for rid, text, where, _ in _walk(html).prov]


def unregistered_numbers(html: str) -> list[tuple[str, str]]:
    return _walk(html).loose


def spec_titles(raw: str) -> list[tuple[str, str]]:
    """Every title string in the page's chart specs (chart, axis and legend titles), given their JSON."""
    if not raw.strip():
        return []
    found = []

    def visit(node, path):
        if isinstance(node, dict):
            for k, v in node.items():
                if k == "title" and isinstance(v, str):
                    found.append((v, f"chart {path}"))
                elif k == "title" and isinstance(v, dict) and isinstance(v.get("text"), str):
                    found.append((v["text"], f"chart {path}"))
                elif k not in ("datasets", "data"):
                    visit(v, f"{path}.{k}")
        elif isinstance(node, list):
            for i, v in enumerate(node):
                visit(v, f"{path}[{i}]")

    for chart_id, spec in json.loads(raw).items():
        visit(spec, chart_id)
    return found


class _Text(HTMLParser):
    """The page's words as a reader reads them: outside script and style, and outside the readers' questions
    (data-meta="questions": their words, not the kit's)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, bool]] = []  # (tag, skipped here or above)
        self.parts: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag in VOID:
            return
        skip = (bool(self.stack) and self.stack[-1][1]) or tag in SKIP_TAGS or \
            dict(attrs).get("data-meta") == "questions"
        self.stack.append((tag, skip))

    def handle_endtag(self, tag):
        for i in range(len(self.stack) - 1, -1, -1):  # close up to the matching tag (HTML allows omitted ends)
            if self.stack[i][0] == tag:
                del self.stack[i:]
                return

    def handle_data(self, data):
        if not (self.stack and self.stack[-1][1]):
            self.parts.append(data)


def page_text(html: str) -> str:
    """The page's text (`_Text`), entities decoded, runs of whitespace made one space."""
    t = _Text()
    t.feed(html)
    t.close()
    return re.sub(r"\s+", " ", "".join(t.parts))
