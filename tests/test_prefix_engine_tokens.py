"""Prefix caching in the engines that hold real tokens (issue 77): vLLM V1's APC as scripts/serving/engine/prefix.py
TokenPrefixCache keeps it (its twin in templates/serving_sim/prefix.js), driven by the lab's Engine
(templates/lab/model/model.js) and by scripts/bench/serve_tiny.py's. Hand-worked block reuse and eviction; the page's
and the Python's caches taking the same decisions call for call; both engines on the same shared-prefix requests
finding the same hits and generating the tokens they generate with the cache off (the cached KV copied right)."""
import json

import pytest

from scripts.bench.seeded_weights import seeded_model
from scripts.serving.engine.prefix import TokenPrefixCache
from tests.test_lab_model import serve_scenario
from tests.test_lab_steps import node, scripts  # noqa: F401  (the fixture: the built L, S and P scripts)


def test_block_reuse_by_hand():
    """Blocks of 4 in a pool of 6. A computes 10 tokens: 3 blocks, the 2 full ones cached. B shares A's first 8
    tokens: both full blocks hit (at most (10 - 1) // 4 = 2). C is exactly A's first 8 tokens: one block only, since
    the last prompt token is always computed for its logits. A different first token hits nothing."""
    cache = TokenPrefixCache(6, 4)
    a = list(range(1, 11))
    blocks, hit = cache.admit(a)
    assert (blocks, hit) == ([], 0)
    filled = cache.grow(blocks, a, 10)
    assert [b.id for b in blocks] == [0, 1, 2] and [(b.id, at) for b, at in filled] == [(0, 0), (1, 4)]
    assert cache.grow(blocks, a, 10) == []  # nothing new filled
    b_blocks, b_hit = cache.admit(a[:8] + [99, 100])
    assert [b.id for b in b_blocks] == [0, 1] and b_hit == 8 and blocks[0].ref_cnt == 2
    c_blocks, c_hit = cache.admit(a[:8])
    assert [b.id for b in c_blocks] == [0] and c_hit == 4
    assert cache.admit([5] + a[1:])[1] == 0


def test_freed_blocks_are_evicted_least_recently_used_and_uncached_first():
    """A (8 tokens + 2 generated: blocks 0, 1 cached, 2 not) ends: the free queue takes block 2 at its head (uncached
    is reused first) and blocks 1, 0 at its tail in that order (a request's last block is evicted before its first).
    A new request of 12 different tokens takes the 3 free blocks never used, then block 2, leaving A's prefix; one
    more block evicts A's second block (1) before its first (0), so A's first block still hits."""
    cache = TokenPrefixCache(6, 4)
    a = [7] * 3 + list(range(5))
    blocks, _ = cache.admit(a)
    cache.grow(blocks, a + [40, 41], 10)
    cache.release(blocks)
    assert list(cache.pool.free_queue) == [2, 3, 4, 5, 1, 0]
    other, _ = cache.admit(list(range(100, 112)))
    cache.grow(other, list(range(100, 112)), 12)
    assert [b.id for b in other] == [2, 3, 4] and list(cache.pool.free_queue) == [5, 1, 0]
    again, hit = cache.admit(a + [1])
    assert [b.id for b in again] == [0, 1] and hit == 8 and list(cache.pool.free_queue) == [5]
    cache.release(again)
    assert list(cache.pool.free_queue) == [5, 1, 0]
    assert [b.id for b in cache.pool.allocate(2)] == [5, 1]  # block 1 evicted before block 0
    assert cache.admit(a + [1])[1] == 4


CALLS = [("admit", [1, 2, 3, 4, 5, 6, 7, 8, 9]), ("grow", 0, 9), ("admit", [1, 2, 3, 4, 5, 6, 7, 8, 50, 51]),
         ("grow", 1, 10), ("release", 0), ("admit", [9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9]), ("grow", 2, 13),
         ("admit", [1, 2, 3, 4, 5, 6, 7, 8, 9]), ("release", 1), ("release", 2), ("admit", [1, 2, 3, 4, 60]),
         ("grow", 4, 5), ("admit", [9, 9, 9, 9, 9, 9, 9, 9, 1])]


def run_calls_python() -> list:
    cache, held, prompts, out = TokenPrefixCache(7, 4), [], [], []
    for call in CALLS:
        if call[0] == "admit":
            blocks, hit = cache.admit(call[1])
            held.append(blocks)
            prompts.append(call[1])
            out.append([[b.id for b in blocks], hit])
        elif call[0] == "grow":
            out.append([[b.id, at] for b, at in cache.grow(held[call[1]], prompts[call[1]], call[2])])
        else:
            cache.release(held[call[1]])
            out.append(list(cache.pool.free_queue))
    return out


def test_the_pages_cache_takes_the_pythons_decisions_call_for_call(scripts):  # noqa: F811
    js = node(scripts, f"""const c = new S.TokenPrefixCache(7, 4), held = [], prompts = [], out = [];
for (const call of {json.dumps(CALLS)}) {{
  if (call[0] === "admit") {{
    const [b, hit] = c.admit(call[1]);
    held.push(b); prompts.push(call[1]); out.push([b.map((x) => x.id), hit]);
  }}
  else if (call[0] === "grow") out.push(c.grow(held[call[1]], prompts[call[1]], call[2]).map(([b, at]) => [b.id, at]));
  else {{ c.release(held[call[1]]); out.push([...c.pool.free_queue.keys()]); }}
}}
console.log(JSON.stringify(out));""")
    assert js == run_calls_python()


