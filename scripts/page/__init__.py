"""The lesson page, the top of the kit: Altair/Vega-Lite chart specs, Jinja rendering, and reading numbers back out.

Text in, HTML out: it never validates inputs or publishes files (record/ does) and never computes a lesson number.
By role: render.py (the pages from the data: the CSP, the context, the two passes), jinja.py (the environment, the
markdown, the build's stamp), bundles.py (the data scripts and the JS bundles joined from templates/), charts.py and
vega.py (the specs, compiled and their boxes sized), provenance_page.py, lab.py (the lab's settings and its model's
build), reading.py (reading time), scan.py (numbers read back out of a page), site.py (the rule's entry).
May import: common, model, record, serving, lesson, bench.
"""
