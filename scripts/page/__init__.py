"""The lesson page: number display, Altair/Vega-Lite chart specs, Jinja rendering, and reading numbers back out.

Text in, HTML out: it never validates inputs or publishes files (record/ does) and never computes a lesson number.
"""
