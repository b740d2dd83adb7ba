# Serving under load: the simulated sweep (cells, goodput, the page's data) and real `vllm bench serve` results.
# Paths in `script:` and `conda:` are relative to this file; inputs and outputs to the checkout.


# Serving under load: the cells of one (workload, schedule) of the default sweep, a file per rate per GPU (one job per
# curve: a cell takes about as long as starting a job).
rule serving_cells:
    input:
        anchor=anchor_file,
        gpus="config/gpus.json",  # the anchor's GPU (hardware.gpu) is read from here
        workloads="config/workloads.json",
        code=code("scripts/serving_cells.py"),
    output:
        cells=expand("build/{{anchor}}/serving/cells/{{workload}}/{{schedule}}/r{rate}.json",
                     rate=[rate_name(r) for r in SWEEP["rates_per_gpu"]]),
    log:
        "build/logs/{anchor}/serving_cells.{workload}.{schedule}.log",
    conda:
        "../envs/lesson.yaml"
    script:
        "../scripts/serving_cells.py"


# DistServe goodput of one (workload, schedule): the highest rate per GPU meeting the attainment target.
rule serving_goodput:
    input:
        cells=expand("build/{{anchor}}/serving/cells/{{workload}}/{{schedule}}/r{rate}.json",
                     rate=[rate_name(r) for r in SWEEP["rates_per_gpu"]]),
        anchor=anchor_file,
        gpus="config/gpus.json",  # the anchor's GPU (hardware.gpu) is read from here
        workloads="config/workloads.json",
        code=code("scripts/serving_goodput.py"),
    output:
        json="build/{anchor}/serving/goodput/{workload}/{schedule}.json",
    log:
        "build/logs/{anchor}/serving_goodput.{workload}.{schedule}.log",
    conda:
        "../envs/lesson.yaml"
    script:
        "../scripts/serving_goodput.py"


# DistServe goodput of every engine preset at one set of step times (the roofline bound or the anchor's realistic
# ones), and of every P/D split for the page's workload; at the bound the lesson's schedules come from the sweep.
rule serving_engines:
    input:
        goodput=lambda w: expand("build/{anchor}/serving/goodput/{workload}/{schedule}.json", anchor=w.anchor,
                                 workload=w.workload, schedule=SWEEP["schedules"]) if w.step_time == "bound" else [],
        anchor=anchor_file,
        gpus="config/gpus.json",  # the anchor's GPU (hardware.gpu) is read from here
        workloads="config/workloads.json",
        code=code("scripts/serving_engines.py"),
    output:
        json="build/{anchor}/serving/engines/{workload}/{step_time}.json",
    log:
        "build/logs/{anchor}/serving_engines.{workload}.{step_time}.log",
    conda:
        "../envs/lesson.yaml"
    script:
        "../scripts/serving_engines.py"


# The sweep's metrics, per-request TTFT/TPOT and DistServe goodput, for the page.
rule serving_sweep:
    input:
        cells=expand("build/{{anchor}}/serving/cells/{workload}/{schedule}/r{rate}.json", workload=WORKLOADS,
                     schedule=SWEEP["schedules"], rate=[rate_name(r) for r in SWEEP["rates_per_gpu"]]),
        goodput=expand("build/{{anchor}}/serving/goodput/{workload}/{schedule}.json", workload=WORKLOADS,
                       schedule=SWEEP["schedules"]),
        engines=expand("build/{{anchor}}/serving/engines/{workload}/{step_time}.json", workload=WORKLOADS,
                       step_time=SWEEP["step_times"]),
        anchor=anchor_file,
        gpus="config/gpus.json",  # the anchor's GPU (hardware.gpu) is read from here
        workloads="config/workloads.json",
        code=code("scripts/serving_sweep.py"),
    output:
        json=f"{PRE}/serving.json",
    log:
        "build/logs/{anchor}/serving_sweep.log",
    conda:
        "../envs/lesson.yaml"
    script:
        "../scripts/serving_sweep.py"


