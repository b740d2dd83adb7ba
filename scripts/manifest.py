"""Snakemake script: sha256 of every input, script and output, and the versions of the tools that made them."""
if "snakemake" in globals():  # run by Snakemake from scripts/: make the repo root importable
    import sys

    sys.path.insert(0, str(__import__("pathlib").Path(snakemake.scriptdir).parent))  # noqa: F821


import hashlib
import platform
from importlib import metadata
from pathlib import Path

from scripts.io_atomic import write_json_atomic

TOOLS = ("snakemake", "numpy", "pandas", "tokenizers", "torch", "altair", "jinja2", "vl-convert-python", "jsonschema")


def sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def build(groups: dict[str, list[str]]) -> dict:
    return {
        "schema_version": 1,
        "python": platform.python_version(),
        "tools": {name: metadata.version(name) for name in TOOLS},
        # outputs are listed under the committed names they are published to (scripts/publish.py)
        **{group: {p.replace("build/precomputed/", "precomputed/"): sha256(Path(p)) for p in sorted(paths)}
           for group, paths in groups.items()},
    }


if "snakemake" in globals():
    inp = snakemake.input  # noqa: F821
    groups = {"outputs": list(inp.data), "inputs": list(inp.sources), "scripts": list(inp.helpers)}
    write_json_atomic(snakemake.output.json, build(groups))  # noqa: F821
