"""Kernel-side widget benchmark: every lesson explorer driven headless, one control change at a time.

Discovers every :class:`~attnlib.show.explorer.Explorer` subclass in ``attnlib.show.<key>``
for the lesson keys, builds it with its defaults and cycles each control through a few valid
values (dropdown options, slider positions, toggles, text edits). A change is timed from setting
``control.value`` until the explorer's views hold their new state — the whole observer chain,
computation included — plus the serialisation of what changed (``get_state``: the JSON-ready
message the kernel would send). The browser's part is measured by ``bench/bench_browser.py``.

The old PNG path (attnlib as of commit ``68c259e``: matplotlib renders, the kernel pushes PNGs)
is measured in the same run: ``git archive`` extracts that commit's ``attnlib`` and this script
into a temporary directory and runs them there in a subprocess (``--only-here`` there).

Run: ``.venv/bin/python bench/bench_widgets.py [--changes N]``.
Goal: kernel-side recomputation ≤ 10 ms median per change.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import statistics
import time
from collections.abc import Iterator

import ipywidgets as widgets
import numpy as np

from attnlib.show.explorer import Explorer

try:  # the live views (this tree)
    from attnlib.show import HeatmapView
except ImportError:  # the old PNG path (commit 68c259e, run by run_old())
    HeatmapView = None

KEYS = (
    "inputs",
    "weights",
    "qkv",
    "scores",
    "softmax",
    "weighting",
    "summing",
    "scaling",
    "module",
    "sentence",
    "multihead",
    "pipeline",
    "positions",
    "training",
    "heads",
    "tiled",
)


def _pipeline():
    from attnlib.lessons.pipeline import PipelineExplorer

    return PipelineExplorer("003")  # the linked explorer on the 8-token sentence


def _training():
    from attnlib import pretrained
    from attnlib.lessons.l13_attention_learns import TrainingExplorer

    recipe = pretrained.RECIPES["reverse"]
    model, history = pretrained.train_recipe(
        recipe, steps=40, snapshot_steps=(0, 20, 40), eval_every=20, progress=False
    )
    return TrainingExplorer(history, model, recipe.task, step=0)


def _heads():
    from attnlib import pretrained
    from attnlib.lessons.l14_what_heads_learn import HeadsExplorer

    return HeadsExplorer(pretrained.load("induction"), [7, 21, 3, 44, 9, 12, 7, 21, 3, 44, 9, 12], layer=1)


# explorers whose lesson builds them with arguments (the rest are built with their defaults)
FACTORIES = {"PipelineExplorer": _pipeline, "TrainingExplorer": _training, "HeadsExplorer": _heads}
# controls left alone: the linked explorer stays on its 8-token example (its edits are timed instead)
FIXED = {"PipelineExplorer": ("example",)}
# editable views timed by typing into their first cell, as a learner does
EDITS = {"PipelineExplorer": ("inputs", "w_query")}


def explorers() -> Iterator[tuple[str, type[Explorer] | None, str]]:
    """``(key, class, note)`` for every Explorer subclass defined in the lesson modules."""
    for key in KEYS:
        try:
            module = importlib.import_module(f"attnlib.show.{key}")
        except ModuleNotFoundError as exc:
            yield key, None, f"skipped: attnlib.show.{key} does not exist yet ({exc.name})"
            continue
        found = [
            cls
            for _, cls in inspect.getmembers(module, inspect.isclass)
            if issubclass(cls, Explorer) and cls is not Explorer and cls.__module__ == module.__name__
        ]
        if not found:
            yield key, None, f"skipped: no Explorer subclass in attnlib.show.{key}"
        for cls in found:
            yield key, cls, ""


def control_values(control: widgets.Widget) -> list[object]:
    """A few valid values for ``control``, different from its current value, ending with it."""
    current = control.value
    values: list[object]
    if isinstance(
        control,
        (widgets.Dropdown, widgets.ToggleButtons, widgets.RadioButtons, widgets.Select, widgets.SelectionSlider),
    ):
        values = list(control._options_values)[:6]
    elif isinstance(control, (widgets.Checkbox, widgets.ToggleButton)):
        values = [not current]
    elif isinstance(control, widgets.FloatLogSlider):
        exponents = np.linspace(control.min, control.max, 5)
        values = [float(control.base**e) for e in exponents]
    elif isinstance(control, (widgets.IntSlider, widgets.BoundedIntText)):
        values = sorted({int(v) for v in np.linspace(control.min, control.max, 5).round()})
    elif isinstance(control, (widgets.FloatSlider, widgets.BoundedFloatText)):
        values = [float(v) for v in np.linspace(control.min, control.max, 5)]
    elif isinstance(control, (widgets.Textarea, widgets.Text)):
        values = [current + " "]  # same numbers, a new value: a full re-parse and redraw
    else:
        return []
    return [v for v in values if v != current] + [current]


def matrix_shape(explorer: Explorer) -> tuple[int, int]:
    """The largest heatmap ``(rows, cols)`` shown by ``explorer`` now (``(0, 0)`` when it has none)."""
    shapes = []
    for view in explorer.views.values():
        plot = getattr(view, "plot", view)
        for p in getattr(plot, "heatmaps", [plot]):
            data = getattr(p, "data", None)
            if isinstance(data, np.ndarray) and data.ndim == 2:
                shapes.append(data.shape)
    return max(shapes, key=lambda s: s[0] * s[1], default=(0, 0))


def size_text(shape: tuple[int, int]) -> str:
    return f"{shape[0]}×{shape[1]}" if shape[0] else "-"


def bench_explorer(cls: type[Explorer], changes: int) -> tuple[str, list[float], int, list[str]]:
    """Times ``changes`` control changes; returns the largest heatmap seen, times (ms), errors, controls."""
    explorer = FACTORIES.get(cls.__name__, cls)()
    largest = matrix_shape(explorer)
    times: list[float] = []
    errors = 0
    used: list[str] = []
    plan = [(name, c, control_values(c)) for name, c in explorer.controls.items()]
    plan = [(name, c, vals) for name, c, vals in plan if vals and name not in FIXED.get(cls.__name__, ())]
    for view in EDITS.get(cls.__name__, ()):
        plan.append((f"edit {view}[0, 0]", _Edit(explorer.views[view]), ["0.5", "-1.25", "2"]))
    if not plan:
        return size_text(largest), times, errors, used
    used = [name for name, _, _ in plan]
    while len(times) < changes:
        for _, control, values in plan:
            for value in values:
                t0 = time.perf_counter()
                control.value = value
                serialise(explorer)
                times.append((time.perf_counter() - t0) * 1000)
                if explorer.message.value:
                    errors += 1
                largest = max(largest, matrix_shape(explorer), key=lambda s: s[0] * s[1])
    return size_text(largest), times, errors, used


class _Edit:
    """A learner typing ``value`` into cell (0, 0) of an editable view (the message the browser sends)."""

    def __init__(self, view: HeatmapView) -> None:
        self.view = view

    @property
    def value(self) -> str:
        return ""

    @value.setter
    def value(self, text: str) -> None:
        self.view._handle_message(self.view, {"kind": "edit", "row": 0, "col": 0, "text": text}, [])


def serialise(explorer: Explorer) -> None:
    """What the kernel turns into messages: each live view's synced state (the old path: nothing more)."""
    if HeatmapView is not None:
        for view in explorer.views.values():
            view.get_state(["buffer", "shape", "explain_version", "row_labels", "col_labels", "highlight_cells"])


