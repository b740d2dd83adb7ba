"""Rule manifest: sha256 of every input, script and output, plus tool versions (scripts/record/manifest.py)."""
if "snakemake" in globals():  # run by Snakemake from scripts/: make the repo root importable
    import sys

    sys.path.insert(0, str(__import__("pathlib").Path(snakemake.scriptdir).parent))  # noqa: F821

from scripts.record.atomic import write_json_atomic
from scripts.record.cli import run_cleanly
from scripts.record.manifest import build

if "snakemake" in globals():
    inp = snakemake.input  # noqa: F821
    groups = {"outputs": list(inp.data), "inputs": [inp.anchor, *inp.sources], "scripts": list(inp.helpers)}
    published = str(__import__("pathlib").Path(snakemake.output.json).parent)  # noqa: F821  (build/<anchor>/precomputed)
    run_cleanly(lambda: write_json_atomic(snakemake.output.json, build(groups, published)),  # noqa: F821
                log=snakemake.log[0])  # noqa: F821
