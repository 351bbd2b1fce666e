"""The explorers' building blocks: text parsing, the Explorer base, and Heatmap redraws (blitting)."""

from __future__ import annotations

import base64
import io

import ipywidgets as W
import numpy as np
import pytest
from PIL import Image

from attnlib import style, viz
from attnlib.viz import Heatmap, HeatmapGrid, _fmt
from attnlib.widgets._core import Explorer, MatrixParseError, PlotView, parse_matrix

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def pixels(png: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"), dtype=np.int16)


# --------------------------------------------------------------------------- parse_matrix
@pytest.mark.parametrize(
    "text",
    [
        "1 0 1 0\n0 2 0 2",
        "1 0 1 0; 0 2 0 2",
        "1, 0, 1, 0\n0, 2, 0, 2\n",
        "[[1, 0, 1, 0], [0, 2, 0, 2]]",
        "  1.0  0e0 1 0 ;\n\n 0 2. 0 2,",
    ],
)
def test_parse_matrix_reads_rows(text: str) -> None:
    matrix = parse_matrix(text)
    assert matrix.dtype == np.float64
    np.testing.assert_array_equal(matrix, [[1, 0, 1, 0], [0, 2, 0, 2]])


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "the text is empty"),
        (" ;\n ", "the text is empty"),
        ("1 2\n3 x", "row 2: 'x' is not a number"),
        ("1 inf", "row 1: 'inf' is not a finite number"),
        ("nan 1", "row 1: 'nan' is not a finite number"),
        ("1 2 3\n4 5", "row 2 has 2 numbers but row 1 has 3"),
    ],
)
def test_parse_matrix_names_the_problem(text: str, message: str) -> None:
    with pytest.raises(MatrixParseError, match=message.replace("(", r"\(")):
        parse_matrix(text)


def test_parse_matrix_size_limit() -> None:
    assert parse_matrix("1 " * 4, max_size=4).shape == (1, 4)
    with pytest.raises(MatrixParseError, match="at most 4×4 numbers, got 1×5"):
        parse_matrix("1 " * 5, max_size=4)
    assert issubclass(MatrixParseError, ValueError)  # explorers catch ValueError


# --------------------------------------------------------------------------- Explorer base
class TinyExplorer(Explorer):
    """A matrix typed as text, shown as a heatmap, with a row highlighted by a slider."""

    def __init__(self, text: str = "1 2; 3 4") -> None:
        super().__init__()
        self.controls["matrix"] = W.Textarea(value=text)
        self.controls["row"] = W.IntSlider(value=0, min=0, max=1)
        self.views["heatmap"] = PlotView(Heatmap(parse_matrix(text), title="tiny"))
        self.observe_controls()
        self.widget = W.VBox([*self.controls.values(), self.message, self.views["heatmap"].image])

    def update(self) -> None:
        matrix = parse_matrix(self.controls["matrix"].value)
        row = self.controls["row"].value
        if row >= matrix.shape[0]:
            raise ValueError(f"row must be < n_rows = {matrix.shape[0]}, got {row}")
        plot = self.views["heatmap"].plot
        plot.update(matrix)
        plot.highlight(rows=[row])
        self.views["heatmap"].refresh()

    def summary(self) -> str:
        return f"TinyExplorer(matrix={self.controls['matrix'].value!r})"


def test_explorer_update_on_control_change() -> None:
    ex = TinyExplorer()
    before = ex.views["heatmap"].image.value
    ex.controls["matrix"].value = "5 6; 7 8"
    np.testing.assert_array_equal(ex.views["heatmap"].plot.data, [[5, 6], [7, 8]])
    assert ex.views["heatmap"].image.value != before
    assert ex.message.value == ""


def test_explorer_bad_update_keeps_last_good_state_and_shows_message() -> None:
    ex = TinyExplorer()
    ex.controls["matrix"].value = "5 6; 7 8"
    good_png = ex.views["heatmap"].image.value
    ex.controls["matrix"].value = "5 6; 7 oops"
    assert "row 2: &#x27;oops&#x27; is not a number" in ex.message.value  # escaped HTML
    np.testing.assert_array_equal(ex.views["heatmap"].plot.data, [[5, 6], [7, 8]])
    assert ex.views["heatmap"].image.value == good_png
    ex.controls["matrix"].value = "1 0; 0 1"  # a good edit clears the message
    assert ex.message.value == ""
    np.testing.assert_array_equal(ex.views["heatmap"].plot.data, [[1, 0], [0, 1]])


def test_explorer_error_from_update_itself() -> None:
    ex = TinyExplorer("1 2 3")
    ex.controls["row"].value = 1
    assert "row must be &lt; n_rows = 1, got 1" in ex.message.value


def test_explorer_mimebundle() -> None:
    ex = TinyExplorer()
    bundle = ex._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert bundle["application/vnd.jupyter.widget-view+json"]["model_id"] == ex.widget.model_id
    png = base64.b64decode(bundle["image/png"])
    assert png.startswith(PNG_SIGNATURE)
    assert png == ex.views["heatmap"].image.value
    assert bundle["text/plain"] == "TinyExplorer(matrix='1 2; 3 4')"
    assert TinyExplorer()._repr_mimebundle_()["text/plain"] == bundle["text/plain"]  # deterministic
    assert repr(ex) == bundle["text/plain"]


