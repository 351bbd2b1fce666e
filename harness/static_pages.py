"""Helpers for the pages that have no kernel (the site and the decks): open them from disk or over http in
headless Chromium, with every other request blocked and recorded, and wait until their widgets are drawn.

Used by tests/browser/test_site.py, test_site_pages.py, test_slides.py, test_a11y.py and bench/bench_static.py.
"""

from __future__ import annotations

import atexit
import functools
import http.server
import re
import threading
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import NamedTuple

from playwright.sync_api import TimeoutError as PlaywrightTimeout

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


def open_page(
    browser,
    url: str,
    *,
    viewport: dict | None = None,
    loaded: list[str] | None = None,
    init_script: str | None = None,
):
    """A new page of ``browser`` at ``url`` with every request but file:, data:, blob: and 127.0.0.1 blocked;
    returns (page, blocked URLs, page errors and console errors). ``loaded``: a list that receives the URL of
    every request the page completes; ``init_script``: a script run in the page before its own."""
    page = browser.new_page(viewport=viewport or {"width": 1280, "height": 900})
    blocked, errors = offline(page, local_servers=True)
    if loaded is not None:
        page.on("requestfinished", lambda request: loaded.append(request.url))
    page.on("console", lambda message: message.type == "error" and errors.append(f"console: {message.text}"))
    if init_script is not None:
        page.add_init_script(init_script)
    page.goto(url, wait_until="load")
    return page, blocked, errors


class Opened(NamedTuple):
    """A page :class:`SharedPages` opened: the page, the requests it tried that were blocked, its page and
    console errors, and every URL it loaded."""

    page: object
    blocked: list[str]
    errors: list[str]
    loaded: list[str]


class SharedPages:
    """Pages of ``browser`` that several tests read, each opened once (:func:`open_page`, ``init_script`` run in
    each, then every widget drawn) instead of once per test: :meth:`get` gives the page of ``url``, opened on
    the first call and kept; a test that changes its page (moves a control, a slide) calls :meth:`take`, which
    gives the kept page and keeps it no more (or opens one, when none is kept: a test run alone), and closes it
    when done. A module puts its tests that change a page after those that only read it, so every test sees the
    page as it opened; a test's failure is its own (the blocked requests and the errors are the page's since it
    opened, so a test sees any an earlier one caused too)."""

    def __init__(self, browser, *, viewport: dict | None = None, init_script: str | None = None) -> None:
        self.browser, self.viewport, self.init_script = browser, viewport, init_script
        self.kept: dict[str, Opened] = {}

    def _open(self, url: str) -> Opened:
        loaded: list[str] = []
        page, blocked, errors = open_page(
            self.browser, url, viewport=self.viewport, loaded=loaded, init_script=self.init_script
        )
        try:
            wait_for_widgets(page)
        except BaseException:
            page.close()
            raise
        return Opened(page, blocked, errors, loaded)

    def get(self, url: str) -> Opened:
        """The page at ``url``, its widgets drawn, for a test that only reads it."""
        if url not in self.kept:
            self.kept[url] = self._open(url)
        return self.kept[url]

    def take(self, url: str) -> Opened:
        """The page at ``url``, its widgets drawn, for a test that changes it: the caller closes it."""
        return self.kept.pop(url, None) or self._open(url)

    def close(self) -> None:
        for opened in self.kept.values():
            opened.page.close()
        self.kept.clear()


def wait_for_widgets(page, timeout: float = 60_000) -> int:
    """Wait until html-manager has drawn every saved widget view of ``page``; returns how many there are."""
    page.wait_for_function(WIDGETS_DRAWN_JS, timeout=timeout)
    return page.locator(WIDGET_VIEW).count()


# ------------------------------------------------------------------------------------ explorers in a page
# the DOM contract of issue #37 (attnlib/show/static/explorer.js): root .attnlib-explorer[data-explorer], each
# control's input [data-control], each view [data-view], each text [data-text]; after drawing a state the root
# dispatches "attnlib:shown" and counts it in data-shown. The page keeps, per root, the values last shown.
WATCH_JS = """() => {
  if (window.__attnWatch) return;
  window.__attnWatch = true;
  document.addEventListener('attnlib:shown', (ev) => {
    ev.target.__attnValues = ev.detail.values;
    ev.target.__attnSource = ev.detail.source;
  }, true);
}"""

