"""Prefix-reuse workloads sent to the real engine (issue 42's measurement): config/real_engine.json `prefix_load`.

Two kinds, each request's prompt sent as token ids and described as segments (content id, tokens), the layout the
serving model's prefix caches read (scripts/serving/workloads/workload.py Requests.segments, engine/prefix.py):
  system_prompts  Poisson arrivals at the cell's rate; each request one of K system prompts (uniform) then a user
                  message of its own: segments [(k, prefix tokens), (K + i, user tokens)].
  conversations   sessions started at Poisson times (the cell's rate, sessions per second), each a closed loop of
                  turns: a turn is sent, its answer read to the end, then after an exponential think time the next
                  turn re-sends the whole conversation (every earlier user message and answer, as the token ids the
                  server generated: `return_tokens`) plus a new user message. Segments: user message (s, t) has
                  content id 2 (s T + t), its answer 2 (s T + t) + 1 (T: the most turns), so the model sees the same
                  tokens the server did. A failed turn ends its session.
Every request asks for `verbose` and `return_tokens` (llama-server's request fields: tools/server/server-schema.cpp
in the llama.cpp tree of llama-cpp-python 0.3.36), so the final event names the slot that ran it and the generated
ids; the server's count of reused prompt tokens comes from usage.prompt_tokens_details.cached_tokens (its
n_prompt_tokens_cache = the slot's n_past when the prompt started, server-context.cpp). The lengths, shares and
think times are config fields with their assumption."""
from __future__ import annotations

import asyncio
import time

import numpy as np

from scripts.realengine.harness import client
from scripts.record.inputs import InputError

KINDS = ("system_prompts", "conversations")
VERBOSE = {"verbose": True, "return_tokens": True}
WHERE = "config/real_engine.json prefix_load"


def _pair(spec: dict, key: str, where: str) -> tuple[int, int]:
    v = spec.get(key)
    if not (isinstance(v, list) and len(v) == 2 and all(isinstance(x, int) and not isinstance(x, bool) for x in v)
            and 1 <= v[0] <= v[1]):
        raise InputError(f"{WHERE}: field {where}.{key} must be [low, high], integers with 1 <= low <= high")
    return v[0], v[1]


def check(block: dict) -> dict:
    """The fields this module reads, each checked (a bad one stops with its name); returns the block."""
    if not isinstance(block, dict):
        raise InputError(f"{WHERE}: missing or not an object")
    for key in ("seed", "requests_per_cell", "runs_per_cell"):
        if not isinstance(block.get(key), int) or block[key] < (0 if key == "seed" else 1):
            raise InputError(f"{WHERE}: field {key} must be a positive integer")
    workloads, rates = block.get("workloads"), block.get("rates")
    if not isinstance(workloads, dict) or not isinstance(rates, dict) or set(rates) - set(workloads or {}):
        raise InputError(f"{WHERE}: fields workloads and rates must be objects, every rate's workload defined")
    for name, spec in workloads.items():
        where = f"workloads.{name}"
        if not isinstance(spec, dict) or spec.get("kind") not in KINDS:
            raise InputError(f"{WHERE}: field {where}.kind must be one of {', '.join(KINDS)}")
        if not isinstance(spec.get("assumption"), str) or not spec["assumption"]:
            raise InputError(f"{WHERE}: field {where}.assumption must say why these lengths")
        _pair(spec, "user_tokens", where)
        _pair(spec, "output_tokens", where)
        if spec["kind"] == "system_prompts":
            p = spec.get("prefix_tokens")
            if not (isinstance(p, list) and p and all(isinstance(x, int) and x >= 1 for x in p)):
                raise InputError(f"{WHERE}: field {where}.prefix_tokens must be a list of positive integers")
        else:
            _pair(spec, "turns", where)
            if not isinstance(spec.get("think_s"), int | float) or spec["think_s"] < 0:
                raise InputError(f"{WHERE}: field {where}.think_s must be a number >= 0")
    for name, rs in rates.items():
        if not (isinstance(rs, list) and rs and all(isinstance(r, int | float) and r > 0 for r in rs)):
            raise InputError(f"{WHERE}: field rates.{name} must be a list of positive numbers")
    return block


def system_prompt_plan(n: int, spec: dict, rate: float, seed: int, vocab: int, eot: int) -> list[dict]:
    """n requests in send order: offset, prompt ids, output tokens, segments."""
    rng = np.random.default_rng([seed, 11])
    prefixes = [client.prompt_ids(k, rng, vocab, eot) for k in spec["prefix_tokens"]]
    which = rng.integers(0, len(prefixes), n)
    lo, hi = spec["user_tokens"]
    olo, ohi = spec["output_tokens"]
    offsets = client.poisson_offsets(n, rate, seed)
    plan = []
    for i in range(n):
        k = int(which[i])
        user = client.prompt_ids(int(rng.integers(lo, hi + 1)), rng, vocab, eot)
        plan.append({"offset": float(offsets[i]), "prompt": prefixes[k] + user,
                     "output": int(rng.integers(olo, ohi + 1)),
                     "segments": [[k, len(prefixes[k])], [len(prefixes) + i, len(user)]]})
    return plan


