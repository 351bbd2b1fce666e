"""Plotting: one heatmap helper used by every lesson, its figures and its widgets.

:class:`Heatmap` draws a matrix once and then only swaps data, annotations and highlights on
:meth:`Heatmap.update`, re-drawing just those artists over a cached background (blitting); the
widgets push :meth:`Heatmap.to_png` into an ``ipywidgets.Image``. Shown as the last expression of
a cell, a heatmap displays itself as a PNG — no pyplot state, no ``<Figure size …>`` text.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Sequence
from typing import ClassVar

import numpy as np
import torch
from matplotlib import colormaps, font_manager
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import Normalize, to_rgb
from matplotlib.figure import Figure
from matplotlib.image import AxesImage
from matplotlib.patches import Rectangle
from matplotlib.text import Text
from PIL import Image, ImageDraw, ImageFont

from . import style as _style

__all__ = ["BarChart", "Heatmap", "as_numpy", "heatmap", "show_heatmaps"]

ANNOTATE_MAX = 16  # annotate matrices up to 16×16; text dominates the cost beyond that


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


_LUTS: dict[str, np.ndarray] = {}
FAST_IMAGES = True  # draw nearest-neighbour heatmap images with numpy (see _paste_image)


def _dark_cells(data: np.ndarray, cmap: str, lo: float, hi: float) -> np.ndarray:
    """Which cells get white annotations: luminance of their colour ≤ 0.5 (same bins as matplotlib)."""
    lut = _LUTS.get(cmap)
    if lut is None:
        colormap = colormaps[cmap]
        rgba = colormap(np.arange(colormap.N))
        lut = _LUTS[cmap] = 0.299 * rgba[:, 0] + 0.587 * rgba[:, 1] + 0.114 * rgba[:, 2]
    scaled = (data - lo) / (hi - lo) if hi > lo else np.zeros_like(data)
    index = np.clip((scaled * len(lut)).astype(np.int64), 0, len(lut) - 1)
    return lut[index] <= 0.5


def _fmt(value: float, decimals: int) -> str:
    if value != 0 and (abs(value) < 10 ** (-decimals) or abs(value) >= 1e5):
        return f"{value:.1e}"
    text = f"{value:.{decimals}f}"
    return "0" if text in ("-0", "-0." + "0" * decimals, "0." + "0" * decimals) and value == 0 else text


class _TextStamps:
    """Annotation text rasterised once per (font, size, string) and pasted into the Agg buffer.

    Drawing a matplotlib ``Text`` costs about 0.5 ms (layout + glyph rendering); an 8×8 annotated
    heatmap has 64 of them. The annotations only ever show a handful of distinct short strings
    (numbers), so each is rendered once with FreeType (Pillow) and then alpha-blended with numpy
    (a few µs). Only plain unrotated texts take this path; anything else is drawn by matplotlib.
    """

    _H: ClassVar[dict[str, str]] = {"left": "l", "center": "m", "right": "r"}  # Pillow anchors
    _V: ClassVar[dict[str, str]] = {"center": "m", "top": "a", "bottom": "d", "baseline": "s"}
    MAX_CACHED = 4096

    def __init__(self) -> None:
        self._fonts: dict[tuple[str, float], ImageFont.FreeTypeFont] = {}
        self._masks: dict[tuple, tuple[np.ndarray, int, int]] = {}
        self._paths: dict[font_manager.FontProperties, str] = {}  # findfont costs ~30 µs per call
        self._colors: dict[object, np.ndarray] = {}

    @classmethod
    def supports(cls, artist) -> bool:
        return (
            isinstance(artist, Text)
            and artist.get_rotation() == 0
            and artist.get_ha() in cls._H
            and artist.get_va() in cls._V
            and artist.get_bbox_patch() is None
            and not artist.get_path_effects()
            and not artist.get_usetex()
            and "\n" not in artist.get_text()
            and "$" not in artist.get_text()
        )

    def _mask(self, text: Text, dpi: float) -> tuple[np.ndarray, int, int]:
        prop = text.get_fontproperties()
        size = round(prop.get_size_in_points() * dpi / 72, 2)
        path = self._paths.get(prop)
        if path is None:
            path = self._paths[prop.copy()] = font_manager.findfont(prop)
        anchor = self._H[text.get_ha()] + self._V[text.get_va()]
        key = (path, size, anchor, text.get_text())
        hit = self._masks.get(key)
        if hit is not None:
            return hit
        font = self._fonts.get((path, size))
        if font is None:
            font = self._fonts[(path, size)] = ImageFont.truetype(path, size)
        left, top, right, bottom = font.getbbox(text.get_text(), anchor=anchor)
        img = Image.new("L", (max(right - left, 1), max(bottom - top, 1)), 0)
        ImageDraw.Draw(img).text((-left, -top), text.get_text(), font=font, fill=255, anchor=anchor)
        mask = np.asarray(img, dtype=np.float32)[..., None] / 255.0
        if len(self._masks) >= self.MAX_CACHED:
            self._masks.clear()
        self._masks[key] = hit = (mask, left, top)
        return hit

    def paste(self, buf: np.ndarray, text: Text, dpi: float) -> None:
        """Blend ``text`` into ``buf`` (``(height, width, 4)`` uint8, row 0 at the top)."""
        if not text.get_visible() or not text.get_text():
            return
        mask, left, top = self._mask(text, dpi)
        x, y = text.get_transform().transform(text.get_unitless_position())
        height, width = buf.shape[:2]
        x0, y0 = round(x) + left, round(height - y) + top
        x1, y1 = x0 + mask.shape[1], y0 + mask.shape[0]
        cx0, cy0, cx1, cy1 = max(x0, 0), max(y0, 0), min(x1, width), min(y1, height)
        if cx0 >= cx1 or cy0 >= cy1:
            return
        alpha = mask[cy0 - y0 : cy1 - y0, cx0 - x0 : cx1 - x0] * (text.get_alpha() or 1.0)
        key = text.get_color()
        color = self._colors.get(key) if isinstance(key, str) else None
        if color is None:
            color = np.array(to_rgb(key), dtype=np.float32) * 255.0
            if isinstance(key, str):
                self._colors[key] = color
        region = buf[cy0:cy1, cx0:cx1, :3]
        region[...] = (region * (1.0 - alpha) + color * alpha + 0.5).astype(np.uint8)


_STAMPS = _TextStamps()


def _runs(index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Run-length encoding of ``index`` ``(n,)``: the value of each run and its length."""
    starts = np.concatenate([[0], np.flatnonzero(np.diff(index)) + 1])
    return index[starts], np.diff(np.append(starts, len(index)))


