"""Reading inputs so that every failure is one line naming the file and the field (InputError).

Every JSON and text input goes through here: UTF-8 only (a byte-order mark is refused, UTF-16 is named as such),
a size cap, JSON with no duplicate keys and no NaN/Infinity (nor numbers that overflow to them), and text with no
control or bidi-override characters (tab, newline and carriage return are allowed). Lone surrogates (escaped in
JSON as \\ud800 and the like) are refused too: they cannot be written back out as UTF-8.
"""
from __future__ import annotations

import json
import math
import os
import re
import stat
from pathlib import Path

MAX_JSON_BYTES = 5 * 1024 * 1024
BIDI = {"\u202a": "left-to-right embedding", "\u202b": "right-to-left embedding", "\u202c": "pop directional format",
        "\u202d": "left-to-right override", "\u202e": "right-to-left override", "\u2066": "left-to-right isolate",
        "\u2067": "right-to-left isolate", "\u2068": "first strong isolate", "\u2069": "pop directional isolate",
        "\u200e": "left-to-right mark", "\u200f": "right-to-left mark", "\u061c": "Arabic letter mark"}
# Invisible characters: two names that look the same on the page would be different keys and files.
INVISIBLE = {"\u200b": "zero-width space", "\u200c": "zero-width non-joiner", "\u200d": "zero-width joiner",
             "\u2060": "word joiner", "\u2061": "invisible function application", "\u2062": "invisible times",
             "\u2063": "invisible separator", "\u2064": "invisible plus", "\ufeff": "zero-width no-break space",
             "\u2028": "line separator", "\u2029": "paragraph separator"}


class InputError(Exception):
    """A bad input file: the message is one line, naming file and field."""


class _DuplicateKey(Exception):
    pass


class _NonFinite(Exception):
    pass


def _refused_class() -> re.Pattern:
    """One character class of everything bad_character refuses (it is called on every line of every template
    before each build: the regex finds whether there is one, the loop below says which)."""
    controls = [chr(c) for c in range(0x20) if chr(c) not in "\t\n\r"] + [chr(c) for c in range(0x7F, 0xA0)]
    singles = "".join(re.escape(ch) for ch in controls + list(BIDI) + list(INVISIBLE))
    return re.compile(f"[{singles}\ud800-\udfff]")


REFUSED = _refused_class()


def bad_character(text: str) -> str | None:
    """A description of the first character text must not hold, or None."""
    found = REFUSED.search(text)
    if found is None:
        return None
    for ch in text[found.start():]:
        code = ord(ch)
        if ch in "\t\n\r":
            continue
        if code < 0x20 or 0x7F <= code <= 0x9F:
            return f"control character U+{code:04X}"
        if ch in BIDI:
            return f"U+{code:04X} ({BIDI[ch]})"
        if ch in INVISIBLE:
            return f"U+{code:04X} ({INVISIBLE[ch]})"
        if 0xD800 <= code <= 0xDFFF:
            return f"lone surrogate U+{code:04X}"
    return None


def jsonl_objects(path: Path, max_bytes: int, parse_constant=None):
    """Each non-blank line of a UTF-8 JSON Lines file, parsed, with its line number (from 1); a line that is not
    JSON is refused in one line naming the file and the line. `parse_constant`: json.loads's (to refuse NaN)."""
    import json

    name = Path(path).as_posix()
    try:
        text = read_bytes(Path(path), max_bytes).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{name}: not UTF-8 (byte {exc.start})") from None
    for n, line in enumerate(text.split("\n"), 1):  # JSON Lines ends lines at \n only: a U+2028 inside a string is text
        if not line.strip():
            continue
        try:
            yield n, json.loads(line, parse_constant=parse_constant, object_pairs_hook=_unique_keys)
        except _DuplicateKey as exc:
            raise InputError(f"{name}: line {n}: key {str(exc.args[0])!r} appears twice in one object (which one "
                             "would count is ambiguous)") from None
        except RecursionError:
            raise InputError(f"{name}: line {n}: nested too deeply") from None
        except ValueError as exc:
            raise InputError(f"{name}: line {n}: not a JSON object ({str(exc)[:60]})") from None


def read_bytes(path: Path, max_bytes: int = MAX_JSON_BYTES) -> bytes:
    """A regular file's bytes, at most max_bytes (the cap applies while reading: a file growing under us, or a
    device that reports size 0, cannot make it read more); or one line saying why not."""
    name = Path(path).as_posix()
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO opens without waiting for a writer
    except OSError as exc:
        raise InputError(f"{name}: cannot be read ({exc.strerror})") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise InputError(f"{name}: is not a regular file (a directory, device or pipe cannot be an input)")
        with os.fdopen(fd, "rb", closefd=False) as fh:
            raw = fh.read(max_bytes + 1)
    except OSError as exc:
        raise InputError(f"{name}: cannot be read ({exc.strerror})") from None
    finally:
        os.close(fd)
    if len(raw) > max_bytes:
        raise InputError(f"{name}: more than the {max_bytes:,} bytes allowed for this input")
    return raw


