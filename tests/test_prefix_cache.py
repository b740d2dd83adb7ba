"""Issue 42, first part: the prefix caches as the engines keep them (scripts/serving/engine/prefix.py), against
hand-worked cases (an LRU eviction, a partial block, the last token recomputed, a preempted request's blocks, a slot
chosen by similarity and by LRU), and the Mooncake trace layout read exactly or refused in one line."""
import json

import pytest

from scripts.record.inputs import InputError
from scripts.serving.engine.prefix import BlockHashes, LlamaSlots, VllmPrefixPool, block_contents, common_prefix
from scripts.serving.workloads.trace import read_mooncake


def test_common_prefix_counts_whole_equal_segments_then_a_truncation():
    assert common_prefix([(1, 100), (2, 50)], [(1, 100), (3, 50)]) == 100
    assert common_prefix([(1, 100), (2, 50)], [(1, 100), (2, 20), (4, 9)]) == 120  # one turn cut short
    assert common_prefix([(1, 100)], [(9, 100)]) == 0
    assert common_prefix([], [(1, 5)]) == 0


def test_blocks_are_identified_by_their_whole_prefix():
    h = BlockHashes()
    a = h.chain([(1, 4), (2, 4)], 2)          # blocks: 1[0:2] 1[2:4] 2[0:2] 2[2:4]
    b = h.chain([(1, 4), (3, 4)], 2)
    c = h.chain([(7, 2), (1, 4)], 2)          # the same tokens 1[0:4], at another place: other blocks
    assert a[:2] == b[:2] and a[2:] != b[2:]
    assert not set(c) & set(a)
    assert len(a) == 4 and len(h.chain([(1, 5)], 2)) == 2  # a partial last block has no hash
    assert block_contents([(1, 3), (2, 3)], 2) == [((1, 0, 2),), ((1, 2, 3), (2, 0, 1)), ((2, 1, 3),)]


