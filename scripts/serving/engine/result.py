"""What a simulation returns: the Trace (per request, its admission, first token, finish, and where its tokens sit
among its GPU's iterations) and the names of the parts its time is broken into. Pure."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from scripts.serving.workloads.workload import Requests

PARTS = ("queueing_s", "prefill_s", "interference_s", "transfer_s", "decode_s", "preemption_s")  # sum to E2EL


@dataclass
class Trace:
    """Per request (in input order): when it was admitted to a GPU, its first token and its last; where its decode
    tokens sit in its GPU's iteration end times (`dec_first`..`dec_last`, -1 when it has none after its first) —
    for a preempted request, its tokens before the last preemption are in `pieces`."""
    requests: Requests
    admitted_s: np.ndarray
    first_token_s: np.ndarray
    finish_s: np.ndarray
    gpu: np.ndarray
    dec_first: np.ndarray
    dec_last: np.ndarray
    iteration_end_s: list[np.ndarray]  # one array per (decode) GPU: every iteration's end
    peak_reserved_bytes: float
    capacity_bytes: float
    decode_end_s: list[np.ndarray]  # per GPU, the ends of the iterations that gave every running decode a token
    # (dec_first/dec_last index these: all iterations but vllm-v0's prefill-only ones and prefills with none running)
    breakdown: dict[str, np.ndarray]  # PARTS -> per request seconds; they sum to finish_s - arrival_s
    preemptions: np.ndarray  # per request: how often it was preempted (paged memory only)
    pieces: dict  # request -> its tokens before a preemption: ("seg", first, work_first, last) decode iterations,
    # ("t", time) the token its recompute emitted; in order
    prefill_held_peak_bytes: float = 0.0  # P/D: the most KV a prefill GPU held for prompts waiting to transfer
    cached_tokens: np.ndarray | None = None  # per request: prompt tokens a prefix cache served at its admission
    prefill_saved_s: np.ndarray | None = None  # per request: what prefilling those alone would have taken

    def token_times(self, i: int) -> np.ndarray:
        """Request i's token times, its first token's included."""
        ends = self.decode_end_s[self.gpu[i]] if len(self.decode_end_s) else np.empty(0)
        parts = [np.array([self.first_token_s[i]])]
        for piece in self.pieces.get(i, ()):
            parts.append(np.array([piece[1]]) if piece[0] == "t" else ends[piece[1]:piece[3] + 1])
        if self.dec_last[i] >= 0:
            parts.append(ends[self.dec_first[i]:self.dec_last[i] + 1])
        return np.concatenate(parts)

    def token_gaps(self, i: int) -> np.ndarray:
        """Request i's inter-token latencies: first token to second, and so on."""
        if self.dec_last[i] < 0 and i not in self.pieces:
            return np.empty(0)
        return np.diff(self.token_times(i))

    def all_token_gaps(self) -> np.ndarray:
        return np.concatenate([self.token_gaps(i) for i in range(len(self.requests))] or [np.empty(0)])


def new_out(n: int, arrival_s) -> dict:
    """The per-request columns the loop fills (`pieces`: request -> its tokens before a preemption)."""
    return {"admitted_s": np.full(n, np.nan), "first_token_s": np.full(n, np.nan), "finish_s": np.full(n, np.nan),
            "dec_first": np.full(n, -1, dtype=np.int64), "dec_last": np.full(n, -1, dtype=np.int64),
            "seg_start": np.full(n, -1, dtype=np.int64), "own_prefill_s": np.zeros(n),
            "transfer_end_s": np.full(n, np.nan), "join_s": np.full(n, np.nan), "preemptions": np.zeros(n, dtype=int),
            "preempt_pre_s": np.zeros(n), "preempt_dec_s": np.zeros(n), "send_s": arrival_s.astype(float),
            "cached_tokens": np.zeros(n, dtype=np.int64), "pieces": {}}
