"""What the browser's twin of the serving simulator (templates/serving_sim/) reads. Pure: no I/O.

- `model_constants(a)` and `gpu_constants(a, name)`: the numbers the twin's roofline uses, as the Python computes
  them (integers where roofline.py has integers), so both sides do the same float operations.
- `workload_trace(workload, n, seed, burstiness)`: a workload's requests as the page ships them: each request's
  standard gamma draw (rescaled to any rate by the twin exactly as workload.arrival_times does), prompt and output.
The fixtures that hold the twin to the engine are scripts/serving/parity.py.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from scripts.model import roofline as rl
from scripts.model import sizes
from scripts.model.anchor import Anchor
from scripts.serving.workloads.workload import generate, streams


def model_constants(a: Anchor) -> dict:
    return {"weight_bytes_read_per_step": sizes.weight_bytes_read_per_step(a),
            "params_read_per_step": sizes.params_read_per_step(a), "kv_bytes_per_token": sizes.kv_bytes_per_token(a),
            "state_bytes_per_request": sizes.state_bytes_per_request(a),
            "attention_flops_per_token_position": rl.attention_flops_per_token_position(a),
            "weight_bytes_total": sizes.weight_bytes_total(a), "runtime_reserve_bytes": a.runtime_reserve_bytes,
            "pd_link_bytes_per_s": a.pd_link_bytes_per_s, "max_position_embeddings": a.max_position_embeddings,
            **(expert_constants(a) if a.num_experts else {}), **(window_constants(a) if a.sliding_window else {})}


def window_constants(a: Anchor) -> dict:
    """A sliding-window model's terms of roofline.IterationCost: the DeltaNet state (read and written by a decode
    step) apart from the window layers' KV (read once); a model without a window goes without them."""
    cost = rl.iteration_cost(a)
    return {"recurrent_state_bytes_per_request": cost.state, "window_kv_bytes": cost.window}


def expert_constants(a: Anchor) -> dict:
    """A mixture of experts' terms of roofline.IterationCost (a dense model's constants go without them): the
    FLOPs' active parameters, E, the chance 1 - k/E a token skips an expert, one expert's bytes over every MoE layer."""
    cost = rl.iteration_cost(a)
    return {"active_params_per_token": sizes.active_params_per_token(a), "num_experts": cost.experts,
            "expert_keep": cost.expert_keep, "expert_bytes": cost.expert_bytes}


def gpu_constants(a: Anchor, name: str) -> dict:
    return {"name": name, "hbm_bytes": a.hbm_bytes, "hbm_bandwidth_bytes_per_s": a.hbm_bandwidth_bytes_per_s,
            "peak_bf16_flops": a.peak_bf16_flops}


def efficiency_constants(a: Anchor) -> dict:
    """Step-time factors by name: the roofline bound and the anchor's realistic set."""
    return {"bound": rl.BOUND.__dict__.copy(), "realistic": rl.achieved(a).__dict__.copy()}


def arrival_draws(n: int, seed: int, burstiness: float = 1.0) -> np.ndarray:
    """The standard gamma draws behind workload.generate's arrivals (its arrivals stream: Generator.gamma(shape,
    scale) is scale x standard_gamma(shape), the same draws)."""
    return streams(seed)[1].standard_gamma(burstiness, size=n)


def workload_trace(workload: dict, n: int, seed: int, burstiness: float = 1.0) -> dict:
    reqs = generate(workload, n, 1.0, seed, burstiness)
    return {"seed": seed, "gamma": [float(x) for x in arrival_draws(n, seed, burstiness)],
            "prompt_tokens": [int(x) for x in reqs.prompt_tokens],
            "output_tokens": [int(x) for x in reqs.output_tokens]}


def on_gpu(a: Anchor, gpu: dict) -> Anchor:
    """The anchor on another GPU of config/gpus.json (its three datasheet numbers)."""
    return replace(a, **{k: gpu[k]["value"] for k in ("hbm_bytes", "hbm_bandwidth_bytes_per_s", "peak_bf16_flops")})


