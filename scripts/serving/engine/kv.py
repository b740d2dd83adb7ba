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
With a prefix cache (simulate(prefix_caching=True); prefix.py holds the caches' data structures):
  paged+apc       `paged`, plus vLLM V1's automatic prefix caching (prefix.VllmPrefixPool over the same pool's
                  blocks): an admitted request's longest run of cached full blocks is not prefilled; its prompt's full
                  blocks are cached as its chunks are computed, its output's when it leaves (finished or preempted:
                  a readmitted request hits its own blocks if they were not evicted). Admission still counts every
                  request's blocks in full (shared blocks are not credited: conservative), and the pool books a
                  request's prompt blocks at admission and its output's when it leaves, so eviction can come a little
                  late; for a hybrid anchor the recurrent state at the hit's end is taken as saved with the block
                  (vLLM's mamba_cache_mode "align" saves it at block boundaries; its memory is not counted here).
  reserved+slots  `reserved`, plus llama.cpp server's slots (prefix.LlamaSlots): a request takes the idle slot
                  whose kept tokens share the largest share of its prompt (above --slot-prompt-similarity), else the
                  least recently used one, and reuses the common prefix; the slot then keeps its prompt and output.
The loop asks `prefix_hit` at admission (the prompt tokens it need not prefill), tells `computed` after each prompt
chunk and `dropped` when a request leaves the GPU (finished, or preempted) with the tokens whose KV it had."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from scripts.model import roofline as rl
from scripts.model import sizes
from scripts.model.anchor import Anchor
from scripts.serving.engine.prefix import BlockHashes, LlamaSlots, VllmPrefixPool
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
        return self.gpu_memory_utilization * a.hbm_bytes - sizes.weight_bytes_total(a) - a.runtime_reserve_bytes


def _too_big(biggest: float, capacity: float):
    if biggest > capacity:
        raise ValueError(f"a request needs {biggest / 1e9:.1f} GB, more than the {capacity / 1e9:.1f} GB "
                         "free for requests on one GPU")


class KVManager:
    """The defaults of contracts.KVContract for a manager without a prefix cache: no hits, nothing kept."""
    preempts = False  # whether running requests can outgrow the memory (the loop then asks the scheduler)

    def __init__(self, a: Anchor, capacity: float):
        self.a, self.capacity = a, capacity

    def prefix_hit(self, i: int, tokens: int) -> int:
        return 0

    def computed(self, i: int, done: int):
        pass

    def dropped(self, i: int, computed: int, t: float):
        pass


@register("kv", "reserved")
class ReservedKV(KVManager):
    """Full contexts reserved at admission (module docstring)."""

    def start(self, prompt, output):
        need = rl.bytes_per_request(self.a, (prompt + output).astype(float))
        _too_big(float(need.max()) if len(prompt) else 0.0, self.capacity)
        self.need, self.reserved = need.tolist(), 0.0

    def in_use(self, n_iters: int) -> float:
        return self.reserved

    def fits(self, i: int, tokens: int, used: float) -> bool:
        return self.reserved + self.need[i] <= self.capacity

    def admit(self, i: int, tokens: int):
        self.reserved += self.need[i]

    def release(self, i: int):
        self.reserved -= self.need[i]

    def join(self, i: int, base: int):  # a request joins the decode batch; nothing to count
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
        bs, kv = self.memory.block_size, sizes.kv_bytes_per_token(self.a)
        self.bs, self.block_bytes, self.state = bs, bs * kv, sizes.state_bytes_per_request(self.a)
        longest = float((prompt + output).max()) if len(prompt) else 0.0
        _too_big(self.memory.blocks(longest) * self.block_bytes + self.state if len(prompt) else 0.0, self.capacity)
        self.q_sum, self.residues, self.live = 0, [0] * bs, set()
        self.booked = [0] * len(prompt)  # request -> the blocks of the prompt it prefills (or pulls), until it joins
        self.prompt_blocks, self.admitted = 0, 0

    def in_use(self, n_iters: int) -> float:
        return self.after(n_iters)

    def fits(self, i: int, tokens: int, used: float) -> bool:
        return used + -(-tokens // self.bs) * self.block_bytes + self.state <= self.capacity

    def admit(self, i: int, tokens: int):
        blocks = -(-tokens // self.bs)
        self.booked[i] = blocks
        self.prompt_blocks += blocks
        self.admitted += 1

    def _unbook(self, i: int):
        self.prompt_blocks -= self.booked[i]
        self.booked[i] = 0

    def release(self, i: int):
        self._unbook(i)
        self.admitted -= 1

    def _count(self, base: int, sign: int):
        q, r = divmod(base, self.bs)
        self.q_sum += sign * q
        self.residues[r] += sign
        if self.residues[r] == 0:
            self.live.discard(r)
        elif sign > 0:
            self.live.add(r)

    def join(self, i: int, base: int):
        self._unbook(i)
        self._count(base, 1)

    def leave(self, i: int, base: int):
        self._count(base, -1)

    def after(self, n_iters: int) -> float:
        """Blocks every admitted request holds when the decode-iteration count is `n_iters`, as bytes. A decode at
        context c = q*bs + r (0 <= r < bs) holds ceil((c + N) / bs) = q + (r + N + bs - 1) // bs blocks (its base
        c - N counted by `join`): summed over the residues' counts, whatever the batch size (whole numbers: the same
        total as Memory.blocks summed in floats). A prompt being prefilled, or KV being pulled in (P/D), holds its
        booked blocks."""
        bs = self.bs
        shift = n_iters + bs - 1
        blocks = self.q_sum + self.prompt_blocks
        residues = self.residues
        for r in self.live:
            blocks += residues[r] * ((r + shift) // bs)
        return blocks * self.block_bytes + self.state * self.admitted

    def steps_that_fit(self, n_iters: int, k: int) -> int:
        if self.after(n_iters + k - 1) <= self.capacity:
            return k
        lo, hi = 0, k - 1  # step lo fits, step hi does not
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (mid, hi) if self.after(n_iters + mid) <= self.capacity else (lo, mid)
        return lo + 1


class _Contents:
    """Request i's tokens as segments: its prompt's, then its output's (content id answer_ids[i])."""

    def __init__(self, segments, answer_ids, prompt):
        self.segments, self.answer_ids, self.prompt = segments, answer_ids, prompt

    def upto(self, i: int, tokens: int) -> list:
        out, left = [], tokens
        for content, n in self.segments[i]:
            if left <= 0:
                break
            out.append((content, min(n, left)))
            left -= n
        if left > 0:
            out.append((self.answer_ids[i], left))
        return out


@register("kv", "paged+apc")
class PrefixPagedKV(PagedKV):
    """`paged` with vLLM V1's automatic prefix caching (module docstring)."""

    def __init__(self, a: Anchor, capacity: float, memory: Memory, segments, answer_ids):
        super().__init__(a, capacity, memory)
        self.segments, self.answer_ids = segments, answer_ids

    def start(self, prompt, output):
        super().start(prompt, output)
        n = len(prompt)
        self.contents = _Contents(self.segments, self.answer_ids, prompt.tolist())
        self.pool = VllmPrefixPool(max(1, int(self.capacity // self.block_bytes)), self.bs)
        self.hashes = BlockHashes()
        self.held: list = [None] * n  # request -> its blocks, in order
        self.chain: list = [None] * n  # request -> its full blocks' hashes (of the tokens it is prefilling)
        self.n_cached = [0] * n  # request -> how many of its blocks are cached

    def _take(self, n: int) -> list:
        return self.pool.allocate(min(n, self.pool.num_free())) if n > 0 else []

    def prefix_hit(self, i: int, tokens: int) -> int:
        chain = self.hashes.chain(self.contents.upto(i, tokens), self.bs)
        hit = self.pool.lookup(chain, tokens)
        self.pool.touch(hit)
        self.held[i] = hit + self._take(-(-tokens // self.bs) - len(hit))
        self.chain[i], self.n_cached[i] = chain, len(hit)
        return len(hit) * self.bs

    def computed(self, i: int, done: int):
        self._cache(i, self.chain[i], done // self.bs)

    def _cache(self, i, chain, full):
        blocks, pool = self.held[i], self.pool
        for k in range(self.n_cached[i], min(full, len(blocks), len(chain))):
            pool.cache(blocks[k], chain[k])
        self.n_cached[i] = max(self.n_cached[i], min(full, len(blocks), len(chain)))

    def dropped(self, i: int, computed: int, t: float):
        blocks = self.held[i]
        blocks.extend(self._take(-(-computed // self.bs) - len(blocks)))
        self._cache(i, self.hashes.chain(self.contents.upto(i, computed), self.bs), computed // self.bs)
        self.pool.free(blocks)
        self.held[i], self.n_cached[i] = None, 0


@register("kv", "reserved+slots")
class SlotsKV(ReservedKV):
    """`reserved` with llama.cpp server's slots (module docstring): one slot per admitted request (the scheduler's
    max_batch is -np)."""

    def __init__(self, a: Anchor, capacity: float, segments, answer_ids, n_slots: int, similarity: float,
                 order=None):
        super().__init__(a, capacity)
        self.segments, self.answer_ids = segments, answer_ids
        self.n_slots, self.similarity, self.order = n_slots, similarity, order

    def start(self, prompt, output):
        super().start(prompt, output)
        self.contents = _Contents(self.segments, self.answer_ids, prompt.tolist())
        self.slots = LlamaSlots(self.n_slots, self.similarity, self.order)
        self.slot_of: list = [None] * len(prompt)

    def prefix_hit(self, i: int, tokens: int) -> int:
        prompt = self.contents.upto(i, self.contents.prompt[i])
        slot = self.slots.choose(prompt)
        self.slot_of[i] = slot
        return self.slots.start(slot, prompt)

    def dropped(self, i: int, computed: int, t: float):
        prompt = self.contents.prompt[i]
        generated = [(self.answer_ids[i], computed - prompt)] if computed > prompt else []
        self.slots.finish(self.slot_of[i], t, generated)
        self.slot_of[i] = None


# llama-server --slot-prompt-similarity default (common/common.h, the llama.cpp in llama-cpp-python 0.3.36)
SLOT_SIMILARITY = 0.1


def kv_manager(a: Anchor, capacity: float, memory: Memory | None, prefix=None, n_slots: int = 0,
               slot_order=None) -> KVManager:
    """`paged` with `memory`'s pool settings, else `reserved`; with `prefix` = (segments, answer ids) their prefix
    caching kinds, `paged+apc` or `reserved+slots` (n_slots slots, least recently used first as `slot_order` says:
    prefix.LlamaSlots)."""
    if prefix is None:
        return ReservedKV(a, capacity) if memory is None else PagedKV(a, capacity, memory)
    if memory is None:
        return SlotsKV(a, capacity, prefix[0], prefix[1], n_slots, SLOT_SIMILARITY, slot_order)
    return PrefixPagedKV(a, capacity, memory, prefix[0], prefix[1])
