"""Count each lesson passage under each pinned tokenizer: rows and one provenance record per number."""

from importlib import metadata
from pathlib import Path

from scripts.record import provenance as pv
from scripts.record import schema
from scripts.record.inputs import InputError, read_json
from scripts.record.schema import read_input
from scripts.tokens.files import CONVERTED, cached_file, load_config, load_tokenizer, sha256_file

SCRIPT = "scripts/tokenizer_counts.py"
WORDS = read_json(Path(__file__).parent / "labels.json")  # the records' labels (words only; the code fills {fields})
CHARS_PASSAGE = "zh"  # the tok/s -> chars/s slider converts at the Chinese paragraph's chars per token


def load_passages(path: Path) -> dict:
    """config/passages.json (schemas/passages), the slider's default within its range, each title used once (the
    page's table tells passages apart by title)."""
    doc = read_input(path, schema.PASSAGES)
    seen: dict[str, str] = {}
    for pid, p in doc["passages"].items():
        title = p["title"].strip()
        if title in seen:
            raise InputError(f"{Path(path).as_posix()}: field passages.{pid}.title repeats {title!r}, the title of "
                             f"passages.{seen[title]}: give each passage its own title")
        seen[title] = pid
    slider = doc["tok_s_slider"]
    if not slider["min"] <= slider["value"] <= slider["max"]:
        raise InputError(f"{Path(path).as_posix()}: field tok_s_slider.value must lie within [min, max] = "
                         f"[{slider['min']}, {slider['max']}]")
    return doc


def record(rid, value, unit, fmt, label, inputs, formula="scripts.tokens.counts:count",
           derivation=pv.Derivation.RECORDS):
    """A derived record; with Derivation.RECORDS `inputs` are record ids, in the order `formula` takes them."""
    return pv.derived(rid, label, value, unit, fmt, derivation=derivation, formula=formula, inputs=inputs,
                      script=SCRIPT, args={}, scale=1.0)


def count(cfg_path: Path, passages_path: Path, proof_path: Path | None = None) -> dict:
    """Every passage under every tokenizer. `proof_path`: the conversion proof (rule verify_qwen35), whose
    converted_sha256 the converted tokenizer in build/tokenizers/ must still have: that file is a cache, and a
    truncated or edited one would count wrong or fail deep inside `tokenizers`."""
    cfg, doc = load_config(cfg_path), load_passages(passages_path)
    anchor_tid, passages = cfg["anchor_tokenizer"], doc["passages"]
    if proof_path is not None:
        proof = read_json(proof_path)
        if not isinstance(proof, dict) or not isinstance(proof.get("converted_sha256"), str):
            raise InputError(f"{Path(proof_path).as_posix()}: field converted_sha256 is missing")
        if CONVERTED.is_file() and sha256_file(CONVERTED) != proof["converted_sha256"]:
            raise InputError(f"{CONVERTED.as_posix()}: its sha256 differs from the one its proof recorded "
                             f"({Path(proof_path).as_posix()} converted_sha256): the cached conversion was changed "
                             "or cut short; delete it and rebuild (make site)")
    toks = {tid: load_tokenizer(tid, entry) for tid, entry in cfg["tokenizers"].items()}
    reference = cfg["tokenizers"][anchor_tid]["label"]
    rows, prov = [], {}
    for pid, p in passages.items():
        text = p["text"]
        src = f"{passages_path.as_posix()} passages.{pid}.text"
        n_anchor = len(toks[anchor_tid].encode(text, add_special_tokens=False).ids)
        prov[f"tokens.{pid}.chars"] = record(f"tokens.{pid}.chars", len(text), WORDS["chars_unit"], "int",
                                             WORDS["chars"].format(passage=p["title"]),
                                             [src], "builtins:len", pv.Derivation.PASSAGE)
        prov[f"tokens.{pid}.utf8_bytes"] = record(f"tokens.{pid}.utf8_bytes", len(text.encode()), "B", "int",
                                                  WORDS["utf8_bytes"].format(passage=p["title"]), [src],
                                                  "str.encode:utf-8", pv.Derivation.PASSAGE)
        for tid, tok in toks.items():
            n = len(tok.encode(text, add_special_tokens=False).ids)
            rows.append({"passage_id": pid, "tokenizer_id": tid, "chars": len(text), "utf8_bytes": len(text.encode()),
                         "tokens": n})
            files = [f"{cached_file(tid, inner).as_posix()} sha256:{digest}"
                     for inner, digest in cfg["tokenizers"][tid]["files"].items()]
            base = f"tokens.{pid}.{tid}"
            names = {"passage": p["title"], "tokenizer": cfg["tokenizers"][tid]["label"]}
            prov[f"{base}.tokens"] = record(f"{base}.tokens", n, "token", "int", WORDS["tokens"].format(**names),
                                            [src, *files],
                                            derivation=pv.Derivation.TOKENIZER)
            prov[f"{base}.chars_per_token"] = record(f"{base}.chars_per_token", chars_per_token(len(text), n),
                                                     WORDS["chars_per_token_unit"], "f2",
                                                     WORDS["chars_per_token"].format(**names),
                                                     [f"tokens.{pid}.chars", f"{base}.tokens"],
                                                     "scripts.tokens.counts:chars_per_token")
            prov[f"{base}.ratio_to_anchor"] = record(
                f"{base}.ratio_to_anchor", ratio(n, n_anchor), "×", "f2",
                WORDS["ratio_to_anchor"].format(**names, reference=reference),
                [f"{base}.tokens", f"tokens.{pid}.{anchor_tid}.tokens"], "scripts.tokens.counts:ratio")
    slider = doc["tok_s_slider"]
    for key in ("value", "min", "max"):
        rid = "tokens.slider.tok_s" + ("" if key == "value" else f".{key}")
        prov[rid] = pv.assumed(rid, WORDS["slider"].format(key=key), slider[key], "token/s", "int",
                               assumption=slider.get("source", "slider setting"))
    for tid in toks:
        n = next(r["tokens"] for r in rows if r["passage_id"] == CHARS_PASSAGE and r["tokenizer_id"] == tid)
        value = chars_per_second(slider["value"], len(passages[CHARS_PASSAGE]["text"]), n)
        rid = f"readout.chars_per_s.{tid}"
        prov[rid] = record(rid, value, WORDS["chars_per_s_unit"], "int",
                           WORDS["chars_per_s"].format(tokenizer=cfg["tokenizers"][tid]["label"]),
                           ["tokens.slider.tok_s", f"tokens.{CHARS_PASSAGE}.chars",
                            f"tokens.{CHARS_PASSAGE}.{tid}.tokens"],
                           "scripts.tokens.counts:chars_per_second")
    meta = {tid: {k: e[k] for k in ("label", "registry", "package", "version", "license", "files", "models") if k in e}
            for tid, e in cfg["tokenizers"].items()}
    return {"schema_version": 1, "anchor_tokenizer": anchor_tid, "chars_passage": CHARS_PASSAGE,
            "tokenizers_library": f"tokenizers {metadata.version('tokenizers')}", "tokenizers": meta,
            "tokenizer_order": list(toks), "passages": {pid: p["text"] for pid, p in passages.items()},
            "passage_titles": {pid: p["title"] for pid, p in passages.items()}, "rows": rows,
            "tok_s_slider": slider, "provenance": prov}


def chars_per_token(chars: int, tokens: int) -> float:
    return chars / tokens


def ratio(tokens: int, anchor_tokens: int) -> float:
    return tokens / anchor_tokens


def chars_per_second(tok_s: float, chars: int, tokens: int) -> float:
    return tok_s * chars / tokens
