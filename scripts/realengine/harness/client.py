"""The kit's benchmark client for an OpenAI-compatible streaming server (stdlib asyncio, no dependency).

Each request is sent at its scheduled time (Poisson arrivals: exponential gaps from a seeded generator, as
`vllm bench serve --request-rate R` draws them with burstiness 1), as a POST /v1/completions with the prompt given
as token ids (so its length is exact), `max_tokens` and `ignore_eos` (so the output length is forced), greedy.
Timing follows vLLM's `async_request_openai_completions` (vllm/benchmarks/lib/endpoint_request_func.py, v0.11
line): the clock starts just before the request is written; every streamed event carrying a choice is a chunk;
the first chunk's time is the TTFT, each later chunk adds one inter-token gap, and the latency is the last
chunk's time. One difference, stated: llama-server ends a stream with a choice whose text is empty (its
finish_reason); that event carries no token and is not counted as one (vLLM's server puts the finish_reason on
the last token's chunk). The token counts come from the server's `usage`; a request whose chunks do not equal
its completion tokens is recorded as failed with the reason.

The result is written in the `vllm bench serve --save-result --save-detailed` layout (duration, ttfts, itls,
input_lens, output_lens, latencies, errors, success, ...) that scripts/serving/measures/results.py reads, plus the send
time of each request (`send_times`, seconds from the run's start), which vLLM's peaks need."""
from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field

import numpy as np


@dataclass
class Outcome:
    send_s: float = 0.0
    ttft: float = 0.0
    itl: list[float] = field(default_factory=list)
    latency: float = 0.0
    prompt_tokens: int = 0
    output_tokens: int = 0
    success: bool = False
    error: str = ""
    cached_tokens: int = -1  # prompt tokens the server reused (usage.prompt_tokens_details.cached_tokens); -1: unsaid
    slot: int = -1  # the server slot that ran it (with verbose: __verbose.id_slot)
    answer: list[int] = field(default_factory=list)  # generated token ids (request fields verbose, return_tokens)


def poisson_offsets(n: int, rate: float, seed: int) -> np.ndarray:
    """Send times (s from the start) of n requests at `rate` req/s: cumulative exponential gaps."""
    gaps = np.random.default_rng(seed).exponential(1.0 / rate, n)
    return np.concatenate(([0.0], np.cumsum(gaps[:-1])))


