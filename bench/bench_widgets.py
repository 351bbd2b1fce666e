"""Widget redraw benchmark: every lesson explorer driven headless, one control change at a time.

Discovers every :class:`~attnlib.widgets._core.Explorer` subclass in ``attnlib.widgets.<key>``
for the lesson keys, builds it with its defaults and cycles each control through a few valid
values (dropdown options, slider positions, toggles, text edits). A change is timed from setting
``control.value`` to the new PNGs being in the ``ipywidgets.Image`` values — the whole
observer chain, computation included. Prints a markdown table (median and p90 ms per change)
plus the bare ``Heatmap.update`` + ``PlotView.refresh`` baseline for 8×8 (annotated) and 64×64.

Run: ``.venv/bin/python bench/bench_widgets.py [--changes N]``.
Targets: ≤ 30 ms median per change for 8×8 annotated heatmaps, ≤ 60 ms for 64×64.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import statistics
import time
from collections.abc import Iterator

import ipywidgets as W
import numpy as np

from attnlib.viz import Heatmap
from attnlib.widgets._core import Explorer, PlotView

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
)


def explorers() -> Iterator[tuple[str, type[Explorer] | None, str]]:
    """``(key, class, note)`` for every Explorer subclass defined in the lesson modules."""
    for key in KEYS:
        try:
            module = importlib.import_module(f"attnlib.widgets.{key}")
        except ModuleNotFoundError as exc:
            yield key, None, f"skipped: attnlib.widgets.{key} does not exist yet ({exc.name})"
            continue
        found = [
            cls
            for _, cls in inspect.getmembers(module, inspect.isclass)
            if issubclass(cls, Explorer) and cls is not Explorer and cls.__module__ == module.__name__
        ]
        if not found:
            yield key, None, f"skipped: no Explorer subclass in attnlib.widgets.{key}"
        for cls in found:
            yield key, cls, ""


def control_values(control: W.Widget) -> list[object]:
    """A few valid values for ``control``, different from its current value, ending with it."""
    current = control.value
    values: list[object]
    if isinstance(control, (W.Dropdown, W.ToggleButtons, W.RadioButtons, W.Select, W.SelectionSlider)):
        values = list(control._options_values)[:6]
    elif isinstance(control, (W.Checkbox, W.ToggleButton)):
        values = [not current]
    elif isinstance(control, W.FloatLogSlider):
        exponents = np.linspace(control.min, control.max, 5)
        values = [float(control.base**e) for e in exponents]
    elif isinstance(control, (W.IntSlider, W.BoundedIntText)):
        values = sorted({int(v) for v in np.linspace(control.min, control.max, 5).round()})
    elif isinstance(control, (W.FloatSlider, W.BoundedFloatText)):
        values = [float(v) for v in np.linspace(control.min, control.max, 5)]
    elif isinstance(control, (W.Textarea, W.Text)):
        values = [current + " "]  # same numbers, a new value: a full re-parse and redraw
    else:
        return []
    return [v for v in values if v != current] + [current]


def matrix_shape(explorer: Explorer) -> tuple[int, int]:
    """The largest heatmap ``(rows, cols)`` shown by ``explorer`` now (``(0, 0)`` when it has none)."""
    shapes = []
    for view in explorer.views.values():
        plots = getattr(view.plot, "heatmaps", [view.plot])
        for plot in plots:
            data = getattr(plot, "data", None)
            if isinstance(data, np.ndarray) and data.ndim == 2 and isinstance(plot, Heatmap):
                shapes.append(data.shape)
    return max(shapes, key=lambda s: s[0] * s[1], default=(0, 0))


def size_text(shape: tuple[int, int]) -> str:
    return f"{shape[0]}×{shape[1]}" if shape[0] else "-"


def bench_explorer(cls: type[Explorer], changes: int) -> tuple[str, list[float], int, list[str]]:
    """Times ``changes`` control changes; returns the largest heatmap seen, times (ms), errors, controls."""
    explorer = cls()
    largest = matrix_shape(explorer)
    times: list[float] = []
    errors = 0
    used: list[str] = []
    plan = [(name, c, control_values(c)) for name, c in explorer.controls.items()]
    plan = [(name, c, vals) for name, c, vals in plan if vals]
    if not plan:
        return size_text(largest), times, errors, used
    used = [name for name, _, _ in plan]
    while len(times) < changes:
        for _, control, values in plan:
            for value in values:
                t0 = time.perf_counter()
                control.value = value
                times.append((time.perf_counter() - t0) * 1000)
                if explorer.message.value:
                    errors += 1
                largest = max(largest, matrix_shape(explorer), key=lambda s: s[0] * s[1])
    return size_text(largest), times, errors, used


def bench_heatmap(n: int, reps: int) -> float:
    """Median ms of ``Heatmap.update`` + ``PlotView.refresh`` for a random ``n×n`` matrix."""
    rng = np.random.default_rng(0)
    view = PlotView(Heatmap(rng.standard_normal((n, n))))
    times = []
    for _ in range(reps):
        matrix = rng.standard_normal((n, n))
        t0 = time.perf_counter()
        view.plot.update(matrix)
        view.refresh()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def p90(times: list[float]) -> float:
    return float(np.percentile(times, 90))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--changes", type=int, default=40, help="control changes timed per explorer")
    args = parser.parse_args()
    notes = []
    print("| explorer | largest heatmap seen | controls cycled | changes | median ms | p90 ms | inline errors |")
    print("|---|---|---|---:|---:|---:|---:|")
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
        print(
            f"| {key}.{cls.__name__} | {size} | {', '.join(used)} | {len(times)} | "
            f"{statistics.median(times):.1f} | {p90(times):.1f} | {errors} |"
        )
    reps = max(args.changes, 20)
    base8 = bench_heatmap(8, reps)
    print(f"| baseline Heatmap 8×8 annotated (update + refresh) | 8×8 | - | {reps} | {base8:.1f} | | |")
    print(f"| baseline Heatmap 64×64 (update + refresh) | 64×64 | - | {reps} | {bench_heatmap(64, reps):.1f} | | |")
    if notes:
        print("\n" + "\n".join(notes))


if __name__ == "__main__":
    main()
