"""KV managers: how much memory a request holds on a GPU, whether the next waiting request fits, and when the
running ones no longer fit (then the scheduler preempts). Pure. Registered by name (registry.py):

  reserved  each request's full context (prompt + output tokens of KV, plus its fixed recurrent state,
            roofline.bytes_per_request) reserved at admission and freed when its last token is out; never full
            mid-flight, so never preempts: the lesson's schedules (orca, sarathi, disagg) as the seed models them.
  paged     vLLM's paged KV cache (vllm/v1/core/kv_cache_manager.py, as its docs describe it): blocks of
            `block_size` tokens allocated as tokens arrive, in a pool of gpu_memory_utilization x HBM less the
            weights and the reserve; a waiting request is admitted when its whole prompt's blocks (and its state) fit
            beside what the running ones need for their next token (vLLM V1 allocates only the scheduled chunk's
            blocks: a simplification that admits no more than V1 does); when a running request's next block does not
            fit, the scheduler preempts (loop.py).
A prefix cache plugs in at `prefix_hit`: the prompt tokens of a newly admitted request whose KV is already held
(none here: neither manager shares blocks between requests), which it then need not prefill."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from scripts.model import roofline as rl
from scripts.model.anchor import Anchor
from scripts.serving.engine.registry import register


@dataclass(frozen=True)
class Memory:
    """The paged pool's settings: `vllm serve`'s --block-size (16 on CUDA) and --gpu-memory-utilization (0.9)."""
    block_size: int = 16
    gpu_memory_utilization: float = 0.9

    def __post_init__(self):
        if not (1 <= self.block_size <= 1024 and 0 < self.gpu_memory_utilization <= 1):
            raise ValueError(f"paged memory: block_size must be in [1, 1024] and gpu_memory_utilization in (0, 1], "
                             f"not {self.block_size} and {self.gpu_memory_utilization:g}")

    def blocks(self, tokens):
        return np.ceil(np.asarray(tokens, dtype=float) / self.block_size)

    def pool_bytes(self, a: Anchor) -> float:
        return self.gpu_memory_utilization * a.hbm_bytes - rl.weight_bytes_total(a) - a.runtime_reserve_bytes


def _too_big(biggest: float, capacity: float):
    if biggest > capacity:
        raise ValueError(f"a request needs {biggest / 1e9:.1f} GB, more than the {capacity / 1e9:.1f} GB "
                         "free for requests on one GPU")


class KVManager:
    """One GPU's KV memory for one run of the loop. `start` is called once with the run's requests, `bind` gives
    the manager the loop whose state (running requests, prompts in flight) it reads."""
    preempts = False  # whether running requests can outgrow the memory (the loop then asks the scheduler)

    def __init__(self, a: Anchor, capacity: float):
        self.a, self.capacity = a, capacity

    def bind(self, loop):
        self.loop = loop

    def prefix_hit(self, i: int) -> int:
        """Prompt tokens of request i whose KV this GPU already holds when it is admitted (a prefix cache's hits)."""
        return 0


@register("kv", "reserved")
class ReservedKV(KVManager):
    """Full contexts reserved at admission (module docstring)."""

    def start(self, prompt, output):
        need = rl.bytes_per_request(self.a, (prompt + output).astype(float))
        _too_big(float(need.max()) if len(prompt) else 0.0, self.capacity)
        self.need, self.reserved = need.tolist(), 0.0

    def in_use(self) -> float:
        """Bytes held now (the loop's peak)."""
        return self.reserved

    def fits(self, i: int, used: float) -> bool:
        return self.reserved + self.need[i] <= self.capacity

    def admit(self, i: int):
        self.reserved += self.need[i]

    def release(self, i: int):
        self.reserved -= self.need[i]

    def join(self, base: int):  # a request joins the decode batch; nothing to count
        pass

    leave = join


@register("kv", "paged")
class PagedKV(KVManager):
    """Paged blocks allocated as tokens arrive (module docstring). The decode batch's blocks are counted per residue
    of its context base modulo the block size (`after`), so a step's total needs no per-request work."""
    preempts = True

    def __init__(self, a: Anchor, capacity: float, memory: Memory):
        super().__init__(a, capacity)
        self.memory = memory

    def start(self, prompt, output):
        bs, kv = self.memory.block_size, rl.kv_bytes_per_token(self.a)
        self.bs, self.block_bytes, self.state = bs, bs * kv, rl.state_bytes_per_request(self.a)
        longest = float((prompt + output).max()) if len(prompt) else 0.0
        _too_big(self.memory.blocks(longest) * self.block_bytes + self.state if len(prompt) else 0.0, self.capacity)
        self.q_sum, self.residues, self.live = 0, [0] * bs, set()

    def in_use(self) -> float:
        return self.after(0)

    def fits(self, i: int, used: float) -> bool:
        return used + -(-self.loop.pf_len[i] // self.bs) * self.block_bytes + self.state <= self.capacity

    def admit(self, i: int):  # blocks are counted from the loop's state, not booked
        pass

    release = admit

    def _count(self, base: int, sign: int):
        q, r = divmod(base, self.bs)
        self.q_sum += sign * q
        self.residues[r] += sign
        if self.residues[r] == 0:
            self.live.discard(r)
        elif sign > 0:
            self.live.add(r)

    def join(self, base: int):
        self._count(base, 1)

    def leave(self, base: int):
        self._count(base, -1)

    def after(self, extra_steps: int = 0) -> float:
        """Blocks every admitted request holds in the next iteration (+ extra_steps decode tokens), as bytes. A decode
        at context c = q*bs + r (0 <= r < bs) holds ceil((c + N) / bs) = q + (r + N + bs - 1) // bs blocks,
        N = n_iters + extra_steps: summed over the residues' counts, whatever the batch size (whole numbers: the same
        total as Memory.blocks summed in floats). Prompts being prefilled hold their blocks, KV being pulled in
        (P/D) its prompt's."""
        loop, bs = self.loop, self.bs
        shift = loop.n_iters + extra_steps + bs - 1
        blocks = self.q_sum
        residues = self.residues
        for r in self.live:
            blocks += residues[r] * ((r + shift) // bs)
        pf_len = loop.pf_len
        for i in loop.prefilling:
            blocks += -(-pf_len[i] // bs)
        prompt = loop.prompt
        for _, i in loop.transfers:
            blocks += -(-prompt[i] // bs)
        return blocks * self.block_bytes + self.state * loop.admitted

    def steps_that_fit(self, k: int) -> int:
        """Of the next k pure-decode iterations, how many run before the first whose new blocks do not fit (the
        loop's top saw that the first one does)."""
        if self.after(k - 1) <= self.capacity:
            return k
        lo, hi = 0, k - 1  # step lo fits, step hi does not
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (mid, hi) if self.after(mid) <= self.capacity else (lo, mid)
        return lo + 1


def kv_manager(a: Anchor, capacity: float, memory: Memory | None) -> KVManager:
    """`paged` with `memory`'s pool settings, else `reserved`."""
    return ReservedKV(a, capacity) if memory is None else PagedKV(a, capacity, memory)
