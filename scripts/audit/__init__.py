"""Whole-kit checks that sit above every other package: every input validated before Snakemake schedules anything
(inputs.check_all), and the audit of the built page against its provenance (report; `python -m scripts.audit`),
whose checks live by what they check: embedded.py (the numbers on the pages, the data they embed), recompute.py
(derived, measured, calibrated, cited records and the manifest), simulated.py (re-simulation), words.py.

Only the Snakefile, `make` and the tests import it: it may read anything and builds nothing.
May import: common, model, record, serving, lesson, tokens, bench, page, realengine.
"""