# every explorer of the page: its class, its controls (tag, type, disabled), its views and whether it has the
# no-kernel note
EXPLORERS_JS = """() => [...document.querySelectorAll('.attnlib-explorer')].map((root) => ({
  explorer: root.dataset.explorer,
  shown: Number(root.dataset.shown),
  note: root.querySelector('[data-note="no-kernel"]')?.textContent || null,
  views: [...root.querySelectorAll('[data-view]')].map((v) => v.dataset.view),
  controls: [...root.querySelectorAll('[data-control]')].map((c) => ({
    name: c.dataset.control,
    tag: c.tagName.toLowerCase(),
    type: c.getAttribute('type') || (c.getAttribute('role') === 'radiogroup' ? 'radiogroup' : ''),
    disabled: c.matches('[role=radiogroup]') ? [...c.querySelectorAll('button')].every((b) => b.disabled)
      : c.disabled,
    options: c.tagName === 'SELECT' ? c.options.length : c.matches('[role=radiogroup]')
      ? c.querySelectorAll('button').length : null,
  })),
}))"""

# what explorer k draws now: every view's numbers (the grid's cell texts), colours, pixels (a canvas) and whole
# markup (outlines, labels, title), every text; and the values it was drawn for
DRAWN_JS = """(k) => {
  const root = document.querySelectorAll('.attnlib-explorer')[k];
  const views = {};
  for (const v of root.querySelectorAll('[data-view]')) {
    const texts = [...v.querySelectorAll('svg.attn-heatmap-grid text')].map((t) => t.textContent);
    const fills = [...v.querySelectorAll('svg.attn-heatmap-grid rect')].map((r) => r.getAttribute('fill'));
    const canvas = v.querySelector('canvas.attn-heatmap-pixels');
    const pixels = canvas && canvas.width ? canvas.toDataURL() : '';
    views[v.dataset.view] = {texts, fills, pixels, html: v.innerHTML};
  }
  const texts = Object.fromEntries([...root.querySelectorAll('[data-text]')].map((t) => [t.dataset.text, t.innerHTML]));
  return {views, texts, values: root.__attnValues || null, source: root.__attnSource || null,
          shown: Number(root.dataset.shown)};
}"""

# in a reveal.js deck, go to the slide that holds explorer k (other slides are hidden) through its address
# (#/h/v: nbconvert's decks keep reveal.js in require.js, not in window); elsewhere nothing
SHOW_SLIDE_JS = """(k) => {
  const inner = document.querySelectorAll('.attnlib-explorer')[k].closest('.reveal .slides section');
  if (!inner || inner.classList.contains('present')) return;
  const outer = inner.parentElement.closest('.reveal .slides section') || inner;
  const h = [...outer.parentElement.children].filter((s) => s.tagName === 'SECTION').indexOf(outer);
  const v = outer === inner ? 0 : [...outer.children].filter((s) => s.tagName === 'SECTION').indexOf(inner);
  location.hash = `#/${h}/${v}`;
}"""

# where the pointer goes to hover cell (i, j) of view `view` of explorer k (its slide shown, the grid scrolled into
# view unless `still`): the cell's centre, from the grid's box and its data-rows / data-cols; null when the grid is not
# what is there
CELL_POINT_JS = """([k, view, i, j, still]) => {
  const root = document.querySelectorAll('.attnlib-explorer')[k];
  const grid = root.querySelector(`[data-view="${view}"] svg.attn-heatmap-grid`);
  if (!grid) return null;
  if (!still) grid.scrollIntoView({block: 'center', inline: 'center', behavior: 'instant'});  // not smooth (Furo's)
  const box = grid.getBoundingClientRect();
  const [rows, cols] = [Number(grid.dataset.rows), Number(grid.dataset.cols)];
  const x = box.left + ((j + 0.5) * box.width) / cols, y = box.top + ((i + 0.5) * box.height) / rows;
  return grid.contains(document.elementFromPoint(x, y)) ? {x, y} : null;
}"""

# what the tooltip of view `view` of explorer k shows: its cell's labels, value and explanation, and whether it is
# still waiting for one
TOOLTIP_JS = """([k, view]) => {
  const root = document.querySelectorAll('.attnlib-explorer')[k];
  const tip = root.querySelector(`[data-view="${view}"] .attn-heatmap-tooltip`);
  const text = (selector) => tip.querySelector(selector)?.textContent ?? '';
  return {shown: !tip.hidden, head: text('.attn-tip-head'), value: text('.attn-tip-value'),
          why: text('.attn-tip-why:not(.attn-tip-pending)'), pending: Boolean(tip.querySelector('.attn-tip-pending'))};
}"""

# every view's shape as its grid says it (data-rows, data-cols), in explorer k
SHAPES_JS = """(k) => Object.fromEntries([...document.querySelectorAll('.attnlib-explorer')[k]
  .querySelectorAll('[data-view]')].map((v) => {
    const grid = v.querySelector('svg.attn-heatmap-grid');
    return [v.dataset.view, [Number(grid?.dataset.rows || 0), Number(grid?.dataset.cols || 0)]];
  }))"""

ENUMERABLE = {"select", "range", "checkbox", "radiogroup"}