def _paste_image(buf: np.ndarray, image: AxesImage) -> bool:
    """Draw a nearest-neighbour ``imshow`` image straight into ``buf`` (``(height, width, 4)`` uint8).

    Matplotlib resamples the image to the axes and colour-maps every output pixel (~8 ms for a
    300×300 px axes); here only the ``(n_rows, n_cols)`` cells are colour-mapped and each pixel
    of the axes picks its cell by the data coordinate of its centre (what "nearest" means).
    Returns ``False`` (nothing drawn) for anything but an opaque, unclipped, linear-axes image.
    """
    ax = image.axes
    if (
        ax is None
        or image.get_interpolation() != "nearest"
        or image.get_alpha() is not None
        or image.get_clip_path() is not None
        or ax.get_xscale() != "linear"
        or ax.get_yscale() != "linear"
    ):
        return False
    data = image.get_array()
    if data is None or data.ndim != 2 or np.ma.is_masked(data):
        return False
    rgba = image.to_rgba(np.asarray(data), bytes=True)
    if rgba[..., 3].min() < 255:
        return False
    n_rows, n_cols = data.shape
    left, right, bottom, top = image.get_extent()
    height, width = buf.shape[:2]
    x0, y0, x1, y1 = ax.bbox.extents  # display pixels, y up
    ex0, ey0 = ax.transData.transform((left, bottom))
    ex1, ey1 = ax.transData.transform((right, top))
    c0, c1 = max(round(max(x0, min(ex0, ex1))), 0), min(round(min(x1, max(ex0, ex1))), width)
    r0 = max(round(height - min(y1, max(ey0, ey1))), 0)
    r1 = min(round(height - max(y0, min(ey0, ey1))), height)
    if c0 >= c1 or r0 >= r1:
        return True
    inverse = ax.transData.inverted()
    xs = inverse.transform(np.column_stack([np.arange(c0, c1) + 0.5, np.full(c1 - c0, y0)]))[:, 0]
    ys = inverse.transform(np.column_stack([np.full(r1 - r0, x0), height - (np.arange(r0, r1) + 0.5)]))[:, 1]
    cols = np.clip(np.floor((xs - left) / (right - left) * n_cols), 0, n_cols - 1).astype(np.intp)
    rows = np.clip(np.floor((ys - top) / (bottom - top) * n_rows), 0, n_rows - 1).astype(np.intp)
    if image.origin == "lower":
        rows = n_rows - 1 - rows
    # the indices are sorted runs: repeat each cell instead of a (rows × cols) gather
    row_ids, row_counts = _runs(rows)
    col_ids, col_counts = _runs(cols)
    cells = rgba[row_ids[:, None], col_ids[None, :], :3]
    buf[r0:r1, c0:c1, :3] = np.repeat(np.repeat(cells, row_counts, axis=0), col_counts, axis=1)
    return True


