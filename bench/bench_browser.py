"""Live-view latency in the browser: the learner's input → the frame that shows the redrawn views.

Each lesson of ``notebooks/`` is opened in JupyterLab (its default windowing) in headless Chromium
and run top to bottom; then every widget output with a live view gets ``--changes`` changes of its
controls through real input (Playwright's keyboard and mouse: a key press on a slider or a menu, a
click on a toggle). The clock starts at the ``timeStamp`` of the input event that changes the control
(a capturing listener on the window): the key press, the click (not the pointer's press before it,
which lasts as long as the finger stays down) or the menu's ``input``. It stops when the frame after the one
that painted the change begins (a change made inside an animation frame's callbacks is painted by that frame):
the change is what the page says it drew (an explorer's ``attnlib:shown`` event, whose ``source`` says
whether the page's table or the kernel's answer drew it: the ``inpage`` and ``kernel`` figures), or, where
there is no such event (the checkout before that design, the reference rows), a redraw of the views seen by
a ``MutationObserver`` (``first``: the first; ``all``: the last before the kernel had answered everything,
two comm-info requests answered in turn). Nothing in attnlib is instrumented, and no step waits on the clock.
``floor``, the same clock on a change that stays in the page (an arrow key moving the first view's
focused cell), is what the browser alone takes to show a redraw. ``sent``, ``reply`` and ``answer``
split a change: the same clock stopped when the page sends its first message on the kernel websocket
after the input (the control's new value), when the websocket delivers the first message after it (the
kernel's "busy") and the last one before the views' last redraw (the last view's update), as the page's
main thread sees them.

Reference rows: every lesson's page gets one more cell, a slider redrawing a text through the kernel
(``NN Jupyter alone``: Jupyter and ipywidgets alone on that page, the least an explorer there can take),
and "lesson" 00 is a page of its own with that slider.

Run: ``.venv/bin/python -m bench.bench_browser [--lessons NN …] [--changes N] [--runs R]
[--baseline DIR] [--json PATH]``. ``--baseline DIR`` times a second checkout's attnlib too (e.g. a
``git worktree`` of an older commit) with its own lessons, in a second JupyterLab, taking turns lesson
by lesson. ``--runs R`` repeats the whole run, each with a new JupyterLab and Chromium, and pools the
changes: the spread between runs is larger than within one.
Goals: median ≤ 30 ms and p90 ≤ 60 ms per explorer.
"""

from __future__ import annotations

import argparse
import math
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from bench import results
from harness.labdriver import CHROMIUM_ARGS, SETTLED_JS, find_chromium, open_and_run_all, start_lab_on_lessons

LESSONS = results.REPO / "notebooks"

# the reference row: a slider redrawing a text through the kernel, Jupyter and ipywidgets alone (the least any
# explorer can take), appended to every lesson's page; and "lesson" 00, a page of its own with that slider
REFERENCE = "00_reference.ipynb"
JUPYTER_ALONE = f"""# bench: "{results.JUPYTER_ALONE}"
import ipywidgets as widgets

bench_slider = widgets.IntSlider(description="n", max=50)
bench_text = widgets.HTML(value="0")
bench_slider.observe(lambda change: setattr(bench_text, "value", str(change.new)), names="value")
widgets.VBox([bench_slider, bench_text])"""