def bench_heatmap(n: int, reps: int) -> float:
    """Median ms to show a new random ``n×n`` matrix: ``HeatmapView.update`` + its state (old: PNG push)."""
    rng = np.random.default_rng(0)
    if HeatmapView is not None:
        view = HeatmapView(rng.standard_normal((n, n)))

        def show(matrix: np.ndarray) -> None:
            view.update(matrix)
            view.get_state(["buffer", "shape", "vmin", "vmax"])
    else:
        from attnlib.show.explorer import PlotView
        from attnlib.show.plots import Heatmap

        old = PlotView(Heatmap(rng.standard_normal((n, n))))

        def show(matrix: np.ndarray) -> None:
            old.plot.update(matrix)
            old.refresh()

    times = []
    for _ in range(reps):
        matrix = rng.standard_normal((n, n))
        t0 = time.perf_counter()
        show(matrix)
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


OLD_COMMIT = "68c259e"


def run_old(changes: int) -> dict[str, tuple[str, str]]:
    """Run this script on commit OLD_COMMIT's attnlib in a subprocess; ``{row name: (median, p90)}``."""
    import os
    import subprocess
    import sys
    import tempfile
    from pathlib import Path

    repo = Path(__file__).resolve().parents[1]
    with tempfile.TemporaryDirectory() as tmp:
        archive = subprocess.run(
            ["git", "-C", str(repo), "archive", OLD_COMMIT, "attnlib"], check=True, capture_output=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
        script = Path(tmp) / "bench_widgets.py"
        script.write_text(Path(__file__).read_text())
        env = {**os.environ, "PYTHONPATH": tmp}
        out = subprocess.run(
            [sys.executable, str(script), "--only-here", "--changes", str(changes)],
            check=True,
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp,
        ).stdout
    rows = {}
    for line in out.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) >= 6 and cells[0] not in ("explorer", "---"):
            rows[cells[0]] = (cells[4], cells[5])
    return rows


def p90(times: list[float]) -> float:
    return float(np.percentile(times, 90))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--changes", type=int, default=40, help="control changes timed per explorer")
    parser.add_argument("--only-here", action="store_true", help="measure only the attnlib on sys.path")
    args = parser.parse_args()
    old = {} if args.only_here else run_old(args.changes)
    notes = []
    if not args.only_here:
        print(f"Kernel side, ms per control change (old = PNG path of {OLD_COMMIT}, new = live views)\n")
    print(
        "| explorer | largest heatmap seen | controls cycled | changes | median ms | p90 ms | inline errors"
        + ("" if args.only_here else " | old median ms | old p90 ms")
        + " |"
    )
    print("|---|---|---|---:|---:|---:|---:|" + ("" if args.only_here else "---:|---:|"))
    for key, cls, note in explorers():
        if cls is None:
            notes.append(f"- {key}: {note}")
            continue
        try:
            size, times, errors, used = bench_explorer(cls, args.changes)
        except Exception as exc:  # a lesson module under construction must not stop the others
            notes.append(f"- {key}: {cls.__name__} failed: {type(exc).__name__}: {exc}")
            continue
        if not times:
            notes.append(f"- {key}: {cls.__name__} has no control the benchmark can move")
            continue
        name = f"{key}.{cls.__name__}"
        extra = "" if args.only_here else " {} | {} |".format(*old.get(name, ("-", "-")))
        print(
            f"| {name} | {size} | {', '.join(used)} | {len(times)} | "
            f"{statistics.median(times):.1f} | {p90(times):.1f} | {errors} |{extra}"
        )
    reps = max(args.changes, 20)
    for n, text in ((8, "8×8 annotated"), (64, "64×64")):
        name = f"one heatmap {text}, new matrix"
        extra = "" if args.only_here else " {} | {} |".format(*old.get(name, ("-", "-")))
        print(f"| {name} | {n}×{n} | - | {reps} | {bench_heatmap(n, reps):.1f} | | |{extra}")
    if notes:
        print("\n" + "\n".join(notes))


if __name__ == "__main__":
    main()
