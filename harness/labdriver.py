"""Helpers for the real-browser test: a private JupyterLab server and a headless Chromium page.

The server runs on 127.0.0.1 with a random token and private config/settings/workspaces/runtime
directories, so nothing of the user's Jupyter setup is read or written. Chromium is Debian's
(``/usr/bin/chromium``) driven by Playwright; ``playwright install`` is never needed.
"""

from __future__ import annotations

import base64
import io
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

REPO = Path(__file__).resolve().parents[1]
SERVER_CONFIG = REPO / "etc" / "jupyter_server_config.py"
# JupyterLab user settings written before the server starts: no "Jupyter news" / update check popup
SETTINGS = {
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {"fetchNews": "false", "checkForUpdates": False},
}
WINDOWING = "@jupyterlab/notebook-extension/tracker.jupyterlab-settings"


def find_chromium() -> str | None:
    """Path of a Chromium executable, or ``None`` when there is none on this machine."""
    for candidate in ("/usr/bin/chromium", shutil.which("chromium"), shutil.which("chromium-browser")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class LabServer:
    """A running ``jupyter lab`` process serving ``root``."""

    process: subprocess.Popen
    root: Path
    port: int
    token: str
    log: Path

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def api(self, path: str, method: str = "GET") -> object:
        """Call the REST API with the token; returns the decoded JSON (or ``None`` when empty)."""
        req = urllib.request.Request(
            f"{self.base}/api/{path}", method=method, headers={"Authorization": f"token {self.token}"}
        )
        with urllib.request.urlopen(req, timeout=10) as resp:
            body = resp.read()
        return json.loads(body) if body else None

    def shutdown_kernels(self) -> None:
        """Stop every kernel (one notebook's kernel must not outlive its test)."""
        for kernel in self.api("kernels") or []:  # type: ignore[union-attr]
            try:
                self.api(f"kernels/{kernel['id']}", method="DELETE")
            except urllib.error.URLError:
                pass

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)


def start_lab(
    root: Path, private: Path, *, timeout: float = 60.0, windowing: str | None = "none", config: Path = SERVER_CONFIG
) -> LabServer:
    """Start JupyterLab on ``root`` with private Jupyter directories under ``private``, loading ``config``
    (default: the lessons' server settings, as `make lab` runs them; the benchmarks compare others).

    ``windowing``: the notebook's ``windowingMode``. The tests use ``"none"`` (every cell rendered:
    JupyterLab's default, ``"contentVisibility"``, skips drawing cells outside the viewport, so
    nothing there can be checked); ``None`` leaves JupyterLab's default, what a learner gets.
    """
    env = dict(os.environ)
    dirs = {
        "JUPYTER_CONFIG_DIR": private / "config",
        "JUPYTERLAB_SETTINGS_DIR": private / "settings",
        "JUPYTERLAB_WORKSPACES_DIR": private / "workspaces",
        "JUPYTER_RUNTIME_DIR": private / "runtime",
        "IPYTHONDIR": private / "ipython",
    }
    for name, path in dirs.items():
        path.mkdir(parents=True, exist_ok=True)
        env[name] = str(path)
    settings = dict(SETTINGS)
    if windowing is not None:
        settings[WINDOWING] = {"windowingMode": windowing}
    for rel, value in settings.items():
        target = dirs["JUPYTERLAB_SETTINGS_DIR"] / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(value))
    env.pop("JUPYTER_TOKEN", None)
    env["PYDEVD_DISABLE_FILE_VALIDATION"] = "1"
    port, token = free_port(), secrets.token_hex(24)
    jupyter = Path(sys.executable).with_name("jupyter")
    args = [
        str(jupyter),
        "lab",
        "--no-browser",
        "--ip=127.0.0.1",
        f"--port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
        "--LabApp.expose_app_in_browser=True",  # window.jupyterapp: open/run notebooks by command
        "--JupyterNotebookApp.expose_app_in_browser=True",  # the same in Notebook 7's pages (/notebooks/…)
        "--LabApp.news_url=",
        f"--config={config}",
    ]
    if hasattr(os, "getuid") and os.getuid() == 0:
        args.append("--allow-root")
    log = private / "lab.log"
    process = subprocess.Popen(args, env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT, cwd=root)
    server = LabServer(process, root, port, token, log)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"jupyter lab exited with {process.returncode}:\n{log.read_text()[-3000:]}")
        try:
            server.api("status")
            return server
        except (urllib.error.URLError, ConnectionError, OSError):
            time.sleep(0.25)
    server.stop()
    raise RuntimeError(f"jupyter lab did not answer within {timeout} s:\n{log.read_text()[-3000:]}")


