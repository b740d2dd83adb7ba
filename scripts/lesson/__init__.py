"""Assembles the lesson's data document (precomputed.json): constants, tables, the technique switches and a provenance
record per number.

Pure: takes the validated anchor and cited numbers, returns a dict; the rule's entry script does the writing.
May import: common, model, record.
"""
