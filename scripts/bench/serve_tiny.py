"""Serve a TinyGPT-shaped model on this machine with the lab page's engine rule and client, and write the run as a
`vllm bench serve --save-result --save-detailed` file (the lab's experiment D reads it; so does
scripts/serving/results.load_result).

  python -m scripts.bench.serve_tiny --out build/serve-tiny.json [--checkpoint my_model.pt --heads 4]
        [--rate R --requests N --prompt P --output O --seed S --max-num-seqs M --max-num-batched-tokens T]
        [--system-prompt 64 --prefix-caching]

Each flag defaults to the lab's setting in config/lab.json (--help names it); a value out of bounds, or an --out
that is a folder, a file the repository keeps, the checkpoint or unwritable, is refused in one line before the run.

The model is the course's TinyGPT (the lab's seeded weights by default, or a state_dict the student trained: its
shape is read from the weights, its head count given). The engine takes vLLM V1's rule from the simulator
(scripts/serving/engine/schedulers.py VllmV1: running decodes first, one token each, then prompt tokens first come
first served within max_num_batched_tokens), as the lab's engine takes it from the simulator's twin; waiting requests
are admitted while the step's budget lasts and fewer than max_num_seqs run, whole contexts reserved; one step runs
every scheduled token of every request at once, over a KV cache per slot. The client is in the same process: requests
arrive by a seeded Poisson process, each is sent at its arrival time and the engine takes it at the next step;
a token counts as received when its step ends (time.perf_counter). Greedy decoding, no end-of-sequence token.
"""
from __future__ import annotations

import argparse
import math
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
from scripts.record.outputs import check_output
from scripts.serving.engine.prefix import TokenPrefixCache
from scripts.serving.engine.schedulers import VllmV1

ROOT = Path(__file__).resolve().parents[2]


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
    """vLLM V1's rule (the simulator's, schedulers.VllmV1), as templates/lab/model/model.js Engine (the same names,
    the same rule from the simulator's twin); with a TokenPrefixCache
    (scripts/serving/engine/prefix.py, vLLM V1's APC) a request starts from its prompt's cached blocks, their KV
    copied into its slot from the blocks' store, and `hits` lists [id, cached tokens] of the step's admissions."""

    def __init__(self, model: FlatModel, max_num_seqs: int, max_batched_tokens: int,
                 prefix_cache: TokenPrefixCache | None = None):
        self.model, self.rule = model, VllmV1(max_num_seqs, max_batched_tokens)
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
        """[request, tokens this step] in the step's order: each running decode its last token, then the prompt chunks
        the simulator's vLLM V1 rule gives (schedulers.VllmV1.prefill_chunks, the one home of the rule), after
        admitting waiting requests FCFS while fewer than max_num_seqs run and the step's budget is not spent."""
        running = self.running
        decodes = [r for r in running if r["out"]]  # an admission adds none: a newly admitted request has no output
        decoding = len(decodes)
        while self.waiting and len(running) < self.rule.max_batch and self._budget_left(decoding) > 0:
            r = self.waiting.popleft()
            r["slot"] = self.free.pop()
            if self.prefix_cache:
                self.reuse(r)
            running.append(r)
        return [(r, 1) for r in decodes] + [(running[k], n) for k, _, n in self._chunks(decoding)]

    def _chunks(self, decoding: int) -> list[tuple[int, int, int]]:
        running = self.running
        prefilling = [k for k, r in enumerate(running) if not r["out"]]
        return self.rule.prefill_chunks(prefilling, [len(r["tokens"]) for r in running],
                                        [r["computed"] for r in running], decoding)

    def _budget_left(self, decoding: int) -> float:
        return self.rule.iteration_budget(decoding) - sum(n for _, _, n in self._chunks(decoding))

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
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        raise InputError(f"{name}: not a readable torch state_dict ({type(exc).__name__}: {first})") from None
    if not isinstance(state, dict) or "emb.weight" not in state:
        raise InputError(f"{name}: no emb.weight: not a TinyGPT state_dict (save model.state_dict())")
    emb = state["emb.weight"]
    if not isinstance(emb, torch.Tensor) or emb.ndim != 2 or emb.shape[0] < emb.shape[1]:
        raise InputError(f"{name}: field emb.weight is not a (vocab x width) tensor")
    vocab, d = emb.shape
    layers = len({k.split(".")[1] for k in state if k.startswith("blocks.")})
    d_ff = state["blocks.0.fc.weight"].shape[0] if "blocks.0.fc.weight" in state else 0
    if d % heads:
        raise InputError(f"{name}: width {d} is not divisible by --heads {heads}")
    model = TinyGPT(Shape(n_layer=layers, d_model=d, n_head=heads, vocab=vocab, d_ff=d_ff))
    try:
        missing, unexpected = model.load_state_dict(state, strict=False)
    except RuntimeError as exc:  # a tensor of the wrong shape: torch names the field on its second line
        detail = [line.strip() for line in str(exc).splitlines() if line.strip()]
        raise InputError(f"{name}: {detail[-1] if detail else 'a tensor of the wrong shape'}") from None
    if missing or unexpected:
        raise InputError(f"{name}: field {(missing or unexpected)[0]} is {'missing' if missing else 'not TinyGPT'}")
    return model


