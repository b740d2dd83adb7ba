"""The provenance record is one type: one constructor per kind, each field with one meaning, read back checked; the
audit recomputes a derived record by its derivation, not by the text of its formula."""
import json

import pytest

from scripts.audit.recompute import check_cited, check_derived, check_records, recompute
from scripts.record import provenance as pv
from scripts.record.provenance import Derivation, Kind, Record, RecordError
from tests.conftest import ROOT

RECORD_FILES = ("precomputed", "serving", "tokenizer_counts", "bench_medians", "measured_records")


def committed_records() -> dict:
    records = {}
    for name in RECORD_FILES:
        records.update(json.loads((ROOT / "precomputed" / f"{name}.json").read_text(encoding="utf-8"))["provenance"])
    return records


def test_every_committed_record_reads_back_as_its_type_unchanged():
    records = committed_records()
    kinds = {Record.from_json(r).kind for r in records.values()}
    assert kinds == {Kind.DERIVED, Kind.CITED, Kind.ASSUMED, Kind.SIMULATED, Kind.MEASURED, Kind.CALIBRATED}
    for rid, rec in records.items():
        assert Record.from_json(rec).to_json() == rec, rid  # nothing lost, nothing added, keys in their order
        assert list(Record.from_json(rec).to_json()) == list(rec), rid
    derivations = {Record.from_json(r).derivation for r in records.values() if r["kind"] == "derived"}
    assert derivations == {Derivation.ANCHOR, Derivation.RECORDS, Derivation.PASSAGE, Derivation.TOKENIZER,
                           Derivation.TINYGPT}


def test_each_kind_has_its_constructor_and_only_its_fields():
    made = [
        pv.derived("a", "A", 2.0, "×", "f2", derivation=Derivation.RECORDS, formula="operator:truediv",
                   inputs=["x", "y"], script="s.py"),
        pv.measured("b", "B", 1.5, "ms", "f1", machine="cpu", date="2026-12-01", runs=5, spread="±1%", file="f.json",
                    file_sha256="0" * 64, script="s.py"),
        pv.cited_record("c", "C", 7.4, "×", "f1", work="DistServe", version="OSDI'24", locator="§6",
                        self_reported=True),
        pv.assumed("d", "D", 0.9, "", "f2", assumption="our target"),
        pv.simulated("e", "E", 3.0, "req/s", "f2", workload="chat", schedule="whole", seed=1, requests=10,
                     metric="goodput", script="s.py"),
        pv.calibrated("f", "F", 0.02, "s", "f3", fit="least squares", data=["run.json"], script="s.py"),
    ]
    assert [m["kind"] for m in made] == [str(k) for k in Kind]
    assert made[0]["display"] == "2.00" and made[0]["derivation"] == "records"
    with pytest.raises(RecordError, match="a cited record has no field 'assumption'"):
        Record.from_json({**made[2], "assumption": "x"})
    with pytest.raises(RecordError, match="assumed record names no assumption"):
        pv.assumed("d", "D", 0.9, "", "f2", assumption=" ")
    with pytest.raises(RecordError, match="unknown derivation 'formula-text'"):
        Record.from_json({**made[0], "derivation": "formula-text"})
    with pytest.raises(RecordError, match="unknown provenance kind 'guessed'"):
        Record.from_json({**made[3], "kind": "guessed"})
    with pytest.raises(RecordError, match="not a finite number"):
        pv.assumed("d", "D", float("nan"), "", "f2", assumption="x")
    with pytest.raises(RecordError, match="display '9.99' is not its value's"):
        Record.from_json({**made[0], "display": "9.99"})


def test_the_audit_reads_the_type():
    records = committed_records()
    ratio = next(r for r in records.values() if r["kind"] == "derived" and r["derivation"] == "records")
    want = recompute(ratio, records, ROOT)
    assert pv.format_number(want, ratio["format"]) == ratio["display"]
    # the formula's text alone no longer decides: a records-derivation whose inputs are gone is reported, not skipped
    orphan = {**ratio, "inputs": ["no.such.record"]}
    problems, _ = check_derived({ratio["id"]: orphan}, ROOT)
    assert problems == [f"{ratio['id']}: an input record is missing, or the number is no longer derived"]
    # a record of no derivation is a problem the audit names
    broken = {k: v for k, v in ratio.items() if k != "derivation"}
    assert check_derived({ratio["id"]: broken}, ROOT)[0] == [f"{ratio['id']}: derived record names no derivation"]
    # ...under its own kind (issue 63: a tampered derived record was reported under `cited:`)
    assert check_records({ratio["id"]: broken}) == {"derived": [f"{ratio['id']}: derived record names no derivation"]}
    assert check_records({"x": {**ratio}}) == {"derived": [f"x: the record's own id is {ratio['id']!r}"]}
    assert check_cited({ratio["id"]: broken}) == []
    tampered = {**ratio, "display": "9,999"}
    assert list(check_records({ratio["id"]: tampered})) == ["derived"]


def _assumption_sentences(doc) -> set[str]:
    if isinstance(doc, dict):
        return set().union(*(({v} if k == "assumption" and isinstance(v, str) else _assumption_sentences(v))
                             for k, v in doc.items()), set())
    if isinstance(doc, list):
        return set().union(*(_assumption_sentences(v) for v in doc), set())
    return set()


def test_every_assumption_the_popup_can_show_reads_in_chinese():
    """The popup's 依据 is Chinese: each English assumption sentence of a committed record, of every anchor file and
    of every config file has its Chinese in names.json `assumptions` (a new sentence without one fails here)."""
    import re

    from scripts.common.names import NAMES

    cjk, zh = re.compile(r"[\u4e00-\u9fff]"), NAMES["assumptions"]
    shown = {r["assumption"] for r in committed_records().values() if r["kind"] == "assumed"}
    for path in [ROOT / "anchor-model.json", *sorted((ROOT / "anchors").glob("*.json")),
                 *sorted((ROOT / "config").glob("*.json"))]:
        shown |= _assumption_sentences(json.loads(path.read_text(encoding="utf-8")))
    missing = sorted(s for s in shown if not cjk.search(s) and s not in zh)
    assert not missing, missing[:5]
    assert all(cjk.search(v) for v in zh.values())


def test_sessions_are_counted_in_chinese_past_nine():
    """The held-out section says 第九次; a tenth session's page must say 第十次, not stop the render."""
    from scripts.common.display import chinese_number

    assert [chinese_number(n) for n in (1, 9, 10, 11, 20, 23, 99)] == ["一", "九", "十", "十一", "二十", "二十三",
                                                                        "九十九"]
    assert chinese_number(100) == "100" and chinese_number(0) == "0"


def test_a_setting_is_shown_as_it_is():
    """A sending rate of 0.125 /s shows as 0.125, not a rounded 0.13 that was never sent; 0.5 stays 0.5."""
    from scripts.common.display import exact_format, format_number

    assert [exact_format(v) for v in (2, 0.5, 0.25, 0.125, 0.75, 1 / 3)] == ["int", "f1", "f2", "f3", "f2", "f3"]
    assert format_number(0.125, exact_format(0.125)) == "0.125" and format_number(0.25, exact_format(0.25)) == "0.25"
