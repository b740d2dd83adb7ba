"""Validate every committed input before Snakemake schedules anything (the Snakefile calls `check_all`).

Each problem is one line naming the file and the field; nothing is built, nothing is touched.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

from scripts.record import schema
from scripts.record.anchor_file import load, load_gpus, load_techniques
from scripts.record.inputs import InputError, bad_character, check_questions, read_text
from scripts.record.schema import read_config

# The cited numbers the kit's code reads by id, and those it divides by (scripts/lesson/precomputed.py).
CITED_READ = ("cited.course.gpt2_tokens", "cited.course.qwen_tokens")
CITED_DENOMINATORS = ("cited.course.qwen_tokens",)
TEMPLATES = ("templates/index.html.j2", "templates/bench_section.html.j2", "templates/provenance.html.j2",
             "templates/lesson.js", "templates/lesson.css", "templates/lab.html.j2", "templates/validation.html.j2",
             "templates/page_base.html.j2", "templates/techniques_block.html.j2", "templates/lab/model/model.js",
             "templates/lab/model/tools.js", "templates/lab/model/readers.js",
             "templates/lab/model/kernel.wat", "templates/lab/model/gpu.js", "templates/lab/model/gpu.wgsl")


def check_cited(path: Path, templates: Path | None = None) -> dict:
    """Schema (types, keys, bounds), then: each number's work exists, ids are unique, every id the code or the
    templates name is present, and no denominator is zero."""
    doc, works = read_config(path, "works", schema.CITED)
    name = path.as_posix()
    seen = {}
    for i, entry in enumerate(doc["numbers"]):
        if entry["work_id"] not in works:
            raise InputError(f"{name}: field numbers[{i}].work_id names no entry of works ({', '.join(works)})")
        if entry["id"] in seen:
            raise InputError(f"{name}: field numbers[{i}].id repeats {entry['id']!r}")
        seen[entry["id"]] = entry
    named = set(CITED_READ)
    if templates is not None:
        for rel in TEMPLATES[:3]:
            named |= set(re.findall(r"cited\.[a-z0-9_]+\.[a-z0-9_]+", read_text(templates / Path(rel).name)))
    for rid in sorted(named - set(seen)):
        raise InputError(f"{name}: field numbers has no entry with id {rid!r} (the page or scripts/lesson/ names it)")
    for rid in CITED_DENOMINATORS:
        if seen[rid]["value"] <= 0:
            raise InputError(f"{name}: field numbers[{list(seen).index(rid)}].value must be > 0 ({rid} is a "
                             "denominator)")
    return doc


def check_course(path: Path, template: Path) -> dict:
    """config/course.json (scripts/page/render.course_links), and an entry for every link id the pages name (the
    lesson `template`, and every other page render.PAGES renders and the technique block beside it)."""
    from scripts.page.render import PAGES, course_links

    doc = course_links(path)
    others = [n for n in (*PAGES.values(), "techniques_block.html.j2") if n != template.name]  # every page rendered
    for page in (template, *(template.parent / n for n in others)):
        if not page.exists():
            continue
        for lid in sorted(set(re.findall(r"""link\(["']([^"']+)["']""", read_text(page))) - set(doc["links"])):
            raise InputError(f"{path.as_posix()}: field links has no entry {lid!r} (templates/{page.name} links to it)")
    return doc


def check_templates(root: Path) -> None:
    """The page's templates and static files (lesson.js's sections in templates/lesson/, the lab's parts in
    templates/lab/ and its model and kernel too): present, regular, UTF-8 without forbidden characters."""
    parts = sorted(p.relative_to(root).as_posix() for folder in ("lesson", "lab")
                   for p in (root / "templates" / folder).glob("*.js"))
    for rel in (*TEMPLATES, *parts):
        text = read_text(root / rel, max_bytes=2 * 1024 * 1024)
        for n, line in enumerate(text.splitlines(), 1):
            if (why := bad_character(line)) is not None:
                raise InputError(f"{rel}: line {n} contains a {why}")


def check_gpus_fit(path: Path, anchor) -> None:
    """Every GPU the page can switch to holds the anchor's weights and runtime reserve (else its readouts would
    show negative free memory)."""
    from dataclasses import replace

    from scripts.model import roofline as rl
    from scripts.model import sizes

    for gid, g in load_gpus(path)["gpus"].items():
        a = replace(anchor, hbm_bytes=g["hbm_bytes"]["value"])
        if rl.free_bytes_for_requests(a) <= 0:
            raise InputError(f"{path.as_posix()}: field gpus.{gid}.hbm_bytes.value ({a.hbm_bytes / 1e9:g} GB) cannot "
                             f"hold the anchor's weights ({sizes.weight_bytes_total(a) / 1e9:.1f} GB) plus the runtime "
                             "reserve")


def check_anchor_claims(path: Path, root: Path) -> None:
    """What the lesson says about the anchor on its GPU (scripts/lesson/precomputed.py's claims: the precomputed
    rule's own code, 0.1 s), settled before any rule runs: a claim a datasheet figure or a scenario field makes
    false stops here in one line, not after the simulations."""
    import hashlib
    import json

    from scripts.lesson.precomputed import build

    files = [path, *(root / "config" / n for n in ("gpus.json", "cited.json", "techniques.json", "workloads.json"))]
    key = hashlib.sha256(b"\0".join(f.read_bytes() for f in files)).hexdigest()
    if key in _CLAIMS_HOLD:  # these very inputs were settled already (a test suite checks many variants of others)
        return
    anchor, doc = load(path, root / "config" / "gpus.json")
    read = lambda name: json.loads((root / "config" / name).read_text(encoding="utf-8"))  # noqa: E731
    build(anchor, doc, read("cited.json"), load_gpus(root / "config" / "gpus.json"), path.relative_to(root).as_posix()
          if path.is_relative_to(root) else path.as_posix(), load_techniques(root / "config" / "techniques.json",
                                                                             root / "config" / "workloads.json"),
          read("workloads.json"))
    _CLAIMS_HOLD.add(key)


_CLAIMS_HOLD: set[str] = set()  # the inputs' digests whose claims held


def check_anchor(path: str | Path, root: Path = Path(".")) -> None:
    """Another anchor (`make site ANCHOR=<file>`, every anchors/*.json for `make anchors`): a name the kit can
    publish, the anchor schema, and the GPU table and the workloads it must take."""
    from scripts.record.anchors import check_stem

    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: no such anchor file (the anchors are in anchors/)")
    check_stem(path)
    anchor, _ = load(path, root / "config" / "gpus.json")
    check_gpus_fit(root / "config" / "gpus.json", anchor)
    check_workloads_fit(root / "config" / "workloads.json", anchor)
    check_anchor_claims(path, root)


def check_all(root: Path = Path(".")) -> None:
    from scripts.bench.records import load_cluster_config, read_record
    from scripts.page.lab import read_lab
    from scripts.record.vendor import load_entry
    from scripts.serving.experiments.prefix_runs import load as load_prefix
    from scripts.serving.measures.results import load_result
    from scripts.tokens.counts import load_passages
    from scripts.tokens.files import load_config

    anchor, _ = load(root / "anchor-model.json", root / "config" / "gpus.json")
    check_templates(root)
    check_cited(root / "config" / "cited.json", root / "templates")
    check_gpus_fit(root / "config" / "gpus.json", anchor)
    load_techniques(root / "config" / "techniques.json", root / "config" / "workloads.json")
    load_prefix(root / "config" / "prefix.json")
    load_entry(root / "config" / "vendor.json", "vega")
    heal_vendor_cache(root)
    load_cluster_config(root / "config" / "cluster.yaml")
    tokenizers = load_config(root / "config" / "tokenizers.json")
    heal_tokenizer_cache(root, tokenizers)
    check_questions(root / "questions" / "C13-L5.md")
    check_course(root / "config" / "course.json", root / "templates" / "index.html.j2")
    read_lab(root / "config" / "lab.json")
    load_passages(root / "config" / "passages.json")
    for record in sorted((root / "precomputed" / "bench").glob("*.json")):
        read_record(record, record.relative_to(root).as_posix())
    check_workloads_fit(root / "config" / "workloads.json", anchor)
    for result in sorted((root / "precomputed" / "serve").glob("*.json")):
        load_result(result)
    check_anchor_claims(root / "anchor-model.json", root)


def heal_tokenizer_cache(root: Path, tokenizers: dict) -> None:
    """A cached tokenizer file that is missing or fails its pinned sha256 invalidates its stamp, so the build
    fetches it again (rather than failing on every run until someone deletes the stamp by hand)."""
    from scripts.tokens.files import cached_file, sha256_file

    for tid, entry in tokenizers["tokenizers"].items():
        stamp = root / ".cache" / "tokenizers" / tid / "verified.json"
        for inner, digest in entry["files"].items():
            cached = root / cached_file(tid, inner)
            bad = "missing" if not cached.is_file() else ("tampered" if sha256_file(cached) != digest else None)
            if bad and stamp.exists():
                stamp.unlink()
                cached.unlink(missing_ok=True)
                print(f"note: {cached.relative_to(root).as_posix()} is {bad} (sha256 pinned in config/tokenizers.json):"
                      f" fetching {tid} again", file=sys.stderr)


def heal_vendor_cache(root: Path) -> None:
    """A cached runtime that fails its pinned sha256 (edited, emptied, appended to) is removed, so the build
    fetches it again: the page never ships a file other than the pinned one."""
    from scripts.record.vendor import load_entry
    from scripts.tokens.files import sha256_file

    cached = root / ".cache" / "vendor" / "vega.min.js"
    if cached.is_file() and sha256_file(cached) != load_entry(root / "config" / "vendor.json", "vega")["file_sha256"]:
        cached.unlink()
        print(f"note: {cached.relative_to(root).as_posix()} fails its sha256 (pinned in config/vendor.json): fetching "
              "it again", file=sys.stderr)


def check_workloads_fit(path: Path, anchor) -> None:
    """Every workload, fitted to the model's context (serving/workloads/config.fit_to_context), has its longest request
    fit that context and, alone, the GPU's free memory, and some request of two output tokens or more (a TPOT)."""
    from scripts.model import roofline as rl
    from scripts.serving.workloads.config import workloads_for

    for wid, w in workloads_for(path, anchor)["workloads"].items():
        long = w.get("long_prompts", {}).get("prompt_tokens", {})
        longest = max(w["prompt_tokens"].get("max", 0), long.get("max", 0))
        total = longest + w["output_tokens"].get("max", 0)
        field = f"{path.as_posix()}: field workloads.{wid}"
        if not all("max" in spec for spec in (w["prompt_tokens"], w["output_tokens"])):
            raise InputError(f"{field}.prompt_tokens/output_tokens need a max (the simulator must bound requests)")
        if w["output_tokens"]["max"] < 2:  # vLLM's TPOT counts the gaps after the first token
            raise InputError(f"{field}.output_tokens.max ({w['output_tokens']['max']}) must be at least 2: with one "
                             "output token no request has a TPOT, and the load experiment's targets are on TPOT")
        if total > anchor.max_position_embeddings:
            raise InputError(f"{field}: longest request {total} tokens exceeds the model's context "
                             f"({anchor.max_position_embeddings})")
        if rl.bytes_per_request(anchor, total) > rl.free_bytes_for_requests(anchor):
            raise InputError(f"{field}: longest request ({total} tokens) does not fit the GPU's free memory")


def main(argv: list[str] | None = None) -> int:
    """`python -m scripts.audit.inputs [ANCHOR...]`: every input checked, and each other anchor named; 0, or 2 and
    one line naming the file and field."""
    try:
        check_all()
        for anchor in sys.argv[1:] if argv is None else argv:
            check_anchor(anchor)
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
