# Measured: the KV-cache benchmark records merged into medians, and the benchmark as Slurm jobs per partition.
# Paths in `script:` and `conda:` are relative to this file; inputs and outputs to the checkout.


# Measured data in (the KV-cache benchmark), page-ready medians and cache/no-cache ratios out (never re-measures).
rule bench_medians:
    input:
        records=BENCH_RECORDS,
        code=code("scripts/bench_medians.py"),
    output:
        json=f"{SHARED}/bench_medians.json",
    log:
        "build/logs/bench_medians.log",
    conda:
        "../envs/lesson.yaml"
    script:
        "../scripts/bench_medians.py"


# The KV-cache benchmark as a job on one partition (`make bench-cluster`; `make bench` runs it here directly).
rule bench_partition:
    input:
        code=code("scripts/bench_partition.py"),
    output:
        json="build/bench/{partition}.json",
    params:
        new_tokens=config["bench_new_tokens"],
        runs=config["bench_runs"],
        warmup=config["bench_warmup"],
        threads=config["bench_threads"],
    resources:
        slurm_partition=lambda wildcards: wildcards.partition,
    log:
        "build/logs/bench_partition.{partition}.log",
    conda:
        "../envs/lesson.yaml"
    script:
        "../scripts/bench_partition.py"


rule bench_cluster:
    input:
        expand("build/bench/{partition}.json", partition=config["bench_partitions"]),
