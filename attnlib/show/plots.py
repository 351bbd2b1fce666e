"""Static figures: annotated heatmaps, training and cost curves.

Plain matplotlib and seaborn code. Live views in the notebooks are drawn by the browser
(:class:`attnlib.show.HeatmapView`); this module draws what is a picture: a heatmap shown as the
last expression of a cell, the PNG fallback of every live view and the training curves.

- :func:`heatmap` / :class:`Heatmap` — one matrix, token-labelled, annotated when small
  (drawn as ``seaborn.heatmap`` draws it, with matplotlib alone); :func:`show_heatmaps` — several side by side
  (d2l's ``show_heatmaps``).
- :func:`training_curves` — loss/accuracy per step (``seaborn.lineplot``);
- :func:`cost_curves` — time or memory against n on log–log axes (lesson 15).

Every function returns an object that displays itself as a PNG with a short deterministic
``repr`` (no pyplot state, no ``<Figure size …>`` text) and draws on a figure of its own.
"""

from __future__ import annotations

import base64
import io
import struct
from collections.abc import Mapping, Sequence
from typing import Any, Required, TypedDict

import numpy as np
import torch
from matplotlib import colormaps
from matplotlib.axes import Axes
from matplotlib.collections import Collection
from matplotlib.colors import Colormap
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle
from matplotlib.text import Text

from ..formatting import annotation
from . import style as _style

__all__ = [
    "DENSITY",
    "Heatmap",
    "HeatmapGrid",
    "Plot",
    "as_numpy",
    "colormap",
    "cost_curves",
    "heatmap",
    "heatmap_png",
    "limits",
    "png_bundle",
    "show_heatmaps",
    "training_curves",
]

ANNOTATE_MAX = 16  # annotate matrices up to 16×16; beyond that the numbers are unreadable


def as_numpy(matrix: object) -> np.ndarray:
    """A 2-D float64 numpy copy of a tensor, array or nested list (1-D becomes one row)."""
    if isinstance(matrix, torch.Tensor):
        matrix = matrix.detach().cpu().to(torch.float64).numpy()
    arr = np.asarray(matrix, dtype=np.float64)
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2:
        raise ValueError(f"a heatmap shows a matrix; got an array of shape {arr.shape}")
    return arr


def limits(
    data: np.ndarray, *, cmap: str | None = None, vmin: float | None = None, vmax: float | None = None
) -> tuple[float, float, str]:
    """Colour limits and colormap of a matrix: the given ones, else its range (symmetric when signed).

    A matrix with both signs gets the style's diverging colormap centred on 0; otherwise the
    style's sequential one (``cividis`` by default: colour-blind safe).
    """
    st = _style.current()
    diverging = data.size > 0 and float(data.min()) < 0 < float(data.max())
    cmap = cmap or (st.diverging_cmap if diverging else st.cmap)
    if vmin is None and vmax is None and diverging:
        m = float(np.abs(data).max())
        return -m, m, cmap
    lo = float(data.min()) if vmin is None else float(vmin)
    hi = float(data.max()) if vmax is None else float(vmax)
    if hi <= lo:
        hi = lo + 1.0
    return lo, hi, cmap


def _figsize(shape: tuple[int, int], cell_size: float | None = None) -> tuple[float, float]:
    st = _style.current()
    cell = cell_size or (0.55 if max(shape) <= 8 else 0.4 if max(shape) <= 16 else 0.09)
    cell *= st.font_size / 9 if max(shape) <= 16 else 1
    w = min(max(shape[1] * cell + 1.9, 2.8), 12)
    h = min(max(shape[0] * cell + 1.0, 2.0), 12)
    return (round(w, 2), round(h, 2))