def kind_of(control: dict) -> str:
    """``select``, ``range``, ``checkbox``, ``radiogroup`` (the controls a table enumerates) or ``typed``."""
    if control["tag"] == "select":
        return "select"
    if control["type"] in ("range", "checkbox", "radiogroup"):
        return control["type"]
    return "typed"


def movable(control: dict) -> bool:
    """Whether a page with no kernel can move ``control``: enabled, enumerable, and with somewhere to go."""
    return not control["disabled"] and kind_of(control) in ENUMERABLE and (control["options"] or 2) > 1


def explorers(page) -> list[dict]:
    """Every explorer of ``page`` (:data:`EXPLORERS_JS`), once each has drawn its first state and fetched what it
    fetches once drawn (its ``data-fetched``: a small table's other chunks, the views' hover texts)."""
    page.evaluate(WATCH_JS)
    page.wait_for_function(
        "() => [...document.querySelectorAll('.attnlib-explorer')]"
        ".every((r) => Number(r.dataset.shown) > 0 && r.dataset.fetched === 'true')"
    )
    return page.evaluate(EXPLORERS_JS)


def drawn(page, k: int) -> dict:
    """What explorer ``k`` of ``page`` draws now (:data:`DRAWN_JS`)."""
    return page.evaluate(DRAWN_JS, k)


def move(page, k: int, control: dict, step: int = 1) -> None:
    """Change control ``control`` of explorer ``k`` through real input (a key press on a menu or a slider, a
    click on a check box or a button), ``step`` places on, and wait until the explorer has drawn the change
    (its ``data-shown`` grew): never on the clock."""
    page.evaluate(SHOW_SLIDE_JS, k)
    root = page.locator(".attnlib-explorer").nth(k)
    root.wait_for(state="visible")
    before = int(root.get_attribute("data-shown") or 0)
    target = root.locator(f'[data-control="{control["name"]}"]')
    kind = kind_of(control)
    if kind == "select":
        n = control["options"]
        now = int(target.evaluate("(s) => s.selectedIndex"))
        target.select_option(index=(now + step) % n)
    elif kind == "range":
        at_end = target.evaluate("(r) => Number(r.value) >= Number(r.max)")
        target.focus()
        page.keyboard.press("ArrowLeft" if at_end else "ArrowRight")
    elif kind == "checkbox":
        target.click()
    elif kind == "radiogroup":
        buttons = target.locator("button")
        now = int(
            target.evaluate("(g) => [...g.querySelectorAll('button')].findIndex((b) => b.ariaChecked === 'true')")
        )
        buttons.nth((now + step) % control["options"]).click()
    else:
        raise ValueError(f"control {control['name']!r} ({control['tag']}) is typed into, not enumerable")
    page.wait_for_function(
        "([k, before]) => Number(document.querySelectorAll('.attnlib-explorer')[k].dataset.shown) > before",
        arg=[k, before],
        timeout=10_000,
    )


# ---------------------------------------------------------------------------------- Python's side of it
PROBE = """
import gc, json
from attnlib.formatting import annotation
from attnlib.show.explorer import Explorer
_ask = json.loads({ask!r})
_by_id = {{}}
for _o in gc.get_objects():
    if isinstance(_o, Explorer):
        _by_id[_o.page.model_id] = _o
_order = [i for i in _ask["ids"] if i in _by_id]
_answer = []
for _k, _values, _cells in _ask["states"]:
    _ex = _by_id[_order[_k]]
    _v = dict(_ex.values_now())  # then each control set as the page has it, through the explorer's transition
    for _n, _x in _values.items():
        _v = dict(_ex.transition({{**_v, _n: _x}}, _n))
    _shown = _ex.compute(_v)
    _hovered = {{}}
    for _name, _at in _cells.items():
        _view = _ex.views[_name]
        _view.show(_shown.views[_name])  # the view at this state: what its explain() answers
        _f = _shown.views[_name]
        _hovered[_name] = [[f"{{_f.row_labels[i]}}, {{_f.col_labels[j]}}", float(_f.matrix[i, j]), _view.explain(i, j)]
                           for i, j in _at]
    _answer.append({{"numbers": {{name: [annotation(float(x), f.decimals) for x in f.matrix.reshape(-1)]
                                 for name, f in _shown.views.items()}}, "cells": _hovered}})
print("ATTNLIB-NUMBERS", json.dumps(_answer))
"""