# Real measurements (`vllm bench serve --save-result --save-detailed`) through the same metric definitions.
rule serve_results:
    input:
        results=SERVE_RESULTS,
        code=code("scripts/serve_results.py"),
    output:
        json=f"{SHARED}/serve_results.json",
    log:
        "build/logs/serve_results.log",
    conda:
        "../envs/lesson.yaml"
    script:
        "../scripts/serve_results.py"


# A real engine's runs beside the simulator's prediction of them (scripts/realengine/, issue 26).
rule serve_comparison:
    input:
        calibrations=SERVE_CALIBRATIONS,
        results=SERVE_RESULTS,
        anchor="anchor-model.json",
        gpus="config/gpus.json",  # the anchor's GPU (hardware.gpu) is read from here
        config="config/real_engine.json",  # the comparison's modelling choices (comparison.*)
        code=code("scripts/serve_comparison.py"),
    output:
        json=f"{SHARED}/serve_comparison.json",
    log:
        "build/logs/serve_comparison.log",
    conda:
        "../envs/lesson.yaml"
    script:
        "../scripts/serve_comparison.py"


# The real engine's three comparisons as the pages' records (their tables and every number they show).
rule serve_records:
    input:
        serve_comparison=f"{SHARED}/serve_comparison.json",
        serve_prefix_comparison=f"{SHARED}/serve_prefix_comparison.json",
        serve_heldout_comparison=f"{SHARED}/serve_heldout_comparison.json",
        code=code("scripts/serve_records.py"),
    output:
        json=f"{SHARED}/serve_real.json",
    log:
        "build/logs/serve_records.log",
    conda:
        "../envs/lesson.yaml"
    script:
        "../scripts/serve_records.py"


# The real engine's prefix-reuse runs beside the simulator's prediction from their own session's calibration (issue 42).
rule serve_prefix_comparison:
    input:
        calibrations=SERVE_PREFIX_CALIBRATIONS,
        results=SERVE_PREFIX_RESULTS,
        anchor="anchor-model.json",
        gpus="config/gpus.json",  # the anchor's GPU (hardware.gpu) is read from here
        config="config/real_engine.json",  # the comparison's modelling choices (comparison.*)
        code=code("scripts/serve_prefix_comparison.py"),
    output:
        json=f"{SHARED}/serve_prefix_comparison.json",
    log:
        "build/logs/serve_prefix_comparison.log",
    conda:
        "../envs/lesson.yaml"
    script:
        "../scripts/serve_prefix_comparison.py"


# The held-out cells (another client, other shapes, a closed loop) predicted from their session's calibration (issue 43).
rule serve_heldout_comparison:
    input:
        calibrations=SERVE_HELDOUT_CALIBRATIONS,
        results=SERVE_HELDOUT_RESULTS,
        other=SERVE_CALIBRATIONS + SERVE_ARCHIVED_CALIBRATIONS,  # other calibrations: the same cells predicted again
        anchor="anchor-model.json",
        gpus="config/gpus.json",  # the anchor's GPU (hardware.gpu) is read from here
        config="config/real_engine.json",  # the comparison's modelling choices (comparison.*)
        code=code("scripts/serve_heldout_comparison.py"),
    output:
        json=f"{SHARED}/serve_heldout_comparison.json",
    log:
        "build/logs/serve_heldout_comparison.log",
    conda:
        "../envs/lesson.yaml"
    script:
        "../scripts/serve_heldout_comparison.py"


# Prefix caching off and on, on workloads that share prefixes (scripts/serving/prefix_runs.py, issue 42): the lab's table.
rule serving_prefix:
    input:
        anchor=anchor_file,
        gpus="config/gpus.json",  # the anchor's GPU (hardware.gpu) is read from here
        workloads="config/workloads.json",  # the sweep's SLOs and the anchor's GPU name
        config="config/prefix.json",
        code=code("scripts/serving_prefix.py"),
    output:
        json=f"{PRE}/prefix.json",
    log:
        "build/logs/{anchor}/serving_prefix.log",
    conda:
        "../envs/lesson.yaml"
    script:
        "../scripts/serving_prefix.py"
