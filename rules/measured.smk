# Measured on a real engine (scripts/realengine/): its runs through the same metric definitions, each family of
# runs beside the simulator's prediction of it, and the pages' records of the three comparisons.
# Paths in `script:` and `conda:` are relative to this file; inputs and outputs to the checkout.


# Real measurements (`vllm bench serve --save-result --save-detailed`) through the same metric definitions.
rule measured_results:
    input:
        results=SERVE_RESULTS,
        code=code("scripts/measured_results.py"),
    output:
        json=f"{SHARED}/measured_results.json",
    log:
        "build/logs/measured_results.log",
    conda:
        "../envs/lesson.yaml"
    script:
        "../scripts/measured_results.py"


# A real engine's runs beside the simulator's prediction of them (scripts/realengine/, issue 26).
rule measured_vs_simulated_load:
    input:
        calibrations=SERVE_CALIBRATIONS,
        results=SERVE_RESULTS,
        anchor="anchor-model.json",
        gpu=stamp_path(DEFAULT).as_posix(),  # the anchor's GPU entry of config/gpus.json (gpu_stamp.py)
        config="config/real_engine.json",  # the comparison's modelling choices (comparison.*)
        code=code("scripts/measured_vs_simulated_load.py"),
    output:
        json=f"{SHARED}/measured_vs_simulated_load.json",
    log:
        "build/logs/measured_vs_simulated_load.log",
    conda:
        "../envs/lesson.yaml"
    script:
        "../scripts/measured_vs_simulated_load.py"


# The real engine's three comparisons as the pages' records (their tables and every number they show).
rule measured_records:
    input:
        load=f"{SHARED}/measured_vs_simulated_load.json",
        prefix=f"{SHARED}/measured_vs_simulated_prefix.json",
        heldout=f"{SHARED}/measured_vs_simulated_heldout.json",
        code=code("scripts/measured_records.py"),
    output:
        json=f"{SHARED}/measured_records.json",
    log:
        "build/logs/measured_records.log",
    conda:
        "../envs/lesson.yaml"
    script:
        "../scripts/measured_records.py"


# The real engine's prefix-reuse runs beside the simulator's prediction from their own session's calibration (issue 42).
rule measured_vs_simulated_prefix:
    input:
        calibrations=SERVE_PREFIX_CALIBRATIONS,
        results=SERVE_PREFIX_RESULTS,
        anchor="anchor-model.json",
        gpu=stamp_path(DEFAULT).as_posix(),  # the anchor's GPU entry of config/gpus.json (gpu_stamp.py)
        config="config/real_engine.json",  # the comparison's modelling choices (comparison.*)
        code=code("scripts/measured_vs_simulated_prefix.py"),
    output:
        json=f"{SHARED}/measured_vs_simulated_prefix.json",
    log:
        "build/logs/measured_vs_simulated_prefix.log",
    conda:
        "../envs/lesson.yaml"
    script:
        "../scripts/measured_vs_simulated_prefix.py"


# The held-out cells (another client, other shapes, a closed loop) predicted from their session's calibration (issue 43).
rule measured_vs_simulated_heldout:
    input:
        calibrations=SERVE_HELDOUT_CALIBRATIONS,
        results=SERVE_HELDOUT_RESULTS,
        other=SERVE_CALIBRATIONS + SERVE_ARCHIVED_CALIBRATIONS,  # other calibrations: the same cells predicted again
        anchor="anchor-model.json",
        gpu=stamp_path(DEFAULT).as_posix(),  # the anchor's GPU entry of config/gpus.json (gpu_stamp.py)
        config="config/real_engine.json",  # the comparison's modelling choices (comparison.*)
        code=code("scripts/measured_vs_simulated_heldout.py"),
    output:
        json=f"{SHARED}/measured_vs_simulated_heldout.json",
    log:
        "build/logs/measured_vs_simulated_heldout.log",
    conda:
        "../envs/lesson.yaml"
    script:
        "../scripts/measured_vs_simulated_heldout.py"