def load_module(path: Path):
    """Import a script of the repository (e.g. scripts/build_slides.py, site/build.py) as a module."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(path.stem.replace("-", "_"), path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@contextmanager
def headless_chromium() -> Iterator[object]:
    """Debian's Chromium driven by Playwright (headless, :data:`CHROMIUM_ARGS`), closed at the end;
    the test is skipped where there is no Chromium."""
    import pytest

    chromium = find_chromium()
    if chromium is None:
        pytest.skip("no chromium executable on this machine (install it with `make chromium`, needs root and apt-get)")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS, headless=True)
        try:
            yield browser
        finally:
            browser.close()


# --------------------------------------------------------------------------- offline pages
def offline(page, *, local_servers: bool = False) -> tuple[list[str], list[str]]:
    """Block every request of ``page`` but ``file:``, ``data:`` and ``blob:`` (and 127.0.0.1 /
    localhost with ``local_servers``); returns the lists the blocked URLs and the page errors go to."""
    from urllib.parse import urlparse

    blocked: list[str] = []
    errors: list[str] = []

    def route(r) -> None:
        url = urlparse(r.request.url)
        local = local_servers and url.hostname in ("localhost", "127.0.0.1")
        if url.scheme in ("file", "data", "blob") or local:
            r.continue_()
        else:
            blocked.append(r.request.url)
            r.abort()

    page.route("**/*", route)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    return blocked, errors


# --------------------------------------------------------------------------- live views
def live_view(page, panel_id: str, title: str):
    """The grid (an SVG) of the live view titled ``title`` in a notebook panel (a Playwright locator)."""
    return page.locator(f'#{panel_id} .attn-heatmap svg.attn-heatmap-grid[aria-label="{title}"]').first


def view_root(grid):
    """The ``.attn-heatmap`` element around a live view's grid (a Playwright locator)."""
    return grid.locator("xpath=ancestor::div[contains(concat(' ', @class, ' '), ' attn-heatmap ')][1]")


def cell_point(grid, row: int, col: int) -> dict[str, float]:
    """Where the centre of cell ``(row, col)`` is inside a grid, in CSS pixels (for hover and click)."""
    box = grid.bounding_box()
    n_rows, n_cols = (int(grid.get_attribute(f"data-{side}")) for side in ("rows", "cols"))
    return {"x": (col + 0.5) * box["width"] / n_cols, "y": (row + 0.5) * box["height"] / n_rows}


def grid_pixels(grid, x: float, y: float, w: float, h: float, cdp=None) -> list[list[int]]:
    """The colours on screen in the box ``(x, y, w, h)`` of a grid (CSS pixels from its top left corner):
    ``[[r, g, b], …]`` row by row, at least one pixel, cut from a screenshot of the whole CSS pixels around the
    box (clipped: the page is not encoded whole) at the page's device pixel ratio, not resampled. ``cdp``: the
    CDP session that emulates another ratio, if any (an emulation holds in its own session only)."""
    import math

    from PIL import Image

    grid.scroll_into_view_if_needed()
    box = grid.bounding_box()
    # the CSS pixels that hold the box, whole: their device pixels are the viewport screenshot's, cut out
    x0, y0 = math.floor(box["x"] + x), math.floor(box["y"] + y)
    x1, y1 = max(x0 + 1, math.ceil(box["x"] + x + w)), max(y0 + 1, math.ceil(box["y"] + y + h))
    clip = {"x": x0, "y": y0, "width": x1 - x0, "height": y1 - y0, "scale": 1}
    session = cdp or grid.page.context.new_cdp_session(grid.page)
    try:
        shot = session.send("Page.captureScreenshot", {"format": "png", "clip": clip})["data"]
    finally:
        if cdp is None:
            session.detach()
    image = Image.open(io.BytesIO(base64.b64decode(shot))).convert("RGB")
    k = image.width / clip["width"]  # device pixels per CSS pixel
    left, top = round((box["x"] + x) * k), round((box["y"] + y) * k)
    right, bottom = max(left + 1, round((box["x"] + x + w) * k)), max(top + 1, round((box["y"] + y + h) * k))
    dx, dy = round(x0 * k), round(y0 * k)  # where the clip starts, in the viewport's device pixels
    return [list(image.getpixel((i - dx, j - dy))) for j in range(top, bottom) for i in range(left, right)]