def read_text(path: Path, max_bytes: int = MAX_JSON_BYTES) -> str:
    """The file as UTF-8 text, or one line saying why not (size, byte-order mark, encoding, with the line)."""
    name = Path(path).as_posix()
    raw = read_bytes(path, max_bytes)
    if raw.startswith(b"\xef\xbb\xbf"):
        raise InputError(f"{name}: starts with a UTF-8 byte-order mark (refused, not stripped): save it as UTF-8 "
                         "without a BOM")
    if raw[:2] in (b"\xff\xfe", b"\xfe\xff"):
        raise InputError(f"{name}: is UTF-16: save it as UTF-8")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[:exc.start].count(b"\n") + 1
        raise InputError(f"{name}: line {line}: byte 0x{raw[exc.start]:02x} is not UTF-8: save the file as UTF-8") \
            from None


def _unique_keys(pairs: list[tuple[str, object]]) -> dict:
    seen = {}
    for key, value in pairs:
        if key in seen:
            raise _DuplicateKey(key)
        seen[key] = value
    return seen


def _no_constant(name: str):
    raise _NonFinite(name)


def _line_of_second(text: str, key: str) -> int:
    hits = [m.start() for m in re.finditer(re.escape(json.dumps(key)) + r"\s*:", text)]
    return text.count("\n", 0, hits[1]) + 1 if len(hits) > 1 else 1


def _where_constant(text: str, literal: str) -> str:
    """'line N: field a.b ' for the first NaN/Infinity literal (found by parsing with it replaced by a marker)."""
    pattern = re.compile(r"([:\[,]\s*)" + re.escape(literal) + r"(?=\s*[,\]}])")
    found = pattern.search(text)
    if not found:
        return ""
    line = text.count("\n", 0, found.start()) + 1
    marker = "\u0000nonfinite"
    try:
        doc = json.loads(text[:found.start()] + found.group(1) + json.dumps(marker) + text[found.end():],
                         parse_constant=lambda _: 0)
    except (json.JSONDecodeError, RecursionError):
        return f"line {line}: "

    def path_of(node, where):
        if node == marker:
            return where
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for k, v in items:
            hit = path_of(v, f"{where}.{k}" if isinstance(k, str) and where else f"{where}[{k}]" if
                          isinstance(k, int) else k)
            if hit is not None:
                return hit
        return None

    field = path_of(doc, "")
    return f"line {line}: field {field}: " if field else f"line {line}: "


def check_values(node: object, name: str, where: str = "", free_text: tuple[str, ...] = ()) -> None:
    """Every string (keys too) free of forbidden characters, every number finite. Top-level keys in `free_text`
    hold text the kit never reads or shows (a model's generated text): their strings are not checked."""
    if isinstance(node, dict):
        for key, value in node.items():
            field = f"{where}.{key}" if where else key
            if (why := bad_character(key)) is not None:
                raise InputError(f"{name}: field {field!r} has a key with a {why}")
            if not where and key in free_text:
                continue
            check_values(value, name, field)
    elif isinstance(node, list):
        for i, value in enumerate(node):
            check_values(value, name, f"{where}[{i}]")
    elif isinstance(node, str):
        if (why := bad_character(node)) is not None:
            raise InputError(f"{name}: field {where or '(top level)'} contains a {why}: control and bidi-override "
                             "characters are not allowed in text")
    elif isinstance(node, float) and not math.isfinite(node):
        raise InputError(f"{name}: field {where or '(top level)'} is not a finite number")


def read_json(path: Path, max_bytes: int = MAX_JSON_BYTES, free_text: tuple[str, ...] = ()) -> object:
    name = Path(path).as_posix()
    text = read_text(path, max_bytes)
    try:
        doc = json.loads(text, object_pairs_hook=_unique_keys, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise InputError(f"{name}: not valid JSON at line {exc.lineno} column {exc.colno} ({exc.msg})") from None
    except _DuplicateKey as exc:
        key = str(exc.args[0])
        raise InputError(f"{name}: line {_line_of_second(text, key)}: key {key!r} appears twice in one object "
                         "(which one would count is ambiguous)") from None
    except _NonFinite as exc:
        raise InputError(f"{name}: {_where_constant(text, exc.args[0])}{exc.args[0]} is not a number JSON allows "
                         "(use a finite number)") from None
    except RecursionError:
        raise InputError(f"{name}: nested too deeply") from None
    except ValueError as exc:  # Python's integer digit limit (int_max_str_digits), and anything else json refuses
        raise InputError(f"{name}: {_value_error(text, exc)}") from None
    check_values(doc, name, free_text=free_text)
    return doc


def _value_error(text: str, exc: ValueError) -> str:
    if "digits" in str(exc):
        found = re.search(r"-?\d{4300,}", text)
        line = f"line {text.count(chr(10), 0, found.start()) + 1}: " if found else ""
        return f"{line}a number with thousands of digits (no quantity in this kit needs more than 20)"
    return f"not valid JSON ({str(exc).splitlines()[0][:100]})"


def check_questions(path: Path, max_bytes: int = 1024 * 1024) -> str:
    """The questions log: UTF-8 Markdown with no control or bidi-override characters; its text."""
    text = read_text(path, max_bytes)
    for n, line in enumerate(text.splitlines(), 1):
        if (why := bad_character(line)) is not None:
            raise InputError(f"{Path(path).as_posix()}: line {n} contains a {why}: not allowed in the questions log")
    return text
