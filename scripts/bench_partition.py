"""Rule bench_partition: the KV-cache benchmark, measured inside a (Slurm) job on one partition (scripts/bench/)."""
if "snakemake" in globals():  # run by Snakemake from scripts/: make the repo root importable
    import sys

    sys.path.insert(0, str(__import__("pathlib").Path(snakemake.scriptdir).parent))  # noqa: F821

from scripts.bench.kv_cache import measure, use_threads
from scripts.record.atomic import write_json_atomic
from scripts.record.cli import run_cleanly

if "snakemake" in globals():
    sm = snakemake  # noqa: F821
    p = sm.params

    def bench() -> None:
        use_threads(p.threads)
        record = measure(tuple(p.new_tokens), p.runs, warmup=p.warmup, log=lambda m: print(m, file=sys.stderr))
        write_json_atomic(sm.output.json, record)

    run_cleanly(bench, log=sm.log[0])
