"""simulate(): the components wired for one run. Checks the keywords, picks the scheduler (schedulers.py, by name),
the KV manager (kv.py) and the step-cost model (stepcost.py), runs the loop (loop.py) on one GPU, or both P/D sides
(disagg.py), and breaks each request's time into parts (breakdown.py). Pure."""
from __future__ import annotations

import numpy as np

from scripts.common.names import PRESETS, SCHEDULES
from scripts.model import roofline as rl
from scripts.model.anchor import Anchor
from scripts.serving.engine import disagg
from scripts.serving.engine.breakdown import breakdown
from scripts.serving.engine.kv import Memory, kv_manager
from scripts.serving.engine.loop import GpuLoop
from scripts.serving.engine.registry import REGISTRIES, lookup
from scripts.serving.engine.result import Trace, new_out
from scripts.serving.engine.stepcost import step_cost_for
from scripts.serving.workloads.workload import Requests

LESSON_PRESETS = {"whole": "orca", "chunked": "sarathi", "disagg": "disagg"}  # the lesson's names, as engines
DEFAULT_MEMORY = Memory()  # vllm serve's block size and memory share
PAGED_PRESETS = tuple(p for p in PRESETS if p != "disagg" and lookup("scheduler", p).paged_by_default)


def engines() -> tuple[str, ...]:
    """Every name simulate() takes: the lesson's schedules, the presets it compares, then any other registered
    colocated scheduler (llama.cpp)."""
    others = [s for s in REGISTRIES["scheduler"] if not s.startswith("disagg.")]
    return tuple(dict.fromkeys(SCHEDULES + PRESETS + tuple(others)))


def _checked_class_budget(class_budget: tuple[int, int], scheduler, preset: str, schedule: str) -> tuple[int, int]:
    """simulate()'s `class_budget`, refused for a schedule without a token budget or outside that budget."""
    threshold, long_tokens = class_budget
    if preset not in ("sarathi", "vllm-v1", "llama.cpp"):
        raise ValueError("class_budget applies to the schedules with a token budget per iteration (sarathi, "
                         f"vllm-v1, llama.cpp), not {schedule}")
    budget = scheduler.chunk_tokens if preset == "sarathi" else scheduler.token_budget
    if not (threshold >= 1 and 1 <= long_tokens < budget):
        raise ValueError(f"class_budget: the threshold must be at least 1 token and the long prompts' share "
                         f"between 1 and the iteration's budget ({budget:g}) less one, not {threshold}, "
                         f"{long_tokens}")
    return int(threshold), int(long_tokens)


def _prefix_contents(reqs: Requests, colocated: bool, paged: bool, preset: str, schedule: str):
    """The requests' contents for prefix caching, refused where it is not modelled."""
    if not colocated:
        raise ValueError("prefix caching is modelled on the colocated schedules, not P/D")
    if not paged and preset != "llama.cpp":
        raise ValueError("prefix caching follows vLLM (paged memory: paged=True) or llama.cpp's slots "
                         f"(schedule llama.cpp), not {schedule} with reserved contexts")
    return reqs.contents()


