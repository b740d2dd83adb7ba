# Derived numbers: the anchor model and the cited figures become the lesson's constants, tables and provenance.
# Paths in `script:` and `conda:` are relative to this file; inputs and outputs to the checkout.


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
        "../envs/lesson.yaml"
    script:
        "../scripts/gen_c13_precomputed.py"