def cell_pixels(grid, row: int, col: int, inset: float = 0.0) -> list[list[int]]:
    """The colours on screen in cell ``(row, col)`` of a grid (``inset`` CSS pixels off each side)."""
    size = grid.bounding_box()["width"] / int(grid.get_attribute("data-cols"))
    x, y = col * size + inset, row * size + inset
    return grid_pixels(grid, x, y, size - 2 * inset, size - 2 * inset)


def table_numbers(root) -> list[float]:
    """Open a live view's table (what a screen reader reads) and return its numbers, row by row."""
    root.locator(".attn-heatmap-table-toggle").press("Enter")
    return [float(c) for c in root.locator(".attn-heatmap-table tbody td").all_inner_texts()]


# --------------------------------------------------------------------------- page scripts
OPEN_NOTEBOOK_JS = """
async (path) => {
  const app = window.jupyterapp;
  const widget = await app.commands.execute('docmanager:open', {path, factory: 'Notebook'});
  await widget.context.ready;
  await widget.sessionContext.ready;
  app.shell.activateById(widget.id);
  return widget.id;
}
"""

RUN_ALL_JS = """
async (id) => {
  const app = window.jupyterapp;
  app.shell.activateById(id);
  await app.commands.execute('notebook:run-all-cells');
  return true;
}
"""

# done: kernel idle and every code cell of the notebook shows an execution count in its prompt
# the kernel has handled every widget message the page sent before: two comm-info requests answered in turn
# (the kernel answers its shell messages in order, and ipywidgets holds a model's next message until the kernel
# is idle after the one before, so the second request follows it), then a frame for the redraw.
# comm_info_request leaves JupyterLab's kernel status idle, as widget messages do
SETTLED_JS = """async (id) => {
  const panel = [...window.jupyterapp.shell.widgets('main')].find(w => w.id === id);
  const kernel = panel.sessionContext.session.kernel;
  for (let k = 0; k < 2; k++) await kernel.requestCommInfo({});
  await new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve)));
}"""

STATE_JS = """
(id) => {
  const panel = document.getElementById(id);
  if (!panel) return {found: false};
  const indicator = panel.querySelector('.jp-Notebook-ExecutionIndicator');
  const prompts = [...panel.querySelectorAll('.jp-CodeCell .jp-InputArea-prompt')].map(p => p.textContent.trim());
  const app = window.jupyterapp;
  const widget = [...app.shell.widgets('main')].find(w => w.id === id);
  const status = widget && widget.sessionContext ? widget.sessionContext.kernelDisplayStatus : null;
  return {
    found: true,
    indicator: indicator ? indicator.getAttribute('data-status') : null,
    status,
    prompts,
    numbered: prompts.filter(p => /^\\[\\d+\\]:$/.test(p)).length,
    errors: panel.querySelectorAll('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]').length,
    tracebacks: [...panel.querySelectorAll('.jp-RenderedText[data-mime-type="application/vnd.jupyter.error"]')]
        .map(e => e.textContent.slice(0, 400)),
  };
}
"""


def start_lab_on_lessons(
    base: Path, *, windowing: str | None = "none", config: Path = SERVER_CONFIG, checkout: Path = REPO
) -> LabServer:
    """A JupyterLab (see :func:`start_lab`, ``windowing`` and ``config`` as there) on a copy of the lessons
    of ``checkout``: ``base/root`` holds notebooks/ and images/ (the lessons' markdown shows
    ../images/*.png); its private files go in ``base/jupyter``."""
    root = base / "root"
    shutil.copytree(checkout / "notebooks", root / "notebooks")
    if (checkout / "images").is_dir():
        shutil.copytree(checkout / "images", root / "images")
    return start_lab(root, base / "jupyter", windowing=windowing, config=config)


def open_lab(page, server: LabServer, workspace: str) -> None:
    """Load JupyterLab in ``page`` with a fresh ``workspace`` and wait until it has started."""
    page.goto(f"{server.base}/lab/workspaces/{workspace}?reset&token={server.token}")
    page.wait_for_function("() => window.jupyterapp && window.jupyterapp.started", timeout=60_000)
    page.wait_for_selector("#jp-main-dock-panel", timeout=60_000)


