# C13-L5 lesson kit: one rule per artifact, grouped by stage in rules/*.smk; this file is the table of contents.
# Each rule's script sits in scripts/ under the rule's name (precomputed: gen_c13_precomputed.py). Rules write under
# build/ (Snakemake deletes a job's old outputs before it runs); `make site` publishes build/precomputed/ and
# build/site/ into precomputed/ and site/ only after every rule succeeded (scripts/record/publish.py).
import sys

sys.path.insert(0, workflow.basedir)  # the kit's packages, for the helpers below and every rule's script


include: "rules/common.smk"  # input check, settings, wildcard constraints, code()


rule all:
    input:
        "build/site/index.html",
        f"{BUILD}/MANIFEST.json",


rule data:
    input:
        f"{BUILD}/MANIFEST.json",


include: "rules/data.smk"  # precomputed: the anchor's derived numbers and their provenance
include: "rules/tokenizers.smk"  # fetch_tokenizer, convert_qwen35, verify_qwen35, tokenizer_counts
include: "rules/bench.smk"  # bench_medians; bench_partition and bench_cluster (`make bench-cluster`)
include: "rules/serving.smk"  # serving_cell, serving_goodput, serving_sweep, serve_results
include: "rules/record.smk"  # manifest
include: "rules/page.smk"  # fetch_vendor, render_site
