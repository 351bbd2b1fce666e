"""Browser benchmark: control change → updated view on screen, in JupyterLab in headless Chromium.

For every lesson explorer (built with its defaults in one generated notebook) and for a bare
64×64 heatmap, the page changes one control (next dropdown option, a toggle, a slider step) and
times, with ``performance.now()`` in the page, until one of the explorer's views changed (a live
view's redraw, which stamps ``data-draw-start`` on it, or a new ``src`` of the old PNG ``<img>``)
and the next animation frame was painted ("first"), and
until the frame after the last view that changes has changed, once no view has changed for 150 ms
("all": every view of the explorer updated on screen). That is the whole round trip: browser →
kernel → recomputation → messages → browser redraw. A ToggleButtons' chosen button is never
clicked (that changes nothing).

The old PNG path (attnlib as of commit ``68c259e``) runs in the same invocation: a second
JupyterLab whose kernels import that commit's ``attnlib`` (extracted with ``git archive``, put
first on ``PYTHONPATH``). ``--old COMMIT`` compares with another commit instead (e.g. ``05d320f``,
the last whose live views drew their grids on canvases); the rows its ``attnlib`` has no explorer for
are left out of the old path.

``--no-relay`` adds the new path with ``Relay.enabled = False`` (one message per widget that changed
instead of one per change, see ``attnlib/show/relay.py``), in the same alternation.

``--explorers NAME …`` times only those explorers (``pipeline``: the linked explorer on the 8-token
sentence alone on its page, beside the floor and the 64×64 view) instead of all of them.

``--tracked-comms`` adds the new path with jupyter-server's own ``untracked_message_types`` (the
kernel's ``busy``/``idle`` around a widget message reach JupyterLab, which re-renders its kernel
indicators at each; :data:`TRACKED_COMMS`), in the same alternation.

``--lessons`` times the explorers where a learner meets them instead: each lesson of ``notebooks/``
opened in JupyterLab (its default windowing) and run top to bottom, then every widget output that
has a live view and a control timed as above, the lesson's other cells (text, figures, its other
explorers) on the page around it. The page matters: in one notebook that holds all 16 explorers
each change also composites the explorers drawn around it (Chromium's "Layerize" step covers the
whole painted page, see ``trace_browser.py``), and most explorers are slower there than in their
lessons (figures in README).

Run: ``.venv/bin/python bench/bench_browser.py [--changes N] [--runs R] [--no-relay] [--tracked-comms]
[--old COMMIT] [--explorers NAME …] [--lessons [NN …]]``; with ``--lessons``, ``--old COMMIT`` times the
same lessons with that commit's ``attnlib`` too, alternating (needs Debian's chromium); each path runs
in R fresh JupyterLab sessions (default 3), alternating, and the changes are pooled: one run's medians
move by ±5 ms from one session to the next.
Goals: median ≤ 30 ms and p90 ≤ 60 ms per explorer; 64×64 redraw ≤ 30 ms median.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "browser"))
from labdriver import (  # noqa: E402
    CHROMIUM_ARGS,
    SERVER_CONFIG,
    find_chromium,
    open_and_run_all,
    start_lab,
    start_lab_on_lessons,
)

LESSONS = REPO / "notebooks"

OLD_COMMIT = "68c259e"
EXPLORERS = (
    ("inputs", "InputsExplorer"),
    ("weights", "WeightsExplorer"),
    ("qkv", "QKVExplorer"),
    ("scores", "ScoresExplorer"),
    ("softmax", "SoftmaxExplorer"),
    ("weighting", "WeightingExplorer"),
    ("summing", "SummingExplorer"),
    ("scaling", "ScalingExplorer"),
    ("module", "ModuleExplorer"),
    ("sentence", "SentenceExplorer"),
    ("multihead", "MultiHeadExplorer"),
    ("pipeline", "PipelineExplorer"),
    ("positions", "PositionsExplorer"),
    ("training", "TrainingExplorer"),
    ("heads", "HeadsExplorer"),
    ("tiled", "TiledExplorer"),
)
# explorers built as their lesson builds them (the rest with their defaults); the linked explorer
# stays on the 8-token sentence (its example menu disabled) and is timed on its controls and on
# numbers typed into X and W_q
BUILD = {
    "PipelineExplorer": 'explorer = PipelineExplorer("003")\nexplorer.controls["example"].disabled = True\nexplorer',
    "TrainingExplorer": (
        "from attnlib import pretrained\n"
        'recipe = pretrained.RECIPES["reverse"]\n'
        "model, history = pretrained.train_recipe(recipe, steps=40, snapshot_steps=(0, 20, 40), eval_every=20,\n"
        "    progress=False)\n"
        "TrainingExplorer(history, model, recipe.task, step=0)"
    ),
    "HeadsExplorer": (
        "from attnlib import pretrained\n"
        'HeadsExplorer(pretrained.load("induction"), [7, 21, 3, 44, 9, 12, 7, 21, 3, 44, 9, 12], layer=1)'
    ),
}

BIG = """\
import ipywidgets as widgets
import numpy as np

