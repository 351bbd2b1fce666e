"""The explorers' building blocks: text parsing, the HeatmapView (Python side) and the Explorer base."""

from __future__ import annotations

import base64
import io
import re

import ipywidgets as widgets
import numpy as np
import pytest
from PIL import Image

from attnlib.formatting import explain_softmax
from attnlib.show import HeatmapView, parse_cell, style
from attnlib.show.explorer import Explorer, MatrixParseError, parse_matrix
from attnlib.show.plots import Heatmap
from attnlib.steps import softmax

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


# --------------------------------------------------------------------------- HeatmapView
def test_view_sends_numbers_labels_and_limits() -> None:
    view = HeatmapView(np.array([[0.25, 0.75], [1.0, 0.0]]), row_labels=["a", "b"], title="weights", vmin=0, vmax=1)
    assert view.values == [[0.25, 0.75], [1.0, 0.0]]
    assert (view.row_labels, view.col_labels) == (["a", "b"], ["1", "2"])
    assert (view.vmin, view.vmax) == (0.0, 1.0)
    assert view.annotate and len(view.palette) == 64 and all(c.startswith("#") for c in view.palette)
    assert view.cmap == "cividis"  # colour-blind safe by default
    assert "weights: a 2×2 matrix" in view.description and "a, b" in view.description
    assert repr(view) == "<HeatmapView 2×2, 'weights'>"


def test_view_signed_matrix_gets_symmetric_diverging_limits() -> None:
    view = HeatmapView(np.array([[-1.0, 3.0]]))
    assert (view.vmin, view.vmax) == (-3.0, 3.0)
    assert view.cmap == style.current().diverging_cmap


def test_view_update_keeps_labels_of_unchanged_side_and_clears_stale_explanations() -> None:
    view = HeatmapView(np.eye(2), row_labels=["a", "b"], col_labels=["x", "y"], explanations=[["1", "2"], ["3", "4"]])
    assert view.explanations == [["1", "2"], ["3", "4"]]
    view.update(np.eye(2) * 2, row_labels=["c", "d"])
    assert (view.row_labels, view.col_labels) == (["c", "d"], ["x", "y"])
    assert view.explanations == []
    view.update(np.ones((3, 1)))
    assert (view.row_labels, view.col_labels) == (["1", "2", "3"], ["1"])


def test_explanations_given_as_a_function_are_written_once_when_first_asked_for() -> None:
    calls: list[int] = []

    def table() -> list[list[str]]:
        calls.append(1)
        return [["a", "b"], ["c", "d"]]

    view = HeatmapView(np.eye(2), explanations=table)
    assert calls == [] and view.explained  # a change sends numbers; no text is written yet
    assert "explanations" not in view.get_state()
    assert view.explain_cell({"row": 1, "col": 0}, []) == ("c", [])  # the page's invoke("explain_cell", …)
    assert view.explain_cell({"row": 0, "col": 1}, []) == ("b", [])
    assert calls == [1]  # the whole table once, then from memory
    assert view.explain_cell({"row": 5, "col": 5}, []) == ("", [])  # outside: nothing, no error
    assert view.explain_cell({"row": "x"}, []) == ("", [])


def test_an_explanation_asked_for_after_an_update_is_the_new_one() -> None:
    view = HeatmapView(np.eye(2), explanations=[["1", "2"], ["3", "4"]])
    view.update(np.eye(2) * 2, explanations=[["5", "6"], ["7", "8"]])
    assert view.explain_cell({"row": 0, "col": 0}, [])[0] == "5"
    view.update(np.eye(2) * 3)  # a new matrix without texts: the old ones are stale
    assert view.explain_cell({"row": 0, "col": 0}, [])[0] == ""


def test_a_view_without_explanations_tells_the_browser_not_to_ask() -> None:
    view = HeatmapView(np.eye(2))
    assert not view.explained
    view.update(np.eye(2), explanations=lambda: None)  # a function may find the matrix too large
    assert view.explained and view.explanations == [] and view.explain(0, 0) == ""


def test_view_refuses_non_finite_matrices() -> None:
    view = HeatmapView(np.eye(2))
    with pytest.raises(ValueError, match="NaN or infinite"):
        view.update(np.array([[np.nan, 1.0], [0.0, 1.0]]))
    assert view.values == [[1.0, 0.0], [0.0, 1.0]]


