"""Serve a TinyGPT-shaped model on this machine with the lab page's engine rule and client, and write the run as a
`vllm bench serve --save-result --save-detailed` file (the lab's experiment D reads it; so does
scripts/serving/results.load_result).

  python -m scripts.bench.serve_tiny --out build/serve-tiny.json [--checkpoint my_model.pt --heads 4]
        [--rate 16 --requests 80 --prompt 64 --output 32 --seed 7 --max-num-seqs 16 --max-num-batched-tokens 256]
        [--system-prompt 64 --prefix-caching]

The model is the course's TinyGPT (the lab's seeded weights by default, or a state_dict the student trained: its
shape is read from the weights, its head count given). The engine follows vLLM V1's rule as templates/lab/model/model.js
does (running requests first, each its last token or the rest of its prompt, then waiting ones first come first
served, all within max_num_batched_tokens, at most max_num_seqs running, whole contexts reserved); one step runs
every scheduled token of every request at once, over a KV cache per slot. The client is in the same process: requests
arrive by a seeded Poisson process, each is sent at its arrival time and the engine takes it at the next step;
a token counts as received when its step ends (time.perf_counter). Greedy decoding, no end-of-sequence token.
"""
from __future__ import annotations

import argparse
import time
from collections import deque
from pathlib import Path

import numpy as np
import torch
from torch.nn import functional as F

from scripts.bench.seeded_weights import seeded_model
from scripts.bench.shape import Shape
from scripts.bench.tinygpt import TinyGPT
from scripts.record.atomic import write_json_atomic
from scripts.record.inputs import InputError
from scripts.serving.engine.prefix import TokenPrefixCache


