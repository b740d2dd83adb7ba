"""Shared Playwright helpers: Debian Chromium, never a downloaded browser."""
from __future__ import annotations

import contextlib
import functools
import http.server
import threading
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
         "--no-first-run", "--disable-sync"]
ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts"


class PageWatch:
    """Console errors, page errors and every request a page makes."""

    def __init__(self, page):
        self.errors, self.requests = [], []
        page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: self.errors.append(str(e)))
        page.on("request", lambda r: self.requests.append(r.url))


def open_page(browser, url: str, width: int = 1280, height: int = 900):
    page = browser.new_page(viewport={"width": width, "height": height})
    watch = PageWatch(page)
    page.goto(url)
    wait_ready(page)
    return page, watch


def wait_ready(page) -> None:
    """The page's script started, every chart drawn (scrolled to, as a reader would), the readouts written."""
    page.wait_for_function("window.lessonDraw !== undefined || document.body.dataset.ready === 'error'", timeout=30000)
    page.evaluate(SCROLL_TO_EVERY_CHART)
    page.wait_for_function("document.body.dataset.ready === '1'", timeout=30000)


# Charts are drawn as they come near the screen; a test reads the page as a reader does, down to each chart.
SCROLL_TO_EVERY_CHART = """async () => {
  const frame = () => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
  const hash = location.hash, x = window.scrollX, y = window.scrollY;
  for (const el of document.querySelectorAll('.chart')) { el.scrollIntoView({block: 'center'}); await frame(); }
  window.scrollTo(x, y);
  return hash;
}"""


@contextlib.contextmanager
def serve(directory: Path):
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(directory))
    handler.log_message = lambda *a, **k: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