def python_states(lesson: Path, states: list[Sampled]) -> list[dict]:
    """For each sampled state: ``{"numbers": every view's numbers as Python shows them, "cells": per view, each
    hovered cell's [labels, value, explanation]}``, from ``compute(values)`` of the ``k``-th explorer the lesson
    displays (numbers formatted by :func:`attnlib.formatting.annotation`, row by row; the explanation is the
    view's ``explain(i, j)`` once it shows that state), the values reached from the explorer's own state by
    setting each control through its ``transition`` (which resets what a learner would type for another
    example). The lesson runs once in a fresh kernel (nbclient), as the site's build ran it; that kernel
    answers every later call for the lesson (``compute`` is pure: what one probe asked does not change what the
    next finds) until :func:`close_kernels`. With :func:`share_answers` set (the browser tests' conftest.py), the
    answers are kept in files of the run's shared folder too, under a lock per lesson: a module (or an xdist
    worker) that asks what another asked reads the answer and starts no kernel."""
    import hashlib
    import json

    asked = [
        [s.k, s.values, {name: [cell for cell, _ in hovered] for name, hovered in s.hovers.items()}] for s in states
    ]
    # the lesson by name and content: a copy of it elsewhere (a deck's) asks the same kernel the same thing
    key = json.dumps([lesson.name, hashlib.sha256(lesson.read_bytes()).hexdigest(), asked])
    if key in _ANSWERS:  # the same states from disk and over http: asked once
        return _ANSWERS[key]
    if _SHARED:
        from filelock import FileLock

        folder = _SHARED[0]
        folder.mkdir(parents=True, exist_ok=True)
        file = folder / f"{lesson.stem}-{hashlib.sha256(key.encode()).hexdigest()[:24]}.json"
        with FileLock(str(folder / f"{lesson.stem}.lock")):  # one kernel per lesson at a time, in the whole run
            if file.is_file():
                _ANSWERS[key] = json.loads(file.read_text(encoding="utf-8"))["answer"]
                return _ANSWERS[key]
            answer = _ask_kernel(lesson, asked)
            part = file.with_suffix(".part")
            part.write_text(json.dumps({"key": key, "answer": answer}), encoding="utf-8")
            part.replace(file)
    else:
        answer = _ask_kernel(lesson, asked)
    _ANSWERS[key] = answer
    return answer


def share_answers(folder: Path | None) -> None:
    """Keep :func:`python_states`' answers in ``folder`` (a folder every worker of a test run shares; ``None``:
    in this process only)."""
    _SHARED[:] = [folder] if folder is not None else []


def _ask_kernel(lesson: Path, asked: list) -> list[dict]:
    """Run the probe for the states ``asked`` in the lesson's kernel (:func:`_lesson_kernel`)."""
    import json

    import nbformat

    client, ids = _lesson_kernel(lesson)
    probe = nbformat.v4.new_code_cell(PROBE.format(ask=json.dumps({"ids": ids, "states": asked})))
    client.nb.cells.append(probe)
    client.execute_cell(probe, len(client.nb.cells) - 1)
    text = "".join(o.get("text", "") for o in probe.outputs if o.get("name") == "stdout")
    line = next((line for line in text.splitlines() if line.startswith("ATTNLIB-NUMBERS ")), None)
    if line is None:
        raise RuntimeError(f"{lesson.name}: the probe printed no numbers: {probe.outputs}")
    return json.loads(line.split(" ", 1)[1])


def _lesson_kernel(lesson: Path):
    """The kernel that ran ``lesson`` top to bottom (started and run on the first call), and the model ids of
    the widget views the lesson displayed, in order."""
    if lesson not in _KERNELS:
        import nbformat
        from nbclient import NotebookClient

        nb = nbformat.read(lesson, as_version=4)
        client = NotebookClient(
            nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(lesson.parent)}}
        )
        _STACK.enter_context(client.setup_kernel())
        for index, cell in enumerate(nb.cells):
            if cell.cell_type == "code":
                client.execute_cell(cell, index)
        ids = [
            o["data"][WIDGET_VIEW_MIME]["model_id"]
            for c in nb.cells
            for o in c.get("outputs", [])
            if WIDGET_VIEW_MIME in o.get("data", {})
        ]
        _KERNELS[lesson] = (client, ids)
    return _KERNELS[lesson]


def close_kernels() -> None:
    """Shut down every kernel :func:`python_states` started (a test module's teardown calls it; so does exit)."""
    _KERNELS.clear()
    _STACK.close()


#: python_states' answers, by lesson and states asked; its kernels, by lesson (closed by close_kernels); the
#: folder its answers are shared in (share_answers), if any
_ANSWERS: dict[str, list[dict]] = {}
_SHARED: list[Path] = []
_KERNELS: dict[Path, tuple] = {}
_STACK = ExitStack()
atexit.register(close_kernels)

WIDGET_VIEW_MIME = "application/vnd.jupyter.widget-view+json"


