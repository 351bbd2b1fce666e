"""The plotting helpers (attnlib.show.plots): heatmaps, bar charts and curves, drawn and updated in place."""

from __future__ import annotations

import base64
import io

import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch
from PIL import Image

from attnlib.show import plots, style
from attnlib.show.plots import Heatmap

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(autouse=True)
def laptop_style():
    style.use("laptop")
    yield
    style.use("laptop")


def png_size(data: bytes) -> tuple[int, int]:
    assert data.startswith(PNG_MAGIC)
    return Image.open(io.BytesIO(data)).size


def test_as_numpy_converts_tensors_lists_and_vectors() -> None:
    t = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    arr = plots.as_numpy(t)
    assert arr.dtype == np.float64 and arr.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert plots.as_numpy([1, 2, 3]).shape == (1, 3)  # a vector becomes one row


def test_as_numpy_rejects_3d() -> None:
    with pytest.raises(ValueError, match=r"a heatmap shows a matrix; got an array of shape \(2, 2, 2\)"):
        plots.as_numpy(np.zeros((2, 2, 2)))


def test_heatmap_draws_a_png_and_keeps_its_data() -> None:
    m = torch.tensor([[0.1, 0.9], [0.5, 0.5], [0.3, 0.7]])
    hm = plots.heatmap(m, row_labels=["a", "b", "c"], col_labels=["x", "y"], title="weights")
    assert isinstance(hm, plots.Heatmap)
    np.testing.assert_allclose(hm.data, m.numpy(), rtol=1e-6)
    width, height = png_size(hm.to_png())
    assert width > 0 and height > 0
    data, metadata = hm._repr_mimebundle_()
    assert base64.b64decode(data["image/png"]).startswith(PNG_MAGIC) and data["text/plain"] == repr(hm)
    # drawn at DENSITY times the size it is shown at: sharp on high-density screens and when zoomed
    assert metadata["image/png"] == {"width": width // plots.DENSITY, "height": height // plots.DENSITY}
    assert plots.DENSITY >= 2
    assert "3×2" in repr(hm) and "weights" in repr(hm)


def test_heatmap_annotates_small_matrices_only() -> None:
    small = plots.heatmap(np.eye(3))
    big = plots.heatmap(np.zeros((40, 40)))
    assert small.annotate and not big.annotate
    texts = [t.get_text() for t in small.texts]
    assert len(texts) == 9 and texts[0] == "1.00"


def test_heatmap_highlight_outlines_rows_columns_and_cells() -> None:
    hm = plots.heatmap(np.zeros((3, 3)))
    hm.highlight(rows=[0], cols=[1, 2], cells=[(2, 2)])
    assert len(hm.highlights) == 4
    hm.highlight(cells=[(0, 0)])  # replaces the earlier outlines
    assert len(hm.highlights) == 1


def test_show_heatmaps_side_by_side() -> None:
    grid = plots.show_heatmaps([np.zeros((2, 2)), np.ones((2, 3))], ["Q", "K"])
    assert len(grid.heatmaps) == 2
    assert grid.heatmaps[1].data.shape == (2, 3)
    png_size(grid.to_png())


def test_no_pyplot_figures_are_left_open() -> None:
    import matplotlib.pyplot as plt

    before = len(plt.get_fignums())
    plots.heatmap(np.eye(2)).to_png()
    assert len(plt.get_fignums()) == before


def test_training_curves_one_line_per_series() -> None:
    plot = plots.training_curves({"loss": [2.0, 1.0, 0.5], "accuracy": [0.3, 0.6, 0.9]}, ylabel="value")
    lines = plot.fig.axes[0].lines
    assert [list(line.get_ydata()) for line in lines] == [[2.0, 1.0, 0.5], [0.3, 0.6, 0.9]]
    assert repr(plot) == "<training curves: loss, accuracy>"
    assert plot.to_png().startswith(PNG_MAGIC)


def test_cost_curves_log_log_with_guide_slopes() -> None:
    plot = plots.cost_curves([256, 512, 1024], {"attention": [1.0, 4.0, 16.0], "tiled": [1.0, 3.0, 9.0]})
    ax = plot.fig.axes[0]
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    labels = [line.get_label() for line in ax.get_lines()]
    assert labels == ["attention", "tiled", "∝ n^1", "∝ n^2"]
    slope_2 = ax.get_lines()[3].get_ydata()
    assert list(slope_2) == [1.0, 4.0, 16.0]  # through the first point, quadrupling per doubling
    assert repr(plot) == "<cost curves: attention, tiled>"
    assert plot.to_png().startswith(b"\x89PNG")


def test_a_redrawn_heatmap_keeps_one_colour_bar() -> None:
    grid = plots.show_heatmaps([np.eye(3), np.arange(10.0).reshape(2, 5)])
    grid.heatmaps[1].highlight(rows=[0]).highlight(cols=[1])  # each redraws into its axes
    assert [t.get_text() for t in grid.heatmaps[1].texts][-1] == "9.00"
    assert len(grid.fig.axes) == 4  # two heatmaps and a colour bar each, not one more per redraw
    hm = Heatmap(np.eye(3)).highlight(rows=[1])
    assert len(hm.fig.axes) == 2


def _contrast(a, b) -> float:
    """WCAG 2's contrast ratio between two sRGB colours."""
    light = sorted((plots.relative_luminance(a), plots.relative_luminance(b)))
    return (light[1] + 0.05) / (light[0] + 0.05)


@pytest.mark.parametrize("cmap", [None, "RdBu_r", "cividis", "viridis", "rocket", "vlag"])
def test_every_number_in_a_static_heatmap_contrasts_4_5_to_1_with_its_cell(cmap) -> None:
    """Issue 56: the PNG heatmaps of the lessons and the site write each number in black or white, whichever
    contrasts more with its own cell (WCAG 1.4.3 asks 4.5:1 of text, in an image too); a masked (NaN) cell
    has no number and shifts none. seaborn's own choice leaves white on mid-tone cells at about 2.3:1."""
    from matplotlib.colors import to_rgb

    data = torch.linspace(-1, 1, 144).reshape(12, 12)
    data = data.abs() if cmap is None else data
    data[3, 4] = float("nan")
    fig, ax = plt.subplots()
    try:
        plots.draw_heatmap(ax, data, cmap=cmap)
        cells = ax.collections[0].get_facecolors()[~np.isnan(data.numpy()).ravel()]
        ratios = [_contrast(to_rgb(text.get_color()), cell[:3]) for text, cell in zip(ax.texts, cells, strict=True)]
    finally:
        plt.close(fig)
    assert len(ratios) == 143
    assert min(ratios) >= 4.5, f"{cmap}: {min(ratios):.2f}"
