"""Prefix caches as the two engines keep them: the data structures the prefix-caching KV managers of kv.py
(`paged+apc`, `reserved+slots`) drive. Pure: no I/O, no time, no cost model. Twin: templates/serving_sim/prefix.js.

A prompt's content is a list of segments `(content id, tokens)`: runs of tokens that are one text (a system prompt,
one turn of a conversation, one 512-token block of a Mooncake trace). Two prompts hold the same tokens up to
position p exactly when their segments agree up to p (`common_prefix`); nothing finer is known or needed.

vLLM V1 automatic prefix caching (`VllmPrefixPool`), as vllm/v1/core/ does it (kv_cache_manager.py, block_pool.py,
kv_cache_utils.py, single_type_kv_cache_manager.py; checked against the vLLM 0.34.0 release's sdist, sha256
fcad848b…, the one scripts/serving/experiments/tool_metrics.py follows):
  - a full block of `block_size` tokens is identified by a chained hash of (its parent's hash, its tokens)
    (kv_cache_utils.hash_block_tokens); here the chain is interned exactly, so two blocks share an id only when their
    whole prefixes are the same tokens (no collisions to model);
  - kv_cache_manager.get_computed_blocks: the hit is the longest run of cached blocks from the prompt's start, at
    most `(prompt - 1) // block_size` blocks (max_cache_hit_length = num_tokens - 1: the last token is recomputed
    for its logits);
  - block_pool: a hit block is "touched" (taken out of the free queue, its reference count raised); a new block
    comes from the head of the free queue, and a cached block taken so is evicted (its hash forgotten); freed blocks
    go back in reverse order, the hashed ones to the tail (evicted last: LRU), the unhashed ones to the head together
    (reused first: block_pool.free_blocks with FreeKVCacheBlockQueue.prepend_n; earlier versions appended both to
    the tail); a block is cached (its hash set) once it is full.
llama.cpp server slots (`LlamaSlots`), as tools/server/server-context.cpp in the llama.cpp tree vendored by
llama-cpp-python 0.3.36 does it:
  - get_available_slot: among idle slots holding tokens, the one whose longest common prefix with the new prompt is
    the largest fraction of the prompt, if that fraction exceeds --slot-prompt-similarity (default 0.1,
    common/common.h); otherwise the least recently used idle slot;
  - update_slots: the slot reuses its common prefix with the new prompt (n_past) and recomputes the rest; at least
    one token is evaluated (n_past = prompt - 1 when all of it is cached); the slot then holds the new prompt.
  The host-memory prompt cache (--cache-ram) is not modelled here."""
from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field

Segment = tuple[int, int]  # (content id, tokens)


def prompt_tokens(segments: list[Segment]) -> int:
    return sum(n for _, n in segments)


def common_prefix(a: list[Segment], b: list[Segment]) -> int:
    """Tokens two prompts share from their start: whole equal segments, then the shorter of a segment both start
    with the same text (one is a truncation of the other)."""
    shared = 0
    for (ca, na), (cb, nb) in zip(a, b, strict=False):
        if ca != cb:
            break
        shared += min(na, nb)
        if na != nb:
            break
    return shared


def block_contents(segments: list[Segment], block_size: int) -> list[tuple]:
    """The tokens of each full block, as the pieces (content id, first token, last token + 1) that fill it."""
    out, pieces, filled = [], [], 0
    for content, n in segments:
        start = 0
        while start < n:
            take = min(block_size - filled, n - start)
            pieces.append((content, start, start + take))
            start, filled = start + take, filled + take
            if filled == block_size:
                out.append(tuple(pieces))
                pieces, filled = [], 0
    return out


class BlockHashes:
    """Chained block identities: hash(parent, tokens) interned, so equal ids mean equal prefixes."""

    def __init__(self):
        self._ids: dict[tuple, int] = {}

    def chain(self, segments: list[Segment], block_size: int) -> list[int]:
        parent, out = -1, []
        for content in block_contents(segments, block_size):
            parent = self._ids.setdefault((parent, content), len(self._ids))
            out.append(parent)
        return out


@dataclass
class Block:
    id: int
    ref_cnt: int = 0
    hash: int | None = None


