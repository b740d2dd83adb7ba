"""Rule render_site: the JSON + templates -> site/ (index.html, provenance.html, source/): scripts/page/site.py."""
if "snakemake" in globals():  # run by Snakemake from scripts/: make the repo root importable
    import sys

    sys.path.insert(0, str(__import__("pathlib").Path(snakemake.scriptdir).parent))  # noqa: F821

from scripts.page.site import render
from scripts.record.cli import run_cleanly

if "snakemake" in globals():
    sm = snakemake  # noqa: F821
    run_cleanly(lambda: render(sm.input, sm.output), log=sm.log[0])