def simulate(a: Anchor, reqs: Requests, schedule: str, *, chunk_tokens: int = 512, max_batch: int | None = None,
             prefill_gpus: int = 1, decode_gpus: int = 1, capacity_bytes: float | None = None,
             max_num_batched_tokens: int | None = None, gpu_name: str = "", first_token: str = "decode",
             efficiency: rl.Efficiency = rl.BOUND, paged: bool | None = None, memory: Memory = DEFAULT_MEMORY,
             max_concurrency: int | None = None, step_cost=None, prefix_caching: bool = False,
             class_budget: tuple[int, int] | None = None, progress=None, release_delay_s=None,
             slot_order=None) -> Trace:
    """`schedule`: one of the lesson's SCHEDULES, an engine preset (PRESETS) or another registered scheduler
    (`engines()`). For `vllm-v1` and `vllm-v0`, `max_num_batched_tokens` and `max_batch` (max_num_seqs) default as
    that vLLM sets them (`gpu_name` is what vLLM checks for "a100"); `llama.cpp` needs both (-b and -np); the other
    schedules have no batch cap unless `max_batch` is given. `first_token` (FIRST_TOKEN) and the GPU counts apply to
    `disagg`; `efficiency` to every schedule. `paged` (default: the scheduler's) manages KV in blocks as `memory`
    says, preempting by recompute; otherwise each request's full context is reserved at admission. `capacity_bytes`
    overrides the room for requests on one GPU. `max_concurrency` (colocated schedules): as `vllm bench serve
    --max-concurrency`, a request is sent at its arrival or, when that many are in flight, when one finishes; the
    trace's arrival times are then the send times, from which vLLM measures TTFT and E2EL; `release_delay_s` (with
    it; per request, in the requests' order): the client's turnaround, a request held by the cap is sent that long
    after the finish that freed its slot (loop.py). `step_cost` (colocated
    schedules): an object with IterationCost's `seconds` and `decode_run` that times every iteration instead of the
    anchor's roofline (stepcost.py `measured`); `efficiency` then does not apply. `prefix_caching` (colocated; the
    requests must carry segments): vLLM's automatic prefix caching on paged memory, llama.cpp's slots for
    `llama.cpp` (kv.py); the trace then has each request's cached tokens and the prefill time they saved.
    `class_budget` = (threshold, long_tokens) (sarathi, vllm-v1, llama.cpp: the schedules with a per-iteration token
    budget): prompts of at least `threshold` tokens share at most `long_tokens` of each iteration (schedulers.py).
    `progress`: called with the count of requests each time some finish on a GPU (loop.py). `slot_order` (llama.cpp
    with prefix caching): the slots' least-recently-used order at the start, least recent first (prefix.LlamaSlots;
    default: none used yet)."""
    names = engines()
    if schedule not in names:
        raise ValueError(f"schedule must be one of {', '.join(names)}")
    if first_token not in disagg.FIRST_TOKEN:
        raise ValueError(f"first_token must be one of {', '.join(disagg.FIRST_TOKEN)}")
    preset = LESSON_PRESETS.get(schedule, schedule)
    colocated = preset != "disagg"
    rule = lookup("scheduler", preset if colocated else "disagg.decode")
    paged = rule.paged_by_default if paged is None else paged
    scheduler = rule.configure(a, reqs, chunk_tokens=chunk_tokens, max_batch=max_batch,
                               max_num_batched_tokens=max_num_batched_tokens, gpu_name=gpu_name, paged=paged)
    if class_budget is not None:
        scheduler.class_budget = _checked_class_budget(class_budget, scheduler, preset, schedule)
    if step_cost is not None and not colocated:
        raise ValueError("step_cost applies to the colocated schedules and replaces `efficiency`")
    step = step_cost_for(a, efficiency, step_cost)
    if max_concurrency is not None and (max_concurrency < 1 or not colocated):
        raise ValueError("max_concurrency must be at least 1 and applies to the colocated schedules")
    release_delay_s = _checked_delays(release_delay_s, len(reqs), max_concurrency)
    if chunk_tokens < 1 or scheduler.max_batch < 1 or prefill_gpus < 1 or decode_gpus < 1 \
            or scheduler.token_budget < 1:
        raise ValueError("chunk_tokens, max_batch, max_num_batched_tokens and the GPU counts must be at least 1")
    n = len(reqs)
    capacity = capacity_bytes if capacity_bytes is not None else \
        memory.pool_bytes(a) if paged else rl.free_bytes_for_requests(a)
    if capacity <= 0:
        raise ValueError(f"no memory is left for requests ({capacity / 1e9:.1f} GB after the weights and reserve)")
    prefix = _prefix_contents(reqs, colocated, paged, preset, schedule) if prefix_caching else None
    out = new_out(n, reqs.arrival_s)
    held_peak = 0.0
    mem = memory if paged else None
    if colocated:
        kv = kv_manager(step.anchor, capacity, mem, prefix, scheduler.max_batch, slot_order)
        loop = GpuLoop(step, scheduler, kv, max_concurrency, progress, release_delay_s)
        prompt, output = reqs.prompt_tokens.astype(np.int64), reqs.output_tokens.astype(np.int64)
        runs = [loop.run(reqs.arrival_s, prompt, output, out)]
        reqs = reqs.with_times(out["send_s"])
        gpu, peak = np.zeros(n, dtype=np.int64), loop.peak
        ready = out["admitted_s"]  # the breakdown's "own work starts here" (after the admission wait)
    else:
        gpu, runs, peak, held_peak, ready = disagg.run(
            a, step, reqs, out, prefill_gpus=prefill_gpus, decode_gpus=decode_gpus, capacity=capacity,
            max_batch=scheduler.max_batch, chunk_tokens=chunk_tokens, memory=mem, first_token=first_token,
            progress=progress)
    work_to = out["dec_last"].copy()
    gone = out["dec_last"] < out["dec_first"]  # P/D decode convention, one token: no token after its first
    out["dec_first"][gone], out["dec_last"][gone] = -1, -1
    parts = breakdown(reqs.arrival_s, ready, out, work_to, gpu, runs, not colocated)
    cached = out["cached_tokens"] if prefix is not None else None
    saved = prefill_saved(step.cost, reqs.prompt_tokens, cached) if prefix is not None else None
    return Trace(reqs, out["admitted_s"], out["first_token_s"], out["finish_s"], gpu, out["dec_first"],
                 out["dec_last"], [r[0] for r in runs], peak, capacity, [r[1] for r in runs], parts,
                 out["preemptions"], out["pieces"], held_peak, cached, saved)


def _checked_delays(delays, n: int, max_concurrency: int | None) -> np.ndarray | None:
    """simulate's release_delay_s: one finite delay of at least 0 s per request, and only with a client cap."""
    if delays is None:
        return None
    delays = np.asarray(delays, dtype=float)
    if max_concurrency is None or delays.shape != (n,) or not (np.isfinite(delays).all() and (delays >= 0).all()):
        raise ValueError("release_delay_s: one finite delay of at least 0 s per request, with max_concurrency")
    return delays


def prefill_saved(cost, prompt, cached) -> np.ndarray:
    """Per request, the prefill time its cached tokens saved: its whole prompt's prefill alone less that of the rest
    after the cached prefix (attention still spans the prefix), by the run's step-cost model."""
    saved = np.zeros(len(prompt))
    for i in np.flatnonzero(cached):
        p, c = int(prompt[i]), int(cached[i])
        saved[i] = cost.seconds(0, 0.0, [(0, p)]) - cost.seconds(0, 0.0, [(c, p - c)])
    return saved
