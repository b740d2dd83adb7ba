"""A lean PyTorch decode step of the course's tiny model, for a fair comparison with the lab page's engine
(scripts/bench/lab_steps.py, make bench-lab): TinyGPT's own decode concatenates its KV cache every step and builds
its RoPE angles every step; this one writes each new position into a cache allocated once and reads precomputed
cos/sin tables, as the page's WebAssembly model does (templates/lab/model/model.js). Same weights, same arithmetic
(tests/test_lean_step.py holds its logits to TinyGPT's).

Owns: LeanDecoder (prefill a batch's prompts, then one token per request per step). Imports torch; no I/O.
"""
from __future__ import annotations

import torch
from torch.nn import functional as F

from scripts.bench.tinygpt import TinyGPT


class LeanDecoder:
    """Decode steps over `batch` requests sharing one position, each request's K and V in tensors of
    (batch, heads, max_context, dh) allocated here once."""

    def __init__(self, model: TinyGPT, batch: int, max_context: int = 256):
        s = model.s
        self.model, self.s, self.batch, self.dh = model, s, batch, s.d_model // s.n_head
        shape = (batch, s.n_head, max_context, self.dh)
        self.k = [torch.zeros(shape) for _ in range(s.n_layer)]
        self.v = [torch.zeros(shape) for _ in range(s.n_layer)]
        inv = 1.0 / (s.rope_base ** (torch.arange(0, self.dh, 2, dtype=torch.float32) / self.dh))
        ang = torch.outer(torch.arange(max_context, dtype=torch.float32), inv)
        self.cos, self.sin = ang.cos(), ang.sin()  # (max_context, dh / 2), tinygpt.rope's float32 steps

    def rotate(self, x: torch.Tensor, start: int) -> torch.Tensor:
        t = x.shape[-2]
        cos, sin = self.cos[start:start + t], self.sin[start:start + t]
        x1, x2 = x[..., 0::2], x[..., 1::2]
        return torch.stack((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1).flatten(-2)

    @torch.inference_mode()
    def forward(self, ids: torch.Tensor, start: int) -> torch.Tensor:
        """ids (batch, t) at positions start ... start + t - 1; returns the last position's logits (batch, vocab)."""
        m, s = self.model, self.s
        b, t = ids.shape
        x = m.emb(ids)
        for layer, block in enumerate(m.blocks):
            h = F.layer_norm(x, (s.d_model,), block.ln1.weight, block.ln1.bias)
            qkv = F.linear(h, block.qkv.weight, block.qkv.bias)
            q, k, v = qkv.view(b, t, 3, s.n_head, self.dh).permute(2, 0, 3, 1, 4)
            self.k[layer][:, :, start:start + t] = self.rotate(k, start)
            self.v[layer][:, :, start:start + t] = v
            keys, values = self.k[layer][:, :, :start + t], self.v[layer][:, :, :start + t]
            att = F.scaled_dot_product_attention(self.rotate(q, start), keys, values, is_causal=(t > 1 and start == 0))
            x = x + F.linear(att.transpose(1, 2).reshape(b, t, s.d_model), block.proj.weight, block.proj.bias)
            h = F.layer_norm(x, (s.d_model,), block.ln2.weight, block.ln2.bias)
            x = x + F.linear(F.gelu(F.linear(h, block.fc.weight, block.fc.bias)), block.out.weight, block.out.bias)
        last = F.layer_norm(x[:, -1], (s.d_model,), m.ln_f.weight, m.ln_f.bias)
        return last @ m.emb.weight.T