class VllmPrefixPool:
    """vLLM V1's block pool with prefix caching (module docstring)."""

    def __init__(self, num_blocks: int, block_size: int):
        if num_blocks < 1 or block_size < 1:
            raise ValueError("a block pool needs at least one block of at least one token")
        self.block_size = block_size
        self.blocks = [Block(i) for i in range(num_blocks)]
        self.free_queue: OrderedDict[int, None] = OrderedDict((i, None) for i in range(num_blocks))  # head first
        self.cached: dict[int, Block] = {}  # block hash -> the block holding it

    def num_free(self) -> int:
        return len(self.free_queue)

    def lookup(self, hashes: list[int], prompt: int) -> list[Block]:
        """The longest run of cached blocks from the start, at most (prompt - 1) // block_size of them."""
        hit = []
        for h in hashes[: max(0, (prompt - 1) // self.block_size)]:
            block = self.cached.get(h)
            if block is None:
                break
            hit.append(block)
        return hit

    def touch(self, blocks: list[Block]) -> None:
        for b in blocks:
            if b.ref_cnt == 0:
                del self.free_queue[b.id]
            b.ref_cnt += 1

    def allocate(self, n: int) -> list[Block] | None:
        """n blocks from the head of the free queue (evicting what they cached), or None when fewer are free."""
        if n > len(self.free_queue):
            return None
        out = []
        for _ in range(n):
            bid, _ = self.free_queue.popitem(last=False)
            block = self.blocks[bid]
            if block.hash is not None:  # evicted: its prefix can no longer be hit
                if self.cached.get(block.hash) is block:
                    del self.cached[block.hash]
                block.hash = None
            block.ref_cnt = 1
            out.append(block)
        return out

    def cache(self, block: Block, block_hash: int) -> None:
        """A full block's tokens are known: later prompts with the same prefix can hit it."""
        block.hash = block_hash
        self.cached.setdefault(block_hash, block)

    def free(self, blocks: list[Block]) -> None:
        """A request's blocks, released (finished or preempted), its last block first (single_type_kv_cache_manager
        free: reversed); of those now unreferenced, the uncached go to the head of the free queue together, in that
        order (prepend_n: reused first), the cached to its tail (append_n: evicted last, LRU)."""
        first, last = [], []
        for b in reversed(blocks):
            b.ref_cnt -= 1
            if b.ref_cnt == 0:
                (first if b.hash is None else last).append(b)
        for b in reversed(first):
            self.free_queue[b.id] = None
            self.free_queue.move_to_end(b.id, last=False)
        for b in last:
            self.free_queue[b.id] = None


class TokenPrefixCache:
    """vLLM V1's automatic prefix caching (VllmPrefixPool, BlockHashes) for an engine that holds real token ids: the
    lab's Engine (templates/lab/model/model.js, its twin TokenPrefixCache in templates/serving_sim/prefix.js) and
    scripts/bench/serve_tiny.py, the same decisions on the same requests (tests/test_prefix_engine_tokens.py). Each
    token is its own segment, so a block's identity is its tokens and its parent's. A request's blocks are a list
    the engine keeps: `admit` gives the hit (touched, the request's first blocks) and the tokens it saves; `grow`
    allocates blocks from the free queue's head as the computed tokens grow and caches each block the step filled,
    returning those blocks with their first position (the engine copies their KV into the block's store); `release`
    frees them when the request ends. The engine copies a hit block's KV into the request's slot: in vLLM the block
    table points at it instead (the lab's kernel attends over a slot's contiguous KV)."""

    def __init__(self, num_blocks: int, block_size: int = 16):
        self.block_size = block_size
        self.pool = VllmPrefixPool(num_blocks, block_size)
        self.hashes = BlockHashes()

    def chain(self, tokens: list[int]) -> list[int]:
        return self.hashes.chain([(t, 1) for t in tokens], self.block_size)

    def admit(self, prompt: list[int]) -> tuple[list[Block], int]:
        hit = self.pool.lookup(self.chain(prompt), len(prompt))
        self.pool.touch(hit)
        return list(hit), len(hit) * self.block_size

    def grow(self, blocks: list[Block], tokens: list[int], computed: int) -> list[tuple[Block, int]]:
        need = -(-computed // self.block_size) - len(blocks)
        if need > 0:
            new = self.pool.allocate(need)
            if new is None:
                raise RuntimeError(f"prefix cache: {need} more blocks wanted, {self.pool.num_free()} free "
                                   "(the pool must hold every running request's context)")
            blocks.extend(new)
        full = computed // self.block_size
        first = next((k for k in range(full) if blocks[k].hash is None), full)
        if first == full:
            return []
        hashes = self.chain(tokens[: full * self.block_size])
        for k in range(first, full):
            self.pool.cache(blocks[k], hashes[k])
        return [(blocks[k], k * self.block_size) for k in range(first, full)]

    def release(self, blocks: list[Block]) -> None:
        self.pool.free(blocks)


@dataclass
class Slot:
    id: int
    tokens: list[Segment] = field(default_factory=list)
    last_used: float = -1.0
    busy: bool = False


class LlamaSlots:
    """llama.cpp server's slots (module docstring)."""

    def __init__(self, n_slots: int, similarity: float = 0.1, order=None):
        """`order`: the slot ids, least recently used first, as a server that already served requests holds them
        (before any time of this run); None: none used yet (the LRU scan's tie then picks the highest id)."""
        if n_slots < 1:
            raise ValueError("llama.cpp needs at least one slot (-np)")
        self.slots = [Slot(i) for i in range(n_slots)]
        self.similarity = similarity
        if order is not None:
            if sorted(int(i) for i in order) != list(range(n_slots)):
                raise ValueError(f"slot order: each of the {n_slots} slot ids once, not {list(order)}")
            for rank, i in enumerate(order):
                self.slots[int(i)].last_used = -1.0 - (n_slots - rank)

    def choose(self, prompt: list[Segment]) -> Slot | None:
        """get_available_slot: the idle slot of best prompt similarity above the threshold, else the least
        recently used idle slot (None: every slot is busy)."""
        n = prompt_tokens(prompt)
        best, best_sim = None, 0.0
        if self.similarity != 0.0:
            for s in self.slots:
                if s.busy or not s.tokens:
                    continue
                sim = common_prefix(s.tokens, prompt) / n
                if sim > best_sim and sim > self.similarity:
                    best, best_sim = s, sim
        if best is None:
            last = -1.0
            for s in self.slots:
                if s.busy:
                    continue
                if best is None or s.last_used <= last:
                    best, last = s, s.last_used
        return best

    def start(self, slot: Slot, prompt: list[Segment]) -> int:
        """The prompt tokens the slot reuses (n_past): its common prefix, less one when all of it is cached."""
        n = prompt_tokens(prompt)
        reused = common_prefix(slot.tokens, prompt)
        if reused == n and n > 0:
            reused -= 1
        slot.tokens, slot.busy = list(prompt), True
        return reused

    def finish(self, slot: Slot, now: float, generated: list[Segment] = ()) -> None:
        """The request is done: the slot keeps its prompt and what it generated, for the next one."""
        slot.tokens = slot.tokens + list(generated)
        slot.busy, slot.last_used = False, now