class _Canvas:
    """A figure with an Agg canvas of its own (never registered with pyplot), redrawn by blitting.

    The non-animated artists (axes, ticks, labels, title) are drawn once into a cached background;
    each redraw restores it and draws only the animated artists that ``artists()`` returns
    (image, annotations, highlights). Anything that changes the background must call
    :meth:`invalidate`.
    """

    def __init__(self, figsize: tuple[float, float], dpi: int | None = None):
        self.fig = Figure(figsize=figsize, dpi=dpi or _style.current().dpi, layout="constrained")
        self.canvas = FigureCanvasAgg(self.fig)
        self._background = None
        self._relayout = True
        self.artists: Callable[[], list] = list

    def invalidate(self, *, relayout: bool = True) -> None:
        """Redraw everything on the next draw (labels, title, limits, size or style changed).

        ``relayout=False``: the change cannot move anything (e.g. tick labels replaced by labels of
        exactly the same sizes), so the constrained layout (about half of a full draw) is skipped.
        """
        self._background = None
        self._relayout = self._relayout or relayout

    def _draw_animated(self) -> None:
        renderer = self.canvas.get_renderer()
        buf = None
        for artist in self.artists():
            if not artist.get_visible():
                continue
            if _TextStamps.supports(artist):
                if buf is None:
                    buf = np.asarray(self.canvas.buffer_rgba())
                _STAMPS.paste(buf, artist, self.fig.dpi)
            elif isinstance(artist, AxesImage) and FAST_IMAGES:
                if buf is None:
                    buf = np.asarray(self.canvas.buffer_rgba())
                if not _paste_image(buf, artist):
                    artist.draw(renderer)
            else:
                artist.draw(renderer)

    def full_draw(self) -> None:
        engine = self.fig.get_layout_engine()
        if self._relayout or engine is None:
            self.canvas.draw()  # draws everything that is not animated
        else:  # the axes keep the positions of the last layout
            self.fig.set_layout_engine("none")
            try:
                self.canvas.draw()
            finally:
                self.fig.set_layout_engine(engine)
        self._relayout = False
        self._background = self.canvas.copy_from_bbox(self.fig.bbox)
        self._draw_animated()

    def blit_draw(self) -> None:
        if self._background is None:
            self.full_draw()
            return
        self.canvas.restore_region(self._background)
        self._draw_animated()

    def png(self) -> bytes:
        buf = np.asarray(self.canvas.buffer_rgba())
        out = io.BytesIO()
        Image.fromarray(np.ascontiguousarray(buf[..., :3])).save(out, format="png", compress_level=1)
        return out.getvalue()


