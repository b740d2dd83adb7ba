"""`make audit ANCHOR=anchors/<name>.json` audits that anchor's pages (issue 80: it audited the default page and
exited 0); without ANCHOR it audits the default page."""
import subprocess

from tests.conftest import ROOT


def dry_run(*args: str) -> str:
    out = subprocess.run(["make", "-n", "audit", *args], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_make_audit_passes_the_anchor_on():
    audit = [line for line in dry_run("ANCHOR=anchors/llama-2-7b-a100.json").splitlines() if "-m scripts.audit" in line]
    assert audit and audit[-1].endswith("-m scripts.audit --anchor anchors/llama-2-7b-a100.json")
    plain = [line for line in dry_run().splitlines() if "-m scripts.audit" in line]
    assert plain and plain[-1].rstrip().endswith("-m scripts.audit")
