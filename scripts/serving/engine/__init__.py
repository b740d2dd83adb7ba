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
  disagg.py      P/D: the prefill GPUs, the hand-off to the decode GPUs, the prefill side's held memory.
  breakdown.py   where each request's time went (parts summing to its E2EL).
  result.py      the Trace a run returns.
  simulation.py  simulate(): the keywords checked and the components wired.
  registry.py    the registries by name: a new engine, KV manager or cost model is a class registered there.
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