def test_view_highlights_replace_each_other() -> None:
    view = HeatmapView(np.zeros((3, 4)))
    view.highlight(rows=[1], cols=[2], cells=[(0, 3)])
    assert (view.highlight_rows, view.highlight_cols, view.highlight_cells) == ([1], [2], [[0, 3]])
    view.highlight(cells=[(2, 0)])
    assert (view.highlight_rows, view.highlight_cols, view.highlight_cells) == ([], [], [[2, 0]])


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("abc", "'abc' is not a number"),
        ("", "the cell is empty"),
        ("nan", "'nan' is not a number (NaN)"),
        ("-inf", "'-inf' is infinite"),
        ("1e30", "1e30 is too large"),
    ],
)
def test_view_bad_edit_names_the_problem_and_keeps_the_last_good_state(text: str, message: str) -> None:
    view = HeatmapView(np.eye(2), row_labels=["a", "b"], col_labels=["x", "y"], editable=True)
    assert view.edit(1, 0, text) is False
    assert view.message.startswith("⚠ b, x: ") and message in view.message
    assert view.values == [[1.0, 0.0], [0.0, 1.0]]
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_cell(text)


def test_view_good_edit_without_callback_changes_the_cell_and_clears_the_message() -> None:
    view = HeatmapView(np.eye(2), editable=True)
    view.edit(0, 0, "oops")
    assert view.message
    assert view.edit(0, 1, " 2.5 ") is True
    assert view.values == [[1.0, 2.5], [0.0, 1.0]] and view.message == ""


def test_view_edit_goes_through_the_browser_message_to_the_callback() -> None:
    view = HeatmapView(np.eye(2), editable=True)
    seen = []
    view.on_edit(lambda i, j, v: seen.append((i, j, v)))
    view._handle_message(view, {"kind": "edit", "row": 1, "col": 0, "text": "-3"}, [])
    assert seen == [(1, 0, -3.0)]
    view._handle_message(view, {"kind": "edit", "row": 5, "col": 0, "text": "1"}, [])
    assert "outside the 2×2 matrix" in view.message and seen == [(1, 0, -3.0)]


def test_view_callback_error_is_shown_and_nothing_changes() -> None:
    view = HeatmapView(np.eye(2), editable=True)

    def refuse(i: int, j: int, value: float) -> None:
        raise ValueError("weights must stay below 1")

    view.on_edit(refuse)
    assert view.edit(0, 0, "2") is False
    assert "weights must stay below 1" in view.message
    assert view.values == [[1.0, 0.0], [0.0, 1.0]]


def test_view_select_message_calls_back() -> None:
    view = HeatmapView(np.eye(3))
    chosen = []
    view.on_select(lambda i, j: chosen.append((i, j)))
    view._handle_message(view, {"kind": "select", "row": 2, "col": 1}, [])
    view._handle_message(view, {"kind": "select"}, [])  # malformed: ignored
    assert chosen == [(2, 1)]


def test_softmax_view_stays_finite_for_huge_scores() -> None:
    import torch

    scores = torch.tensor([[1e4, -1e4, 0.0], [-1e4, -1e4, 1e4], [0.0, 0.0, 0.0]])
    weights = softmax(scores)
    view = HeatmapView(weights, vmin=0, vmax=1, explanations=explain_softmax(scores))
    assert np.isfinite(np.array(view.values)).all()
    assert view.values[0] == [1.0, 0.0, 0.0]
    assert all("inf" not in t and "nan" not in t for row in view.explanations for t in row)


def test_view_png_fallback_and_restyle() -> None:
    view = HeatmapView(np.eye(3), title="t")
    assert view.to_png().startswith(PNG_SIGNATURE)
    laptop_font = view.font_size
    style.use("projector")
    try:
        assert view.font_size > laptop_font and view.highlight_color == style.STYLES["projector"].highlight_color
    finally:
        style.use("laptop")
    assert view.font_size == laptop_font


def test_view_ships_its_front_end_in_the_package() -> None:
    from attnlib.show.view import STATIC

    js = (STATIC / "heatmap.js").read_text()
    urls = set(re.findall(r"https?://[^\s\"'`]+", js))
    assert "export default" in js and urls <= {"http://www.w3.org/2000/svg", "http://www.w3.org/1999/xhtml"}, urls
    assert (STATIC / "heatmap.css").is_file()