# every widget output with a live view: the explorer its cell builds ("ScalingExplorer"), the name in a
# "# bench: NAME" comment of the cell (the reference rows), or null
NAMES_JS = """
(id) => [...document.getElementById(id).querySelectorAll('.jp-OutputArea-output')]
  .filter(o => o.querySelector('.jupyter-widgets, .attnlib-explorer'))
  .map(o => {
    const source = o.closest('.jp-Cell')?.querySelector('.jp-InputArea-editor')?.textContent || '';
    const given = source.match(/# bench: "([^"]+)"/);
    if (given) return given[1];
    const explorer = o.querySelector('.attnlib-explorer');
    if (explorer) return explorer.dataset.explorer;
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

# the widget outputs of a notebook panel (what NAMES_JS, ARM_JS and CONTROLS_JS number k)
OUTPUTS_JS = """(id) => [...document.getElementById(id).querySelectorAll('.jp-OutputArea-output')]
  .filter(o => o.querySelector('.jupyter-widgets, .attnlib-explorer'))"""

# arm the clock on output k: the next keydown / click / input's timeStamp starts it. What stops it: an explorer
# of the one-model design (``.attnlib-explorer``) dispatches ``attnlib:shown`` once it has drawn a state (its
# ``detail.source``: "table", drawn in the page, or "kernel", the kernel's answer); any other output (the
# checkout before it, the reference rows) is watched by a MutationObserver on its views; with
# ``watch = "mutations"`` an explorer too (``floor``: its views' outline, not a new state).
# window.__benchFirst resolves (true) once the frame after the first change has begun, false when nothing
# changed within 5 s; window.__benchFinish() resolves to {first, all, source, sent, reply, answer} (ms) once the
# last change seen so far is on screen: call it when the kernel has answered everything (SETTLED_JS)
ARM_JS = f"""
([id, k, watch]) => {{
  const INPUTS = ['keydown', 'click', 'input', 'change'];
  const out = ({OUTPUTS_JS})(id)[k];
  const explorer = out.querySelector('.attnlib-explorer');
  const events = explorer && watch !== 'mutations';
  let views = [...out.querySelectorAll(explorer ? '[data-view]' : '.attn-heatmap')];
  if (!views.length) views = [...out.querySelectorAll('.widget-html-content')];  // a reference row
  let t0 = null;
  const start = (ev) => {{ if (t0 === null) t0 = ev.timeStamp; }};
  for (const type of INPUTS) window.addEventListener(type, start, {{capture: true}});
  window.__benchMessages = [];
  window.__benchSent = [];
  let first = null, last = null, changed = null, source = null, pending = Promise.resolve(), seenFirst;
  window.__benchFirst = new Promise((resolve) => {{ seenFirst = resolve; }});
  const giveUp = setTimeout(() => seenFirst(false), 5000);
  const seen = (from) => {{
    clearTimeout(giveUp);
    changed = performance.now();
    if (source === null) source = from;
    // the frame that paints this change (this one, when made in its animation callbacks), then the next one
    // begins: the change is on screen
    pending = new Promise((resolve) => {{
      const stop = () => {{
        const shown = performance.now();
        if (first === null) first = shown;
        last = shown;
        seenFirst(true);
        resolve();
      }};
      if (window.__benchInFrame) requestAnimationFrame(stop);
      else requestAnimationFrame(() => requestAnimationFrame(stop));
    }});
  }};
  const shown = (ev) => seen(ev.detail.source);
  const obs = new MutationObserver(() => seen('mutation'));
  if (events) explorer.addEventListener('attnlib:shown', shown);
  else for (const v of views) obs.observe(v, {{subtree: true, childList: true, attributes: true, characterData: true}});
  window.__benchFinish = async () => {{
    await pending;
    obs.disconnect();
    if (events) explorer.removeEventListener('attnlib:shown', shown);
    for (const type of INPUTS) window.removeEventListener(type, start, {{capture: true}});
    if (first === null) return {{first: null}};
    const got = window.__benchMessages.filter(t => t >= t0);
    const before = got.filter(t => t <= changed);
    const sent = window.__benchSent.filter(t => t >= t0);
    return {{first: first - t0, all: last - t0, source, sent: sent.length ? sent[0] - t0 : null,
            reply: got.length ? got[0] - t0 : null, answer: before.length ? before[before.length - 1] - t0 : null}};
  }};
}}
"""


# the controls of output k a learner changes: [kind, index] (a ToggleButtons' chosen button is left out); an
# explorer of the one-model design: its [data-control] inputs, by name ([kind, name])
CONTROLS_JS = f"""
([id, k]) => {{
  const out = ({OUTPUTS_JS})(id)[k];
  const found = [];
  const explorer = out.querySelector('.attnlib-explorer');
  if (explorer) {{
    for (const c of explorer.querySelectorAll('[data-control]')) {{
      if (c.disabled || c.closest('[disabled]') || !c.checkVisibility()) continue;
      const name = c.dataset.control;
      if (c.tagName === 'SELECT' && c.options.length > 1) found.push(['menu', name]);
      else if (c.type === 'range') found.push(['range', name]);
      else if (c.type === 'checkbox') found.push(['check', name]);
      else if (c.tagName === 'TEXTAREA' || c.type === 'text' || c.type === 'number') found.push(['typed', name]);
      else if (c.getAttribute('role') === 'radiogroup') found.push(['radio', name]);
    }}
    return found;
  }}
  out.querySelectorAll('select').forEach((s, i) => {{
    if (s.options.length > 1 && !s.disabled) found.push(['select', i]);
  }});
  out.querySelectorAll('.noUi-handle').forEach((h, i) => {{
    if (!h.closest('[disabled]')) found.push(['slider', i]);
  }});
  out.querySelectorAll('.widget-toggle-button, .widget-checkbox input').forEach((b, i) => {{
    const chosen = b.closest('.widget-toggle-buttons') && b.classList.contains('mod-active');
    if (!b.disabled && !chosen) found.push(['toggle', i]);
  }});
  return found;
}}
"""


def change(page, output, kind: str, index: int | str, step: int) -> None:
    """One learner's change of control ``(kind, index)`` of ``output`` through real input events (a typed
    control: the key that commits what :func:`prepare` typed)."""
    if kind in ("select", "menu"):
        select = output.locator("select").nth(index) if kind == "select" else _control(output, index)
        now, n = select.evaluate("s => [s.selectedIndex, s.options.length]")
        select.select_option(index=(now + 1) % n)
    elif kind == "slider":
        handle = output.locator(".noUi-handle").nth(index)
        now, lo, hi = (float(handle.get_attribute(a)) for a in ("aria-valuenow", "aria-valuemin", "aria-valuemax"))
        key = "ArrowRight" if step % 8 < 4 else "ArrowLeft"
        key = "ArrowLeft" if now >= hi else "ArrowRight" if now <= lo else key
        handle.focus()
        page.keyboard.press(key)
    elif kind == "range":  # a click on the track one step along (JupyterLab takes the arrow keys' default here)
        track = _control(output, index)
        now, lo, hi = (float(x) for x in track.evaluate("r => [r.value, r.min, r.max]"))
        box = track.bounding_box()
        per_step = (box["width"] - 16) / (hi - lo)
        jump = max(1, math.ceil(10 / per_step))  # off the thumb (16 px wide): a click on it moves nothing
        to = now + (jump if step % 8 < 4 else -jump)
        to = now - jump if to > hi else now + jump if to < lo else to
        track.click(position={"x": 8 + (to - lo) * per_step, "y": box["height"] / 2})
    elif kind == "typed":  # a textarea commits when it loses the focus, a field on Enter
        area = _control(output, index).evaluate("f => f.tagName === 'TEXTAREA'")
        page.keyboard.press("Tab" if area else "Enter")
    elif kind == "check":
        _control(output, index).click()
    elif kind == "radio":
        _control(output, index).locator("button:not([aria-checked='true']):not([disabled])").first.click()
    else:
        output.locator(".widget-toggle-button, .widget-checkbox input").nth(index).click()


def prepare(page, output, kind: str, index: int | str, step: int) -> None:
    """Before the clock starts: type into a typed control a text the explorer's table does not hold (its own
    text with one more digit, a new one each time)."""
    if kind != "typed":
        return
    field = _control(output, index)
    field.focus()
    page.keyboard.press("End")
    if step:
        page.keyboard.press("Backspace")
    page.keyboard.type(str(step % 9 + 1))


def _control(output, name: str):
    return output.locator(f'[data-control="{name}"]').first


def output_of(page, panel: str, k: int):
    """Widget output ``k`` of the notebook panel (the outputs OUTPUTS_JS, ARM_JS and CONTROLS_JS number)."""
    return page.locator(f"#{panel} .jp-OutputArea-output:has(.jupyter-widgets, .attnlib-explorer)").nth(k)


def open_lesson(browser, server, lesson: Path) -> tuple[object, str]:
    """``lesson`` opened in a new browser context with the page's clocks (PAGE_CLOCKS_JS) and run top to bottom;
    ``(page, panel id)``."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.add_init_script(PAGE_CLOCKS_JS)
    page = context.new_page()
    return page, open_and_run_all(page, server, f"notebooks/{lesson.name}", workspace=lesson.stem)


