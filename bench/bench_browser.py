"""Live-view latency in the browser: the learner's input → the frame that shows the redrawn views.

Each lesson of ``notebooks/`` is opened in JupyterLab (its default windowing) in headless Chromium
and run top to bottom; then every widget output with a live view gets ``--changes`` changes of its
controls through real input (Playwright's keyboard and mouse: a key press on a slider or a menu, a
click on a toggle). The clock starts at the ``timeStamp`` of the input event that changes the control
(a capturing listener on the window): the key press, the click (not the pointer's press before it,
which lasts as long as the finger stays down) or the menu's ``input``. It stops at the animation frame
after the one that painted the views' last change (``first``: the first view changed; ``all``: no view
changed for 150 ms after); a change made inside an animation frame's callbacks is painted by that
frame. A ``MutationObserver`` in the page sees the redraws; nothing in attnlib is instrumented.
``floor``, the same clock on a change that stays in the page (an arrow key moving the first view's
focused cell), is what the browser alone takes to show a redraw. ``sent``, ``reply`` and ``answer``
split a change: the same clock stopped when the page sends its first message on the kernel websocket
after the input (the control's new value), when the websocket delivers the first message after it (the
kernel's "busy") and the last one before the views' last redraw (the last view's update), as the page's
main thread sees them.

Reference rows: every lesson's page gets one more cell, a slider redrawing a text through the kernel
(``NN Jupyter alone``: Jupyter and ipywidgets alone on that page, the least an explorer there can take),
and "lesson" 00 is a page of its own with that slider and one redrawing a 6 × 6 ``HeatmapView``.

Run: ``.venv/bin/python -m bench.bench_browser [--lessons NN …] [--changes N] [--runs R]
[--baseline DIR] [--json PATH]``. ``--baseline DIR`` times a second checkout's attnlib too (e.g. a
``git worktree`` of an older commit) with its own lessons, in a second JupyterLab, taking turns lesson
by lesson. ``--runs R`` repeats the whole run, each with a new JupyterLab and Chromium, and pools the
changes: the spread between runs is larger than within one.
Goals: median ≤ 30 ms and p90 ≤ 60 ms per explorer.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from bench import results
from harness.labdriver import CHROMIUM_ARGS, find_chromium, open_and_run_all, start_lab_on_lessons

LESSONS = results.REPO / "notebooks"
QUIET_MS = 150

# the reference rows: a slider redrawing a text through the kernel, Jupyter and ipywidgets alone (the least
# any explorer can take), appended to every lesson's page; and "lesson" 00, a page of its own with that
# slider and one redrawing a 6 × 6 HeatmapView (attnlib's view alone)
REFERENCE = "00_reference.ipynb"
JUPYTER_ALONE = f"""# bench: "{results.JUPYTER_ALONE}"
import ipywidgets as widgets

bench_slider = widgets.IntSlider(description="n", max=50)
bench_text = widgets.HTML(value="0")
bench_slider.observe(lambda change: setattr(bench_text, "value", str(change.new)), names="value")
widgets.VBox([bench_slider, bench_text])"""
HEATMAP_ALONE = """# bench: "HeatmapView alone"
import numpy as np
from attnlib.show import HeatmapView

