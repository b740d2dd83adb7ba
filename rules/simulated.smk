# Simulated serving under load: the sweep's cells, goodput and engine presets, the page's data (serving.json)
# and prefix caching off and on (prefix.json), all from the simulator (scripts/serving/).
# Paths in `script:` and `conda:` are relative to this file; inputs and outputs to the checkout.


# Serving under load: the cells of one (workload, schedule) of the default sweep, a file per rate per GPU (one job per
# curve: a cell takes about as long as starting a job).
rule simulate_cells:
    input:
        anchor=anchor_file,
        gpu=gpu_stamp,  # the anchor's GPU entry of config/gpus.json, read from there (gpu_stamp.py)
        workloads="config/workloads.json",
        code=code("scripts/simulate_cells.py"),
    output:
        cells=expand("build/{{anchor}}/serving/cells/{{workload}}/{{schedule}}/r{rate}.json",
                     rate=[rate_name(r) for r in SWEEP["rates_per_gpu"]]),
    log:
        "build/logs/{anchor}/simulate_cells.{workload}.{schedule}.log",
    conda:
        "../envs/lesson.yaml"
    script:
        "../scripts/simulate_cells.py"


# DistServe goodput of one (workload, schedule): the highest rate per GPU meeting the attainment target.
rule simulate_goodput:
    input:
        cells=expand("build/{{anchor}}/serving/cells/{{workload}}/{{schedule}}/r{rate}.json",
                     rate=[rate_name(r) for r in SWEEP["rates_per_gpu"]]),
        anchor=anchor_file,
        gpu=gpu_stamp,  # the anchor's GPU entry of config/gpus.json, read from there (gpu_stamp.py)
        workloads="config/workloads.json",
        code=code("scripts/simulate_goodput.py"),
    output:
        json="build/{anchor}/serving/goodput/{workload}/{schedule}.json",
    log:
        "build/logs/{anchor}/simulate_goodput.{workload}.{schedule}.log",
    conda:
        "../envs/lesson.yaml"
    script:
        "../scripts/simulate_goodput.py"


# DistServe goodput of every engine preset at one set of step times (the roofline bound or the anchor's realistic
# ones), and of every P/D split for the page's workload; at the bound the lesson's schedules come from the sweep.
rule simulate_engines:
    input:
        goodput=lambda w: expand("build/{anchor}/serving/goodput/{workload}/{schedule}.json", anchor=w.anchor,
                                 workload=w.workload, schedule=SWEEP["schedules"]) if w.step_time == "bound" else [],
        anchor=anchor_file,
        gpu=gpu_stamp,  # the anchor's GPU entry of config/gpus.json, read from there (gpu_stamp.py)
        workloads="config/workloads.json",
        code=code("scripts/simulate_engines.py"),
    output:
        json="build/{anchor}/serving/engines/{workload}/{step_time}.json",
    log:
        "build/logs/{anchor}/simulate_engines.{workload}.{step_time}.log",
    conda:
        "../envs/lesson.yaml"
    script:
        "../scripts/simulate_engines.py"


# The sweep's metrics, per-request TTFT/TPOT and DistServe goodput, for the page.
rule simulate_sweep:
    input:
        cells=expand("build/{{anchor}}/serving/cells/{workload}/{schedule}/r{rate}.json", workload=WORKLOADS,
                     schedule=SWEEP["schedules"], rate=[rate_name(r) for r in SWEEP["rates_per_gpu"]]),
        goodput=expand("build/{{anchor}}/serving/goodput/{workload}/{schedule}.json", workload=WORKLOADS,
                       schedule=SWEEP["schedules"]),
        engines=expand("build/{{anchor}}/serving/engines/{workload}/{step_time}.json", workload=WORKLOADS,
                       step_time=SWEEP["step_times"]),
        anchor=anchor_file,
        gpu=gpu_stamp,  # the anchor's GPU entry of config/gpus.json, read from there (gpu_stamp.py)
        workloads="config/workloads.json",
        code=code("scripts/simulate_sweep.py"),
    output:
        json=f"{PRE}/serving.json",
    log:
        "build/logs/{anchor}/simulate_sweep.log",
    conda:
        "../envs/lesson.yaml"
    script:
        "../scripts/simulate_sweep.py"


# Prefix caching off and on, on workloads that share prefixes (scripts/serving/experiments/prefix_runs.py, issue 42): the lab's table.
rule simulate_prefix:
    input:
        anchor=anchor_file,
        gpu=gpu_stamp,  # the anchor's GPU entry of config/gpus.json, read from there (gpu_stamp.py)
        workloads="config/workloads.json",  # the sweep's SLOs and the anchor's GPU name
        config="config/prefix.json",
        code=code("scripts/simulate_prefix.py"),
    output:
        json=f"{PRE}/prefix.json",
    log:
        "build/logs/{anchor}/simulate_prefix.log",
    conda:
        "../envs/lesson.yaml"
    script:
        "../scripts/simulate_prefix.py"