rng = np.random.default_rng(0)
try:
    from attnlib.show import HeatmapView

    big = HeatmapView(rng.random((64, 64)), title="64x64")
    show = big.update
except ImportError:  # the old PNG path
    from attnlib.show.plots import Heatmap
    from attnlib.show.explorer import PlotView

    old = PlotView(Heatmap(rng.random((64, 64)), title="64x64"))
    big = old.image

    def show(matrix):
        old.plot.update(matrix)
        old.refresh()

choice = widgets.Dropdown(options=list(range(8)), description="matrix")
choice.observe(lambda change: show(rng.random((64, 64))), names="value")
widgets.VBox([choice, big])
"""


# the floor: JupyterLab's widget round trip with no attnlib at all (a dropdown sets a text)
FLOOR = """\
import ipywidgets as widgets

floor_choice = widgets.Dropdown(options=list(range(8)), description="floor")
floor_text = widgets.HTML("0")
floor_text.add_class("bench-floor")
floor_choice.observe(lambda change: setattr(floor_text, "value", str(change["new"])), names="value")
widgets.VBox([floor_choice, floor_text])
"""


# the new path without the relay: every widget sends its own message (Explorer.batched still holds
# them until the update ends), as before attnlib.show.relay
NO_RELAY = """\
from attnlib.show.relay import Relay

