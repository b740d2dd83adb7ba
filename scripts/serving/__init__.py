"""Serving under load: workloads and traces, an iteration-level simulator of the anchor (whole, chunked, P/D), and
the request metrics exactly as `vllm bench serve` computes them. Step times come only from scripts/model/roofline.py.

workload, engine, metrics and prefix (the engines' prefix caches, not yet wired into the engine) are pure (numbers
in, numbers out); trace and results read files (trace: CSV and the Mooncake JSON Lines layout); sweep runs cells.
May import: common, model, record.
"""
