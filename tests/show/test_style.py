"""The laptop and projector styles (attnlib.show.style): one call restyles rcParams, new plots, plots already
drawn and explorers' views."""

from __future__ import annotations

import gc
import io

import matplotlib as mpl
import numpy as np
import pytest
from matplotlib.colors import to_hex
from PIL import Image

from attnlib.lessons.l04_scores import ScoresExplorer
from attnlib.lessons.l05_softmax import SoftmaxExplorer
from attnlib.lessons.l11_multihead import MultiHeadExplorer
from attnlib.show import plots, style

LAPTOP, PROJECTOR = style.STYLES["laptop"], style.STYLES["projector"]

# colour-blind-safe sequential and diverging colormaps (no red-green contrast)
COLOUR_BLIND_SAFE = {"cividis", "viridis", "PuOr", "PuOr_r", "RdBu", "RdBu_r", "BrBG", "BrBG_r"}


@pytest.fixture(autouse=True)
def laptop_again():
    style.use("laptop")
    yield
    style.use("laptop")


def _png_size(png: bytes) -> tuple[int, int]:
    return Image.open(io.BytesIO(png)).size


def test_projector_sets_rcparams_and_laptop_restores_them() -> None:
    before = {k: mpl.rcParams[k] for k in ("font.size", "lines.linewidth", "image.cmap", "axes.linewidth")}
    style.use("projector")
    assert mpl.rcParams["font.size"] == PROJECTOR.font_size >= 14
    assert mpl.rcParams["lines.linewidth"] == PROJECTOR.line_width >= 3
    assert mpl.rcParams["image.cmap"] == PROJECTOR.cmap
    assert mpl.rcParams["axes.linewidth"] > before["axes.linewidth"]
    assert mpl.rcParams["font.weight"] == "bold"
    style.use("laptop")
    assert {k: mpl.rcParams[k] for k in before} == before
    assert mpl.rcParams["font.weight"] == "normal"


def test_projector_is_large_high_contrast_and_colour_blind_safe() -> None:
    assert PROJECTOR.font_size >= 1.5 * LAPTOP.font_size
    assert PROJECTOR.annotation_size >= 1.5 * LAPTOP.annotation_size
    assert PROJECTOR.line_width >= 2 * LAPTOP.line_width
    assert {PROJECTOR.cmap, PROJECTOR.diverging_cmap} <= COLOUR_BLIND_SAFE
    assert to_hex(PROJECTOR.highlight_color) == "#000000"  # highest contrast on white and on cividis
    assert dict(PROJECTOR.rc)["text.color"] == "black"


def test_use_returns_the_style_and_current_follows() -> None:
    assert style.use("projector") is PROJECTOR is style.current()
    assert style.use("laptop") is LAPTOP is style.current()


def test_use_rejects_unknown_names() -> None:
    with pytest.raises(ValueError, match="style must be one of"):
        style.use("Projector")


def test_new_heatmap_follows_the_style() -> None:
    style.use("projector")
    hm = plots.heatmap(np.eye(3))
    assert hm.image.get_cmap().name == PROJECTOR.cmap
    assert hm.texts[0].get_fontsize() == pytest.approx(PROJECTOR.annotation_size)


def test_drawn_heatmap_restyles_both_ways() -> None:
    weights = np.array([[0.7, 0.3], [0.2, 0.8]])
    scores = np.array([[1.0, -2.0], [-0.5, 3.0]])
    hm, signed = plots.heatmap(weights, title="weights"), plots.heatmap(scores)
    hm.highlight(rows=[0])
    laptop_png = hm.to_png()
    assert hm.image.get_cmap().name == LAPTOP.cmap
    style.use("projector")
    assert hm.image.get_cmap().name == PROJECTOR.cmap
    assert signed.image.get_cmap().name == PROJECTOR.diverging_cmap
    assert hm.texts[0].get_fontsize() == pytest.approx(PROJECTOR.annotation_size)
    assert hm.ax.title.get_fontsize() == pytest.approx(PROJECTOR.font_size * 1.1)
    assert hm.highlights[0].get_linewidth() == pytest.approx(PROJECTOR.line_width)
    assert to_hex(hm.highlights[0].get_edgecolor()) == to_hex(PROJECTOR.highlight_color)
    assert hm.to_png() != laptop_png
    style.use("laptop")
    assert hm.image.get_cmap().name == LAPTOP.cmap
    assert hm.texts[0].get_fontsize() == pytest.approx(LAPTOP.annotation_size)
    fresh = plots.heatmap(weights, title="weights").highlight(rows=[0])
    assert hm.to_png() == fresh.to_png()  # back exactly to the laptop look