Relay.enabled = False
"""


def notebook(explorers: tuple[tuple[str, str], ...] = EXPLORERS, prologue: str = "") -> dict:
    cells = [
        {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": source}
        for source in ((prologue,) if prologue else ()) + (FLOOR, BIG)
    ]
    for module, name in explorers:
        source = f"from attnlib.show.{module} import {name}\n" + BUILD.get(name, f"{name}()")
        cells.append({"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": source})
    return {
        "cells": cells,
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }


# one timed change of output k: ms until a view changed and a frame was painted (first), until every
# view that changes has changed and been painted (all), the slowest view redraw (draw) and the
# browser part from the first redraw to its frame (screen)
CHANGE_JS = """
async ([id, k, step]) => {
  const QUIET = 150;
  const panel = document.getElementById(id);
  const outs = [...panel.querySelectorAll('.jp-OutputArea-output')].filter(o => o.querySelector('.jupyter-widgets'));
  const out = outs[k];
  const views = [...out.querySelectorAll('.attn-heatmap, img, .bench-floor')];
  const selects = [...out.querySelectorAll('select')].filter(s => s.options.length > 1 && !s.disabled);
  // a ToggleButtons' chosen button is left out: clicking it changes nothing
  const toggles = [...out.querySelectorAll('.widget-toggle-button, .widget-checkbox input')]
    .filter(b => !b.disabled && !(b.closest('.widget-toggle-buttons') && b.classList.contains('mod-active')));
  const handles = [...out.querySelectorAll('.noUi-handle')].filter(h => !h.closest('[disabled]'));
  const actions = [];  // {prep, fire}: prep runs before the clock starts
  for (const s of selects) actions.push({fire: () => { s.selectedIndex = (s.selectedIndex + 1) % s.options.length;
                                                       s.dispatchEvent(new Event('change', {bubbles: true})); }});
  for (const b of toggles) actions.push({fire: () => b.click()});
  for (const h of handles) actions.push({fire: () => {  // a step right, or left at the slider's end
    const [now, lo, hi] = ['aria-valuenow', 'aria-valuemin', 'aria-valuemax'].map(a => Number(h.getAttribute(a)));
    let key = (step % 8) < 4 ? 'ArrowRight' : 'ArrowLeft';
    if (now >= hi) key = 'ArrowLeft';
    else if (now <= lo) key = 'ArrowRight';
    h.dispatchEvent(new KeyboardEvent('keydown', {key, bubbles: true}));
  }});
  // a number typed into cell (0, 0) of each editable view: Enter opens the editor, Enter sends it
  const editable = [...out.querySelectorAll('.attn-heatmap')]
    .filter(h => h.querySelector('.attn-heatmap-grid[data-editable="true"]'));
  for (const h of editable) {
    let editor = null;
    actions.push({
      prep: async () => {
        const grid = h.querySelector('.attn-heatmap-grid[data-editable="true"]');
        grid.focus();
        grid.dispatchEvent(new KeyboardEvent('keydown', {key: 'Enter', bubbles: true}));
        editor = h.querySelector('.attn-heatmap-editor');
        // Enter also chose the cell ("select"), which may redraw views (the linked explorer lights up
        // the chosen query in every matrix): wait until no view has redrawn for 150 ms (at most 2 s)
        const stamps = () => views.map(v => v.dataset.drawStart).join();
        for (let waited = 0, seen = null; waited < 2000 && stamps() !== seen; waited += 150) {
          seen = stamps();
          await new Promise(r => setTimeout(r, 150));
        }
      },
      fire: () => {
        editor.value = ['0.5', '-1.25', '2'][Math.floor(step / actions.length) % 3];
        editor.dispatchEvent(new KeyboardEvent('keydown', {key: 'Enter', bubbles: true}));
      },
    });
  }
  if (!actions.length || !views.length) return {first: null, why: 'no control or no view'};
  const action = actions[step % actions.length];
  if (action.prep) await action.prep();
  // timed to the frame after the first view changed ("first") and to the frame after the last
  // change of any view, once none has changed for QUIET ms ("all": every view updated)
  return await new Promise((resolve) => {
    let first = null, last = null, pending = 0, quiet = null, draw = 0, screen = null;
    const timer = setTimeout(() => {
      if (first === null && pending === 0) { obs.disconnect(); resolve({first: null, why: 'timeout'}); }
    }, 5000);
    const painted = () => {
      const now = performance.now();
      const heatmaps = [...out.querySelectorAll('.attn-heatmap')];
      draw = Math.max(draw, 0, ...heatmaps.map(h => Number(h.dataset.drawMs || 0)));
      if (first === null) {
        first = now;
        const starts = heatmaps.map(h => Number(h.dataset.drawStart || now)).filter(t => t >= t0);
        screen = starts.length ? now - Math.min(...starts) : null;
      }
      last = now;
      pending -= 1;
      clearTimeout(quiet);
      quiet = setTimeout(() => {
        if (pending) return;
        obs.disconnect();
        resolve({first: first - t0, all: last - t0, draw, screen});
      }, QUIET);
    };
    const obs = new MutationObserver(() => {
      clearTimeout(timer);
      pending += 1;
      requestAnimationFrame(() => setTimeout(painted, 0));
    });
    // a redraw of a live view stamps data-draw-start on it (its canvas changes no DOM); the old PNG
    // path changes an <img>'s src; the floor changes a text. Only a live view's redraw counts, not
    // its tooltip or live region: after a number is typed the edited cell is focused and its new
    // explanation asked for, which answers one round trip after the redraw (text, not the view)
    for (const v of views) {
      const redraw = {attributes: true, attributeFilter: ['data-draw-start']};
      const other = {childList: true, subtree: true, characterData: true, attributes: true, attributeFilter: ['src']};
      obs.observe(v, v.classList.contains('attn-heatmap') ? redraw : other);
    }
    const t0 = performance.now();
    window.__attnT0 = t0;  // for bench/trace_browser.py --messages, which times the change's messages from it
    action.fire();
  });
}
"""


METRICS = ("first", "all", "draw", "screen")


def scroll_to_output(page, panel: str, k: int) -> None:
    """Scroll widget output ``k`` of notebook ``panel`` into view (the k-th output that shows widgets)."""
    page.locator(f"#{panel} .jp-OutputArea-output:has(.jupyter-widgets)").nth(k).scroll_into_view_if_needed()


def time_output(page, panel: str, k: int, changes: int) -> dict[str, list[float]]:
    """``{metric: ms per change}`` of widget output ``k`` of notebook ``panel``: ``changes`` timed
    changes (:data:`CHANGE_JS`) after two that warm up; a change that redrew nothing is left out."""
    scroll_to_output(page, panel, k)
    times: dict[str, list[float]] = {metric: [] for metric in METRICS}
    for step in range(changes + 2):
        got = page.evaluate(CHANGE_JS, [panel, k, step])
        page.wait_for_timeout(60)  # let the kernel settle (e.g. a second message of the change)
        if step >= 2 and got.get("first") is not None:
            for metric in METRICS:
                if got.get(metric) is not None:
                    times[metric].append(got[metric])
    return times


@contextlib.contextmanager
def _kernels_import(pythonpath: str | None) -> Iterator[None]:
    """Within it, a JupyterLab started (and so its kernels) has ``pythonpath`` first on ``PYTHONPATH``."""
    saved = os.environ.get("PYTHONPATH")
    if pythonpath:
        os.environ["PYTHONPATH"] = pythonpath
    try:
        yield
    finally:
        if pythonpath:
            if saved is None:
                os.environ.pop("PYTHONPATH")
            else:
                os.environ["PYTHONPATH"] = saved


def measure(
    pythonpath: str | None,
    changes: int,
    chromium: str,
    explorers: tuple[tuple[str, str], ...] = EXPLORERS,
    prologue: str = "",
    config: Path = SERVER_CONFIG,
) -> dict[str, dict[str, list[float]]]:
    """``{metric: {row name: ms per change}}`` for the :data:`METRICS` of ``CHANGE_JS``, measured in a
    fresh JupyterLab (its kernels get ``pythonpath`` first; ``prologue``: a first cell, e.g. :data:`NO_RELAY`;
    ``config``: the server's settings)."""
    from playwright.sync_api import sync_playwright

    results: dict[str, dict[str, list[float]]] = {metric: {} for metric in METRICS}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "root"
        root.mkdir()
        (root / "bench.ipynb").write_text(json.dumps(notebook(explorers, prologue)))
        with _kernels_import(pythonpath):
            # JupyterLab's default windowing, as a learner has it (the tests render every cell instead)
            server = start_lab(root, Path(tmp) / "jupyter", windowing=None, config=config)
        try:
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS, headless=True)
                page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
                panel = open_and_run_all(page, server, "bench.ipynb", workspace="bench")
                if pythonpath is None:  # what the 64×64 view looks like (device scale factor 1)
                    shot = REPO / "test-artifacts" / "bench-64x64.png"
                    shot.parent.mkdir(exist_ok=True)
                    page.locator(f"#{panel} .attn-heatmap").first.screenshot(path=str(shot))
                names = ["floor: a bare ipywidgets round trip", "one heatmap 64×64"] + [
                    f"{m}.{n}" for m, n in explorers
                ]
                for k, name in enumerate(names):
                    for metric, times in time_output(page, panel, k, changes).items():
                        results[metric][name] = times
                browser.close()
        finally:
            server.shutdown_kernels()
            server.stop()
    return results


