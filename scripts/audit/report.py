"""Audit the built page: every number shown resolves to a provenance record, and every record holds up.

  python -m scripts.audit [--site site] [--data precomputed]        (what `make audit` and CI run)

Regenerates nothing. Checks, each reported with what failed and where:
  1. numbers   every number in the pages' text (the lesson, index.html; its lab, lab.html; the validation report,
               validation.html) and chart titles sits in a [data-prov] element whose record exists
  2. derived   each derived record names its derivation, formula and inputs; recomputing it as its derivation says
               gives the shown value
  2b. embedded the page's data (lesson-data.js) (what its sliders compute from) equals, byte for byte, the same
               document rebuilt from precomputed/ (a hand-edited constant in the page cannot pass)
  3. measured  each measured record names machine, date, runs and spread; its file's sha256 matches the manifest
  4. simulated each simulated record names seed, requests, workload, schedule, rate and script; re-running that
               simulation (scripts/serving/) gives the shown value; an engine preset's goodput is bracketed by two
               simulations (it meets the attainment target, its search's first miss does not)
  5. cited     every record is a well-formed record of its kind (scripts/record/provenance.Record): a cited one
               names work, version and place and says whether it is self-reported, an assumed one its assumption
  5b. claims   every qualitative claim the page makes (precomputed/*.json "claims") still holds over the records
  6. manifest  every hash in precomputed/MANIFEST.json matches its file (stale files are named)
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from scripts.audit.embedded import check_embedded, check_numbers, page_specs
from scripts.audit.recompute import (
    CHECKS,
    cached_anchor,
    check_calibrated,
    check_derived,
    check_manifest,
    check_measured,
    check_records,
)
from scripts.audit.simulated import check_simulated
from scripts.audit.words import check_words
from scripts.page.reading import PAGES as READING_PAGES
from scripts.page.scan import page_numbers
from scripts.record.anchors import check_stem, data_dir
from scripts.record.inputs import InputError


def load_records(data: Path, site: Path | None = None) -> dict:
    """Every record of precomputed/, and (given the site) the records the render counted from the pages
    themselves (their reading time: lesson-data.js window.C13_PAGE_PROV)."""
    from scripts.page.bundles import DATA_SCRIPT, read_page_records

    records = {}
    for name in ("precomputed.json", "tokenizer_counts.json", "bench_medians.json", "measured_records.json",
                 "serving.json", "prefix.json"):
        path = data / name
        if path.exists():
            records.update(json.loads(path.read_text(encoding="utf-8")).get("provenance", {}))
    if site is not None and (site / DATA_SCRIPT).exists():
        records.update(read_page_records((site / DATA_SCRIPT).read_text(encoding="utf-8")))
    return records












































def check_claims(data: Path, records: dict) -> list[str]:
    from scripts.record.claims import failures

    claims = []
    for path in sorted(data.glob("*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        claims += doc.get("claims", []) if isinstance(doc, dict) else []
    return failures(claims, records)








def audit(site: Path, data: Path, root: Path, resimulate: bool = True, anchor: Path | None = None) \
        -> dict[str, list[str]]:
    """Every check over one anchor's page (`site`) and data (`data`); `anchor` is its file (anchor-model.json by
    default)."""
    anchor = anchor or root / "anchor-model.json"
    index = site / "index.html"
    if not index.exists():
        return {"numbers": [f"{index} is missing: run `make site` first"]}
    records = load_records(data, site)
    manifest_path = data / "MANIFEST.json"
    manifest = json.loads(manifest_path.read_text(encoding="utf-8")) if manifest_path.exists() else {}
    derived, skipped = check_derived(records, root, anchor, site)
    pages = [index, *(site / name for name in READING_PAGES.values() if name != index.name)]
    missing = [f"{p} is missing: run `make site` first" for p in pages if not p.exists()]
    numbers = missing + [f"{p.name} {problem}" for p in pages if p.exists() for problem in
                         check_numbers(p.read_text(encoding="utf-8"), records, page_specs(site) if p == index else "")]
    results = {
        "numbers": numbers,
        "words": check_words(pages, cached_anchor(anchor)[0], cached_anchor(anchor)[1]["model"]["name"]["value"],
                             root),
        "embedded": check_embedded(site, data),
        "derived": derived,
        "measured": check_measured(records, manifest, root),
        "simulated": check_simulated(records, root, resimulate, anchor),
        "calibrated": check_calibrated(records, root, anchor, resimulate),
        "claims": check_claims(data, records),
        "cited": [],
        "manifest": check_manifest(manifest, root, data) if manifest else [f"{manifest_path} is missing"],
    }
    for kind, found in check_records(records).items():
        results[kind] = results[kind] + found
    results["_counts"] = {"records": len(records), "derived_not_recomputed": skipped,
                          "numbers_on_page": sum(len(page_numbers(p.read_text(encoding="utf-8"))) for p in pages
                                                 if p.exists())}
    return results


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--site", type=Path, default=None, help="default: site/, or site/<name>/ with --anchor")
    ap.add_argument("--data", type=Path, default=None,
                    help="default: precomputed/, or build/<name>/precomputed/ with --anchor")
    ap.add_argument("--root", type=Path, default=Path("."))
    ap.add_argument("--no-resimulate", action="store_true",
                    help="check simulated records' fields and seeds but do not re-run their simulations (~20 s)")
    ap.add_argument("--anchor", type=Path, default=None,
                    help="another anchor's file (anchors/<name>.json): audits its page site/<name>/ and its data")
    args = ap.parse_args(argv)
    try:
        name = check_stem(args.anchor) if args.anchor else None
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    args.site = args.site or (args.root / "site" / name if name else args.root / "site")
    args.data = args.data or (args.root / data_dir(name) if name else args.root / "precomputed")
    results = audit(args.site, args.data, args.root, resimulate=not args.no_resimulate, anchor=args.anchor)
    counts = results.pop("_counts", {})
    print(f"{'check':<10} {'result':<8} problems")
    for check in CHECKS:
        problems = results.get(check, [])
        print(f"{check:<10} {'ok' if not problems else 'FAIL':<8} {len(problems)}")
    if counts:
        print(f"({counts['numbers_on_page']} numbers on the pages, {counts['records']} provenance records, "
              f"{counts['derived_not_recomputed']} derived records checked by the tokenizer tests instead)")
    failed = [(c, p) for c in CHECKS for p in results.get(c, [])]
    for check, problem in failed[:50]:
        print(f"  {check}: {problem}")
    if len(failed) > 50:
        print(f"  … and {len(failed) - 50} more")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
