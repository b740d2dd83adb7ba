"""The measured part: the course's tiny GPT with and without a KV cache, its benchmark, and merging the records;
the tiny model's seeded weights (seeded_weights, shared with the lab page's model) and shape (shape, torch-free).

Measurements are input, not output: only `python -m scripts.bench.kv_cache` (make bench) times anything that
reaches the page. It also holds the page's Lighthouse benchmark (`python -m scripts.bench.lighthouse`, part of make
bench-page), the lab model's speed against PyTorch (`lab_steps`, make bench-lab) and the Python server with the
lab's engine rule (`serve_tiny`, which writes a vLLM-layout result with scripts/serving/measures/metrics.py's metrics).
May import: common, record, serving.
"""
