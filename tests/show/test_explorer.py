"""attnlib.show.explorer: parse_matrix and the Explorer base every explorer is built on (HeatmapView, the
live view itself: tests/show/test_view.py)."""

from __future__ import annotations

import base64
import io

import ipywidgets as widgets
import numpy as np
import pytest
from PIL import Image

from attnlib.show import HeatmapView
from attnlib.show.explorer import Explorer, MatrixParseError, parse_matrix

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


def test_explorer_change_sends_its_views_in_one_message_after_the_update(sent) -> None:
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
    assert not [msg for widget, msg in sent if widget == view.model_id]  # the view's changes travel in its group
    to_group = [msg for widget, msg in sent if widget == ex.group.model_id]
    assert len(to_group) == 1, to_group  # update() and highlight() travel together
    entry = to_group[0]["state"][view.group_key]
    assert "description" in entry and [view.group_key, "buffer"] in to_group[0]["buffer_paths"]  # binary
    assert view.values == [[5, 6], [7, 8]]


@pytest.mark.parametrize("key", ["query", "scaled"])
def test_linked_explorer_change_is_one_message_for_all_its_views(sent, key: str) -> None:
    from attnlib.lessons.pipeline import PipelineExplorer

    ex = PipelineExplorer("001")
    during: list[int] = []
    original = ex.update
    ex.update = lambda: (original(), during.append(len(sent)))
    sent.clear()
    control = ex.controls[key]
    control.value = 1 if key == "query" else not control.value
    views = {view.model_id for view in ex.views.values()}
    assert not [w for w, msg in sent if w in views and "buffer" in msg.get("state", {})]
    to_group = [k for k, (widget, msg) in enumerate(sent) if widget == ex.group.model_id]
    assert len(to_group) == 1, "the views' changes did not leave as one message"
    assert to_group[0] >= during[0], "a view's message left before the update ended"
    moved = sent[to_group[0]][1]["state"]
    assert len(moved) >= 3 and set(moved) <= {view.group_key for view in ex.views.values()}
    senders = [widget for widget, msg in sent if msg["method"] == "update"]
    assert len(senders) == len(set(senders)), "a widget sent twice for one change"
    controls = {c.model_id for c in ex.controls.values()}
    texts = [k for k, (w, msg) in enumerate(sent) if w != ex.group.model_id and w not in controls]
    assert texts and min(texts) > to_group[0], "a text left before the views (the page would draw them later)"


def test_a_controls_new_range_reaches_the_browser_before_its_new_value(sent) -> None:
    """Switching to a 4-key example raises the terms slider's max and value: max must arrive first
    (a merged message lets the browser clamp the value to the old max of 3)."""
    from attnlib.lessons.l07_summing import SummingExplorer

    ex = SummingExplorer("001")
    slider = ex.controls["terms"]
    sent.clear()
    ex.controls["example"].value = "000"
    assert (slider.max, slider.value) == (4, 4)
    states = [msg["state"] for widget, msg in sent if widget == slider.model_id and msg["method"] == "update"]
    first_max = next(k for k, state in enumerate(states) if "max" in state)
    first_value = next(k for k, state in enumerate(states) if "value" in state)
    assert first_max < first_value, states


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


def test_showing_the_state_already_shown_sends_nothing(sent) -> None:
    """update() recomputes everything, but only what moved leaves: the same state again is no message at all."""
    from attnlib.lessons.pipeline import PipelineExplorer

    ex = PipelineExplorer("001")
    sent.clear()
    ex.update()
    assert sent == []
    ex.controls["causal"].value = True
    assert sent, "a change that moves the views sent nothing"
    sent.clear()
    ex.show(ex.compute(ex.values_now()))
    assert sent == []