def test_plotview_refresh_pushes_png() -> None:
    view = PlotView(Heatmap(np.eye(3)))
    first = bytes(view.image.value)
    assert first.startswith(PNG_SIGNATURE)
    view.plot.update(np.ones((3, 3)) * 2)
    assert view.image.value == first  # nothing pushed until refresh
    view.refresh()
    assert view.image.value != first and bytes(view.image.value).startswith(PNG_SIGNATURE)


# --------------------------------------------------------------------------- Heatmap updates
def expected_text_colors(hm: Heatmap) -> list[str]:
    rgba = hm.image.cmap(hm.image.norm(hm.data))
    luminance = 0.299 * rgba[..., 0] + 0.587 * rgba[..., 1] + 0.114 * rgba[..., 2]
    return ["black" if v > 0.5 else "white" for v in luminance.ravel()]


def test_heatmap_update_data_and_annotations() -> None:
    rng = np.random.default_rng(0)
    hm = Heatmap(rng.standard_normal((4, 5)))
    hm.to_png()
    new = rng.standard_normal((4, 5)) * 10
    hm.update(new)
    np.testing.assert_array_equal(hm.data, new)
    np.testing.assert_array_equal(hm.image.get_array(), new)
    assert [t.get_text() for t in hm.texts] == [_fmt(float(v), 2) for v in new.ravel()]
    assert [t.get_color() for t in hm.texts] == expected_text_colors(hm)
    lo, hi = hm.image.norm.vmin, hm.image.norm.vmax
    assert lo <= new.min() and hi >= new.max()


def test_heatmap_shape_change_rebuilds() -> None:
    hm = Heatmap(np.eye(3), row_labels=["a", "b", "c"])
    before = pixels(hm.to_png())
    hm.update(np.arange(10.0).reshape(2, 5))
    assert hm.data.shape == (2, 5)
    assert len(hm.texts) == 10
    assert [t.get_text() for t in hm.texts][-1] == "9.00"
    assert [t.get_text() for t in hm.ax.get_xticklabels()] == ["1", "2", "3", "4", "5"]
    assert [t.get_text() for t in hm.ax.get_yticklabels()] == ["1", "2"]
    assert hm.image.get_extent() == [-0.5, 4.5, 1.5, -0.5]
    after = pixels(hm.to_png())
    assert after.shape == before.shape  # the figure keeps its size: the widget does not jump
    assert not np.array_equal(after, before)


def test_heatmap_large_is_not_annotated() -> None:
    hm = Heatmap(np.zeros((64, 64)))
    assert hm.texts == []
    hm.update(np.ones((8, 8)))
    assert len(hm.texts) == 64


def test_highlight_patches_replace_each_other() -> None:
    hm = Heatmap(np.zeros((3, 4)))
    hm.highlight(rows=[1], cols=[2], cells=[(0, 3)])
    boxes = [(r.get_x(), r.get_y(), r.get_width(), r.get_height()) for r in hm.highlights]
    assert boxes == [(-0.5, 0.5, 4, 1), (1.5, -0.5, 1, 3), (2.5, -0.5, 1, 1)]
    hm.highlight(cells=[(2, 0)])
    assert [(r.get_x(), r.get_y()) for r in hm.highlights] == [(-0.5, 1.5)]
    assert len([p for p in hm.ax.patches if isinstance(p, type(hm.highlights[0]))]) == 1


def highlight_mask(png: bytes) -> np.ndarray:
    r, g, b = (int(style.current().highlight_color[k : k + 2], 16) for k in (1, 3, 5))
    px = pixels(png)
    return (np.abs(px - np.array([r, g, b])).sum(axis=-1) < 30).any(axis=0)  # columns holding it


def test_highlight_is_drawn_and_moves() -> None:
    hm = Heatmap(np.full((4, 4), 0.5), vmin=0.0, vmax=1.0, cmap="Greys", annotate=False)
    plain = hm.to_png()
    assert not highlight_mask(plain).any()
    hm.highlight(cols=[0])
    left = highlight_mask(hm.to_png())
    hm.highlight(cols=[3])
    right = highlight_mask(hm.to_png())
    assert left.any() and right.any()
    assert np.flatnonzero(left).mean() < np.flatnonzero(right).mean()  # it moved, no stale outline
    hm.highlight()
    assert not highlight_mask(hm.to_png()).any()


