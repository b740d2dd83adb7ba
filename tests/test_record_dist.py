"""`make dist`: the deployable site as a reproducible archive with checksums; the CI and Pages workflows lint clean."""
import gzip
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tarfile

import pytest

from scripts.record.dist import PREFIX, archive_bytes, sha256sums, site_files
from tests.conftest import ROOT

SITE = ROOT / "site"


@pytest.fixture
def two_copies(tmp_path):
    if not (SITE / "index.html").exists():
        pytest.fail("site/index.html is missing: run `make site` first")
    a, b = tmp_path / "a", tmp_path / "b"
    shutil.copytree(SITE, a)
    shutil.copytree(SITE, b)
    for i, path in enumerate(sorted(b.rglob("*"))):  # other mtimes and modes: the archive must not care
        os.utime(path, (1_000_000 + i, 1_000_000 + i))
        if path.is_file():
            path.chmod(0o600)
    return a, b


def test_same_site_same_bytes_whatever_the_file_metadata(two_copies):
    a, b = two_copies
    assert archive_bytes(a, 1_700_000_000) == archive_bytes(b, 1_700_000_000)
    assert archive_bytes(a, 1_700_000_000) != archive_bytes(a, 1_700_000_001)  # the epoch is really used


def test_entries_are_sorted_owned_by_root_and_stamped_with_the_epoch(two_copies):
    a, _ = two_copies
    data = archive_bytes(a, 1_700_000_000)
    assert data[4:8] == b"\0\0\0\0"  # gzip header mtime 0
    with tarfile.open(fileobj=__import__("io").BytesIO(gzip.decompress(data))) as tar:
        members = tar.getmembers()
    names = [m.name for m in members]
    assert names == sorted(names) and all(n.startswith(f"{PREFIX}/") for n in names)
    assert all((m.uid, m.gid, m.uname, m.gname, m.mtime) == (0, 0, "", "", 1_700_000_000) for m in members)
    assert f"{PREFIX}/index.html" in names and f"{PREFIX}/report.html" not in names
    assert not any(n.rsplit("/", 1)[-1].startswith(".") for n in names)
    files = {m.name: m for m in members if m.isfile()}
    assert len(files) == len(site_files(a))


def test_sha256sums_cover_every_file_and_the_archive(tmp_path, two_copies):
    a, _ = two_copies
    data = archive_bytes(a, 1_700_000_000)
    sums = sha256sums(a, "x.tar.gz", data)
    (tmp_path / "x.tar.gz").write_bytes(data)
    (tmp_path / "SHA256SUMS").write_text(sums)
    with tarfile.open(tmp_path / "x.tar.gz") as tar:
        tar.extractall(tmp_path, filter="data")
    check = subprocess.run(["sha256sum", "-c", "SHA256SUMS"], cwd=tmp_path, capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    assert sums.count("\n") == len(site_files(a)) + 1
    assert sums.splitlines()[-1] == f"{hashlib.sha256(data).hexdigest()}  x.tar.gz"
    (tmp_path / PREFIX / "index.html").write_text("tampered")
    assert subprocess.run(["sha256sum", "-c", "--quiet", "SHA256SUMS"], cwd=tmp_path, capture_output=True).returncode


def committed_site(tmp_path) -> tuple:
    """A git repository with one commit and a copy of the built site whose pages name that commit, as make dist
    leaves them after rendering at HEAD: (the repository, its site/)."""
    repo = tmp_path / "repo"
    repo.mkdir()
    env = {**os.environ, "GIT_AUTHOR_DATE": "2026-12-07T00:00:00Z", "GIT_COMMITTER_DATE": "2026-12-07T00:00:00Z"}
    who = ["-c", "user.name=t", "-c", "user.email=t@t"]
    for args in (["init", "-q"], [*who, "commit", "-q", "--allow-empty", "-m", "x"]):
        subprocess.run(["git", *args], cwd=repo, check=True, env=env)
    (repo / ".gitignore").write_text("site/\ndist/\n", encoding="utf-8")
    subprocess.run(["git", "add", ".gitignore"], cwd=repo, check=True)
    subprocess.run(["git", *who, "commit", "-q", "-m", "ignore"], cwd=repo, check=True, env=env)
    head = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=repo, capture_output=True,
                          text=True).stdout.strip()
    shutil.copytree(SITE, repo / "site")
    for page in (repo / "site").rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        page.write_text(re.sub(r'data-meta="commit">[^<]*<', f'data-meta="commit">{head}<', text), encoding="utf-8")
    return repo, repo / "site"