def draw_heatmap(
    ax: Axes,
    matrix: object,
    *,
    row_labels: Sequence[object] | None = None,
    col_labels: Sequence[object] | None = None,
    title: str | None = None,
    xlabel: str | None = None,
    ylabel: str | None = None,
    annotate: bool | None = None,
    decimals: int = 2,
    cmap: str | None = None,
    vmin: float | None = None,
    vmax: float | None = None,
    highlight: tuple[Sequence[int], Sequence[int], Sequence[tuple[int, int]]] = ((), (), ()),
) -> list[Rectangle]:
    """Draw ``matrix`` ``(n_rows, n_cols)`` into ``ax`` as ``seaborn.heatmap`` does; returns the outlines.

    ``highlight`` is ``(rows, cols, cells)``: whole rows, whole columns and single ``(i, j)`` cells
    outlined in the style's highlight colour.
    """
    st = _style.current()
    data = as_numpy(matrix)
    n_rows, n_cols = data.shape
    lo, hi, cmap = limits(data, cmap=cmap, vmin=vmin, vmax=vmax)
    annotate = max(data.shape) <= ANNOTATE_MAX if annotate is None else annotate
    rows = [str(r) for r in row_labels] if row_labels is not None else [str(i + 1) for i in range(n_rows)]
    cols = [str(c) for c in col_labels] if col_labels is not None else [str(j + 1) for j in range(n_cols)]
    # what seaborn.heatmap(data, cmap, vmin, vmax, annot, fmt="", annot_kws, xticklabels, yticklabels) draws, step by
    # step with matplotlib alone: seaborn brings pandas and pyplot, about 0.6 CPU-s to every kernel that draws one
    for spine in ax.spines.values():  # seaborn's despine(left=True, bottom=True)
        spine.set_visible(False)
    cells = np.ma.masked_where(np.isnan(data), data)  # a NaN cell is left blank
    mesh = ax.pcolormesh(cells, cmap=colormap(cmap), linewidths=0, edgecolor="white", vmin=lo, vmax=hi)
    ax.set(xlim=(0, n_cols), ylim=(0, n_rows))
    ax.invert_yaxis()  # row 0 on top, as a matrix is written
    colorbar = ax.figure.colorbar(mesh, None, ax)
    colorbar.outline.set_linewidth(0)
    xticks, xlabels = _ticks(cols, n_cols)
    yticks, ylabels = _ticks(rows, n_rows)
    ax.set(xticks=xticks, yticks=yticks)
    ax.set_xticklabels(xlabels)
    for label in ax.set_yticklabels(ylabels, rotation="vertical"):
        label.set_verticalalignment("center")
    ax.set(xlabel="", ylabel="")
    if annotate:
        # seaborn writes dark grey or white by a luminance cut that leaves white on mid-tone cells at about 2.3:1;
        # black or white, whichever contrasts more, keeps every number at 4.58:1 or more (WCAG 1.4.3: 4.5:1)
        mesh.update_scalarmappable()
        colours = np.asarray(mesh.get_facecolor())  # (cells, 4) RGBA, row by row
        for k, (value, colour) in enumerate(zip(data.ravel(), colours, strict=True)):
            if not np.isnan(value):  # a NaN cell is masked: no number on it
                ax.text(
                    k % n_cols + 0.5,
                    k // n_cols + 0.5,
                    annotation(float(value), decimals),
                    color=ink(colour[:3]),
                    ha="center",
                    va="center",
                    fontsize=st.annotation_size,
                )
    ax.tick_params(axis="y", labelrotation=0)
    ax.tick_params(axis="x", labelrotation=90 if n_cols > 8 else 0)
    ax.set_title(title or "", fontsize=st.font_size * 1.1)
    ax.set_xlabel(xlabel or "", fontsize=st.font_size)
    ax.set_ylabel(ylabel or "", fontsize=st.font_size)
    rows_hl, cols_hl, cells_hl = highlight
    boxes = [(0, i, n_cols, 1) for i in rows_hl]
    boxes += [(j, 0, 1, n_rows) for j in cols_hl]
    boxes += [(j, i, 1, 1) for i, j in cells_hl]
    outlines = [
        Rectangle((x, y), w, h, fill=False, edgecolor=st.highlight_color, linewidth=st.line_width)
        for x, y, w, h in boxes
    ]
    for outline in outlines:
        ax.add_patch(outline)
    return outlines


def colormap(name: str) -> Colormap:
    """matplotlib's colormap ``name``, or seaborn's (``vlag``, ``rocket``, ``mako`` …: seaborn registers them with
    matplotlib when imported, so it is imported for them only)."""
    if name not in colormaps:
        import seaborn  # noqa: F401

    return colormaps[name]


