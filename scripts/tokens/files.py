"""Pinned tokenizer files: the config, their sha256 checks, and loading them with `tokenizers` (offline)."""
from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path

from scripts.record import schema
from scripts.record.inputs import InputError
from scripts.record.schema import read_config

CACHE = Path(".cache/tokenizers")
CONVERTED = Path("build/tokenizers/qwen3.5.tokenizer.json")


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def load_config(path: Path) -> dict:
    """config/tokenizers.json (schemas/tokenizers), with anchor_tokenizer naming one of its tokenizers."""
    cfg, tokenizers = read_config(path, "tokenizers", schema.TOKENIZERS)
    if cfg["anchor_tokenizer"] not in tokenizers:
        raise InputError(f"{Path(path).as_posix()}: field anchor_tokenizer must name one of the tokenizers "
                         f"({', '.join(tokenizers)})")
    return cfg


def verify(path: Path, expected: str) -> None:
    if not Path(path).is_file():
        raise InputError(f"{path}: tokenizer file is missing from the cache (run `make site` to fetch it)")
    actual = sha256_file(path)
    if actual != expected:
        raise InputError(f"{path}: sha256 {actual[:16]}… does not match the pinned {expected[:16]}… (tampered or "
                         "wrong version; delete it and rebuild)")


def cached_file(tid: str, inner: str, cache: Path = CACHE) -> Path:
    return cache / tid / Path(inner).name


def load_tokenizer(tid: str, entry: dict, cache: Path = CACHE, converted: Path = CONVERTED):
    """A `tokenizers.Tokenizer`, after checking every pinned file's sha256."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    for inner, digest in entry["files"].items():
        verify(cached_file(tid, inner, cache), digest)
    if entry["loader"] == "gpt2_bpe":
        files = {Path(p).name: cached_file(tid, p, cache) for p in entry["files"]}
        tok = Tokenizer(models.BPE.from_file(str(files["encoder.json"]), str(files["vocab.bpe"])))
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        tok.decoder = decoders.ByteLevel()
        return tok
    if entry["loader"] == "tokenizer_json":
        (inner,) = entry["files"]
        return Tokenizer.from_file(str(cached_file(tid, inner, cache)))
    if not Path(converted).is_file():
        raise InputError(f"{converted}: the converted {tid} tokenizer is missing (run `make site`)")
    try:
        return Tokenizer.from_file(str(converted))
    except Exception as exc:  # tokenizers raises a bare Exception for a truncated or foreign file
        raise InputError(f"{converted}: the converted {tid} tokenizer cannot be read ({str(exc)[:120]}): delete it "
                         "and run `make site` to convert it again") from None


def read_tiktoken_ranks(path: Path) -> dict[bytes, int]:
    ranks = {}
    for n, line in enumerate(Path(path).read_bytes().splitlines(), 1):
        if not line:
            continue
        try:
            token, rank = line.split()
            ranks[base64.b64decode(token, validate=True)] = int(rank)
        except ValueError:
            raise InputError(f"{path}: line {n} is not '<base64 token> <rank>'") from None
    return ranks


def dumps(obj: object) -> str:
    return json.dumps(obj, ensure_ascii=False, indent=1) + "\n"


def convert_qwen35(cfg_path: Path) -> bytes:
    """The pinned, sha256-checked ranks file from the cache, as a `tokenizers` JSON document."""
    from scripts.tokens.qwen35 import build_tokenizer

    entry = load_config(cfg_path)["tokenizers"]["qwen3.5"]
    (inner, digest), = entry["files"].items()
    ranks_file = cached_file("qwen3.5", inner)
    verify(ranks_file, digest)
    return build_tokenizer(read_tiktoken_ranks(ranks_file)).to_str().encode("utf-8")
