"""Issue 63: a page says nothing about a model its anchor is not (scripts/audit/words.py, the audit's `words` check),
and the wordings that follow the anchor: the technique caption's bf16 parts (config/techniques.json `when`), the
tokenizer section's names (config/tokenizers.json `models`). The Llama-2 swap builds end to end and audits with this
check in make test-all (tests/test_anchors.py); here the check itself, on the findings the issue reported."""
import json

from scripts.audit.words import change_problems, feature_problems, tokenizer_problems
from scripts.lesson.techniques import kept_in_bf16
from scripts.model.features import features
from scripts.page.render import tokenizer_roles
from scripts.record.anchor_file import load
from tests.conftest import ROOT

WORDS = json.loads((ROOT / "config" / "model_words.json").read_text(encoding="utf-8"))
TOKENIZERS = json.loads((ROOT / "config" / "tokenizers.json").read_text(encoding="utf-8"))
TECHNIQUES = json.loads((ROOT / "config" / "techniques.json").read_text(encoding="utf-8"))
LLAMA, _ = load(ROOT / "anchors" / "llama-2-7b-a100.json")
QWEN35, _ = load(ROOT / "anchor-model.json")


def test_the_issues_llama2_findings_are_each_caught():
    """The sentences the Llama-2 page carried before this change, each reported by the check that reads it."""
    caption = "量化只动线性层,词嵌入、输出层(LM head)、各层归一化、DeltaNet 的卷积与每头参数仍为 bf16"
    [problem] = feature_problems(caption, features(LLAMA), WORDS)
    assert problem.startswith("names 'DeltaNet', but the anchor has no linear_attention")
    assert feature_problems(caption, features(QWEN35), WORDS) == []
    row = "中文段落 Qwen3.5(锚点) 211 613 124"
    assert len(tokenizer_problems(row, "Llama-2-7B", TOKENIZERS)) == 1
    assert tokenizer_problems(row, "Qwen3.5-27B", TOKENIZERS) == []
    moved = "前缀缓存命中让 TTFT 从 0.19 s 降到 0.19 s。"
    assert change_problems(moved, WORDS["change_words"]["value"]) == [
        "says a number moved but shows the same one twice: '从 0.19 s 降到 0.19'"]
    assert change_problems("TTFT 从 10.21 s 降到 0.42 s。", WORDS["change_words"]["value"]) == []
    assert change_problems("每个用户的 TPOT 却从 7.0 ms 拖到 38.1 ms", WORDS["change_words"]["value"]) == []


def test_the_bf16_caption_names_only_parts_the_anchor_has():
    assert "DeltaNet" in kept_in_bf16(QWEN35, TECHNIQUES)
    assert kept_in_bf16(LLAMA, TECHNIQUES) == "词嵌入、输出层(LM head)、各层归一化"


def test_the_tokenizer_section_calls_a_vocabulary_the_anchors_only_when_it_is():
    """render.tokenizer_roles says who is who; templates/tokenizer_names.html.j2 words it (its macros, rendered)."""
    from jinja2 import Environment, FileSystemLoader

    counts = json.loads((ROOT / "precomputed" / "tokenizer_counts.json").read_text(encoding="utf-8"))
    names = Environment(loader=FileSystemLoader(ROOT / "templates")).get_template("tokenizer_names.html.j2").module

    def words(anchor_name):
        roles = tokenizer_roles(counts, anchor_name)
        return {"anchor": roles["anchor"], "reference": str(names.ref_vocab(roles)),
                "course": str(names.course_vocab(roles)),
                "label": {tid: str(names.tok_label(counts, roles, tid)) for tid in counts["tokenizers"]}}

    own = words("Qwen3.5-27B")
    assert own["label"]["qwen3.5"] == "Qwen3.5(锚点)" and own["reference"] == "锚点词表"
    other = words("Qwen3-32B")  # its own vocabulary is Qwen3's; the ratios stay against Qwen3.5's
    assert other["label"]["qwen3"] == "Qwen3(锚点)" and other["label"]["qwen3.5"] == "Qwen3.5"
    assert other["reference"] == " Qwen3.5 词表" and other["course"] == "课程锚点 Qwen3.5 的词表"
    none = words("Llama-2-7B")
    assert "(锚点)" not in "".join(none["label"].values()) and none["anchor"] is None


def test_a_bad_words_file_is_one_line_naming_the_field(tmp_path):
    import pytest

    from scripts.audit.words import load_words
    from scripts.record.inputs import InputError

    (tmp_path / "config").mkdir()
    for bad, field in (({**WORDS, "features": {"linear_attention": {"words": "DeltaNet", "source": "x"}}},
                        "features.linear_attention.words"),
                       ({**WORDS, "features": {"state_space": {"words": ["状态空间"], "source": "x"}}},
                        "features.state_space"),
                       ({k: v for k, v in WORDS.items() if k != "change_words"}, "change_words.value")):
        (tmp_path / "config" / "model_words.json").write_text(json.dumps(bad, ensure_ascii=False), encoding="utf-8")
        with pytest.raises(InputError, match=f"config/model_words.json: field {field}"):
            load_words(tmp_path)


def test_the_llama2_lesson_page_passes_the_words_check(tmp_path):
    """The issue's swap in make test's time: Llama-2-7B's lesson data (the precomputed rule's own code, 0.1 s) rendered
    into the lesson page (the simulator's data stays the default's: the swap end to end, with every page audited, is
    tests/test_anchors.py's make-test-all case). The words check finds nothing; the sentences the issue found false
    read as they should: no DeltaNet part in the caption, no vocabulary called the anchor's, the prompt try-this says
    the prompt is already at its longest, the Kimi sentence says the context cannot hold such a prefix."""
    import re

    from scripts.audit.words import check_words
    from scripts.page.scan import page_text
    from tests.test_record_reliability3 import render_anchor_lesson

    page = render_anchor_lesson(ROOT / "anchors" / "llama-2-7b-a100.json", tmp_path)
    assert check_words([page], LLAMA, "Llama-2-7B", ROOT) == []
    text = page_text(page.read_text(encoding="utf-8"))
    assert "DeltaNet" not in text and "(锚点)" not in text and "锚点词表" not in text
    assert "prompt 已是最长的 4,096(默认值)" in text
    assert re.search(r"装不下这样的长前缀:.*?TTFT 几乎不变,仍约 [0-9.]+ s", text)
    assert "是 Qwen3.5 词表的" in text and "课程锚点 Qwen3.5 的词表" in text