def run(pool, hashes, segments_tokens, block_size=2):
    """One request through the pool as vLLM does it: hit, touch, allocate the rest, cache the full blocks."""
    hit = pool.lookup(hashes, segments_tokens)
    pool.touch(hit)
    need = -(-segments_tokens // block_size) - len(hit)
    new = pool.allocate(need)
    blocks = hit + new
    for b, h in zip(blocks, hashes, strict=False):  # full blocks only: hashes covers them
        if b.hash is None:
            pool.cache(b, h)
    return hit, blocks


def test_an_lru_eviction_takes_a_requests_last_blocks_first():
    h, pool = BlockHashes(), VllmPrefixPool(num_blocks=4, block_size=2)
    a = h.chain([(1, 4)], 2)
    hit, blocks_a = run(pool, a, 4)
    assert hit == [] and [b.id for b in blocks_a] == [0, 1]
    pool.free(blocks_a)                       # reversed: block 1 then block 0 go to the tail
    assert list(pool.free_queue) == [2, 3, 1, 0]
    b = h.chain([(2, 6)], 2)
    _, blocks_b = run(pool, b, 6)             # takes 2, 3 and then evicts block 1 (A's second block)
    assert [x.id for x in blocks_b] == [2, 3, 1]
    again = pool.lookup(a, 4)
    assert [x.id for x in again] == [0]       # A's first block survived: one block (2 tokens) hits


def test_a_partial_block_is_never_hit_and_the_last_token_is_recomputed():
    h, pool = BlockHashes(), VllmPrefixPool(num_blocks=8, block_size=2)
    five = h.chain([(1, 5)], 2)               # 2 full blocks, 1 partial
    _, blocks = run(pool, five, 5)
    pool.free(blocks)
    assert len(pool.lookup(five, 5)) == 2     # (5 - 1) // 2 = 2 blocks: 4 tokens reused, 1 recomputed
    four = h.chain([(1, 4)], 2)
    assert four == five[:2]
    assert len(pool.lookup(four, 4)) == 1     # (4 - 1) // 2 = 1: the whole prompt cached, its last block recomputed
    assert list(pool.free_queue)[0] == blocks[2].id  # the unhashed partial block is reused first


def test_a_preempted_requests_blocks_stay_cached_until_evicted():
    h, pool = BlockHashes(), VllmPrefixPool(num_blocks=4, block_size=2)
    a = h.chain([(1, 6)], 2)
    _, first = run(pool, a, 6)
    pool.free(first)                          # preempted: freed, still cached
    assert len(pool.lookup(a, 7)) == 3        # rescheduled with one generated token more: all three blocks hit
    hit, blocks = run(pool, a, 7)
    assert len(hit) == 3 and pool.allocate(1) is None  # the hit blocks are held again, the fourth is new
    pool.free(blocks)                         # the partial fourth block (unhashed) to the head, the rest to the tail
    assert list(pool.free_queue) == [blocks[3].id, blocks[2].id, blocks[1].id, blocks[0].id]
    run(pool, h.chain([(2, 6)], 2), 6)        # takes three: the partial one, then A's last two (evicted)
    assert [b.id for b in pool.lookup(a, 7)] == [first[0].id]


def test_shared_blocks_are_counted_once_and_freed_when_the_last_user_leaves():
    h, pool = BlockHashes(), VllmPrefixPool(num_blocks=6, block_size=2)
    sys_prompt = [(1, 4)]
    a, b = h.chain(sys_prompt + [(2, 2)], 2), h.chain(sys_prompt + [(3, 2)], 2)
    _, blocks_a = run(pool, a, 6)
    hit, blocks_b = run(pool, b, 6)
    assert len(hit) == 2 and pool.num_free() == 6 - 3 - 1
    pool.free(blocks_a)
    assert pool.num_free() == 3               # A's own block only: the shared two are still B's
    pool.free(blocks_b)
    assert pool.num_free() == 6


def test_a_slot_is_chosen_by_prompt_similarity_then_by_lru():
    slots = LlamaSlots(3)
    x, y = [(1, 1000)], [(2, 200)]
    first = slots.choose(x)
    assert first.id == 2                      # every slot unused (t_last_used -1): the LRU pass keeps the last tie
    slots.start(first, x)
    second = slots.choose(y)
    assert second.id == 1
    slots.start(second, y)
    slots.finish(first, now=1.0)
    slots.finish(second, now=2.0)
    # 150/500 = 0.30 of this prompt is slot 2's prompt, none of it slot 1's: slot 2
    assert slots.choose([(1, 150), (6, 350)]).id == 2
    # 180/500 = 0.36 shared with slot 1's prompt: slot 1, which reuses those 180 tokens
    new = [(2, 180), (5, 320)]
    chosen = slots.choose(new)
    assert chosen.id == 1 and slots.start(chosen, new) == 180
    # nothing shared above the 0.1 threshold: the least recently used idle slot (slot 0, never used)
    assert slots.choose([(9, 500)]).id == 0
    # the whole prompt cached: one token is still evaluated
    slots.finish(chosen, now=3.0)
    again = slots.choose(new)
    assert again.id == 1 and slots.start(again, new) == 499


def mooncake(tmp_path, lines):
    path = tmp_path / "trace.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_a_mooncake_slice_is_read_exactly(tmp_path):
    # the first lines of the layout of kvcache-ai/Mooncake's FAST'25 traces (values made up, the shape exact)
    path = mooncake(tmp_path, [
        '{"timestamp": 1500, "input_length": 1100, "output_length": 20, "hash_ids": [0, 1, 2]}',
        '{"timestamp": 0, "input_length": 600, "output_length": 7, "hash_ids": [0, 5]}',
        '{"timestamp": 1500, "input_length": 512, "output_length": 3, "hash_ids": [0]}'])
    reqs, segments = read_mooncake(path, max_context=8192)
    assert reqs.arrival_s.tolist() == [0.0, 1.5, 1.5]  # sorted by arrival, stably
    assert reqs.prompt_tokens.tolist() == [600, 1100, 512] and reqs.output_tokens.tolist() == [7, 20, 3]
    assert segments == [[(0, 512), (5, 88)], [(0, 512), (1, 512), (2, 76)], [(0, 512)]]
    assert common_prefix(segments[0], segments[1]) == 512


@pytest.mark.parametrize(("line", "why"), [
    ('{"timestamp": 0, "input_length": 600, "output_length": 7, "hash_ids": [0]}', "field hash_ids: 1 ids"),
    ('{"timestamp": 0, "input_length": 600, "output_length": 7}', "needs exactly the fields"),
    ('{"timestamp": 0, "input_length": 600, "output_length": 7, "hash_ids": [0, 1], "x": 1}', "needs exactly"),
    ('{"timestamp": -5, "input_length": 600, "output_length": 7, "hash_ids": [0, 1]}', "field timestamp"),
    ('{"timestamp": 0, "input_length": 6.5, "output_length": 7, "hash_ids": [0, 1]}', "field input_length"),
    ('{"timestamp": 0, "input_length": 600, "output_length": true, "hash_ids": [0, 1]}', "field output_length"),
    ('{"timestamp": 0, "input_length": 600, "output_length": 7, "hash_ids": [0, -1]}', "field hash_ids"),
    ('{"timestamp": 0, "input_length": 9000, "output_length": 7, "hash_ids": ' + json.dumps(list(range(18))) + "}",
     "more than the model's context"),
    ('{"timestamp": NaN, "input_length": 600, "output_length": 7, "hash_ids": [0, 1]}', "not a JSON object"),
    ("[1, 2, 3]", "needs exactly the fields"),
])
def test_a_bad_mooncake_line_is_refused_in_one_line(tmp_path, line, why):
    good = '{"timestamp": 0, "input_length": 10, "output_length": 1, "hash_ids": [3]}'
    path = mooncake(tmp_path, [good, line])
    with pytest.raises(InputError) as err:
        read_mooncake(path, max_context=8192)
    message = str(err.value)
    assert "\n" not in message and message.startswith(path.as_posix()) and "line 2" in message and why in message
