# C13-L5 lesson kit: one rule per artifact; read top to bottom as the table of contents.
# Rules write under build/ (Snakemake deletes a job's old outputs before it runs); `make site` then
# publishes build/precomputed/ into the committed precomputed/ only after every rule succeeded.
import os
import sys

sys.path.insert(0, workflow.basedir)
from scripts.anchor import InputError, load  # noqa: E402

try:  # validate before scheduling anything: one line naming the file and the field, no traceback
    load("anchor-model.json")
except InputError as exc:
    sys.stderr.write(f"error: {exc}\n")
    os._exit(2)  # sys.exit would be caught and re-raised by Snakemake with a traceback

BUILD = "build/precomputed"
MATH = ["scripts/anchor.py", "scripts/schemas/anchor-model.schema.json", "scripts/roofline.py",
        "scripts/timeline.py", "scripts/readouts.py", "scripts/provenance.py", "scripts/display.py",
        "scripts/io_atomic.py", "scripts/cli.py"]


rule all:
    input:
        "site/index.html",
        f"{BUILD}/MANIFEST.json",


rule data:
    input:
        f"{BUILD}/MANIFEST.json",


# Derived numbers: anchor model + cited figures -> constants, tables, provenance.
rule precomputed:
    input:
        anchor="anchor-model.json",
        cited="precomputed/cited.json",
        helpers=MATH,
    output:
        json=f"{BUILD}/precomputed.json",
    log:
        "build/logs/precomputed.log",
    conda:
        "envs/lesson.yaml"
    script:
        "scripts/gen_c13_precomputed.py"


# Hashes of every input, script and output, plus tool versions.
rule manifest:
    input:
        data=[f"{BUILD}/precomputed.json"],
        sources=["anchor-model.json", "precomputed/cited.json", "Snakefile", "requirements.txt"],
        helpers=MATH + ["scripts/gen_c13_precomputed.py", "scripts/manifest.py"],
    output:
        json=f"{BUILD}/MANIFEST.json",
    log:
        "build/logs/manifest.log",
    conda:
        "envs/lesson.yaml"
    script:
        "scripts/manifest.py"


# The static lesson page: Jinja template + Vega-Lite specs + the JSON; no network at view time.
rule site:
    input:
        data=f"{BUILD}/precomputed.json",
        questions="questions/C13-L5.md",
        templates=["templates/index.html.j2", "templates/lesson.js", "templates/lesson.css"],
        helpers=MATH + ["scripts/render_site.py", "scripts/charts.py"],
    output:
        html="site/index.html",
    log:
        "build/logs/site.log",
    conda:
        "envs/lesson.yaml"
    script:
        "scripts/render_site.py"