# the lessons' server settings, but with jupyter-server's own untracked message types: a widget message's
# busy/idle reach JupyterLab (--tracked-comms; written next to the run's other files)
TRACKED_COMMS = f"""load_subconfig({str(SERVER_CONFIG)!r})
from jupyter_server.services.kernels.kernelmanager import MappingKernelManager
c.MappingKernelManager.untracked_message_types = MappingKernelManager.untracked_message_types.default()
"""


# the explorer each widget output shows, read from its cell's source ("08 ScalingExplorer"), or null
# where the output has no live view (a progress bar, an exercise's form)
NAMES_JS = """
(id) => {
  const panel = document.getElementById(id);
  return [...panel.querySelectorAll('.jp-OutputArea-output')].filter(o => o.querySelector('.jupyter-widgets'))
    .map(o => {
      if (!o.querySelector('.attn-heatmap')) return null;
      const source = o.closest('.jp-Cell')?.querySelector('.jp-InputArea-editor')?.textContent || '';
      const named = [...source.matchAll(/([A-Z][A-Za-z]*Explorer)\\(/g)].map(m => m[1]);
      return named.length ? named[named.length - 1] : 'live view';
    });
}
"""


def measure_lessons(
    changes: int, chromium: str, lessons: list[Path], pythonpath: str | None = None, config: Path = SERVER_CONFIG
) -> dict[str, dict[str, list[float]]]:
    """``{metric: {"NN Explorer": ms per change}}``: every explorer timed in its own lesson, run top to
    bottom in a fresh JupyterLab page (default windowing), as a learner has it (kernels get
    ``pythonpath`` first; ``config``: the server's settings)."""
    from playwright.sync_api import sync_playwright

    results: dict[str, dict[str, list[float]]] = {metric: {} for metric in METRICS}
    with tempfile.TemporaryDirectory() as tmp:
        with _kernels_import(pythonpath):
            server = start_lab_on_lessons(Path(tmp), windowing=None, config=config)  # default windowing
        try:
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS, headless=True)
                for lesson in lessons:
                    page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
                    panel = open_and_run_all(page, server, f"notebooks/{lesson.name}", workspace=lesson.stem)
                    names = page.evaluate(NAMES_JS, panel)
                    for k, name in enumerate(names):
                        if name is None:
                            continue
                        row = f"{lesson.name[:2]} {name}"
                        while row in results["first"]:  # a lesson's second explorer of the same class
                            row += "′"
                        for metric, times in time_output(page, panel, k, changes).items():
                            results[metric][row] = times
                    page.context.close()
                    server.shutdown_kernels()
                browser.close()
        finally:
            server.shutdown_kernels()
            server.stop()
    return results