SYSTEMS = [[(s * 97 + k * 13) % 2048 for k in range(n)] for s, n in ((1, 36), (2, 20))]
SHARED = [{"id": i, "prompt": SYSTEMS[i % 2] + [(i * 31 + k * 7) % 2048 for k in range(3 + (i * 5) % 9)],
           "outputLen": 2 + i % 4, "at": (i * 2) % 9} for i in range(9)]
SHARED_JS = """
function run(cached) {
  const m = new L.TinyModel({slots: 3, maxContext: 64, maxTokens: 32});
  const pc = cached ? new S.TokenPrefixCache(12, 16) : null;
  const e = new L.Engine(m, {maxNumSeqs: 3, maxBatchedTokens: 32, prefixCache: pc, sim: S});
  const reqs = %s, steps = [];
  for (let t = 0; t < 300 && (e.busy() || reqs.some((r) => r.at >= t)); t++) {
    for (const r of reqs) if (r.at === t) e.add(r);
    const s = e.step();
    steps.push({events: s.events, hits: s.hits, chunks: s.shape.chunks});
  }
  return steps;
}
console.log(JSON.stringify({on: run(true), off: run(false)}));
"""


def test_both_engines_find_the_same_hits_and_generate_what_they_generate_uncached(scripts):  # noqa: F811
    """Nine requests on two system prompts (36 and 20 tokens: 2 and 1 full blocks of 16), 3 slots, 32 tokens a step:
    the page's engine and the Python's, both caching, take the same steps, generate the same tokens and report the
    same hits; every request generates what it generates with the cache off (in fewer steps with it on); a hit's
    prompt chunk starts where the hit ends."""
    from scripts.bench.serve_tiny import Engine, FlatModel

    js = node(scripts, SHARED_JS % json.dumps(SHARED))
    engine = Engine(FlatModel(seeded_model(), 3, 64), 3, 32, TokenPrefixCache(12, 16))
    steps = [{"events": [list(e) for e in events], "hits": [list(h) for h in hits]}
             for events, hits in serve_scenario(engine, SHARED, 300)]
    assert [s["events"] for s in js["on"]] == [s["events"] for s in steps]

    def tokens(run):  # each request's generated tokens (a hit shortens its prefill, so the steps differ)
        out = {}
        for s in run:
            for rid, token, _ in s["events"]:
                out.setdefault(rid, []).append(token)
        return out

    assert tokens(js["on"]) == tokens(js["off"]) and len(js["on"]) < len(js["off"])
    assert [s["hits"] for s in js["on"]] == [s["hits"] for s in steps]
    hits = {rid: hit for s in steps for rid, hit in s["hits"]}
    assert sorted(hits) == list(range(9)) and sum(1 for h in hits.values() if h) >= 5
    assert all(h in (0, 16, 32) and h <= len(SYSTEMS[rid % 2]) for rid, h in hits.items())
    for s in js["on"]:
        for (rid, hit), chunk in zip(s["hits"], s["chunks"][-len(s["hits"]):] if s["hits"] else [], strict=False):
            assert chunk[0] == hit, (rid, hit, chunk)


def test_serve_tiny_with_a_shared_system_prompt_reports_its_hits(tmp_path):
    """python -m scripts.bench.serve_tiny --system-prompt 32 --prefix-caching: every prompt starts with the same 32
    tokens; the file holds each request's cached tokens (0 or the system prompt's 2 full blocks) and the hit rate
    over all prompt tokens; the first request finds nothing cached."""
    from scripts.bench.serve_tiny import main

    out = tmp_path / "run.json"
    main(["--out", str(out), "--rate", "200", "--requests", "10", "--prompt", "8", "--output", "3",
          "--max-num-seqs", "4", "--max-num-batched-tokens", "64", "--system-prompt", "32", "--prefix-caching"])
    run = json.loads(out.read_text(encoding="utf-8"))
    assert run["input_lens"] == [40] * 10 and run["cached_tokens"][0] == 0
    assert set(run["cached_tokens"]) <= {0, 32} and sum(run["cached_tokens"]) > 0
    assert run["prefix_cache_hit_rate"] == pytest.approx(sum(run["cached_tokens"]) / 400)
    plain = tmp_path / "plain.json"
    main(["--out", str(plain), "--rate", "200", "--requests", "10", "--prompt", "8", "--output", "3",
          "--max-num-seqs", "4", "--max-num-batched-tokens", "64", "--system-prompt", "32"])
    assert "cached_tokens" not in json.loads(plain.read_text(encoding="utf-8"))


def test_a_release_puts_its_uncached_blocks_at_the_head_together_as_vllm_0_34_does(scripts):  # noqa: F811
    """block_pool.free_blocks with prepend_n (vLLM 0.34.0): blocks 0-3 freed last first, 0 and 1 cached: the
    uncached 3, 2 go to the head in that order, the cached 1, 0 to the tail; the page's pool the same."""
    from scripts.serving.engine.prefix import VllmPrefixPool

    pool = VllmPrefixPool(6, 2)
    held = pool.allocate(4)
    pool.cache(held[0], 10)
    pool.cache(held[1], 11)
    pool.free(held)
    js = node(scripts, """const p = new S.TokenPrefixCache(6, 2).pool, held = p.allocate(4);
p.cache(held[0], 10); p.cache(held[1], 11); p.free(held);
console.log(JSON.stringify([...p.free_queue.keys()]));""")
    assert list(pool.free_queue) == js == [3, 2, 4, 5, 1, 0]
