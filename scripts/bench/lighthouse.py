"""Benchmark (not a test): Lighthouse's mobile and desktop profiles against the built site, served as GitHub Pages
serves it (gzip for text, `Cache-Control: max-age=600`), from a local stdlib server.

  python -m scripts.bench.lighthouse [--site site] [--out build/bench/lighthouse.json]

Lighthouse comes from npm, pinned in tools/lighthouse/package-lock.json (`npm ci`), and drives Debian Chromium
through CHROME_PATH: no browser is downloaded. Writes one JSON report: each profile's category scores, its
metrics and the goals they are held to; prints a table. Exit status 0 even when a goal is missed (a benchmark
reports; `make test` holds the page's behaviour)."""
from __future__ import annotations

import argparse
import contextlib
import functools
import gzip
import hashlib
import http.server
import io
import json
import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from scripts.record.atomic import write_bytes_atomic

REPO = Path(__file__).resolve().parents[2]
TOOL = REPO / "tools" / "lighthouse"
CHROME_FLAGS = "--headless=new --no-sandbox --disable-gpu --disable-background-networking " \
               "--disable-component-update --no-first-run --disable-sync"
METRICS = {"first-contentful-paint": "fcp_ms", "largest-contentful-paint": "lcp_ms", "total-blocking-time": "tbt_ms",
           "cumulative-layout-shift": "cls", "speed-index": "speed_index_ms", "interactive": "tti_ms"}
GOALS = {"mobile": {"performance": 0.90, "accessibility": 1.0, "best-practices": 1.0, "seo": 0.95,
                    "lcp_ms": 2500, "tbt_ms": 200},
         "desktop": {"accessibility": 1.0, "best-practices": 1.0, "seo": 0.95}}
TEXT = (".html", ".js", ".css", ".json", ".svg")


class PagesLikeHandler(http.server.SimpleHTTPRequestHandler):
    """Static files with gzip for text and a short cache lifetime, as GitHub Pages sends them."""

    def log_message(self, *args):
        pass

    def send_head(self):
        path = Path(self.translate_path(self.path))
        if path.is_dir():
            path = path / "index.html"
        if path.suffix not in TEXT or not path.is_file() or "gzip" not in self.headers.get("Accept-Encoding", ""):
            return super().send_head()
        body = gzip.compress(path.read_bytes(), mtime=0)
        self.send_response(200)
        self.send_header("Content-Type", self.guess_type(str(path)))
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "max-age=600")
        self.end_headers()
        return io.BytesIO(body)


@contextlib.contextmanager
def serve(site: Path):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
                                             functools.partial(PagesLikeHandler, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/index.html"
    finally:
        server.shutdown()
        server.server_close()


def install() -> Path:
    """`npm ci` from the lock file, once per lock-file change."""
    stamp = TOOL / "node_modules" / ".lock-sha"
    lock = (TOOL / "package-lock.json").read_bytes()
    digest = hashlib.sha256(lock).hexdigest()
    if not stamp.exists() or stamp.read_text() != digest:
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--silent"], cwd=TOOL, check=True)
        stamp.write_text(digest)
    return TOOL / "node_modules" / ".bin" / "lighthouse"


def run_profile(binary: Path, url: str, profile: str) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "lh.json"
        cmd = [str(binary), url, "--quiet", "--output=json", f"--output-path={out}", f"--chrome-flags={CHROME_FLAGS}"]
        if profile == "desktop":
            cmd.append("--preset=desktop")
        subprocess.run(cmd, check=True, timeout=300, env={**os.environ, "CHROME_PATH": "/usr/bin/chromium"})
        lhr = json.loads(out.read_text(encoding="utf-8"))
    result = {"scores": {k: v["score"] for k, v in lhr["categories"].items()},
              "metrics": {name: round(lhr["audits"][audit]["numericValue"], 3) for audit, name in METRICS.items()},
              "lighthouse": lhr["lighthouseVersion"], "user_agent": lhr["environment"]["hostUserAgent"],
              "failed_audits": sorted(k for k, a in lhr["audits"].items() if a["scoreDisplayMode"] in
                                      ("binary", "numeric", "metricSavings") and a["score"] is not None and
                                      a["score"] < 0.9)}
    values = {**result["scores"], **result["metrics"]}
    result["goals"] = {k: {"goal": g, "value": values[k], "met": values[k] >= g if k in result["scores"]
                           else values[k] <= g} for k, g in GOALS[profile].items()}
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--site", type=Path, default=Path("site"))
    ap.add_argument("--out", type=Path, default=Path("build/bench/lighthouse.json"))
    args = ap.parse_args(argv)
    if not (args.site / "index.html").is_file():
        print(f"error: {args.site}/index.html is missing: run `make site` first", file=sys.stderr)
        return 1
    binary = install()
    report = {"site_bytes": {p.relative_to(args.site).as_posix(): p.stat().st_size
                             for p in sorted(args.site.glob("*")) if p.is_file() and p.name != "report.html"}}
    with serve(args.site) as url:
        for profile in ("mobile", "desktop"):
            report[profile] = run_profile(binary, url, profile)
    write_bytes_atomic(args.out, (json.dumps(report, indent=1) + "\n").encode())
    for profile in ("mobile", "desktop"):
        r = report[profile]
        print(f"{profile:<8} " + " ".join(f"{k}={v}" for k, v in {**r["scores"], **r["metrics"]}.items()))
        for k, g in r["goals"].items():
            print(f"  {k:<15} {g['value']:<10} goal {g['goal']:<8} {'met' if g['met'] else 'MISSED'}")
    print(f"report: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