def serve(model: TinyGPT, rate: float, requests: int, prompt: int, output: int, seed: int, max_num_seqs: int,
          max_batched_tokens: int, system_prompt: int = 0, prefix_caching: bool = False, block_size: int = 16) -> dict:
    """One open-loop run; returns the vLLM-layout result (per-request lists and vLLM's metrics). Every prompt is
    `system_prompt` shared tokens, then `prompt` of its own; with prefix caching the pool holds the slots' memory
    in 16-token blocks, and the result adds each request's cached tokens and the run's hit rate (cached / prompt
    tokens, as vLLM's prefix-cache hit rate counts queries and hits in tokens)."""
    from scripts.serving.measures import metrics

    rng = np.random.default_rng(seed)
    arrivals = np.cumsum(rng.exponential(1.0 / rate, requests))
    shared = rng.integers(0, model.s.vocab, system_prompt).tolist()
    prompts = [shared + p for p in rng.integers(0, model.s.vocab, (requests, prompt)).tolist()]
    context = system_prompt + prompt + output
    cache = TokenPrefixCache(max_num_seqs * -(-context // block_size), block_size) if prefix_caching else None
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


# The flags, each with the lab's setting it defaults to (config/lab.json, the one home of the lab's defaults) and the
# bounds a run keeps (a run of at most 1,000 requests sent within 10 minutes, contexts that fit 1 GiB of KV).
FLAGS = (("--rate", float, ("load", "rate"), 1e-3, 1e4), ("--requests", int, ("load", "request_count"), 1, 1000),
         ("--prompt", int, ("load", "prompt"), 1, 4096), ("--output", int, ("load", "output"), 1, 4096),
         ("--seed", int, ("load", "seed"), 0, 2**32 - 1), ("--max-num-seqs", int, ("engine", "max_num_seqs"), 1, 256),
         ("--max-num-batched-tokens", int, ("engine", "max_num_batched_tokens"), 1, 65536),
         ("--system-prompt", int, None, 0, 4096), ("--heads", int, None, 1, 64))


def parse(argv=None) -> argparse.Namespace:
    """The command line, its defaults from config/lab.json; a value out of its bounds or an --out that would write
    over something kept is refused in one line naming the flag."""
    from scripts.record import schema

    doc = schema.read_input(ROOT / "config" / "lab.json", schema.LAB)  # its schema checked; the values read here
    settings = {group: {key: field["value"] for key, field in doc[group].items()} for group in ("load", "engine")}
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True)
    p.add_argument("--checkpoint")
    for flag, kind, home, _, _ in FLAGS:
        default = settings[home[0]][home[1]] if home else {"--system-prompt": 0, "--heads": 4}[flag]
        where = f" (config/lab.json {'.'.join(home)})" if home else ""
        p.add_argument(flag, type=kind, default=default, help=f"default {default}{where}")
    p.add_argument("--prefix-caching", action="store_true",
                   help=f"vLLM V1's automatic prefix caching ({settings['load']['prefix_block_size']}-token blocks)")
    a = p.parse_args(argv)
    a.block_size = settings["load"]["prefix_block_size"]
    for flag, _, _, low, high in FLAGS:
        value = getattr(a, flag[2:].replace("-", "_"))
        if not (math.isfinite(value) and low <= value <= high):
            raise InputError(f"{flag} {value}: must be between {low:,} and {high:,}")
    if a.requests / a.rate > 600:
        raise InputError(f"--requests {a.requests} at --rate {a.rate:g}: sending them would take "
                         f"{a.requests / a.rate:,.0f} s (at most 600)")
    if a.max_num_seqs > a.max_num_batched_tokens:
        raise InputError(f"--max-num-seqs {a.max_num_seqs}: must not exceed --max-num-batched-tokens")
    if a.max_num_seqs * (a.system_prompt + a.prompt + a.output) > 2**20:
        raise InputError("--max-num-seqs x (--system-prompt + --prompt + --output): over 1,048,576 token slots of KV")
    check_output(Path(a.out), {"--checkpoint": Path(a.checkpoint) if a.checkpoint else None})
    return a


def main(argv=None) -> dict:
    a = parse(argv)
    torch.set_num_threads(1)
    model = load_checkpoint(Path(a.checkpoint), a.heads) if a.checkpoint else seeded_model()
    result = serve(model, a.rate, a.requests, a.prompt, a.output, a.seed, a.max_num_seqs, a.max_num_batched_tokens,
                   a.system_prompt, a.prefix_caching, a.block_size)
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