def time_output(page, panel: str, k: int, changes: int) -> dict[str, list[float]]:
    """``{"first": ms, "all": ms, "reply": ms, "answer": ms}`` per change of widget output ``k`` (after two
    that warm up); an explorer of the one-model design also splits them by where the state was drawn from
    (``"inpage"``: the page's table, ``"kernel"``: the kernel's answer) and gets ``changes`` more of its typed
    controls (the kernel's); and ``"floor"``: the same clock on a change that never leaves the page (an arrow
    key moving the focused cell of the first view redraws its outline), what the browser alone takes."""
    output = output_of(page, panel, k)
    output.scroll_into_view_if_needed()
    controls = page.evaluate(CONTROLS_JS, [panel, k])
    moved = [c for c in controls if c[0] != "typed"]
    typed = [c for c in controls if c[0] == "typed"]
    plan = [moved[step % len(moved)] for step in range(changes + 2)] if moved else []
    plan += [typed[step % len(typed)] for step in range(changes + 2)] if typed else []
    times: dict[str, list[float]] = {
        "first": [],
        "all": [],
        "inpage": [],
        "kernel": [],
        "sent": [],
        "reply": [],
        "answer": [],
        "floor": [],
    }
    for step, (kind, index) in enumerate(plan):
        prepare(page, output, kind, index, step)
        page.evaluate(ARM_JS, [panel, k, "auto"])
        change(page, output, kind, index, step)
        page.evaluate("() => window.__benchFirst")
        page.evaluate(SETTLED_JS, panel)
        got = page.evaluate("() => window.__benchFinish()")
        warm = step < 2 or (typed and moved and changes + 2 <= step < changes + 4)
        if warm or got["first"] is None:
            continue
        times["first"].append(got["first"])
        times["all"].append(got["all"])
        where = {"table": "inpage", "kernel": "kernel"}.get(got["source"])
        if where:
            times[where].append(got["all"])
        for phase in ("sent", "reply", "answer"):
            if got[phase] is not None:
                times[phase].append(got[phase])
    grid = output.locator(".attn-heatmap-grid").first
    for step in range(changes + 2 if controls and grid.count() else 0):
        grid.focus()
        page.evaluate(ARM_JS, [panel, k, "mutations"])
        page.keyboard.press("ArrowRight" if step % 2 == 0 else "ArrowLeft")
        page.evaluate("() => window.__benchFirst")
        got = page.evaluate("() => window.__benchFinish()")
        page.keyboard.press("Escape")  # the tooltip away
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
                os.environ["PYTHONPATH"] = str(checkout or results.REPO)  # this checkout's attnlib, not the venv's
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
    """Append :data:`JUPYTER_ALONE` to every lesson of ``notebooks``; with ``own_page``, write the page of
    "lesson" 00 (once per run: this checkout's)."""
    import nbformat

    for path in notebooks.glob("[0-9][0-9]_*.ipynb"):
        notebook = nbformat.read(path, as_version=4)
        notebook.cells.append(nbformat.v4.new_code_cell(JUPYTER_ALONE))
        nbformat.write(notebook, path)
    if not own_page:
        return
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(JUPYTER_ALONE)])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(notebook, notebooks / REFERENCE)


def _measure_lesson(browser, server, lesson: Path, changes: int, into: dict, path: str) -> None:
    if not (server.root / "notebooks" / lesson.name).exists():
        return  # a lesson (or the reference page) this checkout does not have
    page, panel = open_lesson(browser, server, lesson)
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
