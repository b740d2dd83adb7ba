"""Whole-kit checks that sit above every other package: every input validated before Snakemake schedules anything
(inputs.check_all), and the audit of the built page against its provenance (report; `python -m scripts.audit`).

Only the Snakefile, `make` and the tests import it: it may read anything and builds nothing.
May import: common, model, record, serving, lesson, tokens, bench, page, realengine.
"""
