"""The lesson page, the top of the kit: Altair/Vega-Lite chart specs, Jinja rendering, and reading numbers back out.

Text in, HTML out: it never validates inputs or publishes files (record/ does) and never computes a lesson number.
May import: common, model, record, serving, lesson, bench.
"""