bench_view = HeatmapView(np.zeros((6, 6)), vmin=0, vmax=50)
bench_n = widgets.IntSlider(description="n", max=50)
bench_n.observe(lambda change: bench_view.update(np.arange(36.0).reshape(6, 6) % (change.new + 1)), names="value")
widgets.VBox([bench_n, bench_view])"""

# every widget output with a live view: the explorer its cell builds ("ScalingExplorer"), the name in a
# "# bench: NAME" comment of the cell (the reference rows), or null
NAMES_JS = """
(id) => [...document.getElementById(id).querySelectorAll('.jp-OutputArea-output')]
  .filter(o => o.querySelector('.jupyter-widgets'))
  .map(o => {
    const source = o.closest('.jp-Cell')?.querySelector('.jp-InputArea-editor')?.textContent || '';
    const given = source.match(/# bench: "([^"]+)"/);
    if (given) return given[1];
    if (!o.querySelector('.attn-heatmap')) return null;
    const named = [...source.matchAll(/([A-Z][A-Za-z]*Explorer)\\(/g)].map(m => m[1]);
    return named.length ? named[named.length - 1] : 'live view';
  })
"""

# every message a kernel websocket delivers to the page: its time on the page's clock; and whether the
# page is inside an animation frame's callbacks now (a change made there is painted by that frame).
# Installed before JupyterLab loads; wraps the page's WebSocket class and requestAnimationFrame, nothing
# of JupyterLab or attnlib
PAGE_CLOCKS_JS = """
(() => {
  window.__benchInFrame = false;
  const nativeFrame = window.requestAnimationFrame.bind(window);
  window.requestAnimationFrame = (callback) => nativeFrame((time) => {
    window.__benchInFrame = true;
    try { callback(time); } finally { queueMicrotask(() => { window.__benchInFrame = false; }); }
  });
  window.__benchMessages = [];
  window.__benchSent = [];
  const Native = window.WebSocket;
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      this.__bench = String(args[0]).includes('/channels');
      if (this.__bench) {
        this.addEventListener('message', () => window.__benchMessages.push(performance.now()));
      }
    }
    send(data) {
      if (this.__bench) window.__benchSent.push(performance.now());
      return super.send(data);
    }
  };
})();
"""

# arm the clock on output k: the next keydown / click / input's timeStamp starts it; the views' changes
# stop it (window.__benchDone resolves to {first, all, sent, reply, answer} in ms, or {first: null} after 5 s)
ARM_JS = """
([id, k, quiet]) => {
  const INPUTS = ['keydown', 'click', 'input', 'change'];
  const out = [...document.getElementById(id).querySelectorAll('.jp-OutputArea-output')]
    .filter(o => o.querySelector('.jupyter-widgets'))[k];
  let views = [...out.querySelectorAll('.attn-heatmap')];
  if (!views.length) views = [...out.querySelectorAll('.widget-html-content')];  // a reference row
  let t0 = null;
  const start = (ev) => { if (t0 === null) t0 = ev.timeStamp; };
  for (const type of INPUTS) window.addEventListener(type, start, {capture: true});
  window.__benchMessages = [];
  window.__benchSent = [];
  window.__benchDone = new Promise((resolve) => {
    let first = null, last = null, changed = null, timer = null;
    const done = (result) => {
      obs.disconnect();
      for (const type of INPUTS) window.removeEventListener(type, start, {capture: true});
      resolve(result);
    };
    const finish = () => {
      const got = window.__benchMessages.filter(t => t >= t0);
      const before = got.filter(t => t <= changed);
      const sent = window.__benchSent.filter(t => t >= t0);
      done({first: first - t0, all: last - t0, sent: sent.length ? sent[0] - t0 : null,
            reply: got.length ? got[0] - t0 : null, answer: before.length ? before[before.length - 1] - t0 : null});
    };
    const giveUp = setTimeout(() => done({first: null}), 5000);
    const obs = new MutationObserver(() => {
      clearTimeout(giveUp);
      changed = performance.now();
      const stop = () => {
        const shown = performance.now();
        if (first === null) first = shown;
        last = shown;
        clearTimeout(timer);
        timer = setTimeout(finish, quiet);
      };
      // the frame that paints this change (this one, when made in its animation callbacks), then the next
      // one begins: the change is on screen
      if (window.__benchInFrame) requestAnimationFrame(stop);
      else requestAnimationFrame(() => requestAnimationFrame(stop));
    });
    for (const v of views) obs.observe(v, {subtree: true, childList: true, attributes: true, characterData: true});
  });
}
"""

# the controls of output k a learner changes: [kind, index] (a ToggleButtons' chosen button is left out)
CONTROLS_JS = """
([id, k]) => {
  const out = [...document.getElementById(id).querySelectorAll('.jp-OutputArea-output')]
    .filter(o => o.querySelector('.jupyter-widgets'))[k];
  const found = [];
  out.querySelectorAll('select').forEach((s, i) => {
    if (s.options.length > 1 && !s.disabled) found.push(['select', i]);
  });
  out.querySelectorAll('.noUi-handle').forEach((h, i) => {
    if (!h.closest('[disabled]')) found.push(['slider', i]);
  });
  out.querySelectorAll('.widget-toggle-button, .widget-checkbox input').forEach((b, i) => {
    const chosen = b.closest('.widget-toggle-buttons') && b.classList.contains('mod-active');
    if (!b.disabled && !chosen) found.push(['toggle', i]);
  });
  return found;
}
"""


def change(page, output, kind: str, index: int, step: int) -> None:
    """One learner's change of control ``(kind, index)`` of ``output`` through real input events."""
    if kind == "select":
        select = output.locator("select").nth(index)
        now, n = select.evaluate("s => [s.selectedIndex, s.options.length]")
        select.select_option(index=(now + 1) % n)
    elif kind == "slider":
        handle = output.locator(".noUi-handle").nth(index)
        now, lo, hi = (float(handle.get_attribute(a)) for a in ("aria-valuenow", "aria-valuemin", "aria-valuemax"))
        key = "ArrowRight" if step % 8 < 4 else "ArrowLeft"
        key = "ArrowLeft" if now >= hi else "ArrowRight" if now <= lo else key
        handle.focus()
        page.keyboard.press(key)
    else:
        output.locator(".widget-toggle-button, .widget-checkbox input").nth(index).click()


