"""The wording of a sentence whose truth depends on the GPU, and its longest form (pure: GPU ids in, text out).

A claim settled on every GPU of the switch (config/gpus.json) holds on some GPUs and fails on others. Its sentence
is worded by the side of the more GPUs and, when the GPUs disagree, says so and points to the page's per-GPU table,
which names each GPU with its outcome (issue 63: a sentence must not say the reverse of the truth for any GPU).
The sentence names no GPU: one more GPU in config/gpus.json adds a column to the table and no prose (issue 80: naming
GPUs in the sentences lengthened every page by each GPU's label).

Which GPUs a claim fails on is a result: a new simulation, a new anchor or one more GPU can move it. The reading time
is therefore held to the lesson's frame with every such sentence at its LONGEST form over every outcome the current
GPU list allows (issue 80: "the reading-time margin measured against a page with every GPU's wording"). Each
function here returns the wording shown and how many characters its longest form has beyond it; the page marks the
wording with that count (`data-longest-extra`) and scripts/page/reading.py adds the counts up.

Contract: `gpus` is the switch's list in its order, each a dict with an `id`; `fails` (and `excused`) are GPU ids
(ids not in `gpus` are ignored); `yes`, `no`, `hedge` and `because` are plain text from the template.
Characters are counted as the reading time counts them: every character but whitespace."""
from __future__ import annotations

import re


def chars(text: str) -> int:
    """Characters as scripts/page/reading.py counts prose: every character but whitespace."""
    return len(re.sub(r"\s", "", text))


def _failed(gpus: list[dict], fails) -> list[str]:
    """The switch's GPUs among `fails`, in the switch's order."""
    failing = set(fails or ())
    return [g["id"] for g in gpus if g["id"] in failing]


def where(gpus: list[dict], fails, hedge: str, excused=None, because: str = "") -> str:
    """A claim stated as holding: "" when it holds on every GPU; `because` when every GPU it fails on is one of
    `excused` (a reason the reader can see, e.g. no FP8 compute); else `hedge` (which points to the per-GPU table)."""
    failed = _failed(gpus, fails)
    if not failed:
        return ""
    if excused is not None and set(failed) <= set(excused):
        return because
    return hedge


def mixed(gpus: list[dict], fails, yes: str, no: str, hedge: str) -> str:
    """A claim true on some GPUs: `yes` when it holds on all, `no` when on none; else the wording of the more GPUs
    (a tie: `yes`) followed by `hedge`, which says it is not so on every GPU and points to the per-GPU table."""
    failed = _failed(gpus, fails)
    if not failed:
        return yes
    if len(failed) == len(gpus):
        return no
    return (yes if len(failed) <= len(gpus) - len(failed) else no) + hedge


def _candidate_sets(gpus: list[dict], also=()) -> list[list[str]]:
    """The failing sets among which the longest wording lies: a wording names no GPU, so it depends only on how many
    GPUs fail (one set of each size) and on the sets a wording treats apart (`also`: where's `excused`)."""
    ids = [g["id"] for g in gpus]
    return [ids[:k] for k in range(len(ids) + 1)] + [list(s) for s in also]


def longest(wording, gpus: list[dict], also=()) -> int:
    """The most characters `wording(fails)` reaches over every set of failing GPUs the list allows (found among
    _candidate_sets, not by trying all 2^n sets)."""
    return max(chars(wording(s)) for s in _candidate_sets(gpus, also))


def extra(shown: str, wording, gpus: list[dict], also=()) -> int:
    """Characters the longest form has beyond the wording shown."""
    return longest(wording, gpus, also) - chars(shown)
