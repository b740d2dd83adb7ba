"""Which library files a rule's entry script depends on, read from its imports (so the Snakefile cannot drift).

A rule's code inputs are its entry script plus every `scripts.*` module it reaches through imports, directly
or through other modules (lazy imports inside functions count), with each package's `__init__.py` and any data
file a reached module names by file name (the anchor schema). Editing a module reruns exactly the rules whose
scripts reach it, and nothing else.
"""
from __future__ import annotations

import ast
import hashlib
from functools import cache
from pathlib import Path

from scripts.record import memo

ROOT = Path(__file__).resolve().parents[2]


def _module_file(module: str) -> Path | None:
    base = ROOT.joinpath(*module.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


# What a file imports and which .json names it holds, by the sha256 of its text (scripts/record/memo.py): parsing the
# kit's ~110 modules took about 0.8 s of every Snakemake start (issue 61); a file is parsed again only when its
# text changes.
PARSED = "deps"


@cache  # one parse per file per process: the Snakefile asks for every rule's code, and rules share modules
def _imports_and_names(path: Path) -> tuple[frozenset[str], frozenset[str]]:
    """`scripts.*` modules named by import statements anywhere in the file, and its string literals that name a
    .json file."""
    text = path.read_text(encoding="utf-8")
    name = hashlib.sha256(text.encode("utf-8")).hexdigest()
    found = memo.read(PARSED, name)
    if isinstance(found, list) and len(found) == 2:
        return frozenset(found[0]), frozenset(found[1])
    modules, strings = _parse(text, path)
    memo.write(PARSED, name, [sorted(modules), sorted(strings)])
    return modules, strings


def _parse(text: str, path: Path) -> tuple[frozenset[str], frozenset[str]]:
    modules, strings = set(), set()
    for node in ast.walk(ast.parse(text, filename=str(path))):
        if isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            modules.add(node.module)
            modules.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.endswith(".json"):
            strings.add(node.value)
    return frozenset(m for m in modules if m.startswith("scripts.")), frozenset(strings)


@cache
def _json_files(folder: Path) -> tuple[Path, ...]:
    return tuple(folder.rglob("*.json"))


def _with_parents(path: Path) -> list[Path]:
    """A module and the `__init__.py` of every package above it, which Python imports first."""
    out = [path]
    for parent in path.relative_to(ROOT).parents:
        init = ROOT / parent / "__init__.py"
        if parent.parts and parent.parts[0] == "scripts" and init.is_file():
            out.append(init)
    return out


@cache
def code_inputs(script: str) -> tuple[str, ...]:
    """`script` (relative to the repo root) and every file it reaches, relative to the repo root, sorted."""
    seen: set[Path] = set()
    todo = [ROOT / script]
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        modules, strings = _imports_and_names(path)
        for module in modules:
            target = _module_file(module)
            if target:
                todo.extend(p for p in _with_parents(target) if p not in seen)
        data = [p for p in _json_files(path.parent) if p.name in strings]  # e.g. the anchor schema
        seen.update(data)
    return tuple(sorted(p.relative_to(ROOT).as_posix() for p in seen))