# --------------------------------------------------------------------------- Explorer base
class TinyExplorer(Explorer):
    """A matrix typed as text, shown as a heatmap, with a row highlighted by a slider."""

    def __init__(self, text: str = "1 2; 3 4") -> None:
        super().__init__()
        self.controls["matrix"] = widgets.Textarea(value=text)
        self.controls["row"] = widgets.IntSlider(value=0, min=0, max=1)
        self.views["heatmap"] = HeatmapView(parse_matrix(text), title="tiny", editable=True)
        self.on_edit("heatmap", self.edit_cell)
        self.observe_controls()
        self.widget = widgets.VBox([*self.controls.values(), self.message, self.views["heatmap"]])

    def edit_cell(self, i: int, j: int, value: float) -> None:
        if value < 0:
            raise ValueError("no negative numbers here")
        matrix = parse_matrix(self.controls["matrix"].value)
        matrix[i, j] = value
        self.set_quietly("matrix", value="; ".join(" ".join(f"{v:g}" for v in row) for row in matrix))

    def update(self) -> None:
        matrix = parse_matrix(self.controls["matrix"].value)
        row = self.controls["row"].value
        if row >= matrix.shape[0]:
            raise ValueError(f"row must be < n_rows = {matrix.shape[0]}, got {row}")
        self.views["heatmap"].update(matrix).highlight(rows=[row])

    def summary(self) -> str:
        return f"TinyExplorer(matrix={self.controls['matrix'].value!r})"


def test_explorer_update_on_control_change() -> None:
    ex = TinyExplorer()
    ex.controls["matrix"].value = "5 6; 7 8"
    np.testing.assert_array_equal(ex.views["heatmap"].data, [[5, 6], [7, 8]])
    assert ex.views["heatmap"].values == [[5, 6], [7, 8]]
    assert ex.message.value == ""


def test_explorer_bad_update_keeps_last_good_state_and_shows_message() -> None:
    ex = TinyExplorer()
    ex.controls["matrix"].value = "5 6; 7 8"
    ex.controls["matrix"].value = "5 6; 7 oops"
    assert "row 2: &#x27;oops&#x27; is not a number" in ex.message.value  # escaped HTML
    np.testing.assert_array_equal(ex.views["heatmap"].data, [[5, 6], [7, 8]])
    ex.controls["matrix"].value = "1 0; 0 1"  # a good edit clears the message
    assert ex.message.value == ""
    np.testing.assert_array_equal(ex.views["heatmap"].data, [[1, 0], [0, 1]])


def test_explorer_error_from_update_itself() -> None:
    ex = TinyExplorer("1 2 3")
    ex.controls["row"].value = 1
    assert "row must be &lt; n_rows = 1, got 1" in ex.message.value


def test_explorer_cell_edit_updates_state_or_explains() -> None:
    ex = TinyExplorer()
    view = ex.views["heatmap"]
    assert view.edit(1, 1, "9") is True
    assert ex.controls["matrix"].value == "1 2; 3 9" and view.values == [[1, 2], [3, 9]]
    assert view.edit(0, 0, "-1") is False
    assert "no negative numbers here" in view.message
    assert view.values == [[1, 2], [3, 9]] and ex.controls["matrix"].value == "1 2; 3 9"


def test_explorer_mimebundle() -> None:
    ex = TinyExplorer()
    bundle, metadata = ex._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert bundle["application/vnd.jupyter.widget-view+json"]["model_id"] == ex.widget.model_id
    png = base64.b64decode(bundle["image/png"])
    assert png.startswith(PNG_SIGNATURE)
    # the fallback is shown at half its pixel size (sharp when zoomed; JupyterLab and the site read the size)
    assert metadata["image/png"]["width"] == pixels(png).shape[1] // 2
    assert pixels(png).shape[0] > 50
    assert bundle["text/plain"] == "TinyExplorer(matrix='1 2; 3 4')"
    assert TinyExplorer()._repr_mimebundle_()[0]["text/plain"] == bundle["text/plain"]  # deterministic
    assert repr(ex) == bundle["text/plain"]


def test_set_quietly_changes_a_control_without_an_update_and_keeps_it_wired():
    class Counting(Explorer):
        def __init__(self) -> None:
            super().__init__()
            self.updates = 0
            self.controls["n"] = widgets.IntSlider(value=1, min=0, max=9)
            self.observe_controls()

        def update(self) -> None:
            self.updates += 1

    ex = Counting()
    ex.set_quietly("n", max=5, value=4)
    assert (ex.controls["n"].value, ex.controls["n"].max, ex.updates) == (4, 5, 0)
    ex.controls["n"].value = 2
    assert ex.updates == 1


@pytest.fixture
def sent(monkeypatch):
    """The messages widgets send to the browser, in order: ``(widget, message)``."""
    log: list[tuple[widgets.Widget, dict]] = []
    monkeypatch.setattr(widgets.Widget, "_send", lambda self, msg, buffers=None: log.append((self, msg)))
    return log


