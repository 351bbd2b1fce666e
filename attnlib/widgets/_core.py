"""Building blocks of the explorers: a view of a plot, text parsing, the display protocol.

An explorer is a thin layer over plain plotting objects from :mod:`attnlib.viz`: controls change
some numbers, the explorer recomputes them with attnlib and calls ``update`` on the plot, and the
:class:`PlotView` pushes the new PNG into an ``ipywidgets.Image``. Nothing is printed or displayed
from callbacks (an ``Output`` filled during execution breaks nbval), and the figures are never
rebuilt per change.

Displayed, an explorer sends three representations: the live widget, a PNG of its initial state
(what GitHub, nbviewer and static HTML show without a kernel) and a short, deterministic
``text/plain`` summary (what nbval compares).
"""

from __future__ import annotations

import base64
import html
import re

import ipywidgets as W
import numpy as np

from .. import style

__all__ = ["Explorer", "MatrixParseError", "PlotView", "parse_matrix"]


class MatrixParseError(ValueError):
    """Text that does not describe a rectangular matrix of numbers."""


def parse_matrix(text: str, *, max_size: int = 64) -> np.ndarray:
    """Read a matrix typed as rows of numbers.

    Rows are separated by new lines or ``;``, numbers by commas or spaces; brackets are ignored,
    so both ``1 0 1 0; 0 2 0 2`` and ``[[1, 0, 1, 0], [0, 2, 0, 2]]`` work.

    Returns:
        ``(n_rows, n_cols)`` float64 array.

    Raises:
        MatrixParseError: with a message naming the row and the offending text.
    """
    cleaned = text.replace("[[", "").replace("]]", "").replace("],", ";").replace("]", ";").replace("[", "")
    rows = [r for r in re.split(r"[;\n]", cleaned) if r.strip().strip(",")]
    if not rows:
        raise MatrixParseError("the text is empty: type one row of numbers per line")
    matrix: list[list[float]] = []
    for i, row in enumerate(rows, start=1):
        cells = [c for c in re.split(r"[,\s]+", row.strip().strip(",")) if c]
        values = []
        for c in cells:
            try:
                v = float(c)
            except ValueError:
                raise MatrixParseError(f"row {i}: {c!r} is not a number") from None
            if not np.isfinite(v):
                raise MatrixParseError(f"row {i}: {c!r} is not a finite number")
            values.append(v)
        if matrix and len(values) != len(matrix[0]):
            raise MatrixParseError(
                f"row {i} has {len(values)} numbers but row 1 has {len(matrix[0])}: every row needs the same length"
            )
        matrix.append(values)
    if len(matrix) > max_size or len(matrix[0]) > max_size:
        raise MatrixParseError(f"at most {max_size}×{max_size} numbers, got {len(matrix)}×{len(matrix[0])}")
    return np.array(matrix, dtype=np.float64)


class PlotView:
    """An ``ipywidgets.Image`` showing a plot object from :mod:`attnlib.viz` (anything with ``to_png``)."""

    def __init__(self, plot, *, width: str | None = None):
        self.plot = plot
        self.image = W.Image(format="png", layout=W.Layout(width=width) if width else W.Layout())
        self.refresh()
        style.register(self)

    def refresh(self) -> None:
        """Redraw the changed artists and push the new PNG to the browser."""
        self.image.value = self.plot.to_png()

    def restyle(self) -> None:
        """Restyle the plot and push it (called by :func:`attnlib.style.use`, in any order)."""
        restyle = getattr(self.plot, "restyle", None)
        if restyle is not None:
            restyle()
        self.refresh()


class Explorer:
    """Base class: ``controls`` (name → widget), ``views`` (name → PlotView), an inline ``message``.

    Subclasses build their controls and views, lay them out in ``self.widget`` and implement
    :meth:`update`; the base class calls it when a control changes and keeps the last good state
    when an update raises a ``ValueError`` (the message is shown inline instead).
    """

    def __init__(self) -> None:
        self.controls: dict[str, W.Widget] = {}
        self.views: dict[str, PlotView] = {}
        self.message = W.HTML(value="")
        self.widget: W.Box = W.VBox()

    # wiring -------------------------------------------------------------
    def observe_controls(self) -> None:
        for control in self.controls.values():
            control.observe(self._on_change, names="value")

    def set_quietly(self, name: str, **traits: object) -> None:
        """Set traits of control ``name`` (e.g. ``options=…, value=…``) without triggering :meth:`update`."""
        control = self.controls[name]
        control.unobserve(self._on_change, names="value")
        try:
            for trait, value in traits.items():
                setattr(control, trait, value)
        finally:
            control.observe(self._on_change, names="value")

    def _on_change(self, _change=None) -> None:
        try:
            self.update()
        except ValueError as exc:
            self.show_error(str(exc))
        else:
            self.message.value = ""

    def show_error(self, text: str) -> None:
        """Show ``text`` inline (the views keep their last good state)."""
        self.message.value = f'<span style="color:#b00020">⚠ {html.escape(text)}</span>'

    def update(self) -> None:  # pragma: no cover - overridden
        raise NotImplementedError

    # display ------------------------------------------------------------
    def summary(self) -> str:
        """Short deterministic description (the ``text/plain`` that nbval compares)."""
        return f"{type(self).__name__}()"

    def snapshot_png(self) -> bytes:
        """PNG shown where no kernel renders the widget: the first view's current image."""
        return next(iter(self.views.values())).image.value

    def _repr_mimebundle_(self, include=None, exclude=None):
        bundle = self.widget._repr_mimebundle_(include=include, exclude=exclude) or {}
        bundle = dict(bundle[0] if isinstance(bundle, tuple) else bundle)
        if self.views:
            bundle["image/png"] = base64.b64encode(self.snapshot_png()).decode("ascii")
        bundle["text/plain"] = self.summary()
        return bundle

    def __repr__(self) -> str:
        return self.summary()
