"""Helpers for the pages that have no kernel (the site and the decks): open them from disk or over http in
headless Chromium, with every other request blocked and recorded, and wait until their widgets are drawn.

Used by tests/browser/test_site.py, tests/browser/test_slides.py and bench/bench_static.py.
"""

from __future__ import annotations

import functools
import http.server
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .labdriver import offline

WIDGET_VIEW = 'script[type="application/vnd.jupyter.widget-view+json"]'

# html-manager draws each saved view into a div.widget-subarea it puts before the view's <script>
WIDGETS_DRAWN_JS = f"""() => {{
  const views = [...document.querySelectorAll('{WIDGET_VIEW}')];
  return views.every(s => {{
    const area = s.previousElementSibling;
    return area && area.classList.contains('widget-subarea') && area.childElementCount > 0;
  }});
}}"""


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@contextmanager
def serve(folder: Path) -> Iterator[str]:
    """Serve ``folder`` over http on 127.0.0.1 (a free port) while the block runs; yields the base URL."""
    handler = functools.partial(_Quiet, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def open_page(browser, url: str, *, viewport: dict | None = None, loaded: list[str] | None = None):
    """A new page of ``browser`` at ``url`` with every request but file:, data:, blob: and 127.0.0.1 blocked;
    returns (page, blocked URLs, page errors and console errors). ``loaded``: a list that receives the URL of
    every request the page completes."""
    page = browser.new_page(viewport=viewport or {"width": 1280, "height": 900})
    blocked, errors = offline(page, local_servers=True)
    if loaded is not None:
        page.on("requestfinished", lambda request: loaded.append(request.url))
    page.on("console", lambda message: message.type == "error" and errors.append(f"console: {message.text}"))
    page.goto(url, wait_until="load")
    return page, blocked, errors


def wait_for_widgets(page, timeout: float = 60_000) -> int:
    """Wait until html-manager has drawn every saved widget view of ``page``; returns how many there are."""
    page.wait_for_function(WIDGETS_DRAWN_JS, timeout=timeout)
    return page.locator(WIDGET_VIEW).count()