def _ticks(labels: list[str], n: int) -> tuple[np.ndarray, list[str]]:
    """Tick positions (cell centres) and labels of one side of ``n`` cells: every label up to 32 cells, beyond that
    every ``n // 32``-th cell numbered from 0 (as seaborn.heatmap's integer ``xticklabels`` does)."""
    if n <= 32:
        return np.arange(n) + 0.5, labels
    every = max(1, n // 32)
    return np.arange(0, n, every) + 0.5, [str(k) for k in range(0, n, every)]


def relative_luminance(rgb: Sequence[float]) -> float:
    """WCAG 2's relative luminance of an sRGB colour (three numbers from 0 to 1)."""
    r, g, b = (c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def ink(rgb: Sequence[float]) -> str:
    """The colour of a number written on a cell of colour ``rgb``: black or white, whichever contrasts more (as
    the live views' heatmap.js chooses)."""
    light = relative_luminance(rgb)
    return "black" if (light + 0.05) / 0.05 >= 1.05 / (light + 0.05) else "white"


#: pixels per CSS pixel of every PNG: drawn at twice the style's resolution and shown at the style's size
#: (see :func:`png_bundle`), so pictures stay sharp on high-density screens and when the reader zooms in
DENSITY = 2


def _png(fig: Figure) -> bytes:
    out = io.BytesIO()
    fig.savefig(out, format="png", dpi=_style.current().dpi * DENSITY)
    return out.getvalue()


MimeBundle = tuple[dict[str, str], dict[str, dict[str, int]]]
"""``(data, metadata)`` as IPython's ``_repr_mimebundle_`` returns them."""


def png_bundle(png: bytes, text: str) -> MimeBundle:
    """``(data, metadata)`` for IPython's display: the PNG at ``1/DENSITY`` of its pixel size, and ``text``.

    The size goes in the output's metadata (``image/png: {width, height}``), which JupyterLab, Notebook 7
    and the site's pages (myst-nb) use for the image's displayed size.
    """
    width, height = struct.unpack(">II", png[16:24])  # the PNG header's IHDR chunk
    data = {"image/png": base64.b64encode(png).decode("ascii"), "text/plain": text}
    return data, {"image/png": {"width": width // DENSITY, "height": height // DENSITY}}


class HeatmapSpec(TypedDict, total=False):
    """One heatmap of :func:`heatmap_png`: :func:`draw_heatmap`'s keyword arguments (``matrix`` required)."""

    matrix: Required[object]
    row_labels: Sequence[object] | None
    col_labels: Sequence[object] | None
    title: str | None
    xlabel: str | None
    ylabel: str | None
    annotate: bool | None
    decimals: int
    cmap: str | None
    vmin: float | None
    vmax: float | None
    highlight: tuple[Sequence[int], Sequence[int], Sequence[tuple[int, int]]]


def heatmap_png(specs: Sequence[HeatmapSpec]) -> bytes:
    """One PNG of several heatmaps side by side, each given as :func:`draw_heatmap`'s arguments.

    This is the static fallback of the live views (``HeatmapView.spec()`` gives a spec).
    """
    shapes = [as_numpy(s["matrix"]).shape for s in specs]
    sizes = [_figsize(shape) for shape in shapes]
    fig = Figure(figsize=(min(sum(w for w, _ in sizes), 18), max(h for _, h in sizes)), layout="constrained")
    axes = fig.subplots(1, len(specs), squeeze=False, width_ratios=[w for w, _ in sizes])[0]
    for ax, spec in zip(axes, specs):
        draw_heatmap(ax, **spec)
    return _png(fig)


class Plot:
    """A figure of its own that displays as a PNG, with a short deterministic ``repr``."""

    def __init__(self, fig: Figure, text: str) -> None:
        self.fig = fig
        self._text = text

    def to_png(self) -> bytes:
        """PNG bytes of the figure."""
        return _png(self.fig)

    def _repr_mimebundle_(self, include: object = None, exclude: object = None) -> MimeBundle:
        return png_bundle(self.to_png(), self._text)

    def __repr__(self) -> str:
        return self._text


class _Options(TypedDict):
    """What :class:`Heatmap` passes on to :func:`draw_heatmap` unchanged."""

    xlabel: str | None
    ylabel: str | None
    decimals: int
    cmap: str | None
    vmin: float | None
    vmax: float | None


class Heatmap:
    """A token-labelled heatmap of a matrix, drawn as ``seaborn.heatmap`` draws it (:func:`draw_heatmap`).

    Args:
        matrix: ``(n_rows, n_cols)`` tensor, array or nested list (a 1-D vector becomes one row).
        row_labels, col_labels: tick labels, e.g. tokens (default ``1 … n``).
        title, xlabel, ylabel: texts on the axes.
        annotate: write the numbers in the cells (default: when both sides are ≤ 16).
        decimals: digits after the point in annotations.
        cmap: colormap name (default: the style's; diverging one when the matrix has both signs).
        vmin, vmax: colour limits (default: the matrix's range, symmetric for diverging).
        ax: draw into this matplotlib axes instead of a figure of its own.
        cell_size: inches per cell when the heatmap makes its own figure.
    """

    def __init__(
        self,
        matrix: object,
        *,
        row_labels: Sequence[str] | None = None,
        col_labels: Sequence[str] | None = None,
        title: str | None = None,
        xlabel: str | None = None,
        ylabel: str | None = None,
        annotate: bool | None = None,
        decimals: int = 2,
        cmap: str | None = None,
        vmin: float | None = None,
        vmax: float | None = None,
        ax: Axes | None = None,
        cell_size: float | None = None,
    ) -> None:
        self.data = as_numpy(matrix)
        self.annotate = max(self.data.shape) <= ANNOTATE_MAX if annotate is None else annotate
        self.options: _Options = {
            "xlabel": xlabel,
            "ylabel": ylabel,
            "decimals": decimals,
            "cmap": cmap,
            "vmin": vmin,
            "vmax": vmax,
        }
        self.row_labels, self.col_labels, self.title = row_labels, col_labels, title
        self._size = _figsize(self.data.shape, cell_size)
        self._own = ax is None
        self.ax = ax if ax is not None else Figure(figsize=self._size, layout="constrained").add_subplot()
        self.fig = self.ax.figure
        self._highlight: tuple[list[int], list[int], list[tuple[int, int]]] = ([], [], [])
        self.highlights: list[Rectangle] = []
        self._draw(fresh=False)
        _style.register(self)

    def _draw(self, *, fresh: bool = True) -> None:
        """Draw: on a new figure of the same size (own figure), else into the cleared axes."""
        if fresh and self._own:
            self.fig = Figure(figsize=self._size, layout="constrained")
            self.ax = self.fig.add_subplot()
        elif fresh:
            for cbar_ax in [a for a in self.fig.axes if getattr(a, "_colorbar_of", None) is self.ax]:
                cbar_ax.remove()
            self.ax.clear()
        before = set(self.fig.axes)
        self.highlights = draw_heatmap(
            self.ax,
            self.data,
            row_labels=self.row_labels,
            col_labels=self.col_labels,
            title=self.title,
            annotate=self.annotate,
            highlight=self._highlight,
            **self.options,
        )
        for new in set(self.fig.axes) - before:
            setattr(new, "_colorbar_of", self.ax)  # noqa: B010 — a mark of our own on matplotlib's Axes

    @property
    def texts(self) -> list[Text]:
        """The annotation texts, row by row."""
        return list(self.ax.texts)

    @property
    def image(self) -> Collection:
        """The coloured cells (seaborn's ``QuadMesh``)."""
        return self.ax.collections[0]

    def highlight(
        self, rows: Sequence[int] = (), cols: Sequence[int] = (), cells: Sequence[tuple[int, int]] = ()
    ) -> Heatmap:
        """Outline whole rows, whole columns and single cells (replacing earlier outlines)."""
        self._highlight = (list(rows), list(cols), [(i, j) for i, j in cells])
        self._draw()
        return self

    def restyle(self) -> None:
        """Re-read the current style (called by :func:`attnlib.show.style.use`)."""
        self._draw()

    def to_png(self) -> bytes:
        """PNG bytes of the current state (the whole figure, also when ``ax`` sits in a subfigure)."""
        return _png(self.fig.figure)

    def _repr_mimebundle_(self, include: object = None, exclude: object = None) -> MimeBundle:
        return png_bundle(self.to_png(), repr(self))

    def __repr__(self) -> str:
        n_rows, n_cols = self.data.shape
        title = f", {self.title!r}" if self.title else ""
        return f"<Heatmap {n_rows}×{n_cols}{title}>"


def heatmap(matrix: object, **kwargs: Any) -> Heatmap:
    """Draw ``matrix`` as a :class:`Heatmap` (same arguments)."""
    return Heatmap(matrix, **kwargs)


class HeatmapGrid:
    """Several heatmaps side by side in one figure (e.g. Q, K, V or one map per head)."""

    def __init__(
        self,
        matrices: Sequence[object],
        titles: Sequence[str] | None = None,
        *,
        ncols: int | None = None,
        figsize: tuple[float, float] | None = None,
        **kwargs: Any,
    ) -> None:
        n = len(matrices)
        ncols = ncols or n
        nrows = -(-n // ncols)
        w, h = _figsize(as_numpy(matrices[0]).shape)
        self.fig = Figure(
            figsize=figsize or (round(min(w * ncols, 16), 2), round(min(h * nrows, 12), 2)), layout="constrained"
        )
        axes = self.fig.subplots(nrows, ncols, squeeze=False).ravel()
        for ax in axes[n:]:
            ax.set_visible(False)
        named: list[str | None] = list(titles) if titles is not None else [None] * n
        self.heatmaps = [Heatmap(m, ax=ax, title=t, **kwargs) for m, t, ax in zip(matrices, named, axes)]

    def to_png(self) -> bytes:
        return _png(self.fig)

    def _repr_mimebundle_(self, include: object = None, exclude: object = None) -> MimeBundle:
        return png_bundle(self.to_png(), repr(self))

    def __repr__(self) -> str:
        return f"<HeatmapGrid of {len(self.heatmaps)}>"


def show_heatmaps(matrices: Sequence[object], titles: Sequence[str] | None = None, **kwargs: Any) -> HeatmapGrid:
    """Several matrices side by side, each a :class:`Heatmap` (keyword arguments go to each)."""
    return HeatmapGrid(matrices, titles, **kwargs)


def training_curves(
    history: Mapping[str, Sequence[float]],
    *,
    x: str = "step",
    title: str | None = None,
    ylabel: str = "value",
    figsize: tuple[float, float] = (5.5, 3.2),
) -> Plot:
    """Curves over training (lessons 13–14): ``{name: values per step}``, drawn with ``seaborn.lineplot``.

    Every curve is plotted against its own step index ``0 … len − 1`` (label of the axis: ``x``).
    """
    series = {name: (range(len(values)), values) for name, values in history.items()}
    return _curves(series, xlabel=x, ylabel=ylabel, title=title, figsize=figsize, text="training curves", marker=None)


def cost_curves(
    sizes: Sequence[int],
    series: Mapping[str, Sequence[float]],
    *,
    xlabel: str = "n (tokens)",
    ylabel: str = "seconds",
    title: str | None = None,
    figsize: tuple[float, float] = (5.5, 3.2),
) -> Plot:
    """What a computation costs as it grows (lesson 15): ``{name: cost per size}`` on log–log axes.

    On log–log axes a cost ``∝ n^p`` is a straight line of slope ``p``: the guide lines show
    slopes 1 and 2 through the first point of the first series.
    """
    fig = _curves(
        {name: (sizes, values) for name, values in series.items()},
        xlabel=xlabel,
        ylabel=ylabel,
        title=title,
        figsize=figsize,
        text="cost curves",
        marker="o",
    )
    ax = fig.fig.axes[0]
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    n0, y0 = float(sizes[0]), float(next(iter(series.values()))[0])
    ns = np.asarray([float(n) for n in sizes])
    for power, style in ((1, ":"), (2, "--")):
        ax.plot(ns, y0 * (ns / n0) ** power, style, color="grey", linewidth=1, label=f"∝ n^{power}")
    ax.legend()
    return fig


def _curves(
    series: Mapping[str, tuple[Sequence[float], Sequence[float]]],
    *,
    xlabel: str,
    ylabel: str,
    title: str | None,
    figsize: tuple[float, float],
    text: str,
    marker: str | None,
) -> Plot:
    """One ``seaborn.lineplot`` per ``{name: (xs, ys)}`` on one axis."""
    import seaborn as sns  # here, not at the top: it brings pandas and pyplot, paid only where a curve is drawn

    fig = Figure(figsize=figsize, layout="constrained")
    ax = fig.add_subplot()
    for name, (xs, ys) in series.items():
        sns.lineplot(
            x=np.asarray([float(v) for v in xs]), y=np.asarray([float(v) for v in ys]), label=name, marker=marker, ax=ax
        )
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title or "")
    return Plot(fig, f"<{text}: {', '.join(series)}>")
