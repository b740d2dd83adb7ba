# C13-L5 lesson kit: one rule per artifact, grouped by stage in rules/*.smk; this file is the table of contents.
# Each rule's script sits in scripts/ under the rule's name (precomputed: gen_c13_precomputed.py). Rules write under
# build/<anchor>/ (an anchor's data, sweep and page) and build/shared/ (what every anchor shares), never into the
# published directories: `make site` publishes build/default/precomputed/ and build/default/site/ as precomputed/
# and site/, another anchor's build/<name>/site/ as site/<name>/, only after every rule succeeded
# (scripts/record/anchors.py, scripts/record/publish.py). `--config anchor=<file>` adds an anchor outside anchors/.
import sys

sys.path.insert(0, workflow.basedir)  # the kit's packages, for the helpers below and every rule's script


include: "rules/common.smk"  # input check, settings, wildcard constraints, code()


rule all:  # the default anchor's data and page
    input:
        expand(f"{PAGE}/index.html", anchor=DEFAULT),
        expand(f"{PRE}/MANIFEST.json", anchor=DEFAULT),


rule data:  # the default anchor's data (what `make check-stale` compares with precomputed/)
    input:
        expand(f"{PRE}/MANIFEST.json", anchor=DEFAULT),


rule anchors:  # every anchor's data and page in one DAG (`make anchors`)
    input:
        expand(f"{PAGE}/index.html", anchor=ANCHOR_FILES),
        expand(f"{PRE}/MANIFEST.json", anchor=ANCHOR_FILES),


include: "rules/data.smk"  # precomputed: the anchor's derived numbers and their provenance; shared_data
include: "rules/tokenizers.smk"  # fetch_tokenizer, convert_qwen35, verify_qwen35, tokenizer_counts
include: "rules/bench.smk"  # bench_medians; bench_partition and bench_cluster (`make bench-cluster`)
include: "rules/simulated.smk"  # simulate_cells, simulate_goodput, simulate_engines, simulate_sweep, simulate_prefix
include: "rules/measured.smk"  # on a real engine: measured_results, measured_vs_simulated_load, measured_records,
#   measured_vs_simulated_prefix, measured_vs_simulated_heldout
include: "rules/record.smk"  # manifest
include: "rules/page.smk"  # fetch_vendor, render_site
