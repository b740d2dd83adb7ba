"""Hostile inputs against the validation layer that runs before Snakemake schedules anything (in-process, fast).

Every input kind (anchor, cited numbers, tokenizer config, passages, questions, workloads, bench records, vLLM
results) gets broken in many ways: encodings, JSON literals, bounds, types, text characters. Each variant has an
expected outcome: a clear error (InputError, one line, starting with the file's name) or acceptance (and then a
derived build that succeeds). Anything else (another exception) fails the test. The counts are printed.
"""
import copy
import json
import shutil
from collections import Counter
from pathlib import Path

import pytest

from scripts.audit.inputs import TEMPLATES, check_all
from scripts.lesson.precomputed import build
from scripts.record.anchor_file import load
from scripts.record.inputs import InputError, read_json
from tests.conftest import ROOT

FILES = {"anchor": "anchor-model.json", "cited": "config/cited.json", "tokenizers": "config/tokenizers.json",
         "passages": "config/passages.json", "workloads": "config/workloads.json", "questions": "questions/C13-L5.md",
         "gpus": "config/gpus.json", "vendor": "config/vendor.json", "cluster": "config/cluster.yaml",
         "course": "config/course.json", "techniques": "config/techniques.json", "prefix": "config/prefix.json",
         "lab": "config/lab.json", **{f"template {Path(t).name}": t for t in TEMPLATES}}
BENCH = sorted((ROOT / "precomputed" / "bench").glob("*.json"))
SERVE = "precomputed/serve/example.json"
VLLM_RESULT = {"duration": 2.0, "ttfts": [0.1, 0.2], "itls": [[0.01], []], "input_lens": [10, 20],
               "output_lens": [2, 1], "errors": ["", ""]}


def base_root(tmp: Path) -> Path:
    for rel in FILES.values():
        (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, tmp / rel)
    (tmp / "precomputed" / "bench").mkdir(parents=True, exist_ok=True)
    for rec in BENCH:
        shutil.copy2(rec, tmp / "precomputed" / "bench" / rec.name)
    (tmp / SERVE).parent.mkdir(parents=True, exist_ok=True)
    (tmp / SERVE).write_text(json.dumps(VLLM_RESULT))
    return tmp