def open_and_run_all(page, server: LabServer, notebook: str, *, workspace: str = "bench", timeout: float = 300) -> str:
    """Open JupyterLab at a fresh ``workspace``, open ``notebook`` (relative to the server's root), run
    all its cells and wait until every cell has run and the kernel is idle; returns the panel's id."""
    open_lab(page, server, workspace)
    panel = page.evaluate(OPEN_NOTEBOOK_JS, notebook)
    page.evaluate(RUN_ALL_JS, panel)
    page.wait_for_function(DONE_JS, arg=panel, timeout=timeout * 1000, polling=100)
    page.wait_for_function(ATTACHED_JS, arg=panel, timeout=30_000)  # the widget views are on the page
    return panel


# every code cell has run and the kernel is idle (STATE_JS's reading of the notebook)
DONE_JS = f"""(id) => {{ const s = ({STATE_JS})(id);
  return s.found && s.status === 'idle' && s.prompts.length > 0 && s.numbered === s.prompts.length; }}"""
# every widget output of the notebook's model is on the page: rendered (or showing its error)
ATTACHED_JS = """(id) => {
  const widget = [...window.jupyterapp.shell.widgets('main')].find(w => w.id === id);
  let want = 0;
  for (const cell of widget.content.model.cells) {
    if (cell.type !== 'code') continue;
    for (let k = 0; k < cell.outputs.length; k++) {
      const data = cell.outputs.get(k).data || {};
      // a tqdm progress bar's widget is closed when its loop ends ("…| 0/200 [00:00<?, ?it/s]"): nothing to show
      const bar = /\\| *\\d+\\/\\d+ \\[/.test(String(data['text/plain'] || ''));
      if ('application/vnd.jupyter.widget-view+json' in data && !bar) want += 1;
    }
  }
  const shown = [...document.getElementById(id).querySelectorAll('.jp-OutputArea-output')]
    .filter(o => o.querySelector('.jupyter-widgets, .attnlib-explorer')
      || /Error displaying widget/.test(o.textContent));
  return shown.length >= want;
}"""


# every widget output area: its images (src + PNG check + a content hash), its live views (a hash
# of their SVG frame and grid, their cells, the bitmaps they show) and whether it shows an error
WIDGETS_JS = """
async (id) => {
  const panel = document.getElementById(id);
  const outputs = [...panel.querySelectorAll('.jp-OutputArea-output')]
      .filter(o => o.querySelector('.jupyter-widgets, .attnlib-explorer')
      || /Error displaying widget/.test(o.textContent));
  const hash = async (buf) => {
    const digest = await crypto.subtle.digest('SHA-256', buf);
    return [...new Uint8Array(digest)].map(b => b.toString(16).padStart(2, '0')).join('');
  };
  const result = [];
  for (const out of outputs) {
    const images = [];
    for (const img of out.querySelectorAll('img')) {
      let png = false, digest = null;
      try {
        const buf = await (await fetch(img.src)).arrayBuffer();
        const head = new Uint8Array(buf.slice(0, 8));
        png = head[0] === 0x89 && head[1] === 0x50 && head[2] === 0x4e && head[3] === 0x47;
        digest = await hash(buf);
      } catch (e) { png = false; }
      images.push({src: img.src, png, digest, width: img.naturalWidth});
    }
    const views = [];  // live views: the digest of the SVG frame and of the SVG grid
    for (const view of out.querySelectorAll('.attn-heatmap')) {
      const frame = view.querySelector('svg.attn-heatmap-svg');
      const grid = view.querySelector('svg.attn-heatmap-grid');
      const drawn = new TextEncoder().encode((frame ? frame.outerHTML : '') + (grid ? grid.outerHTML : ''));
      const rows = grid ? Number(grid.dataset.rows) : 0, cols = grid ? Number(grid.dataset.cols) : 0;
      // the bitmaps shown ([width, height] of a canvas, [-1, -1] of an image): only a large matrix has one
      const bitmaps = [...view.querySelectorAll('canvas:not([hidden]), img, image')]
          .map(e => e.tagName === 'CANVAS' ? [e.width, e.height] : [-1, -1]);
      views.push({digest: await hash(drawn), cells: rows * cols, rows, cols, bitmaps,
                  label: grid && grid.getAttribute('aria-label')});
    }
    result.push({
      error: /Error displaying widget/.test(out.textContent),
      images,
      views,
      controls: out.querySelectorAll('select, .noUi-handle, .widget-toggle-button, .widget-checkbox input').length,
    });
  }
  return result;
}
"""