def stats(times: list[float]) -> str:
    """``median / p90`` in whole ms (``-`` when nothing was timed)."""
    if not times:
        return "-"
    return f"{statistics.median(times):.0f} / {float(np.percentile(times, 90)):.0f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--changes", type=int, default=20, help="timed control changes per explorer")
    parser.add_argument("--new-only", action="store_true", help="skip the old path")
    parser.add_argument(
        "--old",
        metavar="COMMIT",
        help=f"the old path's attnlib (default {OLD_COMMIT}; with --lessons: only if given)",
    )
    parser.add_argument(
        "--no-relay", action="store_true", help="also the new path without the relay (one message per widget)"
    )
    parser.add_argument(
        "--explorers",
        nargs="+",
        choices=[module for module, _ in EXPLORERS],
        metavar="NAME",
        help="time only these explorers (module names: inputs, …, pipeline, …, tiled)",
    )
    parser.add_argument(
        "--tracked-comms",
        action="store_true",
        help="also the new path with jupyter-server's own untracked message types (widget messages flip the status)",
    )
    parser.add_argument(
        "--runs", type=int, default=3, help="fresh JupyterLab sessions per path, alternating new and old (pooled)"
    )
    parser.add_argument(
        "--lessons",
        nargs="*",
        metavar="NN",
        help="time every explorer in its own lesson instead: all lessons, or those numbered NN",
    )
    args = parser.parse_args()
    if args.lessons is not None and args.explorers:
        parser.error("--explorers picks rows of the notebook of all explorers; --lessons times every explorer")
    chromium = find_chromium()
    if chromium is None:
        print("no chromium executable: install Debian's chromium (make chromium)")
        return
    if args.lessons is not None:
        lessons = sorted(LESSONS.glob("[0-9][0-9]_*.ipynb"))
        if args.lessons:
            lessons = [lesson for lesson in lessons if lesson.name[:2] in args.lessons]
        in_lessons: dict[str, dict[str, list[float]]] = {metric: {} for metric in METRICS}
        old_lessons: dict[str, dict[str, list[float]]] = {metric: {} for metric in METRICS}
        tracked_lessons: dict[str, dict[str, list[float]]] = {metric: {} for metric in METRICS}
        with tempfile.TemporaryDirectory() as tmp:
            if args.old:
                _extract(args.old, tmp)
            tracked_config = _write_tracked_config(tmp)
            for _ in range(args.runs):  # alternating
                _pool(in_lessons, measure_lessons(args.changes, chromium, lessons))
                if args.old:
                    _pool(old_lessons, measure_lessons(args.changes, chromium, lessons, tmp))
                if args.tracked_comms:
                    _pool(tracked_lessons, measure_lessons(args.changes, chromium, lessons, config=tracked_config))
        _report_lessons(
            args.changes * args.runs,
            in_lessons,
            args.runs,
            old_lessons if args.old else None,
            args.old,
            tracked_lessons if args.tracked_comms else None,
        )
        return
    args.old = args.old or OLD_COMMIT
    new: dict[str, dict[str, list[float]]] = {metric: {} for metric in METRICS}
    old: dict[str, dict[str, list[float]]] = {metric: {} for metric in METRICS}
    alone: dict[str, dict[str, list[float]]] = {metric: {} for metric in METRICS}
    tracked: dict[str, dict[str, list[float]]] = {metric: {} for metric in METRICS}
    with tempfile.TemporaryDirectory() as tmp:
        if not args.new_only:
            _extract(args.old, tmp)
        tracked_config = _write_tracked_config(tmp)
        chosen = tuple((m, n) for m, n in EXPLORERS if args.explorers is None or m in args.explorers)
        # the explorers the old attnlib has (lessons 12-15's came later than the PNG path)
        old_ones = tuple((m, n) for m, n in chosen if (Path(tmp) / "attnlib" / "widgets" / f"{m}.py").exists())
        for _ in range(args.runs):  # alternating, so that a slow spell of the machine hits both paths
            _pool(new, measure(None, args.changes, chromium, chosen))
            if args.no_relay:
                _pool(alone, measure(None, args.changes, chromium, chosen, prologue=NO_RELAY))
            if args.tracked_comms:
                _pool(tracked, measure(None, args.changes, chromium, chosen, config=tracked_config))
            if not args.new_only:
                _pool(old, measure(tmp, args.changes, chromium, old_ones))
    _report(
        args.changes * args.runs,
        new,
        old,
        args.runs,
        alone if args.no_relay else None,
        args.old,
        tracked if args.tracked_comms else None,
    )


