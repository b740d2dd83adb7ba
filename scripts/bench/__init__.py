"""The measured part: the course's tiny GPT with and without a KV cache, its benchmark, and merging the records.

Measurements are input, not output: only `python -m scripts.bench.kv_cache` (make bench) times anything.
It also holds the page's Lighthouse benchmark (`python -m scripts.bench.lighthouse`, part of make bench-page).
May import: common, record.
"""
