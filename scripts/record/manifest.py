"""The manifest: sha256 of every input, script and output, and the versions of the tools that made them."""


import hashlib
import platform
from importlib import metadata
from pathlib import Path

TOOLS = ("snakemake", "numpy", "pandas", "tokenizers", "torch", "altair", "jinja2", "vl-convert-python", "jsonschema")


def sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _published(path: str, prefix: str) -> str:
    return "precomputed/" + path[len(prefix):] if path.startswith(prefix) else path


def build(groups: dict[str, list[str]], data_dir: str) -> dict:
    """The manifest of one anchor's data (`data_dir`, its outputs listed as precomputed/<name>, where publish puts
    the default's)."""
    prefix = data_dir.rstrip("/") + "/"
    return {
        "schema_version": 1,
        "python": platform.python_version(),
        "tools": {name: metadata.version(name) for name in TOOLS},
        # outputs are listed under the committed names they are published to (scripts/record/publish.py)
        **{group: {_published(p, prefix): sha256(Path(p)) for p in sorted(paths)} for group, paths in groups.items()},
    }