def test_blitted_update_matches_a_fresh_render() -> None:
    """After many updates (data, labels, title, highlights) the PNG equals a fresh heatmap's: no stale pixels."""
    rng = np.random.default_rng(3)
    hm = Heatmap(rng.standard_normal((6, 6)), title="weights of Input 1")
    hm.to_png()
    for k in range(5):
        hm.update(rng.standard_normal((6, 6)) * (k + 1), title=f"weights of Input {k + 2}")
        hm.highlight(rows=[k])
        hm.to_png()
    final = rng.standard_normal((6, 6))
    labels = list("abcdef")
    hm.update(final, row_labels=labels, col_labels=labels, title="weights of Input 9")
    hm.highlight(cells=[(2, 3)])
    fresh = Heatmap(final, row_labels=labels, col_labels=labels, title="weights of Input 9")
    fresh.highlight(cells=[(2, 3)])
    np.testing.assert_array_equal(pixels(hm.to_png()), pixels(fresh.to_png()))


def test_title_update_keeps_font_size_and_renders() -> None:
    hm = Heatmap(np.eye(3), title="first")
    size = hm.ax.title.get_fontsize()
    before = hm.to_png()
    hm.update(title="second")
    assert hm.ax.title.get_text() == "second"
    assert hm.ax.title.get_fontsize() == size
    assert not np.array_equal(pixels(hm.to_png()), pixels(before))
    np.testing.assert_array_equal(pixels(hm.to_png()), pixels(Heatmap(np.eye(3), title="second").to_png()))


def test_grid_update_and_highlight_render() -> None:
    rng = np.random.default_rng(1)
    mats = [rng.standard_normal((3, 4)) for _ in range(3)]
    grid = HeatmapGrid(mats, ["Q", "K", "V"])
    plain = grid.to_png()
    grid.heatmaps[1].highlight(rows=[0])
    outlined = grid.to_png()
    assert highlight_mask(outlined).any() and not highlight_mask(plain).any()
    new = [m * 2 for m in mats]
    grid.update(new)
    for hm, m in zip(grid.heatmaps, new):
        np.testing.assert_array_equal(hm.data, m)
        assert [t.get_text() for t in hm.texts] == [_fmt(float(v), 2) for v in m.ravel()]
    assert not np.array_equal(pixels(grid.to_png()), pixels(outlined))


@pytest.mark.parametrize("shape", [(8, 8), (3, 5), (1, 6), (28, 28), (64, 64)])
def test_fast_image_path_is_pixel_identical_to_matplotlib(shape, monkeypatch) -> None:
    """The numpy image paste (viz._paste_image) draws exactly what matplotlib's imshow would."""
    matrix = np.random.default_rng(sum(shape)).standard_normal(shape)
    monkeypatch.setattr(viz, "FAST_IMAGES", False)
    reference = pixels(Heatmap(matrix, title="t").to_png())
    monkeypatch.setattr(viz, "FAST_IMAGES", True)
    hm = Heatmap(matrix, title="t")
    np.testing.assert_array_equal(pixels(hm.to_png()), reference)
    hm.update(matrix[::-1].copy())  # blitted redraw
    monkeypatch.setattr(viz, "FAST_IMAGES", False)
    np.testing.assert_array_equal(pixels(hm.to_png()), pixels(Heatmap(matrix[::-1].copy(), title="t").to_png()))


def test_relabel_equals_a_fresh_render_with_and_without_relayout() -> None:
    """Same-size tick labels skip the layout, other labels redo it: both match a fresh heatmap."""
    matrix = np.random.default_rng(0).standard_normal((1, 3))
    values = ["v1", "v2", "v3"]
    hm = Heatmap(matrix, row_labels=["Input 1"], col_labels=values)
    hm.to_png()
    for k in (2, 3, 4):
        hm.update(matrix * k, row_labels=[f"Input {k}"], col_labels=values)
        assert hm._canvas._relayout is False  # "Input k" has the size of "Input 1"
        png = hm.to_png()
    fresh = Heatmap(matrix * 4, row_labels=["Input 4"], col_labels=values)
    np.testing.assert_array_equal(pixels(png), pixels(fresh.to_png()))
    hm.update(matrix, row_labels=["a much longer label"], col_labels=values)
    assert hm._canvas._relayout is True
    fresh = Heatmap(matrix, row_labels=["a much longer label"], col_labels=values)
    np.testing.assert_array_equal(pixels(hm.to_png()), pixels(fresh.to_png()))


def test_set_quietly_changes_a_control_without_an_update_and_keeps_it_wired():
    import ipywidgets as W

    from attnlib.widgets import Explorer

    class Counting(Explorer):
        def __init__(self) -> None:
            super().__init__()
            self.updates = 0
            self.controls["n"] = W.IntSlider(value=1, min=0, max=9)
            self.observe_controls()

        def update(self) -> None:
            self.updates += 1

    ex = Counting()
    ex.set_quietly("n", max=5, value=4)
    assert (ex.controls["n"].value, ex.controls["n"].max, ex.updates) == (4, 5, 0)
    ex.controls["n"].value = 2
    assert ex.updates == 1


def test_update_with_one_side_of_labels_keeps_the_other():
    hm = Heatmap(np.eye(2), row_labels=["a", "b"], col_labels=["x", "y"])
    hm.update(np.eye(2) * 2, row_labels=["c", "d"])
    assert [t.get_text() for t in hm.ax.get_yticklabels()] == ["c", "d"]
    assert [t.get_text() for t in hm.ax.get_xticklabels()] == ["x", "y"]