def time_output(page, panel: str, k: int, changes: int) -> dict[str, list[float]]:
    """``{"first": ms, "all": ms, "reply": ms, "answer": ms}`` per change of widget output ``k`` (after two
    that warm up), and ``"floor"``: the same clock on a change that never leaves the page (an arrow key
    moving the focused cell of the first view redraws its outline), what the browser alone takes."""
    output = page.locator(f"#{panel} .jp-OutputArea-output:has(.jupyter-widgets)").nth(k)
    output.scroll_into_view_if_needed()
    controls = page.evaluate(CONTROLS_JS, [panel, k])
    times: dict[str, list[float]] = {"first": [], "all": [], "sent": [], "reply": [], "answer": [], "floor": []}
    for step in range(changes + 2 if controls else 0):
        kind, index = controls[step % len(controls)]
        page.evaluate(ARM_JS, [panel, k, QUIET_MS])
        change(page, output, kind, index, step)
        got = page.evaluate("() => window.__benchDone")
        page.wait_for_timeout(60)
        if step >= 2 and got["first"] is not None:
            times["first"].append(got["first"])
            times["all"].append(got["all"])
            for phase in ("sent", "reply", "answer"):
                if got[phase] is not None:
                    times[phase].append(got[phase])
    grid = output.locator(".attn-heatmap-grid").first
    for step in range(changes + 2 if controls and grid.count() else 0):
        grid.focus()
        page.evaluate(ARM_JS, [panel, k, QUIET_MS])
        page.keyboard.press("ArrowRight" if step % 2 == 0 else "ArrowLeft")
        got = page.evaluate("() => window.__benchDone")
        page.keyboard.press("Escape")  # the tooltip away
        page.wait_for_timeout(60)
        if step >= 2 and got["first"] is not None:
            times["floor"].append(got["first"])
    return times


def measure(
    lessons: list[Path], changes: int, paths: dict[str, Path | None], done: Callable[[dict], None] = print
) -> dict[str, dict]:
    """``{path: {"NN Explorer": {"first": [...], "all": [...]}}}`` for every live view of ``lessons``: one
    JupyterLab per path (its kernels import the attnlib of that checkout, ``None``: this one), taking
    turns lesson by lesson so that a slow spell of the machine hits them alike; ``done(figures so far)``
    after each lesson."""
    from playwright.sync_api import sync_playwright

    got: dict[str, dict] = {name: {} for name in paths}
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as pw:
        servers = {}
        try:
            for name, checkout in paths.items():
                env = os.environ.pop("PYTHONPATH", None)
                if checkout is not None:
                    os.environ["PYTHONPATH"] = str(checkout)
                servers[name] = start_lab_on_lessons(
                    Path(tmp) / name, windowing=None, checkout=checkout or results.REPO
                )
                add_references(servers[name].root / "notebooks", own_page=checkout is None)
                os.environ.pop("PYTHONPATH", None)
                if env is not None:
                    os.environ["PYTHONPATH"] = env
            browser = pw.chromium.launch(executable_path=find_chromium(), args=CHROMIUM_ARGS, headless=True)
            for lesson in lessons:
                for name, server in servers.items():
                    _measure_lesson(browser, server, lesson, changes, got[name], name)
                done(got)
            browser.close()
        finally:
            for server in servers.values():
                server.shutdown_kernels()
                server.stop()
    return got