def _write_tracked_config(into: str) -> Path:
    """:data:`TRACKED_COMMS` as a config file in the directory ``into``."""
    path = Path(into) / "tracked_comms_config.py"
    path.write_text(TRACKED_COMMS)
    return path


def _extract(commit: str, into: str) -> None:
    """``attnlib`` as of ``commit``, from git history, into the directory ``into``."""
    archive = subprocess.run(["git", "-C", str(REPO), "archive", commit, "attnlib"], check=True, capture_output=True)
    subprocess.run(["tar", "-x", "-C", into], input=archive.stdout, check=True)


def _pool(into: dict[str, dict[str, list[float]]], got: dict[str, dict[str, list[float]]]) -> None:
    for metric, rows in got.items():
        for name, times in rows.items():
            into[metric].setdefault(name, []).extend(times)


def _report(
    changes: int,
    new: dict,
    old: dict,
    runs: int,
    alone: dict | None = None,
    commit: str = OLD_COMMIT,
    tracked: dict | None = None,
) -> None:
    print(
        f"Control change → view updated on screen, JupyterLab in headless Chromium, {changes} changes each "
        f"({runs} fresh JupyterLab session(s) per path, pooled); median / p90 ms"
    )
    png = ", PNG pushed by the kernel" if commit == OLD_COMMIT else ""
    print(f"(old = attnlib of {commit}{png}; new = the working tree's)")
    print("first: to the frame after the first view changed; all: to the frame after the last view changed\n")
    if alone is not None:
        print("(no relay = the new path with Relay.enabled = False: one message per widget that changed)")
    if tracked is not None:
        print(TRACKED_NOTE)
    _table(
        "view",
        "new, ",
        new,
        [("new, no relay", alone, ("all",)), ("new, tracked", tracked, ("first",)), ("old", old, ("first", "all"))],
    )
    _report_missed(changes, new["first"])