def test_explorer_change_sends_one_message_per_changed_widget_after_the_update(sent) -> None:
    ex = TinyExplorer("1 2; 3 4")
    view = ex.views["heatmap"]
    updates_seen: list[int] = []
    original = ex.update

    def update() -> None:
        original()
        updates_seen.append(len(sent))  # nothing has left during the update itself

    ex.update = update
    sent.clear()
    ex.controls["matrix"].value = "5 6; 7 8"  # the view gets a new matrix and its highlight again
    assert updates_seen == [1]  # only the text box's own message, sent before the update
    to_view = [msg for widget, msg in sent if widget is view]
    assert len(to_view) == 1, to_view  # update() and highlight() travel together
    assert "description" in to_view[0]["state"] and ["buffer"] in to_view[0]["buffer_paths"]  # binary matrix
    assert view.values == [[5, 6], [7, 8]]


@pytest.mark.parametrize("key", ["query", "scaled"])
def test_linked_explorer_change_is_one_burst(sent, key: str) -> None:
    from attnlib.lessons.pipeline import PipelineExplorer

    ex = PipelineExplorer("001")
    during: list[int] = []
    original = ex.update
    ex.update = lambda: (original(), during.append(len(sent)))
    sent.clear()
    control = ex.controls[key]
    control.value = 1 if key == "query" else not control.value
    views = [k for k, (widget, msg) in enumerate(sent) if isinstance(widget, HeatmapView)]
    assert len(views) >= 3, "the views were not updated"
    assert min(views) >= during[0], "a view's message left before the update ended"
    widgets = [id(widget) for widget, msg in sent if msg["method"] == "update"]
    assert len(widgets) == len(set(widgets)), "a widget sent twice for one change"


def test_a_controls_new_range_reaches_the_browser_before_its_new_value(sent) -> None:
    """Switching to a 4-key example raises the terms slider's max and value: max must arrive first
    (a merged message lets the browser clamp the value to the old max of 3)."""
    from attnlib.lessons.l07_summing import SummingExplorer

    ex = SummingExplorer("001")
    slider = ex.controls["terms"]
    sent.clear()
    ex.controls["example"].value = "000"
    assert (slider.max, slider.value) == (4, 4)
    states = [msg["state"] for widget, msg in sent if widget is slider and msg["method"] == "update"]
    first_max = next(k for k, state in enumerate(states) if "max" in state)
    first_value = next(k for k, state in enumerate(states) if "value" in state)
    assert first_max < first_value, states


# --------------------------------------------------------------------------- static Heatmap (seaborn)
def test_heatmap_update_with_one_side_of_labels_keeps_the_other():
    hm = Heatmap(np.eye(2), row_labels=["a", "b"], col_labels=["x", "y"])
    hm.update(np.eye(2) * 2, row_labels=["c", "d"])
    assert [t.get_text() for t in hm.ax.get_yticklabels()] == ["c", "d"]
    assert [t.get_text() for t in hm.ax.get_xticklabels()] == ["x", "y"]


def test_heatmap_shape_change_relabels_and_keeps_one_colour_bar() -> None:
    hm = Heatmap(np.eye(3), row_labels=["a", "b", "c"])
    hm.update(np.arange(10.0).reshape(2, 5))
    assert [t.get_text() for t in hm.texts][-1] == "9.00"
    assert [t.get_text() for t in hm.ax.get_yticklabels()] == ["1", "2"]
    assert len(hm.fig.axes) == 2  # the heatmap and one colour bar, not one more per redraw


def test_weights_views_of_the_explorers_have_the_scale_0_to_1() -> None:
    from attnlib.lessons.l05_softmax import SoftmaxExplorer
    from attnlib.lessons.l06_weighting import WeightingExplorer
    from attnlib.lessons.l08_scaling import ScalingExplorer
    from attnlib.lessons.l09_module import ModuleExplorer
    from attnlib.lessons.l10_sentence import SentenceExplorer
    from attnlib.lessons.l11_multihead import MultiHeadExplorer
    from attnlib.lessons.pipeline import PipelineExplorer

    views = [
        SoftmaxExplorer().views["heatmap"],
        SoftmaxExplorer().views["bars"],
        WeightingExplorer().views["weights"],
        *ScalingExplorer().views.values(),
        ModuleExplorer().views["weights"],
        SentenceExplorer().views["weights"],
        *MultiHeadExplorer().views.values(),
        PipelineExplorer().views["weights"],
    ]
    assert all((view.vmin, view.vmax) == (0.0, 1.0) for view in views)
    assert all(view.cmap == "cividis" for view in views)
