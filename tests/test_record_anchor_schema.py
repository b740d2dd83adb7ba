"""Malformed anchor-model.json variants: each fails with one line naming the file and the field."""
import copy
import json
import subprocess
import sys

import pytest

from scripts.record.anchor_file import validate
from scripts.record.inputs import InputError
from tests.conftest import scratch_copy


def _set(doc, path, value):
    *parents, last = path.split(".")
    node = doc
    for p in parents:
        node = node[p]
    if value is _DELETE:
        del node[last]
    else:
        node[last] = value


_DELETE = object()

VARIANTS = [
    ("model.hidden_size.value", -5120, "model.hidden_size.value"),
    ("model.hidden_size.value", 0, "model.hidden_size.value"),
    ("model.hidden_size.value", "5120", "model.hidden_size.value"),
    ("model.hidden_size.value", 51.2, "model.hidden_size.value"),
    ("model.num_key_value_heads", _DELETE, "model.num_key_value_heads"),
    ("model.head_dim.source", _DELETE, "model.head_dim"),
    ("model.rope_theta", {"value": 1, "source": "x"}, "model.rope_theta"),
    ("hardware.gpu.value", "H100 SXM", "hardware.gpu.value"),
    ("hardware.gpu.value", "h900", "hardware.gpu.value"),
    ("hardware.gpu", _DELETE, "hardware.gpu"),
    ("hardware.hbm_bytes", {"value": 80e9, "unit": "B", "source": "a datasheet"}, "hardware.hbm_bytes"),
    ("hardware.runtime_reserve_bytes.value", -1, "hardware.runtime_reserve_bytes.value"),
    ("scenario.batch.value", 0, "scenario.batch.value"),
    ("scenario.batch.value", 600, "scenario.batch.value"),
    ("scenario.context_tokens.max", 524288, "scenario.context_tokens.max"),
    ("scenario.context_tokens.value", 5000, "scenario.context_tokens.value"),
    ("scenario.chunk_tokens.min", 1 << 20, "scenario.chunk_tokens.min"),
    ("scenario.tpot_slo_ms", _DELETE, "scenario.tpot_slo_ms"),
    ("model.tie_word_embeddings.value", "no", "model.tie_word_embeddings.value"),
    ("model.attn_output_gate.value", 1, "model.attn_output_gate.value"),
    ("schema_version", 2, "schema_version"),
    ("model.full_attention_interval.value", 5, "model.full_attention_interval.value"),
    ("model.num_key_value_heads.value", 5, "model.num_key_value_heads.value"),
    ("scenario.table_batches.value", [1, -8], "scenario.table_batches.value[1]"),
    ("extra_top_level", 1, "extra_top_level"),
]


IDS = [(f"{p}=<deleted>" if v is _DELETE else f"{p}={v!r}")[:60] for p, v, _ in VARIANTS]  # the same in every process


@pytest.mark.parametrize("path, value, field", VARIANTS, ids=IDS)
def test_malformed_variant_gives_one_line_naming_the_field(anchor_doc, path, value, field):
    doc = copy.deepcopy(anchor_doc)
    _set(doc, path, value)
    with pytest.raises(InputError) as err:
        validate(doc, "anchor-model.json")
    message = str(err.value)
    assert "\n" not in message
    assert message.startswith("anchor-model.json: field ")
    assert f"field {field} " in message + " "


def test_valid_anchor_passes(anchor_doc):
    assert validate(copy.deepcopy(anchor_doc)) is not None


def test_not_json_names_line_and_column(tmp_path):
    from scripts.record.anchor_file import load

    bad = tmp_path / "anchor-model.json"
    bad.write_text('{"model": ', encoding="utf-8")
    with pytest.raises(InputError, match=r"anchor-model.json: not valid JSON at line 1 column"):
        load(bad)


@pytest.mark.slow
def test_snakemake_reports_one_line_and_no_traceback(tmp_path, anchor_doc):
    work = scratch_copy(tmp_path / "kit")
    doc = copy.deepcopy(anchor_doc)
    doc["model"]["head_dim"]["value"] = -1
    (work / "anchor-model.json").write_text(json.dumps(doc), encoding="utf-8")
    before = (work / "precomputed" / "precomputed.json").read_bytes()
    run = subprocess.run([sys.executable, "-m", "snakemake", "--cores", "1", "data"], cwd=work,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode != 0
    assert "Traceback" not in run.stderr + run.stdout
    assert run.stderr.strip() == "error: anchor-model.json: field model.head_dim.value must be >= 1, got -1"
    assert (work / "precomputed" / "precomputed.json").read_bytes() == before


def test_a_schema_is_checked_against_the_metaschema_once_per_content(tmp_path, monkeypatch):
    """scripts/record/schema.py checks a schema's bytes against the metaschema once (a marker per sha256): a schema
    checked before is not checked again; an edited one is, and a broken one is refused and leaves no marker."""
    import jsonschema

    from scripts.record import memo, schema

    monkeypatch.setattr(memo, "MEMO", tmp_path)
    good = '{"type": "object"}'
    schema._check_schema_once(good, json.loads(good))
    assert len(list((tmp_path / schema.CHECKED).iterdir())) == 1
    with monkeypatch.context() as m:  # checked before: the metaschema is not consulted again
        m.setattr(jsonschema.Draft202012Validator, "check_schema", lambda s: 1 / 0)
        schema._check_schema_once(good, json.loads(good))
    bad = '{"type": 5}'
    with pytest.raises(jsonschema.SchemaError):
        schema._check_schema_once(bad, json.loads(bad))
    assert len(list((tmp_path / schema.CHECKED).iterdir())) == 1


def test_a_modules_imports_are_read_again_when_its_text_changes(tmp_path, monkeypatch):
    """scripts/record/deps.py keeps each file's imports by the sha256 of its text: the same text is read from the
    memo (the parser is not called), a changed text is parsed again and its new import counts."""
    from scripts.record import deps, memo

    monkeypatch.setattr(memo, "MEMO", tmp_path)
    module = tmp_path / "m.py"
    module.write_text("import scripts.model.roofline\nSCHEMA = 'x.json'\n", encoding="utf-8")
    first = deps._imports_and_names.__wrapped__(module)
    assert first == (frozenset({"scripts.model.roofline"}), frozenset({"x.json"}))
    with monkeypatch.context() as m:
        m.setattr(deps, "_parse", lambda text, path: 1 / 0)
        assert deps._imports_and_names.__wrapped__(module) == first
    module.write_text("import scripts.model.roofline\nfrom scripts.serving import twin\n", encoding="utf-8")
    assert deps._imports_and_names.__wrapped__(module)[0] == {"scripts.model.roofline", "scripts.serving",
                                                              "scripts.serving.twin"}
    assert len(list((tmp_path / deps.PARSED).iterdir())) == 2  # one memo per text