def lesson_outputs(lesson: Path) -> tuple[int, int, int]:
    """(figures, widgets, fallbacks) a lesson displays: PNG outputs that are not widgets, widget outputs,
    and widget outputs with a PNG fallback (every explorer's)."""
    import nbformat

    nb = nbformat.read(lesson, as_version=4)
    data = [o.get("data", {}) for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    widgets = [d for d in data if WIDGET_VIEW_MIME in d]
    figures = sum("image/png" in d for d in data) - sum("image/png" in d for d in widgets)
    return figures, len(widgets), sum("image/png" in d for d in widgets)


def check_explorers(page) -> list[str]:
    """Move every control of every explorer on ``page`` that a page with no kernel can move, and check the
    contract with no kernel; returns what is wrong (empty: all good):

    - each enabled enumerable control moves the explorer's views or texts, drawn from the table (``source``
      ``"table"``), never waiting for a kernel;
    - a control that is disabled is named by the explorer's ``[data-note="no-kernel"]`` note, and an explorer
      has that note only when it disables something.
    """
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    problems = []
    for k, explorer in enumerate(explorers(page)):
        who = f"{explorer['explorer']} (#{k})"
        off = [c["name"] for c in explorer["controls"] if c["disabled"]]
        if off and not explorer["note"]:
            problems.append(f"{who}: {off} are disabled with no no-kernel note")
        if explorer["note"] and not off:
            problems.append(f"{who}: a no-kernel note but every control is enabled")
        problems += [f"{who}: the note does not name {name!r}" for name in off if name not in (explorer["note"] or "")]
        for control in filter(movable, explorer["controls"]):
            moved = False
            for _ in range(2):  # a second step when the first happens to show the same
                before = drawn(page, k)
                try:
                    move(page, k, control)
                except PlaywrightTimeout:
                    problems.append(f"{who} {control['name']}: enabled, but a change draws nothing")
                    break
                after = drawn(page, k)
                if after["source"] != "table":
                    problems.append(f"{who} {control['name']}: drawn from {after['source']!r}, not the table")
                if (after["views"], after["texts"]) != (before["views"], before["texts"]):
                    moved = True
                    break
            if not moved:
                problems.append(f"{who} {control['name']}: two changes moved no view and no text")
    return problems


class Sampled(NamedTuple):
    """A state a page drew after a random change: explorer ``k``, the values drawn, each view's numbers as the
    page writes them in its cells, and, per view, sampled cells ``(i, j)`` with what hovering each shows."""

    k: int
    values: dict
    numbers: dict[str, list[str]]
    hovers: dict[str, list[tuple[tuple[int, int], dict]]]


# set the range input of control `name` of explorer k to `value` (an integer slider's own number) as a drag ends there
SET_SLIDER_JS = """([k, name, value]) => {
  const root = document.querySelectorAll('.attnlib-explorer')[k];
  const range = root.querySelector(`input[type=range][data-control="${name}"]`);
  range.value = String(value);
  range.dispatchEvent(new Event('input', {bubbles: true}));
  range.dispatchEvent(new Event('change', {bubbles: true}));
}"""


def set_slider(page, k: int, name: str, value: int, timeout: float = 10_000) -> None:
    """Set integer slider ``name`` of explorer ``k`` to ``value`` and wait until the explorer has drawn a state
    (its ``data-shown`` grew: from the table, once the chunk the state needs is loaded), never on the clock."""
    page.evaluate(SHOW_SLIDE_JS, k)
    before = int(page.locator(".attnlib-explorer").nth(k).get_attribute("data-shown") or 0)
    page.evaluate(SET_SLIDER_JS, [k, name, value])
    page.wait_for_function(
        "([k, before]) => Number(document.querySelectorAll('.attnlib-explorer')[k].dataset.shown) > before",
        arg=[k, before],
        timeout=timeout,
    )


def sample_here(page, k: int, rng, cells: int = 2) -> Sampled:
    """What explorer ``k`` draws now, with ``cells`` cells of each view (random with ``rng``) hovered."""
    now = drawn(page, k)
    hovers: dict[str, list[tuple[tuple[int, int], dict]]] = {}
    for name, (rows, cols) in page.evaluate(SHAPES_JS, k).items():
        chosen = [(rng.randrange(rows), rng.randrange(cols)) for _ in range(cells if rows and cols else 0)]
        hovers[name] = [(cell, hover(page, k, name, cell)) for cell in chosen]
    numbers = {name: view["texts"] for name, view in now["views"].items()}
    return Sampled(k, now["values"], numbers, hovers)


def hover(page, k: int, view: str, cell: tuple[int, int]) -> dict:
    """Point at cell ``cell`` of view ``view`` of explorer ``k`` (real pointer input) and read its tooltip right
    away (:data:`TOOLTIP_JS`): a page with no kernel answers from its table in the same task, so ``pending`` is
    a hover that waits (for a kernel), never one that is slow. ``{"missed": True}`` when the cell is not under the
    pointer (covered, or off the page). Tried again (three times in all) when the cell moved while the pointer
    went there (the page's layout shifts as what scrolling brought into view loads: lazy images, fonts)."""
    shown: dict = {"missed": True}
    for _ in range(3):
        page.evaluate(SHOW_SLIDE_JS, k)
        page.mouse.move(0, 0)  # off every grid: the tooltip shown next is this cell's
        point = page.evaluate(CELL_POINT_JS, [k, view, *cell, False])
        if point is None:
            continue
        page.mouse.move(point["x"], point["y"])
        shown = page.evaluate(TOOLTIP_JS, [k, view])
        if page.evaluate(CELL_POINT_JS, [k, view, *cell, True]) == point:
            break
        shown = {"missed": True}
    return shown


def sample_states(page, seed: int = 0, moves: int = 3, cells: int = 2) -> list[Sampled]:
    """``moves`` random changes of each explorer's enabled enumerable controls on ``page`` (seeded); after each,
    what it draws, and ``cells`` random cells of each view hovered (:func:`hover`)."""
    import random

    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    rng = random.Random(seed)
    states = []
    for k, explorer in enumerate(explorers(page)):
        can = [c for c in explorer["controls"] if movable(c)]
        for _ in range(moves if can else 0):
            control = rng.choice(can)
            try:
                move(page, k, control, step=rng.randint(1, max(1, (control["options"] or 2) - 1)))
            except PlaywrightTimeout as silent:
                who = f"{explorer['explorer']} {control['name']}"
                raise AssertionError(f"{who}: enabled, but a change draws nothing") from silent
            states.append(sample_here(page, k, rng, cells))
    return states


def compare_with_python(states: list[Sampled], python: list[dict]) -> list[str]:
    """Where what a page drew differs from Python's (:func:`python_states` of the same states): the numbers in
    the cells (a view drawn without them, a large matrix, has none), and each hovered cell's labels, value (the
    page's full-precision number, the float64 Python holds, exactly) and explanation (``view.explain(i, j)``).
    Fails when nothing was compared, or a hover waited for an explanation."""
    problems = []
    compared = 0
    for state, py in zip(states, python, strict=True):
        at = f"explorer #{state.k} at {state.values}"
        for name, texts in state.numbers.items():
            if not texts:
                continue
            compared += 1
            if texts != py["numbers"].get(name):
                problems.append(f"{at}: view {name!r} shows {texts[:6]}…, Python {py['numbers'].get(name, [])[:6]}…")
        for name, hovered in state.hovers.items():
            for ((i, j), shown), (label, value, why) in zip(hovered, py["cells"][name], strict=True):
                where = f"{at}: view {name!r} cell ({i}, {j})"
                if shown.get("missed"):
                    problems.append(f"{where}: not under the pointer")
                    continue
                compared += 1
                if not shown["shown"] or shown["pending"]:
                    problems.append(f"{where}: hovered, the tooltip {'waits' if shown['pending'] else 'is hidden'}")
                page_value = float(shown["value"]) if shown["value"] else None
                if (shown["head"], page_value, shown["why"]) != (label, value, why):
                    problems.append(f"{where}: the page shows {shown}, Python {(label, value, why)}")
    if states and not compared:
        problems.append("nothing was compared: no view with numbers in its cells, no cell hovered")
    return problems


# a chunk file the page has asked for: a <script> each (table.js loadFile), seen from disk and http
CHUNK_SCRIPT = 'script[src*="attnlib-chunks/"]'
CHUNK_SCRIPTS_JS = f"""() => [...document.querySelectorAll('{CHUNK_SCRIPT}')].map((s) => s.src)"""

# watch for the next attnlib:shown of explorer k: its source and values, how many chunk files the page had asked
# for when it was drawn, and whether it was drawn in the task of the key press (a flag the press sets, a timeout
# clears). The promise is kept in the page (window.__attnNextShown), not returned: evaluate waits for a promise.
WATCH_NEXT_SHOWN_JS = f"""(k) => {{
  if (!window.__attnPressWatch) {{
    window.__attnPressWatch = true;
    window.addEventListener('keydown', () => {{
      window.__attnInPress = true;
      setTimeout(() => {{ window.__attnInPress = false; }}, 0);
    }}, true);
  }}
  const root = document.querySelectorAll('.attnlib-explorer')[k];
  window.__attnNextShown = new Promise((resolve) => root.addEventListener('attnlib:shown', (ev) => resolve({{
    source: ev.detail.source, values: ev.detail.values, inPress: Boolean(window.__attnInPress),
    scripts: document.querySelectorAll('{CHUNK_SCRIPT}').length,
  }}), {{once: true}}));
}}"""

CHUNKS_HERE_JS = f"""(n) => {{
  const asked = [...document.querySelectorAll('{CHUNK_SCRIPT}')];
  const held = window.attnlibChunks || {{}};
  return asked.length > n && asked.every((s) => s.src.split('/').pop().replace(/[.]js$/, '') in held);
}}"""


def step_slider(page, k: int, name: str) -> dict:
    """Step slider ``name`` of explorer ``k`` one place right through real input (a key press; left at its end)
    and give its next ``attnlib:shown`` (:data:`WATCH_NEXT_SHOWN_JS`), failing after 10 s without one."""
    page.evaluate(SHOW_SLIDE_JS, k)
    target = page.locator(".attnlib-explorer").nth(k).locator(f'[data-control="{name}"]')
    at_end = target.evaluate("(r) => Number(r.value) >= Number(r.max)")
    page.evaluate(WATCH_NEXT_SHOWN_JS, k)
    target.focus()
    page.keyboard.press("ArrowLeft" if at_end else "ArrowRight")
    return page.evaluate(
        "() => Promise.race([window.__attnNextShown, new Promise((_, no) => setTimeout(() => no("
        "new Error('no attnlib:shown within 10 s of the key press')), 10000))])"
    )


def check_chunk_walk(browser, url: str, lesson: Path, *, counted: bool, seed: int = 12, sizes: int = 5) -> list[str]:
    """Open lesson 12's page (or deck) at ``url``, step ``d_model`` twice with the keyboard, then choose ``sizes``
    sampled ``d_model`` values (not the first state's, whose chunk the page holds), each with a sampled
    ``n_tokens``, through its sliders; returns what is wrong: on opening, chunk files asked for but those of the
    sizes one step from the first (fetched once drawn, explorer.js fetchAround); a step not drawn from the table
    before any file was asked for (its chunk fetched while the learner looked), or not followed by its own next
    size's file; a size not drawn (no chunk file, or the no-kernel note); a number or a hover that is not Python's
    (:func:`compare_with_python`); a request leaving the page; an error. ``counted``: the page's requests are seen
    (over http), so no chunk file may load twice, and none but a size's own and its two neighbours'."""
    import random

    rng = random.Random(seed)
    loaded: list[str] = []
    page, blocked, errors = open_page(browser, url, loaded=loaded)
    problems: list[str] = []
    try:
        wait_for_widgets(page)
        k = next(i for i, e in enumerate(explorers(page)) if e["explorer"] == "PositionsExplorer")
        d_model = page.locator(".attnlib-explorer").nth(k).locator('[data-control="d_model"]')
        first = int(d_model.input_value())
        lo, hi = int(d_model.get_attribute("min") or 2), int(d_model.get_attribute("max") or 64)
        on_open = page.evaluate(CHUNK_SCRIPTS_JS)
        if len(on_open) != (lo < first) + (first < hi):
            problems.append(f"d_model = {first} drawn first; chunk files asked for on opening: {on_open}")
        for _ in range(2):  # a learner stepping the slider, looking at each size a moment
            asked = len(page.evaluate(CHUNK_SCRIPTS_JS))
            step = step_slider(page, k, "d_model")
            at = step["values"].get("d_model")
            if step["source"] != "table" or not step["inPress"] or step["scripts"] != asked:
                problems.append(
                    f"a step of d_model to {at}: drawn from {step['source']}, in the key press's task: "
                    f"{step['inPress']}, after asking for {step['scripts'] - asked} more chunk files"
                )
            if at is None or at >= hi:
                continue
            try:  # the chunk of the size after it asked for once drawn, and loaded
                page.wait_for_function(CHUNKS_HERE_JS, arg=asked, timeout=10_000)
            except PlaywrightTimeout:
                problems.append(f"d_model = {at} drawn: the chunk of the size one step on was not loaded")
        chosen = rng.sample([d for d in range(lo, hi + 1, 2) if d != first], sizes)
        walk = [(d, rng.choice([4, 8, 16, 40, 64])) for d in chosen]
        states = []
        grown = []
        for size, n_tokens in walk:
            before = len(page.evaluate(CHUNK_SCRIPTS_JS))
            set_slider(page, k, "d_model", size)
            set_slider(page, k, "n_tokens", n_tokens)
            states.append(sample_here(page, k, rng, cells=3))
            grown.append(len(page.evaluate(CHUNK_SCRIPTS_JS)) - before)
        notes = [n for n in page.locator('[data-note="no-kernel"]').all_text_contents() if "d_model" in n]
    finally:
        page.close()
    problems += [f"requests to the network: {blocked}"] if blocked else []
    problems += [f"page errors: {errors}"] if errors else []
    problems += [f"the no-kernel note for a chunk: {notes}"] if notes else []
    if max(grown) > 3:
        problems.append(f"a size asked for more than its own chunk file and its neighbours': {grown}")
    reached = [(s.values["d_model"], s.values["n_tokens"]) for s in states]
    problems += [f"the sizes drawn are {reached}, not {walk}"] if reached != walk else []
    chunks = [u for u in loaded if "attnlib-chunks/" in u]
    if counted and (len(chunks) != len(set(chunks)) or not sizes <= len(chunks) <= len(on_open) + 2 + 3 * sizes):
        problems.append(f"{sizes} sizes chosen after 2 steps, chunk files loaded: {chunks}")
    if not any(texts for s in states for texts in s.numbers.values()):
        problems.append("no size small enough to write its numbers in its cells was drawn")
    return problems + compare_with_python(states, python_states(lesson, states))


# ------------------------------------------------------------------------------------ accessibility (axe-core)
# axe-core from the npm registry (package.json pins it; node_modules/, never a CDN), run with the rules of WCAG
# 2.0, 2.1 and 2.2, levels A and AA (docs/teaching-guide.md, "Accessibility"); no preload: axe would fetch the
# page's style sheets again, which a page opened from disk refuses (CORS) with console errors
AXE_SCRIPT = Path(__file__).resolve().parents[1] / "node_modules" / "axe-core" / "axe.min.js"
AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22a", "wcag22aa"]
AXE_RUN_JS = """([context, options]) => axe.run(context ? document.querySelectorAll(context) : document, options)"""


def axe_violations(
    page, context: str | None = None, *, only: Sequence[str] | None = None, skip: Sequence[str] = ()
) -> list[str]:
    """axe-core's WCAG 2.x A/AA violations on ``page`` (or in the elements ``context`` selects), one line each: the
    rule, its impact, how many elements and the first of them with what to fix; empty when there is none. ``only``:
    these rules alone; ``skip``: all but these. Loads axe into the page (once) from node_modules/."""
    import pytest

    if not AXE_SCRIPT.is_file():
        pytest.fail("axe-core is missing from node_modules/: run npm ci (package-lock.json pins it)")
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.add_script_tag(content=AXE_SCRIPT.read_text(encoding="utf-8"))
    options = {
        "runOnly": {"type": "rule", "values": list(only)} if only else {"type": "tag", "values": AXE_TAGS},
        "rules": {rule: {"enabled": False} for rule in skip},
        "resultTypes": ["violations"],
        "preload": False,
    }
    found = page.evaluate(AXE_RUN_JS, [context, options])["violations"]
    return [
        f"{v['id']} ({v['impact']}, {len(v['nodes'])}×): {v['nodes'][0]['target']} — "
        + " ".join(v["nodes"][0]["failureSummary"].split())[:300]
        for v in found
    ]


# ------------------------------------------------------------------------- math typeset at build time (no MathJax)
# the site's and the decks' math is typeset when they are built (site/typeset.mjs); a page's text shows no TeX
TEX_LEFT = re.compile(r"\\\(|\\\[|\$\$")
DOLLAR_MATH_LEFT = re.compile(r"(?<!\\)\$[^$\s][^$]*(?<![\s\\])\$")  # $…$ (a deck's markdown math)
MATH_ERROR = re.compile(r"<mjx-merror\b[^>]*>")  # MathJax's error, with its message in data-mjx-error
DRAWN_MATH = re.compile(r"<mjx-math\b.*?</mjx-math>", re.S)  # what a formula draws (hidden from screen readers)
MATHJAX_LOADED = re.compile(r"""<script\b[^>]*(?:\bsrc\s*=\s*["'][^"']*mathjax|text/x-mathjax-config)""", re.I)


def math_problems(html: str, *, dollars: bool = False) -> list[str]:
    """What is wrong with a built page's math, one line each (none: every formula typeset at build time): a
    ``.math`` element (Sphinx's) holding no typeset formula, a formula (``mjx-container``) without the MathML a
    screen reader reads (assistive MathML) or with a MathJax error (``mjx-merror``), TeX delimiters ``\\(``,
    ``\\[``, ``$$`` (``dollars``: ``$…$`` too, a deck's) left in the text outside code, a MathJax script."""
    from bs4 import BeautifulSoup

    problems = [f"loads MathJax: {m.group(0)[:120]}" for m in MATHJAX_LOADED.finditer(html)]
    problems += [f"MathJax could not typeset: {m.group(0)[:200]}" for m in MATH_ERROR.finditer(html)]
    soup = BeautifulSoup(DRAWN_MATH.sub("<mjx-math></mjx-math>", html), "html.parser")  # a third less to parse
    for math in soup.select(".math"):
        if not math.select("mjx-container"):
            problems.append(f"a formula left as TeX: {math.get_text()[:120]!r}")
    for formula in soup.select("mjx-container"):
        if not formula.select("mjx-assistive-mml > math"):
            problems.append(f"a formula without its MathML for screen readers: {str(formula)[:120]}")
    for tag in soup.select("script, style, pre, code, textarea, mjx-assistive-mml"):
        tag.decompose()
    left = [TEX_LEFT] + ([DOLLAR_MATH_LEFT] if dollars else [])
    for text in soup.find_all(string=True):
        problems += [f"TeX left in the text: {text.strip()[:120]!r}" for pattern in left if pattern.search(text)]
    return problems
