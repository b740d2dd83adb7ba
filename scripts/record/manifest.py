"""The manifest: sha256 of every input, script and output, and the versions of the tools that made them."""


import hashlib
import platform
from importlib import metadata
from pathlib import Path

TOOLS = ("snakemake", "numpy", "pandas", "tokenizers", "torch", "altair", "jinja2", "vl-convert-python", "jsonschema")


def sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def build(groups: dict[str, list[str]]) -> dict:
    return {
        "schema_version": 1,
        "python": platform.python_version(),
        "tools": {name: metadata.version(name) for name in TOOLS},
        # outputs are listed under the committed names they are published to (scripts/record/publish.py)
        **{group: {p.replace("build/precomputed/", "precomputed/"): sha256(Path(p)) for p in sorted(paths)}
           for group, paths in groups.items()},
    }