def test_heatmap_with_its_own_colormap_keeps_it() -> None:
    hm = plots.heatmap(np.eye(2), cmap="magma")
    style.use("projector")
    assert hm.image.get_cmap().name == "magma"
    assert hm.texts[0].get_fontsize() == pytest.approx(PROJECTOR.annotation_size)


def test_bar_chart_restyles() -> None:
    bars = plots.BarChart([[0.2, 0.5, 0.3]])
    style.use("projector")
    assert to_hex(bars.bars[0].get_facecolor()) == to_hex(PROJECTOR.highlight_color)
    assert bars.texts[0].get_fontsize() == pytest.approx(PROJECTOR.annotation_size)


def _look(view) -> tuple:
    return (view.font_size, view.cell_size, view.highlight_color, view.line_width, tuple(view.palette))


def test_explorer_view_is_sent_again_when_the_style_changes() -> None:
    explorer = ScoresExplorer()
    view = next(iter(explorer.views.values()))
    laptop = _look(view)
    laptop_png = explorer.snapshot_png()
    style.use("projector")
    assert _look(view) != laptop, "the live view still has the laptop look"
    assert view.highlight_color == PROJECTOR.highlight_color and view.line_width == PROJECTOR.line_width
    assert explorer.snapshot_png() != laptop_png
    style.use("laptop")
    assert _look(view) == laptop


@pytest.mark.parametrize("make", [SoftmaxExplorer, MultiHeadExplorer])
def test_every_view_of_an_explorer_restyles(make) -> None:
    explorer = make()
    before = {name: _look(v) for name, v in explorer.views.items()}
    style.use("projector")
    unchanged = [name for name, v in explorer.views.items() if _look(v) == before[name]]
    assert not unchanged, f"{make.__name__}: views not restyled: {unchanged}"


def test_listeners_are_held_weakly() -> None:
    hm = plots.heatmap(np.eye(2))
    n = len(style._listeners)
    del hm
    gc.collect()
    assert len(style._listeners) < n


def test_style_use_switches_and_sets_rc() -> None:
    st = style.use("projector")
    assert style.current() is st is style.STYLES["projector"]
    assert mpl.rcParams["font.size"] == st.font_size
    assert mpl.rcParams["image.cmap"] == st.cmap
    style.use("laptop")
    assert style.current().name == "laptop"
    assert mpl.rcParams["font.size"] == style.STYLES["laptop"].font_size


def test_style_use_unknown_name() -> None:
    with pytest.raises(ValueError, match=r"style must be one of \['laptop', 'projector'\], got 'beamer'"):
        style.use("beamer")


def test_style_projector_is_larger_and_colour_blind_safe() -> None:
    laptop, projector = style.STYLES["laptop"], style.STYLES["projector"]
    assert projector.font_size > laptop.font_size
    assert projector.line_width > laptop.line_width
    assert projector.cmap == "cividis"


def test_style_use_restyles_existing_heatmaps() -> None:
    hm = plots.heatmap(np.eye(2))
    small = hm.texts[0].get_fontsize()
    style.use("projector")
    assert hm.texts[0].get_fontsize() > small
    assert hm.texts[0].get_fontsize() == pytest.approx(style.STYLES["projector"].annotation_size)
