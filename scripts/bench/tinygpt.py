"""The course's tiny GPT-style decoder (~3.7M parameters) with a real KV cache and a no-cache path.

Weights are a seeded random initialisation: generation speed depends on shapes, not on weight values,
and greedy decoding here never stops early (no end-of-sequence token), so every run does the same work.
"""
from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from scripts.bench.shape import DEFAULT, Shape  # noqa: F401  (Shape re-exported: its home is torch-free)


def rope(x: torch.Tensor, start: int, base: float) -> torch.Tensor:
    """Rotary position embedding for x of shape (B, H, T, Dh) whose first position is `start`."""
    dh = x.shape[-1]
    inv = 1.0 / (base ** (torch.arange(0, dh, 2, dtype=torch.float32) / dh))
    pos = torch.arange(start, start + x.shape[-2], dtype=torch.float32)
    ang = torch.outer(pos, inv)
    cos, sin = ang.cos(), ang.sin()
    x1, x2 = x[..., 0::2], x[..., 1::2]
    return torch.stack((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1).flatten(-2)


class Block(nn.Module):
    def __init__(self, s: Shape):
        super().__init__()
        self.s = s
        self.ln1, self.ln2 = nn.LayerNorm(s.d_model), nn.LayerNorm(s.d_model)
        self.qkv = nn.Linear(s.d_model, 3 * s.d_model)
        self.proj = nn.Linear(s.d_model, s.d_model)
        self.fc, self.out = nn.Linear(s.d_model, s.d_ff), nn.Linear(s.d_ff, s.d_model)

    def forward(self, x: torch.Tensor, cache: dict | None, start: int) -> torch.Tensor:
        b, t, d = x.shape
        h = self.s.n_head
        q, k, v = self.qkv(self.ln1(x)).view(b, t, 3, h, d // h).permute(2, 0, 3, 1, 4)
        q, k = rope(q, start, self.s.rope_base), rope(k, start, self.s.rope_base)
        if cache is not None:
            if "k" in cache:
                k, v = torch.cat([cache["k"], k], dim=2), torch.cat([cache["v"], v], dim=2)
            cache["k"], cache["v"] = k, v
        # causal within the new tokens; every cached position is in the past
        att = F.scaled_dot_product_attention(q, k, v, is_causal=(t > 1 and k.shape[2] == t))
        x = x + self.proj(att.transpose(1, 2).reshape(b, t, d))
        return x + self.out(F.gelu(self.fc(self.ln2(x))))


class TinyGPT(nn.Module):
    def __init__(self, s: Shape = DEFAULT, seed: int = 0):
        super().__init__()
        torch.manual_seed(seed)
        self.s = s
        self.emb = nn.Embedding(s.vocab, s.d_model)
        self.blocks = nn.ModuleList(Block(s) for _ in range(s.n_layer))
        self.ln_f = nn.LayerNorm(s.d_model)

    def forward(self, ids: torch.Tensor, caches: list[dict] | None = None, start: int = 0) -> torch.Tensor:
        x = self.emb(ids)
        for i, block in enumerate(self.blocks):
            x = block(x, caches[i] if caches is not None else None, start)
        return self.ln_f(x) @ self.emb.weight.T  # tied embeddings


def param_count(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())


@torch.inference_mode()
def generate(model: TinyGPT, prompt: torch.Tensor, new_tokens: int, kv_cache: bool, step_times: list | None = None,
             sync=None):
    """Greedy decoding; returns the new ids. `step_times` collects each step's seconds when given; `sync` (e.g.
    torch.cuda.synchronize) is called before each step's clock is read, so an asynchronous device is timed whole."""
    import time

    ids, out = prompt, []
    caches = [{} for _ in model.blocks] if kv_cache else None
    start, feed = 0, prompt
    for _ in range(new_tokens):
        t0 = time.perf_counter()
        logits = model(feed, caches, start) if kv_cache else model(ids)
        nxt = logits[:, -1].argmax(-1, keepdim=True)
        if sync is not None:
            sync()
        if step_times is not None:
            step_times.append(time.perf_counter() - t0)
        out.append(nxt)
        ids = torch.cat([ids, nxt], dim=1)
        if kv_cache:
            start, feed = ids.shape[1] - 1, nxt
    return torch.cat(out, dim=1)