def conversation_plan(n: int, spec: dict, rate: float, seed: int, vocab: int, eot: int) -> list[dict]:
    """Sessions (start offset, per turn: user ids, output tokens, think time after it) holding n turns in all (the
    last session cut short)."""
    rng = np.random.default_rng([seed, 12])
    tlo, thi = spec["turns"]
    lo, hi = spec["user_tokens"]
    olo, ohi = spec["output_tokens"]
    sessions, total = [], 0
    while total < n:
        turns = min(int(rng.integers(tlo, thi + 1)), n - total)
        sessions.append([{"user": client.prompt_ids(int(rng.integers(lo, hi + 1)), rng, vocab, eot),
                          "output": int(rng.integers(olo, ohi + 1)),
                          "think": float(rng.exponential(spec["think_s"])) if spec["think_s"] > 0 else 0.0}
                         for _ in range(turns)])
        total += turns
    starts = client.poisson_offsets(len(sessions), rate, seed)
    return [{"offset": float(s), "turns": turns} for s, turns in zip(starts, sessions, strict=True)]


async def _run_open(host: str, port: int, plan: list[dict]) -> tuple[list[dict], float]:
    start = time.perf_counter()

    async def one(i, p):
        delay = start + p["offset"] - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        send = time.perf_counter() - start
        o = await client.send_one(host, port, p["prompt"], p["output"], VERBOSE)
        o.send_s = send
        return {"outcome": o, "segments": p["segments"], "answer_id": -(i + 1), "output": p["output"]}

    rows = await asyncio.gather(*(one(i, p) for i, p in enumerate(plan)))
    return list(rows), time.perf_counter() - start


async def _run_sessions(host: str, port: int, sessions: list[dict], max_turns: int) -> tuple[list[dict], float]:
    start = time.perf_counter()

    async def session(s, plan):
        await asyncio.sleep(max(0.0, start + plan["offset"] - time.perf_counter()))
        rows, prompt, segments = [], [], []
        for t, turn in enumerate(plan["turns"]):
            user_id, answer_id = 2 * (s * max_turns + t), 2 * (s * max_turns + t) + 1
            prompt = prompt + turn["user"]
            segments = segments + [[user_id, len(turn["user"])]]
            send = time.perf_counter() - start
            o = await client.send_one(host, port, prompt, turn["output"], VERBOSE)
            o.send_s = send
            rows.append({"outcome": o, "segments": segments, "answer_id": answer_id, "output": turn["output"],
                         "session": s, "turn": t})
            if not o.success or len(o.answer) != o.output_tokens:
                if o.success:
                    o.success, o.error = False, f"{len(o.answer)} answer ids for {o.output_tokens} tokens"
                break  # the conversation cannot go on without its answer
            prompt = prompt + o.answer
            segments = segments + [[answer_id, len(o.answer)]]
            await asyncio.sleep(turn["think"])
        return rows

    per = await asyncio.gather(*(session(s, p) for s, p in enumerate(sessions)))
    return [r for rows in per for r in rows], time.perf_counter() - start


def run_cell(port: int, block: dict, workload: str, rate: float, run: int, vocab: int, eot: int, meta: dict) -> dict:
    """One cell measured against the server on 127.0.0.1:port (measure_cell)."""
    return asyncio.run(measure_cell("127.0.0.1", port, block, workload, rate, run, vocab, eot, meta))


async def measure_cell(host: str, port: int, block: dict, workload: str, rate: float, run: int, vocab: int, eot: int,
                       meta: dict) -> dict:
    """One cell: the vLLM layout (client.result_document) plus per request its segments, answer content id, the
    server's reused prompt tokens and slot (and session, turn for conversations), in send order."""
    spec, n, seed = block["workloads"][workload], block["requests_per_cell"], block["seed"]
    if spec["kind"] == "system_prompts":
        rows, duration = await _run_open(host, port, system_prompt_plan(n, spec, rate, seed, vocab, eot))
    else:
        sessions = conversation_plan(n, spec, rate, seed, vocab, eot)
        rows, duration = await _run_sessions(host, port, sessions, spec["turns"][1])
    rows.sort(key=lambda r: r["outcome"].send_s)
    outcomes = [r["outcome"] for r in rows]
    doc = client.result_document(outcomes, duration, {
        **meta, "request_rate": rate, "burstiness": 1.0, "max_concurrency": None, "workload": workload,
        "workload_kind": spec["kind"], "run": run, "seed": seed,
        "requested_output_lens": [r["output"] for r in rows]})
    doc["segments"] = [r["segments"] for r in rows]
    doc["answer_ids"] = [r["answer_id"] for r in rows]
    doc["cached_tokens"] = [o.cached_tokens for o in outcomes]
    doc["slots"] = [o.slot for o in outcomes]
    if spec["kind"] == "conversations":
        doc["sessions"] = [r["session"] for r in rows]
        doc["turns"] = [r["turn"] for r in rows]
    return doc
