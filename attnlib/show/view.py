"""HeatmapView: the Python half of a live heatmap, drawn by the browser from the numbers attnlib computes.

A view is not a widget of its own: its explorer's one widget model
(:class:`attnlib.show.page.ExplorerWidget`) carries what each view draws (:meth:`HeatmapView.drawn`), and
``static/heatmap.js`` (bundled into the explorer's front end, no CDN, no build step) draws all of it as SVG,
vector and crisp at any zoom: the title, the row/column labels and the colour bar around the grid, and in the grid a
rectangle and a number per cell, the highlights and the outline of the pointer's or keyboard's cell.
It shows, on hover or keyboard focus, a cell's value at full precision and how it was computed.

Usage (what every explorer does)::

    view = HeatmapView(None, title="weights A", vmin=0, vmax=1)   # in the explorer's constructor
    frame = view.frame(weights, row_labels=tokens, col_labels=tokens, cells=[(i, j)],
                       explanations=partial(explain_softmax, scores))   # in its pure compute()
    view.on_select(lambda i, j: ...)                   # a cell clicked / chosen with Enter
    view.on_edit(lambda i, j, value: ...)              # editable=True: a number typed in a cell

The view's traits are always those of the frame its explorer showed last (:meth:`HeatmapView.show`, called by
:meth:`Explorer.show`): the kernel computes a state, it never patches a view. Explanations are written when the
browser first asks for one (the explorer's custom message ``{kind: "explain", view, row, col}``, answered with
:meth:`HeatmapView.explain`): a function given for them (``partial(explain_softmax, scores)``) runs at most once
per frame, in the kernel, and the page receives the one cell's text.

Edits are validated here, in Python: text that is not a number, NaN, ±inf or a number larger than
``edit_limit`` in size gives an inline message naming what is wrong and keeps the last good state;
so does a ``ValueError`` raised by an ``on_edit`` callback (its text is the message).

Accessibility: the grid is one focusable element named by the title and described by
:attr:`description`; arrow keys, Home and End move between cells, each cell reached is announced
(its labels, value and explanation), Enter/Space select or edit, Escape cancels; the ``table``
button shows the numbers as an HTML table a screen reader reads. The default colour
map is ``cividis`` (colour-blind safe); pass ``vmin=0, vmax=1`` for attention weights.

A view draws a PNG of its state with matplotlib (:meth:`to_png`) for readers without a kernel; explorers put
their views' PNGs together in one fallback image. What a change moves (the numbers, labels, limits, colours,
cell size, highlights: :data:`DRAWN`) travels in the explorer's ``shown``; the look that stays (axis labels,
font, highlight colour, line width: :meth:`HeatmapView.look`) in its ``tree``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
import traitlets
from matplotlib.colors import to_hex

from ..formatting import annotation
from . import style
from .plots import ANNOTATE_MAX, HeatmapSpec, as_numpy, colormap, heatmap_png, limits
from .ui import Layout

__all__ = ["EDIT_LIMIT", "Explanations", "Frame", "HeatmapView", "explanation_texts", "parse_cell"]

#: per-cell texts: ``n_rows`` lists of ``n_cols`` strings, or a function returning them (or ``None``)
Explanations = Sequence[Sequence[str]] | Callable[[], Sequence[Sequence[str]] | None]


def explanation_texts(explanations: Explanations | None) -> list[list[str]]:
    """``explanations`` as one text per cell (``[]`` for none); a function given for them runs here."""
    table = explanations() if callable(explanations) else explanations
    return [[str(t) for t in row] for row in table] if table else []


EDIT_LIMIT = 1e6


def parse_cell(text: str, *, limit: float = EDIT_LIMIT) -> float:
    """The number typed into a cell, or a ``ValueError`` naming what is wrong with ``text``."""
    stripped = text.strip()
    if not stripped:
        raise ValueError("the cell is empty: type a number")
    try:
        value = float(stripped)
    except ValueError:
        raise ValueError(f"{stripped!r} is not a number") from None
    if math.isnan(value):
        raise ValueError(f"{stripped!r} is not a number (NaN): type a finite number")
    if math.isinf(value):
        raise ValueError(f"{stripped!r} is infinite: type a finite number")
    if abs(value) > limit:
        raise ValueError(f"{stripped} is too large: numbers between {-limit:g} and {limit:g} only")
    return value


@lru_cache(maxsize=32)
def palette(cmap: str, n: int = 64) -> tuple[str, ...]:
    """``n`` colours of matplotlib colormap ``cmap`` as hex strings (what the browser interpolates)."""
    colours = colormap(cmap)
    return tuple(to_hex(colours((k + 0.5) / n)) for k in range(n))


def _labels(given: Sequence[object] | None, n: int) -> list[str]:
    return [str(x) for x in given] if given is not None else [str(k + 1) for k in range(n)]


@dataclass(frozen=True)
class Frame:
    """Everything one view shows for one state of its explorer (see :meth:`HeatmapView.frame`).

    Two frames are equal when they show the same: the explanations (a function, run when the page asks)
    do not take part in the comparison; :attr:`explained` (whether there are any) does.
    """

    matrix: np.ndarray = field(compare=False)
    row_labels: tuple[str, ...]
    col_labels: tuple[str, ...]
    title: str
    decimals: int
    highlight_rows: tuple[int, ...] = ()
    highlight_cols: tuple[int, ...] = ()
    highlight_cells: tuple[tuple[int, int], ...] = ()
    explanations: Explanations | None = field(default=None, compare=False)
    #: the matrix as little-endian float64 bytes (what the page decodes; compared bit-exactly)
    buffer: bytes = field(default=b"", repr=False)

    @property
    def explained(self) -> bool:
        return bool(self.explanations)


class HeatmapView(traitlets.HasTraits):
    """A matrix drawn by the browser: labels, annotations, colour bar, highlights, hover explanations.

    Args:
        matrix: ``(n_rows, n_cols)`` tensor, array or nested list (a 1-D vector becomes one row).
        row_labels, col_labels: tick labels, e.g. tokens (default ``1 … n``).
        title, xlabel, ylabel: texts around the grid.
        annotate: write the numbers in the cells (default: when both sides are ≤ 16).
        decimals: digits of the annotations (the tooltip and the table show more).
        cmap: colormap (default: the style's, ``cividis``; its diverging one for signed matrices).
        vmin, vmax: colour limits (default: the matrix's range, symmetric when it has both signs).
        explanations: ``n_rows`` lists of ``n_cols`` strings shown on hover, or a function returning
            them (called when the browser first asks; e.g. ``partial(explain_softmax, scores)`` with
            :func:`attnlib.formatting.explain_softmax`); ``None`` for none.
        editable: let the learner type numbers into cells (see :meth:`on_edit`).
        edit_limit: largest accepted size of a typed number.
        cell_size: pixels per cell (default from the size and the style).
    """

    buffer = traitlets.Bytes(b"")  # the matrix: little-endian float64, row by row (a binary message)
    shape = traitlets.List(traitlets.Int(), [0, 0])
    row_labels = traitlets.List(traitlets.Unicode())
    col_labels = traitlets.List(traitlets.Unicode())
    title = traitlets.Unicode("")
    xlabel = traitlets.Unicode("")
    ylabel = traitlets.Unicode("")
    annotate = traitlets.Bool(True)
    decimals = traitlets.Int(2)
    precision = traitlets.Int(4)  # digits in the table view
    vmin = traitlets.Float(0.0)
    vmax = traitlets.Float(1.0)
    palette = traitlets.List(traitlets.Unicode())
    highlight_rows = traitlets.List(traitlets.Int())
    highlight_cols = traitlets.List(traitlets.Int())
    highlight_cells = traitlets.List(traitlets.List(traitlets.Int()))
    explained = traitlets.Bool(False)  # the cells have explanations (asked for one by one)
    editable = traitlets.Bool(False)
    message = traitlets.Unicode("")
    description = traitlets.Unicode("")
    font_size = traitlets.Float(13.0)
    cell_size = traitlets.Float(40.0)
    highlight_color = traitlets.Unicode("#d62728")
    line_width = traitlets.Float(2.0)

    def __init__(
        self,
        matrix: object,
        *,
        row_labels: Sequence[object] | None = None,
        col_labels: Sequence[object] | None = None,
        title: str = "",
        xlabel: str = "",
        ylabel: str = "",
        annotate: bool | None = None,
        decimals: int = 2,
        cmap: str | None = None,
        vmin: float | None = None,
        vmax: float | None = None,
        explanations: Explanations | None = None,
        editable: bool = False,
        edit_limit: float = EDIT_LIMIT,
        cell_size: float | None = None,
    ) -> None:
        super().__init__(title=title, xlabel=xlabel, ylabel=ylabel, decimals=decimals, editable=editable)
        self._fixed_title = title
        self._fixed_decimals = decimals
        self._fixed_cmap = cmap
        self._fixed_limits = (vmin, vmax)
        self._fixed_annotate = annotate
        self._fixed_cell = cell_size
        self.edit_limit = edit_limit
        self.cmap = ""
        self.data = np.zeros((0, 0))
        self._shown: Frame | None = None
        self._explanations: Explanations = []
        self._edit_callbacks: list[Callable[[int, int, float], None]] = []
        self._select_callbacks: list[Callable[[int, int], None]] = []
        self.layout = Layout()
        self.restyle()
        if matrix is not None:
            self.show(self.frame(matrix, row_labels=row_labels, col_labels=col_labels, explanations=explanations))
        style.register(self)

    # ------------------------------------------------------------------ kernel → browser
    def look(self) -> dict[str, object]:
        """What the page draws the same in every state: axis labels, digits of the table, style, editable."""
        return {name: getattr(self, name) for name in LOOK}

    def frame(
        self,
        matrix: object,
        *,
        row_labels: Sequence[object] | None = None,
        col_labels: Sequence[object] | None = None,
        title: str | None = None,
        rows: Sequence[int] = (),
        cols: Sequence[int] = (),
        cells: Sequence[tuple[int, int]] = (),
        explanations: Explanations | None = None,
        decimals: int | None = None,
    ) -> Frame:
        """What this view shows for ``matrix``: a pure function of its arguments and the view's fixed settings.

        Labels not given are ``1 … n``, the title not given is the one the view was built with, no
        highlights and no explanations unless given: nothing is kept from an earlier state.
        """
        data = as_numpy(matrix)
        if not np.isfinite(data).all():
            raise ValueError(f"{title or self._fixed_title or 'the heatmap'}: the matrix has NaN or infinite entries")
        return Frame(
            matrix=data,
            row_labels=tuple(_labels(row_labels, data.shape[0])),
            col_labels=tuple(_labels(col_labels, data.shape[1])),
            title=self._fixed_title if title is None else title,
            decimals=self._fixed_decimals if decimals is None else int(decimals),
            highlight_rows=tuple(int(i) for i in rows),
            highlight_cols=tuple(int(j) for j in cols),
            highlight_cells=tuple((int(i), int(j)) for i, j in cells),
            explanations=explanations,
            buffer=np.ascontiguousarray(data, dtype="<f8").tobytes(),
        )

    def drawn(self, frame: Frame) -> dict[str, object]:
        """The synced traits (:data:`DRAWN`) that show ``frame``: numbers, labels, limits, palette, layout, text."""
        data = frame.matrix
        annotate, cell_size = self._layout_of(data.shape)
        lo, hi, cmap = limits(data, cmap=self._fixed_cmap, vmin=self._fixed_limits[0], vmax=self._fixed_limits[1])
        return {
            "buffer": frame.buffer,
            "shape": list(data.shape),
            "vmin": lo,
            "vmax": hi,
            "palette": list(palette(cmap)),
            "cell_size": cell_size,
            "annotate": annotate,
            "decimals": frame.decimals,
            "description": _describe(frame.title, data, frame.row_labels, frame.col_labels),
            "title": frame.title,
            "row_labels": list(frame.row_labels),
            "col_labels": list(frame.col_labels),
            "message": "",
            "highlight_rows": list(frame.highlight_rows),
            "highlight_cols": list(frame.highlight_cols),
            "highlight_cells": [list(c) for c in frame.highlight_cells],
            "explained": frame.explained,
        }

    def shown(self) -> dict[str, object]:
        """The synced traits of :data:`DRAWN` as they are now (what :meth:`drawn` gives for the frame shown)."""
        return {name: getattr(self, name) for name in DRAWN}

    def show(self, frame: Frame) -> HeatmapView:
        """Show ``frame``: every drawn trait set from it alone (its explorer sends what it draws)."""
        lo, hi = self._fixed_limits
        self.cmap = limits(frame.matrix, cmap=self._fixed_cmap, vmin=lo, vmax=hi)[2]
        for name, value in self.drawn(frame).items():
            if getattr(self, name) != value:
                setattr(self, name, value)
        self.data = frame.matrix
        self._shown = frame
        explanations = frame.explanations
        self._explanations = explanations if callable(explanations) else explanation_texts(explanations)
        return self

    @property
    def explanations(self) -> list[list[str]]:
        """Every cell's explanation (``[]`` for none); a function the frame gave for them runs here, once."""
        if callable(self._explanations):
            self._explanations = explanation_texts(self._explanations)
        return [list(row) for row in self._explanations]

    def explain(self, row: int, col: int) -> str:
        """The explanation of cell ``(row, col)`` (``""`` for none): what the browser shows on hover."""
        table = self.explanations
        return table[row][col] if 0 <= row < len(table) and 0 <= col < len(table[row]) else ""

    @property
    def values(self) -> list[list[float]]:
        """The matrix shown, as nested lists (what the browser decodes from :attr:`buffer`)."""
        n_rows, n_cols = self.shape
        return np.frombuffer(self.buffer, dtype="<f8").reshape(n_rows, n_cols).tolist()

    @property
    def annotations(self) -> list[str]:
        """The numbers written in the cells, row by row (what the browser and the PNG show)."""
        return [annotation(v, self.decimals) for row in self.values for v in row] if self.annotate else []

    @property
    def highlight_boxes(self) -> list[tuple[float, float, float, float]]:
        """The outlines as ``(x, y, width, height)`` in cell units, cell ``(i, j)`` centred on ``(j, i)``."""
        n_rows, n_cols = self.data.shape
        boxes: list[tuple[float, float, float, float]] = [(-0.5, i - 0.5, n_cols, 1) for i in self.highlight_rows]
        boxes += [(j - 0.5, -0.5, 1, n_rows) for j in self.highlight_cols]
        boxes += [(j - 0.5, i - 0.5, 1, 1) for i, j in self.highlight_cells]
        return boxes

    # ------------------------------------------------------------------ browser → kernel
    def on_edit(self, callback: Callable[[int, int, float], None]) -> None:
        """Call ``callback(row, col, value)`` with each valid number typed into a cell.

        Without a callback the view just shows the new number. A callback that raises
        ``ValueError`` leaves everything as it was and its text is shown under the heatmap.
        """
        self._edit_callbacks.append(callback)

    def on_select(self, callback: Callable[[int, int], None]) -> None:
        """Call ``callback(row, col)`` when a cell is clicked or chosen with Enter/Space."""
        self._select_callbacks.append(callback)

    def edit(self, row: int, col: int, text: str) -> bool:
        """Give ``text`` typed into cell ``(row, col)`` to the :meth:`on_edit` callbacks, as the browser does;
        ``True`` if accepted. The view itself changes only when its explorer shows a new frame."""
        n_rows, n_cols = self.data.shape
        if not (0 <= row < n_rows and 0 <= col < n_cols):
            self.message = f"cell ({row + 1}, {col + 1}) is outside the {n_rows}×{n_cols} matrix"
            return False
        try:
            value = parse_cell(text, limit=self.edit_limit)
            if not self._edit_callbacks:
                raise ValueError("this heatmap takes no typed numbers")
            for callback in self._edit_callbacks:
                callback(row, col, value)
        except ValueError as exc:
            self.message = f"⚠ {self.row_labels[row]}, {self.col_labels[col]}: {exc}"
            return False
        self.message = ""
        return True

    def select(self, row: int, col: int) -> None:
        """Choose cell ``(row, col)`` as the browser does (calls the :meth:`on_select` callbacks)."""
        for callback in self._select_callbacks:
            callback(row, col)

    # ------------------------------------------------------------------ look
    def _layout_of(self, shape: Sequence[int]) -> tuple[bool, float]:
        """Whether a matrix of ``shape`` is annotated, and its cell size, in the current style."""
        font_size = round(style.current().font_size * 1.45)
        n = max(shape) if shape and min(shape) > 0 else 1
        annotate = self._fixed_annotate if self._fixed_annotate is not None else n <= ANNOTATE_MAX
        if self._fixed_cell is not None:
            return annotate, float(self._fixed_cell)
        if annotate:
            return annotate, float(round(font_size * (3.4 if n <= 8 else 2.6)))
        return annotate, float(max(6, min(24, round(480 / n))))

    def restyle(self) -> None:
        """Re-read the current style (called by :func:`attnlib.show.style.use`): the look, and the frame shown."""
        st = style.current()
        self.font_size = round(st.font_size * 1.45)
        self.highlight_color = st.highlight_color
        self.line_width = st.line_width
        if self._shown is not None:
            message = self.message
            self.show(self._shown)
            self.message = message

    # ------------------------------------------------------------------ static fallback
    def spec(self) -> HeatmapSpec:
        """What :func:`attnlib.show.plots.heatmap_png` needs to draw this view's current state."""
        return {
            "matrix": self.data,
            "row_labels": list(self.row_labels),
            "col_labels": list(self.col_labels),
            "title": self.title,
            "xlabel": self.xlabel,
            "ylabel": self.ylabel,
            "annotate": self.annotate,
            "decimals": self.decimals,
            "cmap": self.cmap,
            "vmin": self.vmin,
            "vmax": self.vmax,
            "highlight": (
                list(self.highlight_rows),
                list(self.highlight_cols),
                [(i, j) for i, j in self.highlight_cells],
            ),
        }

    def to_png(self) -> bytes:
        """PNG of the current state, drawn with matplotlib (for readers without a kernel)."""
        return heatmap_png([self.spec()])

    def __repr__(self) -> str:
        n_rows, n_cols = self.data.shape
        title = f", {self.title!r}" if self.title else ""
        return f"<HeatmapView {n_rows}×{n_cols}{title}>"


def _describe(title: str, data: np.ndarray, row_labels: Sequence[str], col_labels: Sequence[str]) -> str:
    """The grid's accessible description: its title, size, labels and range (how to move in it is the page's own
    hint, heatmap.js), read when the grid takes the focus and, once per change, when a control changes it."""
    n_rows, n_cols = data.shape
    if not data.size:
        return f"{title or 'heatmap'}: empty"
    lo, hi = float(data.min()), float(data.max())
    rows = ", ".join(row_labels[:8]) + (" …" if n_rows > 8 else "")
    cols = ", ".join(col_labels[:8]) + (" …" if n_cols > 8 else "")
    return (
        f"{title or 'heatmap'}: a {n_rows}×{n_cols} matrix; rows {rows}; columns {cols}; "
        f"values from {lo:.4g} to {hi:.4g}."
    )


#: the traits of :class:`HeatmapView` a change moves (what an explorer's ``shown`` carries per view): the numbers and
#: what follows from them (limits, palette, cell size, annotations); the style stays in the view's own model
DRAWN = frozenset(
    {"buffer", "shape", "vmin", "vmax", "palette", "cell_size", "annotate", "decimals"}
    | {"description", "title", "row_labels", "col_labels", "message"}
    | {"highlight_rows", "highlight_cols", "highlight_cells", "explained"}
)

#: the traits of :class:`HeatmapView` that stay from one state to the next (in the explorer's ``tree``)
LOOK = ("xlabel", "ylabel", "precision", "editable", "font_size", "highlight_color", "line_width")