def request_lengths(n: int, spec: dict, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Per request prompt and output tokens: uniform integers in the workload's ranges; a `long_fraction` of the
    requests (chosen by the same seeded generator) get `long_prompt_tokens`."""
    rng = np.random.default_rng([seed, 1])
    lo, hi = spec["prompt_tokens"]
    prompt = rng.integers(lo, hi + 1, n)
    olo, ohi = spec["output_tokens"]
    output = rng.integers(olo, ohi + 1, n)
    if spec.get("long_fraction", 0) > 0:
        long = rng.random(n) < spec["long_fraction"]
        prompt[long] = spec["long_prompt_tokens"]
    return prompt.astype(np.int64), output.astype(np.int64)


def prompt_ids(n_tokens: int, rng: np.random.Generator, vocab: int, avoid: int) -> list[int]:
    ids = rng.integers(0, vocab - 1, n_tokens)
    ids[ids >= avoid] += 1  # never the end-of-text id
    return [int(i) for i in ids]


async def _read_headers(reader) -> tuple[int, dict]:
    status = await reader.readline()
    parts = status.decode("latin-1").split(" ", 2)
    code = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0
    headers = {}
    while True:
        line = await reader.readline()
        if line in (b"\r\n", b"\n", b""):
            return code, headers
        k, _, v = line.decode("latin-1").partition(":")
        headers[k.strip().lower()] = v.strip()


async def _body_lines(reader, chunked: bool):
    """The response body's lines as they arrive (HTTP/1.1 chunked or until close)."""
    buf = b""
    while True:
        if chunked:
            size_line = await reader.readline()
            if not size_line:
                break
            size = int(size_line.split(b";")[0].strip() or b"0", 16)
            if size == 0:
                break
            data = await reader.readexactly(size + 2)
            buf += data[:-2]
        else:
            data = await reader.read(65536)
            if not data:
                break
            buf += data
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            yield line
    if buf:
        yield buf


async def send_one(host: str, port: int, prompt: list[int], max_tokens: int, extra: dict | None = None) -> Outcome:
    body = json.dumps({"model": "c13-l5", "prompt": prompt, "max_tokens": int(max_tokens), "ignore_eos": True,
                       "temperature": 0.0, "stream": True, "stream_options": {"include_usage": True},
                       **(extra or {})}).encode()
    head = (f"POST /v1/completions HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\n"
            f"Accept: text/event-stream\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode()
    out = Outcome(prompt_tokens=len(prompt))
    chunks = 0
    writer = None
    try:
        reader, writer = await asyncio.open_connection(host, port)
        st = time.perf_counter()
        writer.write(head + body)
        await writer.drain()
        code, headers = await _read_headers(reader)
        if code != 200:
            raw = await reader.read(2000)
            out.error = f"HTTP {code}: {raw.decode('utf-8', 'replace')[:200]}"
            return out
        recent = st
        async for line in _body_lines(reader, headers.get("transfer-encoding", "").lower() == "chunked"):
            line = line.strip()
            if not line or line.startswith(b":"):
                continue
            text = line.decode("utf-8").removeprefix("data: ")
            if text == "[DONE]":
                break
            data = json.loads(text)
            if choices := data.get("choices"):
                if choices[0].get("text"):
                    now = time.perf_counter()
                    if chunks == 0:
                        out.ttft = now - st
                    else:
                        out.itl.append(now - recent)
                    recent = now
                    chunks += 1
            if usage := data.get("usage"):
                out.output_tokens = int(usage.get("completion_tokens", 0))
                out.prompt_tokens = int(usage.get("prompt_tokens", out.prompt_tokens))
                out.cached_tokens = int((usage.get("prompt_tokens_details") or {}).get("cached_tokens", -1))
            if verbose := data.get("__verbose"):  # each streamed token's id; the final event names the slot
                out.answer.extend(int(t) for t in verbose.get("tokens", []))
                if verbose.get("stop"):
                    out.slot = int(verbose.get("id_slot", -1))
        out.latency = recent - st
        if chunks == 0:
            out.error = "Never received a valid chunk to calculate TTFT."
        elif out.output_tokens != chunks:
            out.error = f"{chunks} token chunks for {out.output_tokens} completion tokens"
        elif out.output_tokens != max_tokens:
            out.error = f"{out.output_tokens} completion tokens, {max_tokens} requested"
        else:
            out.success = True
    except (OSError, asyncio.IncompleteReadError, json.JSONDecodeError, ValueError) as e:
        out.error = f"{type(e).__name__}: {e}"
    finally:
        if writer is not None:
            writer.close()
    return out


async def run_load(host: str, port: int, prompts: list[list[int]], outputs, offsets,
                   extra: dict | None = None) -> tuple[list[Outcome], float]:
    """Send request i at offsets[i] s after the start (with `extra` request fields); return the outcomes and the
    run's duration (from just before the first send to the last response, as vLLM's benchmark_duration)."""
    start = time.perf_counter()

    async def scheduled(i):
        delay = start + float(offsets[i]) - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        send = time.perf_counter() - start
        o = await send_one(host, port, prompts[i], int(outputs[i]), extra)
        o.send_s = send
        return o

    results = await asyncio.gather(*(scheduled(i) for i in range(len(prompts))))
    return list(results), time.perf_counter() - start


def result_document(outcomes: list[Outcome], duration: float, meta: dict) -> dict:
    """vLLM's --save-result --save-detailed layout (per-request lists in send order) plus `send_times`, and
    `slots` (the server slot of each request) when the server named them (request field `verbose`)."""
    ok = [o.success for o in outcomes]
    doc = {**meta, "duration": duration, "completed": int(sum(ok)), "failed": int(len(ok) - sum(ok)),
           "num_prompts": len(outcomes),
           "input_lens": [o.prompt_tokens for o in outcomes], "output_lens": [o.output_tokens for o in outcomes],
           "ttfts": [o.ttft for o in outcomes], "itls": [o.itl for o in outcomes],
           "latencies": [o.latency for o in outcomes], "errors": [o.error for o in outcomes], "success": ok,
           "send_times": [o.send_s for o in outcomes]}
    if any(o.slot >= 0 for o in outcomes):
        doc["slots"] = [o.slot for o in outcomes]
    return doc
