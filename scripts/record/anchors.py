"""Which anchors a build knows and where each one's outputs live: one name per anchor, one directory per name.

The default anchor is anchor-model.json, named `default`; every anchors/<name>.json is named by its stem; a file
passed as Snakemake config (`--config anchor=<path>`, what `make site ANCHOR=<path>` does) is named by its stem and
takes the place of an anchors/ file of the same name. Anchor-dependent outputs go under build/<name>/ (precomputed/,
serving/, site/, logs under build/logs/<name>/); the outputs every anchor shares (tokenizer counts, benchmark medians,
real serving results) are made once, under build/shared/. The default's build/default/precomputed/ and
build/default/site/ are published as precomputed/ and site/, another anchor's site as site/<name>/.
"""
from __future__ import annotations

import re
from pathlib import Path

from scripts.record.inputs import InputError

DEFAULT = "default"
DEFAULT_FILE = "anchor-model.json"
SHARED = "build/shared"
# Names the default site uses at its top level (scripts/page/render.py, rules/page.smk's render_site outputs), the
# build's own directories under build/, and what publish stages: an anchor with one of these names would overwrite
# part of the default page or another rule's outputs.
RESERVED = {"index.html", "lesson.js", "lesson-data.js", "serving-data.js", "serving-sim.js", "prefix-data.js",
            "vega.min.js",
            "robots.txt", "provenance.html", "source", "report.html", DEFAULT, "shared", "logs", "bench", "tokenizers",
            "anchors"}
STEM = re.compile(r"^[a-z0-9](?:[a-z0-9-]|\.(?=[a-z0-9]))*$")


def check_stem(anchor: Path) -> str:
    """The anchor's file stem, which names build/<stem>/ and site/<stem>/: lower-case letters, digits, '-' and inner
    '.', not a name the default site or the build uses, not ending in a web file's extension."""
    anchor = Path(anchor)
    stem = anchor.stem
    if anchor.suffix != ".json" or not STEM.match(stem) or len(stem) > 64:
        raise InputError(f"{anchor}: an anchor file is <name>.json with <name> of lower-case letters, digits, '-' and "
                         "inner '.' (it names site/<name>/)")
    if stem in RESERVED or stem.endswith((".html", ".js", ".json", ".txt", ".css", ".new", ".old")):
        raise InputError(f"{anchor}: the name {stem!r} is one the kit uses itself (site/{stem} or build/{stem}); "
                         "rename the file")
    return stem


def anchor_files(root: Path = Path("."), extra: str | None = None) -> dict[str, str]:
    """name -> anchor file (as given, relative to the checkout when it is inside it): the default, every
    well-named anchors/*.json, and `extra` (Snakemake's config["anchor"]) when given. A badly named file in
    anchors/ is left out here and refused by name when it is asked for."""
    files = {DEFAULT: DEFAULT_FILE}
    for path in sorted((Path(root) / "anchors").glob("*.json")):
        try:
            files[check_stem(path)] = f"anchors/{path.name}"
        except InputError:
            continue
    if extra:
        files[check_stem(Path(extra))] = extra
    return files


def anchor_names(root: Path = Path(".")) -> list[str]:
    """The anchors in anchors/ (the default aside)."""
    return [name for name in anchor_files(root) if name != DEFAULT]


def data_dir(name: str) -> Path:
    """An anchor's data, whole (its own files and copies of the shared ones): build/<name>/precomputed."""
    return Path("build") / name / "precomputed"


def site_dir(name: str) -> Path:
    """An anchor's page: build/<name>/site."""
    return Path("build") / name / "site"