def dist(repo, *args):
    return subprocess.run([sys.executable, "-m", "scripts.record.dist", *args], cwd=repo, capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})


def test_make_dist_twice_gives_the_same_bytes(tmp_path):
    repo, _ = committed_site(tmp_path)
    outs = []
    for name in ("one", "two"):
        run = dist(repo, "--out", str(tmp_path / name))
        assert run.returncode == 0, run.stderr
        outs.append({p.name: p.read_bytes() for p in (tmp_path / name).iterdir()})
    assert outs[0] == outs[1] and len(outs[0]) == 2 and "SHA256SUMS" in outs[0]


def test_make_dist_refuses_uncommitted_changes_and_pages_from_another_commit(tmp_path):
    """An archive named for a commit holds what that commit builds: a dirty tree is refused before anything is
    built (--check-clean, make dist's first step), and a page stamped with another commit is refused by name."""
    repo, site = committed_site(tmp_path)
    (repo / "notes.txt").write_text("draft", encoding="utf-8")
    for args in (["--check-clean"], ["--out", str(tmp_path / "d")]):
        run = dist(repo, *args)
        assert run.returncode == 2 and "uncommitted change(s) (first: notes.txt)" in run.stderr, run.stderr
    (repo / "notes.txt").unlink()
    assert dist(repo, "--check-clean").returncode == 0
    lab = site / "lab.html"
    lab.write_text(re.sub(r'data-meta="commit">[^<]*<', 'data-meta="commit">0123456789ab<', lab.read_text(
        encoding="utf-8")), encoding="utf-8")
    run = dist(repo, "--out", str(tmp_path / "d"))
    assert run.returncode == 2 and "site/lab.html (built at 0123456789ab) is not from HEAD" in run.stderr, run.stderr
    assert not (tmp_path / "d").exists()


def actionlint(*paths):
    return subprocess.run([str(ROOT / ".venv" / "bin" / "actionlint"), "-color=false", *map(str, paths)],
                          capture_output=True, text=True)


def test_workflows_pass_actionlint_and_pin_their_actions():
    workflows = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
    assert {w.name for w in workflows} == {"ci.yml", "pages.yml"}
    run = actionlint(*workflows)
    assert run.returncode == 0, run.stdout + run.stderr
    import re

    for w in workflows:
        for action in re.findall(r"uses:\s*(\S+)", w.read_text()):
            assert re.search(r"@v\d+\.\d+\.\d+$", action), f"{w.name}: {action} is not pinned to a version"
    pages = (ROOT / ".github" / "workflows" / "pages.yml").read_text()
    for needed in ("pages: write", "id-token: write", "actions/upload-pages-artifact@", "actions/deploy-pages@",
                   "group: pages", "cancel-in-progress: false", "github-pages"):
        assert needed in pages, needed
    ci = (ROOT / ".github" / "workflows" / "ci.yml").read_text()
    assert "container: debian:bookworm" in ci and "bash .ci/run" in ci
    assert "hashFiles('requirements.txt', 'requirements-cluster.txt')" in ci


def test_actionlint_catches_a_broken_workflow(tmp_path):
    bad = tmp_path / "bad.yml"
    bad.write_text("on: push\njobs:\n  x:\n    runs-on: ubuntu-24.04\n    steps:\n"
                   "      - run: echo ${{ github.nonexistent_context_key }}\n      - uses: actions/checkout\n")
    assert actionlint(bad).returncode != 0
