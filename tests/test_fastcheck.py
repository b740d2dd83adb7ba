"""The quick paths in front of the input checks. scripts/record/fastcheck.py: its yes is jsonschema's yes, on every
committed result file, on documents drawn from the schema, on arbitrary JSON and on each committed file with one
value changed. scripts/record/inputs.REFUSED: it matches exactly the characters bad_character describes."""
import copy
import functools
import json

import jsonschema
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema

from scripts.record import fastcheck, schema
from tests.conftest import ROOT

SCHEMA = json.loads((schema.SCHEMAS / "vllm-result.schema.json").read_text(encoding="utf-8"))
QUICK = fastcheck.compiled(SCHEMA)
JSONSCHEMA = jsonschema.Draft202012Validator(SCHEMA)
RESULTS = sorted((ROOT / "precomputed").rglob("serve*/**/*.json"))
FAST = settings(max_examples=150, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large])
JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
                    | st.text(max_size=5), lambda kids: st.lists(kids, max_size=4)
                    | st.dictionaries(st.sampled_from(["ttfts", "itls", "duration", "input_lens", "output_lens",
                                                       "errors", "x"]), kids, max_size=6), max_leaves=20)


@functools.cache
def results() -> tuple[dict, ...]:
    docs = [json.loads(p.read_text(encoding="utf-8")) for p in RESULTS]
    return tuple(d for d in docs if isinstance(d, dict) and "itls" in d)


@functools.cache
def small_results() -> tuple[dict, ...]:
    """The three committed results with the fewest values (jsonschema re-validates each mutated copy)."""
    return tuple(sorted(results(), key=lambda d: len(json.dumps(d)))[:3])


def test_every_keyword_of_the_result_schema_is_one_the_checker_implements():
    assert QUICK is not None
    assert fastcheck.compiled({"type": "object", "patternProperties": {}}) is None  # unknown: no quick path


def test_every_committed_result_is_accepted_by_both():
    """jsonschema on the three smallest only (it takes ~6 s over all of them); the quick check on every one."""
    docs = results()
    assert len(docs) >= 20
    assert all(QUICK(d) for d in docs) and all(JSONSCHEMA.is_valid(d) for d in small_results())


@FAST
@given(from_schema(SCHEMA))
def test_a_document_drawn_from_the_schema_is_valid_for_both(doc):
    assert JSONSCHEMA.is_valid(doc)
    assert QUICK(doc) or any(type(v) is float for v in doc.get("input_lens", []) + doc.get("output_lens", [])
                             + [doc.get("completed", 0), doc.get("max_concurrent_requests", 0)])  # 1.0 as integer


@FAST
@given(JSON)
def test_arbitrary_json_is_never_accepted_where_jsonschema_refuses(doc):
    assert not QUICK(doc) or JSONSCHEMA.is_valid(doc)


BAD_VALUES = [True, None, "1", -1, 1e7, 2.5, [], {}, [True], [[-0.5]], [["x"]]]


@given(st.data())
@FAST
def test_a_committed_file_with_one_value_changed_is_refused_by_both_or_neither(data):
    doc = copy.deepcopy(data.draw(st.sampled_from(small_results())))
    key = data.draw(st.sampled_from(sorted(doc)))
    bad = data.draw(st.sampled_from(BAD_VALUES))
    if isinstance(doc[key], list) and doc[key] and data.draw(st.booleans()):
        i = data.draw(st.integers(0, len(doc[key]) - 1))
        if isinstance(doc[key][i], list) and doc[key][i] and data.draw(st.booleans()):
            doc[key][i][0] = bad
        else:
            doc[key][i] = bad
    elif data.draw(st.booleans()):
        doc[key] = bad
    else:
        del doc[key]
    assert not QUICK(doc) or JSONSCHEMA.is_valid(doc)



def test_the_refused_character_class_is_exactly_what_bad_character_describes():
    """bad_character searches REFUSED first and walks the text only from its match: each code point alone must be
    refused by both or by neither, and in a text the first one found is the one described."""
    from scripts.record.inputs import REFUSED, bad_character

    disagree = [c for c in range(0x110000) if (REFUSED.search(chr(c)) is None) != (bad_character(chr(c)) is None)]
    assert disagree == []
    assert bad_character("ok\tline\u200bthen\x07") == "U+200B (zero-width space)"
    assert bad_character("plain 中文 text\n") is None
