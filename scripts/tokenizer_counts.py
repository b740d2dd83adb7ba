"""Rule tokenizer_counts: passages x pinned tokenizers -> tokenizer_counts.json (scripts/tokens/counts.py)."""
if "snakemake" in globals():  # run by Snakemake from scripts/: make the repo root importable
    import sys

    sys.path.insert(0, str(__import__("pathlib").Path(snakemake.scriptdir).parent))  # noqa: F821

from pathlib import Path

from scripts.record.atomic import write_json_atomic
from scripts.record.cli import run_cleanly
from scripts.tokens.counts import count

if "snakemake" in globals():
    sm = snakemake  # noqa: F821
    run_cleanly(lambda: write_json_atomic(sm.output.json, count(Path(sm.input.config), Path(sm.input.passages),
                                                                     Path(sm.input.proof))),
                log=sm.log[0])