def add_references(notebooks: Path, *, own_page: bool = True) -> None:
    """Append :data:`JUPYTER_ALONE` to every lesson of ``notebooks``; write the page of "lesson" 00
    (``own_page``: this checkout's, whose ``attnlib.show`` has the ``HeatmapView``)."""
    import nbformat

    for path in notebooks.glob("[0-9][0-9]_*.ipynb"):
        notebook = nbformat.read(path, as_version=4)
        notebook.cells.append(nbformat.v4.new_code_cell(JUPYTER_ALONE))
        nbformat.write(notebook, path)
    if not own_page:
        return
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in (JUPYTER_ALONE, HEATMAP_ALONE)])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(notebook, notebooks / REFERENCE)


def _measure_lesson(browser, server, lesson: Path, changes: int, into: dict, path: str) -> None:
    if not (server.root / "notebooks" / lesson.name).exists():
        return  # a lesson (or the reference page) this checkout does not have
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.add_init_script(PAGE_CLOCKS_JS)
    page = context.new_page()
    panel = open_and_run_all(page, server, f"notebooks/{lesson.name}", workspace=lesson.stem)
    for k, name in enumerate(page.evaluate(NAMES_JS, panel)):
        if name is None:
            continue
        row = f"{lesson.name[:2]} {name}"
        while row in into:  # a lesson's second explorer of the same class
            row += "′"
        timed = time_output(page, panel, k, changes)
        if timed["first"]:
            into[row] = timed
            print(f"{path:>8} {row}: {results.stats(timed['first'])}", flush=True)
    page.context.close()
    server.shutdown_kernels()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lessons", nargs="*", metavar="NN", help="only the lessons numbered NN")
    parser.add_argument("--changes", type=int, default=20, help="timed changes per explorer")
    parser.add_argument("--runs", type=int, default=1, help="repeat the whole run, pooling the changes")
    parser.add_argument(
        "--baseline", type=Path, action="append", default=[], help="also time this checkout's attnlib, taking turns"
    )
    parser.add_argument("--json", type=Path, default=results.RESULTS / "browser.json", help="where to write")
    args = parser.parse_args()
    if find_chromium() is None:
        raise SystemExit("no chromium executable: install Debian's chromium (make chromium)")
    lessons = [Path(REFERENCE), *sorted(LESSONS.glob("[0-9][0-9]_*.ipynb"))]
    if args.lessons:
        lessons = [lesson for lesson in lessons if lesson.name[:2] in args.lessons]
    paths = {"current": None, **{f"baseline {path.name}": path for path in args.baseline}}

    def write(got: dict) -> None:
        figures = {
            path: {row: {m: results.summary(t) for m, t in timed.items() if t} for row, timed in rows.items()}
            for path, rows in got.items()
        }
        results.write(args.json, {"changes": args.changes, "runs": args.runs, **figures})

    pooled: dict[str, dict] = {path: {} for path in paths}

    def with_pooled(got: dict) -> dict:
        """The earlier runs' changes and ``got``'s, row by row."""
        both = {
            path: {row: {m: list(t) for m, t in ts.items()} for row, ts in rows.items()}
            for path, rows in pooled.items()
        }
        for path, rows in got.items():
            for row, timed in rows.items():
                for m, t in timed.items():
                    both[path].setdefault(row, {}).setdefault(m, []).extend(t)
        return both

    for _ in range(args.runs):  # a new JupyterLab and Chromium each time: the spread between runs counts
        pooled = with_pooled(measure(lessons, args.changes, paths, lambda got: write(with_pooled(got))))


if __name__ == "__main__":
    main()