class Heatmap:
    """A token-labelled heatmap of a matrix that can be updated in place.

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
        ax=None,
        cell_size: float | None = None,
    ):
        data = as_numpy(matrix)
        self.decimals = decimals
        self._fixed_cmap = cmap
        self._fixed_limits = (vmin, vmax)
        self.annotate = annotate if annotate is not None else max(data.shape) <= ANNOTATE_MAX
        if ax is None:
            self._own = _Canvas(self._figsize(data.shape, cell_size))
            ax = self._own.fig.add_subplot()
        else:
            self._own = None
        # the canvas that blits this heatmap: its own, a HeatmapGrid's (see _attach) or none
        self._canvas: _Canvas | None = self._own
        self.ax = ax
        self.fig = ax.figure
        self.image = ax.imshow(data, aspect="auto", interpolation="nearest")
        self.texts: list = []
        self.highlights: list[Rectangle] = []
        self._labels = (None, None)
        self._look: tuple | None = None  # (cmap, lo, hi) last applied to the image
        self.data = data
        self._title, self._xlabel, self._ylabel = title, xlabel, ylabel
        self._build(data, row_labels, col_labels)
        if self._own is not None:
            self._own.artists = self.animated_artists
        _style.register(self)

    def animated_artists(self) -> list:
        """What changes per update, redrawn over the cached background: image, annotations, highlights, title."""
        return [self.image, *self.texts, *self.highlights, self.ax.title]

    def _attach(self, canvas: _Canvas) -> None:
        """Let ``canvas`` (a HeatmapGrid's) blit this heatmap's changing artists."""
        self._canvas = canvas
        for artist in self.animated_artists():
            artist.set_animated(True)

    def _invalidate(self) -> None:
        if self._canvas is not None:
            self._canvas.invalidate()

    # ------------------------------------------------------------------ layout
    @staticmethod
    def _figsize(shape: tuple[int, int], cell_size: float | None) -> tuple[float, float]:
        st = _style.current()
        cell = cell_size or (0.55 if max(shape) <= 8 else 0.4 if max(shape) <= 16 else 0.09)
        cell *= st.font_size / 9 if max(shape) <= 16 else 1
        w = min(max(shape[1] * cell + 1.4, 2.8), 12)
        h = min(max(shape[0] * cell + 1.0, 2.0), 12)
        return (round(w, 2), round(h, 2))

    def _build(self, data, row_labels, col_labels) -> None:
        st = _style.current()
        ax = self.ax
        n_rows, n_cols = data.shape
        self.set_labels(row_labels, col_labels)
        ax.set_title(self._title or "", fontsize=st.font_size * 1.1)
        ax.set_xlabel(self._xlabel or "", fontsize=st.font_size)
        ax.set_ylabel(self._ylabel or "", fontsize=st.font_size)
        for spine in ax.spines.values():
            spine.set_linewidth(st.line_width / 2)
        for t in self.texts:
            t.remove()
        self.texts = []
        if self.annotate:
            self.texts = [
                ax.text(j, i, "", ha="center", va="center", fontsize=st.annotation_size)
                for i in range(n_rows)
                for j in range(n_cols)
            ]
        if self._canvas is not None:
            for artist in self.animated_artists():
                artist.set_animated(True)
        self._look = None
        self._set_data(data)
        self._invalidate()

    def set_labels(self, row_labels=None, col_labels=None) -> None:
        """Tick labels (strings); ``None`` numbers the rows/columns from 1."""
        n_rows, n_cols = self.data.shape
        rows = list(row_labels) if row_labels is not None else [str(i + 1) for i in range(n_rows)]
        cols = list(col_labels) if col_labels is not None else [str(j + 1) for j in range(n_cols)]
        if (rows, cols) == self._labels:
            return
        old_rows, old_cols = self._labels
        same_counts = old_rows is not None and (len(old_rows), len(old_cols)) == (n_rows, n_cols)
        sizes = self._label_sizes() if same_counts and self._canvas is not None else None
        step_r = max(1, n_rows // 32)
        step_c = max(1, n_cols // 32)
        self.ax.set_yticks(range(0, n_rows, step_r), rows[::step_r])
        self.ax.set_xticks(range(0, n_cols, step_c), cols[::step_c], rotation=90 if n_cols > 8 else 0)
        self._labels = (rows, cols)
        if self._canvas is not None:
            # labels of exactly the old sizes leave the layout as it is (e.g. "Input 1" → "Input 2")
            self._canvas.invalidate(relayout=sizes is None or self._label_sizes() != sizes)

    def _label_sizes(self) -> list[tuple[float, float]]:
        """Rendered (width, height) of every tick label, in pixels."""
        renderer = self._canvas.canvas.get_renderer()
        labels = [*self.ax.get_xticklabels(), *self.ax.get_yticklabels()]
        return [(box.width, box.height) for box in (t.get_window_extent(renderer) for t in labels)]

    # ------------------------------------------------------------------ data
    def _limits(self, data: np.ndarray) -> tuple[float, float, str]:
        st = _style.current()
        lo, hi = self._fixed_limits
        diverging = float(data.min()) < 0 < float(data.max())
        cmap = self._fixed_cmap or (st.diverging_cmap if diverging else st.cmap)
        if lo is None and hi is None and diverging:
            m = float(np.abs(data).max())
            return -m, m, cmap
        lo = float(data.min()) if lo is None else lo
        hi = float(data.max()) if hi is None else hi
        if hi <= lo:
            hi = lo + 1.0
        return lo, hi, cmap

    def _set_data(self, data: np.ndarray) -> None:
        lo, hi, cmap = self._limits(data)
        self.image.set_data(data)
        if self._look is None or self._look[0] != cmap:
            self.image.set_cmap(cmap)
            self.image.set_norm(Normalize(lo, hi))
        elif self._look[1:] != (lo, hi):
            self.image.norm.vmin, self.image.norm.vmax = lo, hi  # no new norm object per change
        self._look = (cmap, lo, hi)
        if self.texts:
            dark = _dark_cells(data, cmap, lo, hi).ravel()
            for t, value, is_dark in zip(self.texts, data.ravel().tolist(), dark.tolist()):
                t.set_text(_fmt(value, self.decimals))
                color = "white" if is_dark else "black"
                if t.get_color() != color:
                    t.set_color(color)
        self.data = data

    def update(
        self,
        matrix: object | None = None,
        *,
        row_labels: Sequence[str] | None = None,
        col_labels: Sequence[str] | None = None,
        title: str | None = None,
    ) -> Heatmap:
        """Show a new matrix (and optionally new labels/title) without rebuilding the figure."""
        if matrix is not None:
            data = as_numpy(matrix)
            if data.shape != self.data.shape:
                self.data = data
                self.image.set_extent((-0.5, data.shape[1] - 0.5, data.shape[0] - 0.5, -0.5))
                self.annotate = max(data.shape) <= ANNOTATE_MAX
                self._labels = (None, None)
                self._build(data, row_labels, col_labels)
            else:
                self._set_data(data)
        if row_labels is not None or col_labels is not None:
            rows, cols = self._labels  # a side that is not given keeps its labels
            self.set_labels(
                row_labels if row_labels is not None else rows, col_labels if col_labels is not None else cols
            )
        if title is not None and title != self._title:
            old_title, self._title = self._title or "", title
            self.ax.title.set_text(title)  # set_title() would reset the font size to rcParams'
            if not self._title_fits(old_title, title):
                self._invalidate()
        return self

    def _title_fits(self, old: str, new: str) -> bool:
        """Whether ``new`` can be drawn over the cached background without a new layout.

        The title is an animated artist (not in the background), so a change of its text alone only
        needs a re-layout when its height changes (number of lines, empty or not) or when it gets
        wider than the axes (constrained layout would then shrink the axes).
        """
        if self._canvas is None or not old or not new or old.count("\n") != new.count("\n"):
            return False
        renderer = self._canvas.canvas.get_renderer()
        return self.ax.title.get_window_extent(renderer).width <= self.ax.get_window_extent(renderer).width

    def highlight(
        self, rows: Sequence[int] = (), cols: Sequence[int] = (), cells: Sequence[tuple[int, int]] = ()
    ) -> Heatmap:
        """Outline whole rows, whole columns and single cells (replacing earlier outlines)."""
        st = _style.current()
        for r in self.highlights:
            r.remove()
        n_rows, n_cols = self.data.shape
        boxes = [(-0.5, i - 0.5, n_cols, 1) for i in rows]
        boxes += [(j - 0.5, -0.5, 1, n_rows) for j in cols]
        boxes += [(j - 0.5, i - 0.5, 1, 1) for i, j in cells]
        self.highlights = [
            self.ax.add_patch(
                Rectangle(
                    (x, y),
                    w,
                    h,
                    fill=False,
                    edgecolor=st.highlight_color,
                    linewidth=st.line_width,
                    animated=self._canvas is not None,
                )
            )
            for x, y, w, h in boxes
        ]
        return self

    def restyle(self) -> None:
        """Re-read the current style (called by :func:`attnlib.style.use`)."""
        st = _style.current()
        self.ax.title.set_fontsize(st.font_size * 1.1)
        self.ax.tick_params(labelsize=st.font_size * 0.9)
        for t in self.texts:
            t.set_fontsize(st.annotation_size)
        for r in self.highlights:
            r.set_edgecolor(st.highlight_color)
            r.set_linewidth(st.line_width)
        self._look = None
        self._set_data(self.data)
        self._invalidate()

    # ------------------------------------------------------------------ output
    def draw(self) -> None:
        """Render (only the changed artists when the background is cached)."""
        if self._own is None:
            self.fig.canvas.draw()
        else:
            self._own.blit_draw()

    def to_png(self) -> bytes:
        """PNG bytes of the current state."""
        if self._own is None:
            out = io.BytesIO()
            self.fig.savefig(out, format="png")
            return out.getvalue()
        self.draw()
        return self._own.png()

    def _repr_png_(self) -> bytes:
        return self.to_png()

    def __repr__(self) -> str:
        n_rows, n_cols = self.data.shape
        title = f", {self._title!r}" if self._title else ""
        return f"<Heatmap {n_rows}×{n_cols}{title}>"


def heatmap(matrix: object, **kwargs) -> Heatmap:
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
        **kwargs,
    ):
        n = len(matrices)
        ncols = ncols or n
        nrows = -(-n // ncols)
        first = as_numpy(matrices[0])
        w, h = Heatmap._figsize(first.shape, None)
        self._own = _Canvas(figsize or (round(min(w * ncols, 16), 2), round(min(h * nrows, 12), 2)))
        axes = self._own.fig.subplots(nrows, ncols, squeeze=False).ravel()
        for ax in axes[n:]:
            ax.set_visible(False)
        titles = list(titles) if titles is not None else [None] * n
        self.heatmaps = [Heatmap(m, ax=ax, title=t, **kwargs) for m, t, ax in zip(matrices, titles, axes)]
        for hm in self.heatmaps:
            hm._attach(self._own)
        self._own.artists = lambda: [a for hm in self.heatmaps for a in hm.animated_artists()]
        self.fig = self._own.fig

    def update(self, matrices: Sequence[object]) -> HeatmapGrid:
        for hm, m in zip(self.heatmaps, matrices):
            hm.update(m)
        return self

    def restyle(self) -> None:
        """Restyle every heatmap (each also does so itself; this makes a view's order irrelevant)."""
        for hm in self.heatmaps:
            hm.restyle()

    def to_png(self) -> bytes:
        self._own.blit_draw()
        return self._own.png()

    def _repr_png_(self) -> bytes:
        return self.to_png()

    def __repr__(self) -> str:
        return f"<HeatmapGrid of {len(self.heatmaps)}>"


def show_heatmaps(matrices: Sequence[object], titles: Sequence[str] | None = None, **kwargs) -> HeatmapGrid:
    """Several matrices side by side, each a :class:`Heatmap` (keyword arguments go to each)."""
    return HeatmapGrid(matrices, titles, **kwargs)


class BarChart:
    """One row of weights as bars (lesson 05), updatable in place like :class:`Heatmap`."""

    def __init__(
        self,
        values: Sequence[float] | object,
        labels: Sequence[str] | None = None,
        *,
        title: str | None = None,
        ylim: tuple[float, float] = (0.0, 1.0),
        figsize: tuple[float, float] = (4.0, 2.6),
    ):
        data = as_numpy(values)[0]
        self._own = _Canvas(figsize)
        self.ax = self._own.fig.add_subplot()
        self.fig = self._own.fig
        st = _style.current()
        self.labels = list(labels) if labels is not None else [str(i + 1) for i in range(len(data))]
        self.bars = self.ax.bar(range(len(data)), data, color=st.highlight_color, animated=True)
        self.ax.set_xticks(range(len(data)), self.labels, rotation=90 if len(data) > 8 else 0)
        self.ax.set_ylim(*ylim)
        self.ax.set_title(title or "")
        self.texts = (
            [
                self.ax.text(i, 0, "", ha="center", va="bottom", fontsize=st.annotation_size, animated=True)
                for i in range(len(data))
            ]
            if len(data) <= ANNOTATE_MAX
            else []
        )
        self._own.artists = lambda: [*self.bars, *self.texts]
        self.data = data
        self.update(data)
        _style.register(self)

    def restyle(self) -> None:
        """Re-read the current style (called by :func:`attnlib.style.use`)."""
        st = _style.current()
        for bar in self.bars:
            bar.set_color(st.highlight_color)
        for t in self.texts:
            t.set_fontsize(st.annotation_size)
        self.ax.title.set_fontsize(st.font_size * 1.1)
        self.ax.tick_params(labelsize=st.font_size * 0.9)
        self._own.invalidate()

    def update(self, values: Sequence[float] | object) -> BarChart:
        data = as_numpy(values)[0]
        if len(data) != len(self.bars):
            raise ValueError(f"expected {len(self.bars)} values, got {len(data)}")
        for bar, v in zip(self.bars, data):
            bar.set_height(v)
        for i, (t, v) in enumerate(zip(self.texts, data)):
            t.set_position((i, v))
            t.set_text(f"{v:.2f}")
        self.data = data
        return self

    def to_png(self) -> bytes:
        self._own.blit_draw()
        return self._own.png()

    def _repr_png_(self) -> bytes:
        return self.to_png()

    def __repr__(self) -> str:
        return f"<BarChart of {len(self.data)} bars>"