def bytes_variants(kind: str, rel: str):
    """Encodings and truncation: the same for every file."""
    yield f"{kind}: utf-8 BOM", rel, lambda b: b"\xef\xbb\xbf" + b, "error"
    yield f"{kind}: utf-16", rel, lambda b: b.decode("utf-8").encode("utf-16"), "error"
    yield f"{kind}: latin-1 byte", rel, lambda b: b[:1] + b"\xe9" + b[1:], "error"
    if rel.endswith(".json"):
        yield f"{kind}: truncated", rel, lambda b: b[: len(b) // 2], "error"
        yield f"{kind}: empty", rel, lambda b: b"", "error"


def first_string_path(node, path=()):
    if isinstance(node, str):
        return path
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else []
    for k, v in items:
        if (found := first_string_path(v, (*path, k))) is not None:
            return found
    return None


def set_at(doc, path, value):
    for k in path[:-1]:
        doc = doc[k]
    doc[path[-1]] = value


def json_text_variants(kind: str, rel: str):
    """Literals JSON or this kit must not accept, placed into the file's own structure."""
    text = (ROOT / rel).read_text(encoding="utf-8") if rel != SERVE else json.dumps(VLLM_RESULT)
    doc = json.loads(text)
    path = first_string_path(doc)
    key = next(iter(doc))
    yield f"{kind}: duplicate key", rel, lambda _: text.replace("{", '{"' + key + '": 1, ', 1).encode(), "error"
    for literal in ("NaN", "Infinity", "-Infinity", "1e400"):
        yield (f"{kind}: {literal}", rel,
               lambda _, lit=literal: text.replace("{", '{"zz_extra": ' + lit + ", ", 1).encode(), "error")
    for name, ch in (("NUL", "\u0000"), ("ESC", "\u001b"), ("RLO", "\u202e"), ("lone surrogate", "\ud800"),
                     ("C1 control", "\u0085")):
        def put(_, ch=ch):
            d = copy.deepcopy(doc)
            set_at(d, path, "x" + ch + "y")
            return json.dumps(d, ensure_ascii=True).encode()
        # A vLLM result's first string is an `errors` entry: text the kit never reads or shows (as generated_texts),
        # so control characters there are accepted (vLLM saves what the server said).
        yield f"{kind}: {name} in text", rel, put, "ok" if rel == SERVE else "error"


def edit(rel, change, text=None):
    def apply(_):
        d = json.loads((ROOT / rel).read_text(encoding="utf-8") if text is None else text)
        change(d)
        return json.dumps(d, ensure_ascii=False).encode()
    return apply


ANCHOR_NUMBERS = [("model", k) for k in ("num_hidden_layers", "full_attention_interval", "hidden_size",
                                         "intermediate_size", "num_attention_heads", "num_key_value_heads",
                                         "head_dim", "linear_num_key_heads", "linear_num_value_heads",
                                         "linear_key_head_dim", "linear_value_head_dim", "linear_conv_kernel_dim",
                                         "vocab_size", "max_position_embeddings", "weight_bytes", "kv_cache_bytes",
                                         "recurrent_state_bytes")] + \
                 [("hardware", k) for k in ("runtime_reserve_bytes", "pd_link_bytes_per_s")]
GPU_NUMBERS = ("hbm_bytes", "hbm_bandwidth_bytes_per_s", "peak_bf16_flops")  # the anchor's GPU's, in config/gpus.json
ANCHOR_GPU = json.loads((ROOT / "anchor-model.json").read_text(encoding="utf-8"))["hardware"]["gpu"]["value"]


def anchor_variants():
    rel = FILES["anchor"]
    for sec, key in ANCHOR_NUMBERS:
        for bad in (-1, 1e308, 1e18, "12", True, None, [4]):
            yield f"anchor: {sec}.{key} = {bad!r}", rel, edit(rel, lambda d, s=sec, k=key, v=bad: d[s][k].update(
                value=v)), "error"
        yield f"anchor: {sec}.{key} has no source", rel, edit(rel, lambda d, s=sec, k=key: [
            d[s][k].pop(x, None) for x in ("source", "assumption")]), "error"
    for slider in ("context_tokens", "batch", "tpot_slo_ms", "prompt_tokens", "chunk_tokens"):
        for field in ("value", "min", "max"):
            for bad in (1e308, True, -5, "8"):
                yield (f"anchor: scenario.{slider}.{field} = {bad!r}", rel,
                       edit(rel, lambda d, s=slider, f=field, v=bad: d["scenario"][s].update({f: v})), "error")
    yield "anchor: unknown section", rel, edit(rel, lambda d: d.update(extra={})), "error"
    yield "anchor: name of 5,000 characters", rel, edit(rel, lambda d: d["model"]["name"].update(
        value="x" * 5000)), "error"
    gpus = FILES["gpus"]
    for key in GPU_NUMBERS:  # the anchor's GPU's datasheet numbers, where they live
        for bad in (-1, 1e308, "12", None):
            yield f"gpus: the anchor's GPU's {key} = {bad!r}", gpus, edit(gpus, lambda d, k=key, v=bad: d["gpus"][
                ANCHOR_GPU][k].update(value=v)), "error"
    yield "gpus: the anchor's GPU with 120 GB (a larger GPU)", gpus, edit(gpus, lambda d: d["gpus"][ANCHOR_GPU][
        "hbm_bytes"].update(value=120e9)), "ok"
    yield "gpus: the anchor's GPU at 8 TB/s", gpus, edit(gpus, lambda d: d["gpus"][ANCHOR_GPU][
        "hbm_bandwidth_bytes_per_s"].update(value=8e12)), "ok"
    yield "gpus: the anchor's GPU taken out", gpus, edit(gpus, lambda d: d["gpus"].pop(ANCHOR_GPU)), "error"
    yield "anchor: a GPU id config/gpus.json lacks", rel, edit(rel, lambda d: d["hardware"]["gpu"].update(
        value="h900")), "error"
    yield "anchor: a datasheet number copied into it", rel, edit(rel, lambda d: d["hardware"].update(
        hbm_bytes={"value": 80e9, "unit": "B", "source": "a datasheet"})), "error"
    yield "anchor: on another GPU of config/gpus.json", rel, edit(rel, lambda d: d["hardware"]["gpu"].update(
        value="h200_sxm")), "ok"
    yield "anchor: reserve 0", rel, edit(rel, lambda d: d["hardware"]["runtime_reserve_bytes"].update(value=0)), "ok"
    yield "anchor: batch max 1024", rel, edit(rel, lambda d: d["scenario"]["batch"].update(max=1024)), "ok"
    yield "anchor: unicode display name", rel, edit(rel, lambda d: d["model"]["display_name"].update(
        value="锚点模型 α")), "ok"
    yield "anchor: table batch 0", rel, edit(rel, lambda d: d["scenario"]["table_batches"].update(
        value=[0, 8])), "error"


def other_variants():
    cited = FILES["cited"]
    for field, bad in (("value", -3), ("value", "3"), ("value", True), ("format", "f9"), ("locator", ""),
                       ("work_id", "nope"), ("self_reported", "yes"), ("id", 7)):
        yield f"cited: numbers[0].{field} = {bad!r}", cited, edit(cited, lambda d, f=field, v=bad: d["numbers"][0]
                                                                  .update({f: v})), "error"
    yield "cited: repeated id", cited, edit(cited, lambda d: d["numbers"].append(dict(d["numbers"][0]))), "error"
    yield "cited: works not an object", cited, edit(cited, lambda d: d.update(works=[])), "error"
    tok = FILES["tokenizers"]
    for field in ("version", "archive_sha256", "loader", "files"):
        yield f"tokenizers: gpt2.{field} missing", tok, edit(tok, lambda d, f=field: d["tokenizers"]["gpt2"].pop(f)), \
            "error"
    yield "tokenizers: sha256 upper case", tok, edit(tok, lambda d: d["tokenizers"]["gpt2"].update(
        archive_sha256=d["tokenizers"]["gpt2"]["archive_sha256"].upper())), "error"
    yield "tokenizers: unknown loader", tok, edit(tok, lambda d: d["tokenizers"]["gpt2"].update(loader="exec")), \
        "error"
    yield "tokenizers: anchor tokenizer unknown", tok, edit(tok, lambda d: d.update(anchor_tokenizer="x")), "error"
    yield "tokenizers: schema_version 2", tok, edit(tok, lambda d: d.update(schema_version=2)), "error"
    pas = FILES["passages"]
    for bad in (True, 1e308, 0, -1, 2.5, "60"):
        yield f"passages: tok_s_slider.value = {bad!r}", pas, edit(pas, lambda d, v=bad: d["tok_s_slider"].update(
            value=v)), "error"
    yield "passages: slider max 1e308", pas, edit(pas, lambda d: d["tok_s_slider"].update(max=1e308)), "error"
    yield "passages: empty text", pas, edit(pas, lambda d: next(iter(d["passages"].values())).update(text="")), \
        "error"
    yield "passages: text of 50,000 characters", pas, edit(pas, lambda d: next(iter(d["passages"].values())).update(
        text="字" * 50_000)), "error"
    yield "passages: emoji and CJK extension text", pas, edit(pas, lambda d: next(iter(d["passages"].values())).update(
        text="𠀀𪚥 🙂 混排 text")), "ok"
    q = FILES["questions"]
    for name, add in (("NUL", "\x00"), ("ESC", "\x1b[31m"), ("RLO", "\u202e"), ("DEL", "\x7f")):
        yield f"questions: {name}", q, lambda b, a=add: b + f"## 问题\n\n回答 {a} 完\n".encode(), "error"
    yield "questions: 2 MB", q, lambda b: b + ("长" * 700_000).encode(), "error"
    yield "questions: markdown with html and links", q, lambda b: b + (
        "## 为什么?\n\n<script>x</script> [链接](https://example.org) `code` *强调*\n").encode(), "ok"
    wl = FILES["workloads"]
    for path, bad in ((("workloads", "chat", "prompt_tokens", "median"), -1),
                      (("workloads", "chat", "prompt_tokens", "max"), 10_000_000),
                      (("workloads", "chat", "output_tokens", "max"), 262_144),  # no room left for a prompt
                      (("sweep", "requests", "value"), 10**9), (("sweep", "rates_per_gpu", "value"), []),
                      (("sweep", "slo_ms", "value"), {"ttft": True}),
                      (("page", "workload", "value"), "nobody"), (("page", "request_rate", "value"), 4.5),
                      (("page", "ttft_slo_ms", "value"), {"min": 5000, "max": 100, "step": 1}),
                      (("page", "tpot_slo_ms", "value"), {"min": 10, "max": 20, "step": 1}),
                      (("page", "attainment_target", "value"), [0.5, 0.99]),
                      (("page", "try", "value"), {"tight_tpot": {"workload": "chat", "load_tpot_slo_ms": 1e9}}),
                      (("page", "try", "value", "tight_ttft"), {"workload": "chat_long", "ttft_slo_ms": 1e9}),
                      (("page",), [])):
        yield f"workloads: {'.'.join(path)} = {bad!r}", wl, edit(wl, lambda d, p=path, v=bad: set_at(d, p, v)), "error"
    # longer than the model's 262,144 positions: fitted to the context (scaled), not refused
    # (serving/workloads/config.py)
    yield "workloads: long prompts up to 300,000 tokens", wl, edit(wl, lambda d: set_at(
        d, ("workloads", "chat_long", "long_prompts", "prompt_tokens", "max"), 300_000)), "ok"
    for i, rec in enumerate(BENCH[:1]):
        rel = f"precomputed/bench/{rec.name}"
        for name, change in (
                ("runs -3", lambda d: d["results"][0].update(runs=-3)),
                ("runs 2.5", lambda d: d["results"][0].update(runs=2.5)),
                ("new_tokens 0", lambda d: d["results"][0].update(new_tokens=0)),
                ("median above max", lambda d: d["results"][0].update(median_s=99.0)),
                ("median a week", lambda d: d["results"][0].update(median_s=6e5, q3_s=6e5, max_s=6e5)),
                ("forged machine id", lambda d: d["machine"].update(id="cpu-other-machine-2c-torch1t")),
                ("junk date", lambda d: d["machine"].update(date="soon")),
                ("unknown field", lambda d: d.update(notes="x")),
                ("unknown machine field", lambda d: d["machine"].update(secret="x")),
                ("50 MB field", lambda d: d.update(blob="x" * (6 * 1024 * 1024))),
                ("tokens differ", lambda d: d["results"][1].update(tokens_identical=False)),
                ("one mode missing", lambda d: d["results"].pop()),
                ("schema 1", lambda d: d.update(schema_version=1))):
            yield f"bench[{i}]: {name}", rel, edit(rel, change), "error"
    for name, change in (("duration 0", lambda d: d.update(duration=0)), ("ttfts short", lambda d: d["ttfts"].pop()),
                         ("itls not lists", lambda d: d.update(itls=[1, 2])), ("no ttfts", lambda d: d.pop("ttfts")),
                         ("negative ttft", lambda d: d["ttfts"].__setitem__(0, -1)),
                         ("ttft 1e308", lambda d: d["ttfts"].__setitem__(0, 1e308)),
                         ("itl true", lambda d: d["itls"][0].__setitem__(0, True))):
        yield f"vllm result: {name}", SERVE, edit(SERVE, change, json.dumps(VLLM_RESULT)), "error"


def all_variants():
    kinds = {**{k: v for k, v in FILES.items()}, "vllm result": SERVE}
    if BENCH:
        kinds["bench"] = f"precomputed/bench/{BENCH[0].name}"
    for kind, rel in kinds.items():
        yield from bytes_variants(kind, rel)
        if rel.endswith(".json"):
            yield from json_text_variants(kind, rel)
    yield from anchor_variants()
    yield from other_variants()


VARIANTS = list(all_variants())


def outcome(root: Path) -> tuple[str, str]:
    try:
        check_all(root)
    except InputError as exc:
        return "error", str(exc)
    return "ok", ""


def test_the_corpus_is_big_and_spans_every_input_kind():
    kinds = Counter(name.split(":")[0].split("[")[0] for name, *_ in VARIANTS)
    assert len(VARIANTS) >= 200, len(VARIANTS)
    assert set(kinds) >= {"anchor", "cited", "tokenizers", "passages", "questions", "workloads", "bench",
                          "vllm result"}, kinds


def expected_outcome(root: Path, name: str, rel: str, expected: str) -> list[str]:
    """Check the inputs under `root` (`rel` holding variant `name`): the outcome must be `expected`, an error one
    line naming the file; an accepted anchor or GPU table builds, or a claim stops it in one line. Returns what
    happened, as the test counts it."""
    got, message = outcome(root)  # any exception but InputError propagates and fails the test
    if (got, expected) == ("error", "ok") and rel in (FILES["anchor"], FILES["gpus"]) and message.startswith("claim "):
        # a valid anchor or GPU table whose numbers make a lesson claim false: check_all settles the claims up
        # front now (issue 80), in one line naming the claim and the fields to change
        assert "\n" not in message and ("config/gpus.json" in message or FILES["anchor"] in message), message
        return ["accepted", "stopped by a claim"]
    assert got == expected, f"{name}: expected {expected}, got {got} {message}"
    if got == "error":
        assert message.startswith(f"{rel}") or message.startswith(f"{(root / rel).as_posix()}") or \
            message.startswith(Path(rel).name) or f" {rel} " in message, f"{name}: {message}"  # (or a cross-file
        # error: an anchor's GPU id that config/gpus.json lacks names both files)
        assert "\n" not in message and len(message) < 400, f"{name}: {message}"
        return ["clear error"]
    if rel in (FILES["anchor"], FILES["gpus"]):  # accepted: its data builds, or a claim stops it in one line
        anchor, doc = load(root / FILES["anchor"], root / FILES["gpus"])
        try:
            build(anchor, doc, read_json(root / FILES["cited"]), read_json(root / FILES["gpus"]))
        except InputError as exc:
            assert str(exc).startswith("claim ") and "\n" not in str(exc), f"{name}: {exc}"
            return ["accepted", "stopped by a claim"]
    return ["accepted"]


def test_every_hostile_variant_gets_its_expected_outcome(tmp_path):
    """Each variant is its one file mutated in a copy of the inputs, checked (and, accepted, built), and the file put
    back (the check only reads and caches nothing by path; a copy of the whole tree per variant was a quarter of
    the test's 8 s)."""
    counts = Counter()
    root = base_root(tmp_path / "base")
    assert outcome(root) == ("ok", "")
    for name, rel, mutate, expected in VARIANTS:
        original = (root / rel).read_bytes()
        (root / rel).write_bytes(mutate(original))
        try:
            counts.update(expected_outcome(root, name, rel, expected))
        finally:
            (root / rel).write_bytes(original)
    counts["tried"] = len(VARIANTS)
    print(f"\nhostile inputs: {dict(counts)}")
    assert counts["clear error"] + counts["accepted"] == len(VARIANTS)


@pytest.mark.parametrize("value", ["\u202e", "\u0000", "\ud800"])
def test_forbidden_characters_are_named(tmp_path, value):
    path = tmp_path / "x.json"
    path.write_text(json.dumps({"a": {"b": f"ok{value}"}}), encoding="utf-8")
    with pytest.raises(InputError, match=r"field a\.b contains a "):
        read_json(path)
