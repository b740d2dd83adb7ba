# Derived numbers: the anchor model and the cited figures become the lesson's constants, tables and provenance.
# Paths in `script:` and `conda:` are relative to this file; inputs and outputs to the checkout.


rule precomputed:
    input:
        anchor=anchor_file,
        cited="config/cited.json",
        gpus="config/gpus.json",
        techniques="config/techniques.json",
        workloads="config/workloads.json",  # the reserving workload's longest prompt and output
        code=code("scripts/gen_c13_precomputed.py"),
    output:
        json=f"{PRE}/precomputed.json",
    log:
        "build/logs/{anchor}/precomputed.log",
    conda:
        "../envs/lesson.yaml"
    script:
        "../scripts/gen_c13_precomputed.py"


# The data every anchor shares (made once under build/shared/), beside each anchor's own: each anchor's precomputed/
# is whole (what publish, the manifest and the audit read).
rule shared_data:
    input:
        json=f"{SHARED}/{{name}}.json",
    output:
        json=f"{PRE}/{{name}}.json",
    wildcard_constraints:
        name="tokenizer_counts|qwen35_conversion_proof|bench_medians|measured_records|measured_results|measured_vs_simulated_load|measured_vs_simulated_prefix|measured_vs_simulated_heldout",
    log:
        "build/logs/{anchor}/shared_data.{name}.log",
    localrule: True
    conda:
        "../envs/lesson.yaml"
    shell:  # not `run:`, which Snakemake 9.27.1 runs through the unquoted interpreter (scripts/record/snakemake_compat.py)
        "cp -- {input.json:q} {output.json:q} 2> {log:q}"
