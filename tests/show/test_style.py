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


# --------------------------------------------------------------------------- colour vision and contrast (issue 56)
# Machado, Oliveira & Fernandes (2009), "A physiologically-based model for simulation of color vision deficiency",
# their matrices at severity 1.0, applied to linear RGB: protanopia, deuteranopia, tritanopia
MACHADO_2009 = {
    "protanopia": [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216], [-0.003882, -0.048116, 1.051998]],
    "deuteranopia": [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413], [-0.011820, 0.042940, 0.968881]],
    "tritanopia": [[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602], [0.004733, 0.691367, 0.303900]],
}
SRGB_TO_XYZ = [[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]]
D65 = [0.95047, 1.0, 1.08883]


def _linear(rgb: np.ndarray) -> np.ndarray:
    return np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)


def _lab(linear: np.ndarray) -> np.ndarray:
    """CIELAB (D65) of colours in linear RGB, one per row."""
    xyz = linear @ np.array(SRGB_TO_XYZ).T / np.array(D65)
    f = np.where(xyz > (6 / 29) ** 3, np.cbrt(xyz), xyz / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.stack([116 * f[:, 1] - 16, 500 * (f[:, 0] - f[:, 1]), 200 * (f[:, 1] - f[:, 2])], axis=1)


def _seen(cmap: str, vision: str | None, n: int = 64) -> np.ndarray:
    """The CIELAB colours of ``n`` samples of ``cmap``, as seen with ``vision`` (None: typical colour vision)."""
    from attnlib.show.view import palette

    rgb = np.array([[int(h[k : k + 2], 16) / 255 for k in (1, 3, 5)] for h in palette(cmap, n)])
    linear = _linear(rgb)
    if vision is not None:
        linear = np.clip(linear @ np.array(MACHADO_2009[vision]).T, 0, 1)
    return _lab(linear)


def order_problems(cmap: str, vision: str | None, diverging: bool) -> list[str]:
    """Why ``cmap`` does not keep its order readable for ``vision``: a sequential map's lightness (L*) must rise
    from one end to the other; a diverging map's must rise from each end to the middle (the size of a number), and
    its two sides must stay apart (the sign): ΔE ≥ 20 between the colours of -x and x for |x| ≥ half the range
    (2.3 is a just noticeable difference)."""
    lab = _seen(cmap, vision)
    lightness = lab[:, 0]
    who = f"{cmap} ({vision or 'typical vision'})"
    if not diverging:
        return [] if np.all(np.diff(lightness) > 0) else [f"{who}: lightness does not rise from end to end"]
    half = len(lab) // 2
    problems = []
    if not (np.all(np.diff(lightness[:half]) > 0) and np.all(np.diff(lightness[half:]) < 0)):
        problems.append(f"{who}: lightness does not rise from each end to the middle")
    apart = min(float(np.linalg.norm(lab[k] - lab[-1 - k])) for k in range(half // 2))
    if apart < 20:
        problems.append(f"{who}: the two sides come within ΔE {apart:.1f} of each other")
    return problems


def test_every_colour_map_keeps_its_order_under_colour_vision_deficiencies() -> None:
    """The course's colour maps (both styles: sequential and diverging) read the same with protanopia,
    deuteranopia and tritanopia as with typical colour vision (Machado et al. 2009, full severity)."""
    maps = {(s.cmap, False) for s in style.STYLES.values()} | {(s.diverging_cmap, True) for s in style.STYLES.values()}
    assert len(maps) >= 3
    problems = [
        p for cmap, div in sorted(maps) for vision in (None, *MACHADO_2009) for p in order_problems(cmap, vision, div)
    ]
    assert not problems, problems
    # the check can fail: jet's lightness goes up and down, and red–green RdYlGn's sides meet for deuteranopia
    assert order_problems("jet", None, diverging=False)
    assert any("sides" in p for p in order_problems("RdYlGn", "deuteranopia", diverging=True))


INK = """
import { inkOn } from %s;
let input = "";
process.stdin.on("data", (chunk) => (input += chunk));
process.stdin.on("end", () => process.stdout.write(JSON.stringify(JSON.parse(input).map((rgb) => inkOn(rgb)))));
"""


def _contrast(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """WCAG 2's contrast ratio between sRGB colours (0–1, one per row)."""
    la, lb = (_linear(c) @ np.array([0.2126, 0.7152, 0.0722]) for c in (a, b))
    return (np.maximum(la, lb) + 0.05) / (np.minimum(la, lb) + 0.05)


def test_numbers_in_cells_contrast_4_5_to_1_with_their_cell(tmp_path) -> None:
    """Every colour a live view paints a cell in (each palette of both styles) gets from heatmap.js's ``inkOn`` a
    number colour of contrast 4.5:1 or more (WCAG 1.4.3), run by node on the page's own code."""
    import json
    import shutil
    import subprocess

    from attnlib.show.page import STATIC
    from attnlib.show.view import palette

    node = shutil.which("node")
    assert node, "node is needed to run the page's code (make lint installs it with the npm packages)"
    cmaps = sorted({c for s in style.STYLES.values() for c in (s.cmap, s.diverging_cmap)})
    colours = [[int(h[k : k + 2], 16) for k in (1, 3, 5)] for cmap in cmaps for h in palette(cmap, 64)]
    script = tmp_path / "ink.mjs"
    script.write_text(INK % json.dumps((STATIC / "heatmap.js").as_uri()))
    out = subprocess.run([node, str(script)], input=json.dumps(colours), capture_output=True, text=True, check=True)
    inks = np.array([[0.0] * 3 if ink == "#000" else [1.0] * 3 for ink in json.loads(out.stdout)])
    ratios = _contrast(np.array(colours) / 255, inks)
    assert ratios.min() >= 4.5, f"{ratios.min():.2f}:1 on {colours[int(ratios.argmin())]}"
