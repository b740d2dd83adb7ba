# Shared by every rules/*.smk: the input check before scheduling, the settings read from config/, the wildcard
# constraints and `code()`, a rule's code inputs (its entry script and every library module it imports, read from the
# imports by scripts/record/deps.py, so the rules cannot drift from the code).
import glob
import os
import re
import sys

from scripts.audit.inputs import check_all, check_anchor
from scripts.common.names import SCHEDULES
from scripts.record.deps import code_inputs
from scripts.record.anchors import DEFAULT, SHARED, anchor_files, data_dir, site_dir
from scripts.record.gpu_stamp import stamp_path, write_stamp
from scripts.record.inputs import InputError
from scripts.bench.records import check_cluster_config, load_cluster_config
from scripts.serving.workloads.config import STEP_TIMES, load_workloads, rate_name, sweep_settings
from scripts.record.snakemake_compat import quote_script_interpreter

quote_script_interpreter()  # a checkout path with a space must still run every `script:` rule


# A dry run (-n) reads the inputs it needs and nothing more: no check, no healing of the caches (which deletes a
# tampered file). Every real run checks first; `make` checks before Snakemake starts (scripts/record/build_lock.py).
DRY_RUN = bool(getattr(workflow.output_settings, "dryrun", False))

try:  # validate every input before scheduling anything: one line naming the file and the field, no traceback
    if not DRY_RUN:
        check_all()
        if config.get("anchor"):  # `make site ANCHOR=<file>`: that anchor is checked as the default is
            check_anchor(config["anchor"])
    # config/cluster.yaml (where `make bench-cluster` measures) is read by the kit's own loader, not `configfile:`
    # (which would parse YAML aliases before any check); --config values still override the file's.
    for key, value in load_cluster_config("config/cluster.yaml").items():
        config.setdefault(key, value)
    check_cluster_config({k: v for k, v in config.items() if k != "anchor"},  # `anchor`: scripts/record/anchors.py
                         "config/cluster.yaml (with --config overrides)")
except InputError as exc:
    sys.stderr.write(f"error: {exc}\n")
    os._exit(2)  # sys.exit would be caught and re-raised by Snakemake with a traceback

# Anchor-dependent outputs under build/{anchor}/ (scripts/record/anchors.py), shared ones under build/shared/.
ANCHOR_FILES = anchor_files(".", config.get("anchor"))  # name -> anchor file; `default` is anchor-model.json
PRE = data_dir("{anchor}").as_posix()  # one anchor's data: published as precomputed/ for the default
PAGE = site_dir("{anchor}").as_posix()  # one anchor's page: published as site/ (default) or site/<name>/
# Each anchor's GPU entry of config/gpus.json as build/<anchor>/gpu-entry.json, rewritten only when it changes
# (scripts/record/gpu_stamp.py): the rules that use only the anchor's GPU take it instead of config/gpus.json, so a
# GPU added or edited that the anchor does not run on reruns the page's rules, not the simulations. A dry run of
# unchecked inputs leaves a stamp it cannot write as it is.
for _name, _path in ANCHOR_FILES.items():
    try:
        write_stamp(_name, _path)
    except (InputError, KeyError, TypeError, OSError):
        if not DRY_RUN:
            raise
RULE_FILES = sorted(glob.glob("rules/*.smk"))  # hashed into the manifest with the Snakefile
TOKENIZERS = ["gpt2", "qwen3", "qwen3.5"]
BENCH_RECORDS = sorted(glob.glob("precomputed/bench/*.json"))  # measured on request (`make bench`), committed
WORKLOADS_DOC = load_workloads("config/workloads.json")  # validated above
SWEEP, WORKLOADS = sweep_settings(WORKLOADS_DOC), list(WORKLOADS_DOC["workloads"])
SERVE_RESULTS = sorted(glob.glob("precomputed/serve/*.json"))  # `vllm bench serve` results, committed
SERVE_CALIBRATIONS = sorted(glob.glob("precomputed/serve/calibration/*.json"))  # a real engine's step times
# earlier load calibrations kept when the load runs were measured again (another day for the held-out cells)
SERVE_ARCHIVED_CALIBRATIONS = sorted(glob.glob("precomputed/serve-archive/*/calibration/*.json"))
SERVE_PREFIX_RESULTS = sorted(glob.glob("precomputed/serve-prefix/*.json"))  # prefix-reuse runs (run.py --prefix)
SERVE_PREFIX_CALIBRATIONS = sorted(glob.glob("precomputed/serve-prefix/calibration/*.json"))  # their own calibration
# held-out cells (run.py --held-out --session N), one folder per session, and each session's calibration
SERVE_HELDOUT_RESULTS = sorted(glob.glob("precomputed/serve-heldout/session-*/*.json"))
SERVE_HELDOUT_CALIBRATIONS = sorted(glob.glob("precomputed/serve-heldout/session-*/calibration/*.json"))

wildcard_constraints:
    anchor="|".join(re.escape(name) for name in ANCHOR_FILES),
    workload="[A-Za-z0-9_]+",
    schedule="|".join(SCHEDULES),
    rate="[0-9.]+",
    step_time="|".join(STEP_TIMES),
    partition="[A-Za-z0-9_-]+",

localrules: all, data, anchors, bench_cluster, fetch_tokenizer  # fetch needs the registries, which cluster nodes may lack


def anchor_file(wildcards):
    """The anchor file of the build/{anchor}/ an output is under."""
    return ANCHOR_FILES[wildcards.anchor]


def gpu_stamp(wildcards):
    """The GPU entry of the anchor whose build/{anchor}/ an output is under (gpu_stamp.py)."""
    return stamp_path(wildcards.anchor).as_posix()


def code(rule_script):
    """The rule's entry script and every library file it imports."""
    return list(code_inputs(rule_script))
