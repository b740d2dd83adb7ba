"""The serving model: an iteration-level simulator of the anchor serving a request stream, as engines schedule it.
Pure: arrays in, arrays out, no I/O. Its components, each in its own module and mirrored one to one by the page's
twin (templates/serving_sim/<same name>.js):

  schedulers.py  an engine's iteration rule, one class per engine by name: orca (the lesson's whole), sarathi
                 (chunked), vllm-v1, vllm-v0, llama.cpp, and disagg's decode side; what runs, which prompt tokens go
                 in an iteration, whom to preempt.
  kv.py          KV managers: reserved contexts, vLLM's paged blocks (preemption by recompute), and where a prefix
                 cache plugs in.
  stepcost.py    step-cost models: the roofline bound, the derated roofline, a measured engine's fitted steps.
  loop.py        the event loop of one GPU: it only advances time, asking the three above.
  iteration_time.py  what the loop's iterations take: a pure-decode run priced in one pass, one with prompt work
                 (its twin is part of loop.js).
  disagg.py      P/D: the prefill GPUs, the hand-off to the decode GPUs, the prefill side's held memory.
  breakdown.py   where each request's time went (parts summing to its E2EL).
  result.py      the Trace a run returns.
  simulation.py  simulate(): the keywords checked and the components wired.
  registry.py    the registries by name: a new engine, KV manager or cost model is a class registered there.
  contracts.py   what the loop may ask of each part (Protocols), with pre- and postconditions: read it first.

Reading guide: one iteration of the loop (GpuLoop.run), in order, and the part each step asks.
  1. send      the client sends what has arrived (and, with a concurrency cap, only while a slot is free).
  2. room      paged memory only: KV `after(n_iters)`; while it exceeds `capacity`, scheduler `victim(...)` is
               preempted: KV `release` + `dropped`, first in the queue again.
  3. admit     FCFS while fewer than scheduler `max_batch` run and KV `fits(i, tokens, used)`: KV `admit`, then KV
               `prefix_hit(i, tokens)` (its cached tokens are not prefilled); a P/D request instead starts its KV
               transfer. (scheduler `class_budget`: a short request may pass a long head.)
  4. land      P/D transfers that ended join the decode batch.
  5. join      requests whose prompt finished join the decode batch: KV `join(i, base)`; the peak is KV `in_use`.
  6. run       no prompt work: a stretch of pure-decode iterations up to the next event, priced by the step cost's
               pricing `decode_run` (or IterationCost's terms inline: iteration_time.py) and bounded by KV
               `steps_that_fit`; with prompt work: one iteration of scheduler `prefill_chunks(...)`, priced by
               pricing `iteration`, the decodes riding along if scheduler `decodes_with_prefill`; KV
               `computed(i, done)` after each chunk.
  7. retire    requests whose last token this was: KV `leave`, `release`, `dropped(i, computed, t)`.
To add a KV manager: a class in kv.py with @register("kv", name) implementing contracts.KVContract (or
PreemptingKVContract when running requests can outgrow the memory), wired in kv.kv_manager; its JS twin in
templates/serving_sim/kv.js. A scheduler: a class in schedulers.py implementing SchedulerContract, and its twin.
"""
from __future__ import annotations

from scripts.common.names import PRESETS, SCHEDULES
from scripts.serving.engine.disagg import FIRST_TOKEN
from scripts.serving.engine.kv import Memory
from scripts.serving.engine.registry import REGISTRIES, lookup, register
from scripts.serving.engine.result import PARTS, Trace
from scripts.serving.engine.schedulers import GIB, vllm_v1_defaults
from scripts.serving.engine.simulation import LESSON_PRESETS, PAGED_PRESETS, engines, simulate

__all__ = ["FIRST_TOKEN", "GIB", "LESSON_PRESETS", "PAGED_PRESETS", "PARTS", "PRESETS", "REGISTRIES", "SCHEDULES",
           "Memory", "Trace", "engines", "lookup", "register", "simulate", "vllm_v1_defaults"]