def _report_lessons(
    changes: int,
    got: dict,
    runs: int,
    old: dict | None = None,
    commit: str | None = None,
    tracked: dict | None = None,
) -> None:
    print(
        f"Control change → view updated on screen, each explorer in its own lesson (notebooks/, run top to "
        f"bottom; JupyterLab's default windowing; headless Chromium), {changes} changes each ({runs} fresh "
        "JupyterLab session(s), pooled); median / p90 ms\n"
    )
    if old is not None:
        print(f"(old = the same lessons with attnlib of {commit}, alternating with the working tree's)\n")
    if tracked is not None:
        print(TRACKED_NOTE + "\n")
    _table("lesson, explorer", "", got, [("tracked", tracked, ("first",)), ("old", old, ("first", "all"))])
    _report_missed(changes, got["first"])


TRACKED_NOTE = (
    "(tracked = the working tree's attnlib with jupyter-server's own untracked message types: the kernel's "
    "busy/idle around a widget message reach JupyterLab)"
)


def _table(rows: str, prefix: str, new: dict, compared: list[tuple[str, dict | None, tuple[str, ...]]]) -> None:
    """Print a markdown table: per row of ``new`` (the first column headed ``rows``), its first and all
    (median / p90), the ``metrics`` of each ``(label, path, metrics)`` compared that was measured (a path
    of ``None`` was not), then new's browser part and redraw (medians); ``prefix`` heads new's columns."""
    compared = [(label, path, metrics) for label, path, metrics in compared if path is not None]
    head = [rows, f"{prefix}first", f"{prefix}all"]
    head += [f"{label}, {m}" for label, _, metrics in compared for m in metrics]
    head += [f"{prefix}browser part: redraw → painted, median", f"{prefix}redraw (JS), median"]
    print("| " + " | ".join(head) + " |")
    print("|---|" + "---:|" * (len(head) - 1))
    for name, times in new["first"].items():
        columns = [stats(times), stats(new["all"][name])]
        for _, path, metrics in compared:
            columns += [stats(path[m].get(name, [])) for m in metrics]
        columns += [f"{statistics.median(new[m][name]):.1f}" if new[m].get(name) else "-" for m in ("screen", "draw")]
        print(f"| {name} | " + " | ".join(columns) + " |")


def _report_missed(changes: int, first: dict[str, list[float]]) -> None:
    """Name the rows with fewer timed changes than asked for: a change after which no view changed
    within 5 s is not timed."""
    missed = [f"{name}: {changes - len(times)}" for name, times in first.items() if len(times) < changes]
    if missed:
        print("\nchanges not timed (no view changed within 5 s): " + ", ".join(missed))


if __name__ == "__main__":
    main()