class FlatModel:
    """TinyGPT's forward over a flat token list, each token with its slot and position (the lab page's layout)."""

    def __init__(self, model: TinyGPT, slots: int, max_context: int):
        s = model.s
        self.model, self.s, self.max_context = model.eval(), s, max_context
        shape = (s.n_layer, slots, max_context, s.n_head, s.d_model // s.n_head)
        self.k, self.v = torch.zeros(shape), torch.zeros(shape)
        dh = s.d_model // s.n_head
        self.inv = 1.0 / (s.rope_base ** (torch.arange(0, dh, 2, dtype=torch.float32) / dh))

    def rope(self, x: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:  # x: (T, H, dh), as tinygpt.rope per token
        ang = torch.outer(pos.to(torch.float32), self.inv)[:, None, :]
        cos, sin = ang.cos(), ang.sin()
        x1, x2 = x[..., 0::2], x[..., 1::2]
        return torch.stack((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1).flatten(-2)

    def attend(self, layer: int, q: torch.Tensor, slots: list[int], pos: torch.Tensor) -> torch.Tensor:
        """Each request's run of tokens against its slot's cache, causal (a token sees positions up to its own)."""
        out = torch.empty_like(q)
        t = 0
        while t < len(slots):
            end = t
            while end < len(slots) and slots[end] == slots[t]:
                end += 1
            first, last = int(pos[t]), int(pos[end - 1])
            keys = self.k[layer, slots[t], : last + 1].transpose(0, 1)  # (H, n, dh)
            values = self.v[layer, slots[t], : last + 1].transpose(0, 1)
            mask = torch.arange(last + 1)[None, :] <= torch.arange(first, last + 1)[:, None]
            out[t:end] = F.scaled_dot_product_attention(q[t:end].transpose(0, 1), keys, values,
                                                        attn_mask=mask).transpose(0, 1)
            t = end
        return out

    def export_kv(self, slot: int, n: int, start: int) -> tuple[torch.Tensor, torch.Tensor]:
        """K and V of a slot's n positions from `start` (a prefix-cache block's store), copies."""
        return self.k[:, slot, start:start + n].clone(), self.v[:, slot, start:start + n].clone()

    def import_kv(self, slot: int, start: int, kv: tuple[torch.Tensor, torch.Tensor]) -> None:
        n = kv[0].shape[1]
        self.k[:, slot, start:start + n], self.v[:, slot, start:start + n] = kv

    @torch.inference_mode()
    def forward(self, ids: list[int], slots: list[int], pos: list[int], wanted: list[int]) -> torch.Tensor:
        s, m = self.s, self.model
        h, dh = s.n_head, s.d_model // s.n_head
        position = torch.tensor(pos)
        if int(position.max()) >= self.max_context:
            raise ValueError(f"position {int(position.max())} is past the context ({self.max_context})")
        x = m.emb(torch.tensor(ids))
        for layer, block in enumerate(m.blocks):
            q, k, v = block.qkv(block.ln1(x)).view(len(ids), 3, h, dh).unbind(1)
            q, k = self.rope(q, position), self.rope(k, position)
            self.k[layer, torch.tensor(slots), position] = k
            self.v[layer, torch.tensor(slots), position] = v
            att = self.attend(layer, q, slots, position)
            x = x + block.proj(att.reshape(len(ids), s.d_model))
            x = x + block.out(F.gelu(block.fc(block.ln2(x))))
        return m.ln_f(x[wanted]) @ m.emb.weight.T


class Engine:
    """vLLM V1's rule, as templates/lab/model/model.js Engine (the same names); with a TokenPrefixCache
    (scripts/serving/engine/prefix.py, vLLM V1's APC) a request starts from its prompt's cached blocks, their KV
    copied into its slot from the blocks' store, and `hits` lists [id, cached tokens] of the step's admissions."""

    def __init__(self, model: FlatModel, max_num_seqs: int, max_batched_tokens: int,
                 prefix_cache: TokenPrefixCache | None = None):
        self.model, self.max_num_seqs, self.budget = model, max_num_seqs, max_batched_tokens
        self.prefix_cache, self.store, self.hits = prefix_cache, {}, []
        self.waiting: deque = deque()
        self.running: list[dict] = []
        self.free = list(range(max_num_seqs - 1, -1, -1))

    def add(self, rid: int, prompt: list[int], output_len: int) -> None:
        if len(prompt) + output_len > self.model.max_context:
            raise ValueError(f"request {rid}: {len(prompt)} + {output_len} tokens exceed the context")
        self.waiting.append({"id": rid, "prompt": list(prompt), "tokens": list(prompt), "computed": 0, "out": 0,
                             "output_len": output_len, "blocks": [], "cached": 0})

    def reuse(self, r: dict) -> None:
        blocks, hit = self.prefix_cache.admit(r["prompt"])
        bs = self.prefix_cache.block_size
        for k, b in enumerate(blocks):
            self.model.import_kv(r["slot"], k * bs, self.store[b.id])
        r.update(blocks=blocks, computed=hit, cached=hit)
        self.hits.append((r["id"], hit))

    def busy(self) -> bool:
        return bool(self.running or self.waiting)

    def schedule(self) -> list[tuple[dict, int]]:
        plan, budget = [], self.budget
        for r in self.running:
            n = min(len(r["tokens"]) - r["computed"], budget)
            if n > 0:
                plan.append((r, n))
                budget -= n
            if budget <= 0:
                break
        while self.waiting and budget > 0 and len(self.running) < self.max_num_seqs:
            r = self.waiting.popleft()
            r["slot"] = self.free.pop()
            if self.prefix_cache:
                self.reuse(r)
            self.running.append(r)
            n = min(len(r["tokens"]) - r["computed"], budget)
            plan.append((r, n))
            budget -= n
        return plan

    def step(self) -> list[tuple[int, int, bool]]:
        ids, slots, pos, wanted, ends = [], [], [], [], []
        self.hits = []
        plan = self.schedule()
        for r, n in plan:
            for k in range(n):
                ids.append(r["tokens"][r["computed"] + k])
                slots.append(r["slot"])
                pos.append(r["computed"] + k)
            r["computed"] += n
            if r["computed"] == len(r["tokens"]):
                wanted.append(len(ids) - 1)
                ends.append(r)
        logits = self.model.forward(ids, slots, pos, wanted) if ids else None
        pc, events = self.prefix_cache, []
        for r, _ in plan if pc else ():
            for b, at in pc.grow(r["blocks"], r["tokens"], r["computed"]):
                self.store[b.id] = self.model.export_kv(r["slot"], pc.block_size, at)
        for row, r in enumerate(ends):
            token = int(logits[row].argmax())
            r["tokens"].append(token)
            r["out"] += 1
            done = r["out"] >= r["output_len"]
            if done:
                self.running.remove(r)
                self.free.append(r["slot"])
                if pc:
                    pc.release(r["blocks"])
            events.append((r["id"], token, done))
        return events


def load_checkpoint(path: Path, heads: int) -> TinyGPT:
    """A TinyGPT from a state_dict file; its shape read from the weights. One line naming the file on a mismatch."""
    name = path.as_posix()
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # a torch or pickle error, said in one line
        raise InputError(f"{name}: not a readable torch state_dict ({type(exc).__name__}: {exc})") from None
    if not isinstance(state, dict) or "emb.weight" not in state:
        raise InputError(f"{name}: no emb.weight: not a TinyGPT state_dict (save model.state_dict())")
    vocab, d = state["emb.weight"].shape
    layers = len({k.split(".")[1] for k in state if k.startswith("blocks.")})
    d_ff = state["blocks.0.fc.weight"].shape[0] if "blocks.0.fc.weight" in state else 0
    if d % heads:
        raise InputError(f"{name}: width {d} is not divisible by --heads {heads}")
    model = TinyGPT(Shape(n_layer=layers, d_model=d, n_head=heads, vocab=vocab, d_ff=d_ff))
    missing, unexpected = model.load_state_dict(state, strict=False)
    if missing or unexpected:
        raise InputError(f"{name}: field {(missing or unexpected)[0]} is {'missing' if missing else 'not TinyGPT'}")
    return model


def serve(model: TinyGPT, rate: float, requests: int, prompt: int, output: int, seed: int, max_num_seqs: int,
          max_batched_tokens: int, system_prompt: int = 0, prefix_caching: bool = False) -> dict:
    """One open-loop run; returns the vLLM-layout result (per-request lists and vLLM's metrics). Every prompt is
    `system_prompt` shared tokens, then `prompt` of its own; with prefix caching the pool holds the slots' memory
    in 16-token blocks, and the result adds each request's cached tokens and the run's hit rate (cached / prompt
    tokens, as vLLM's prefix-cache hit rate counts queries and hits in tokens)."""
    from scripts.serving import metrics

    rng = np.random.default_rng(seed)
    arrivals = np.cumsum(rng.exponential(1.0 / rate, requests))
    shared = rng.integers(0, model.s.vocab, system_prompt).tolist()
    prompts = [shared + p for p in rng.integers(0, model.s.vocab, (requests, prompt)).tolist()]
    context = system_prompt + prompt + output
    cache = TokenPrefixCache(max_num_seqs * -(-context // 16)) if prefix_caching else None
    engine = Engine(FlatModel(model, max_num_seqs, context), max_num_seqs, max_batched_tokens, cache)
    cached = [0] * requests
    times: list[list[float]] = [[] for _ in range(requests)]
    pending, start = deque(range(requests)), time.perf_counter()
    while pending or engine.busy():
        now = time.perf_counter() - start
        while pending and arrivals[pending[0]] <= now:
            i = pending.popleft()
            engine.add(i, prompts[i], output)
        if not engine.busy():
            time.sleep(max(0.0, arrivals[pending[0]] - now))
            continue
        events = engine.step()
        received = time.perf_counter() - start
        for rid, hit in engine.hits:
            cached[rid] = hit
        for rid, _, _ in events:
            times[rid].append(received)
    ttfts = [t[0] - a for t, a in zip(times, arrivals, strict=True)]
    latencies = [t[-1] - a for t, a in zip(times, arrivals, strict=True)]
    itls = [list(np.diff(t)) for t in times]
    duration = max(t[-1] for t in times)
    out = {"duration": duration, "completed": requests, "ttfts": ttfts, "itls": [[float(g) for g in i] for i in itls],
           "latencies": latencies, "send_times": [float(a) for a in arrivals],
           "input_lens": [system_prompt + prompt] * requests, "output_lens": [output] * requests,
           "errors": [""] * requests, "request_rate": rate, "engine": "scripts.bench.serve_tiny (vLLM V1's rule)"}
    if prefix_caching:
        out.update(cached_tokens=cached, prefix_cache_hit_rate=sum(cached) / (requests * (system_prompt + prompt)))
    out.update(metrics.compute(ttfts, latencies, [g for i in itls for g in i], out["input_lens"],
                               out["output_lens"], duration))
    return out


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True)
    p.add_argument("--checkpoint")
    p.add_argument("--heads", type=int, default=4)
    for flag, kind, default in (("--rate", float, 16.0), ("--requests", int, 80), ("--prompt", int, 64),
                                ("--output", int, 32), ("--seed", int, 7), ("--max-num-seqs", int, 16),
                                ("--max-num-batched-tokens", int, 256), ("--system-prompt", int, 0)):
        p.add_argument(flag, type=kind, default=default)
    p.add_argument("--prefix-caching", action="store_true", help="vLLM V1's automatic prefix caching (16-token blocks)")
    a = p.parse_args(argv)
    torch.set_num_threads(1)
    model = load_checkpoint(Path(a.checkpoint), a.heads) if a.checkpoint else seeded_model()
    result = serve(model, a.rate, a.requests, a.prompt, a.output, a.seed, a.max_num_seqs, a.max_num_batched_tokens,
                   a.system_prompt, a.prefix_caching)
    write_json_atomic(Path(a.out), result)
    print(f"{a.out}: {a.requests} requests in {result['duration']:.2f} s; mean TTFT {result['mean_ttft_ms']:.1f} ms, "
          f"mean TPOT {result['mean_tpot_ms']:.2f} ms"
          + (f"; prefix cache hit rate {100 * result['prefix_cache_hit_rate']:.1f} %" if a.prefix_caching else ""))
    return result


if __name__ == "__main__":
    try:
        main()
    except InputError as exc:
        raise SystemExit(f"error: {exc}") from None
