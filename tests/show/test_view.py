"""HeatmapView (attnlib.show.view), the Python half of the live heatmap: the numbers, labels and limits it
draws, explanations, edits and selections from the browser, its PNG fallback and its packaged front end (the
messages themselves travel in the explorer's one model: tests/show/test_page.py)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import numpy as np
import pytest

from attnlib.formatting import annotation, explain_softmax
from attnlib.show import HeatmapView, parse_cell, style
from attnlib.show.page import STATIC
from attnlib.steps import softmax

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


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


def test_a_frame_keeps_nothing_from_the_frame_before() -> None:
    view = HeatmapView(np.eye(2), row_labels=["a", "b"], col_labels=["x", "y"], explanations=[["1", "2"], ["3", "4"]])
    assert view.explanations == [["1", "2"], ["3", "4"]]
    view.show(view.frame(np.eye(2) * 2, row_labels=["c", "d"], rows=[1]))
    assert (view.row_labels, view.col_labels, view.highlight_rows) == (["c", "d"], ["1", "2"], [1])
    assert view.explanations == [] and not view.explained
    view.show(view.frame(np.ones((3, 1))))
    assert (view.row_labels, view.col_labels, view.highlight_rows) == (["1", "2", "3"], ["1"], [])
    assert view.shown() == HeatmapView(np.ones((3, 1))).shown()  # what a view built fresh shows


def test_explanations_given_as_a_function_are_written_once_when_first_asked_for() -> None:
    calls: list[int] = []

    def table() -> list[list[str]]:
        calls.append(1)
        return [["a", "b"], ["c", "d"]]

    view = HeatmapView(np.eye(2), explanations=table)
    assert calls == [] and view.explained  # a change sends numbers; no text is written yet
    assert "explanations" not in view.drawn(view.frame(np.eye(2), explanations=table))  # the page gets none
    assert view.explain(1, 0) == "c"  # what the page's {kind: "explain"} message is answered with
    assert view.explain(0, 1) == "b"
    assert calls == [1]  # the whole table once, then from memory
    assert view.explain(5, 5) == ""  # outside: nothing, no error


def test_an_explanation_asked_for_after_a_new_frame_is_the_new_one() -> None:
    view = HeatmapView(np.eye(2), explanations=[["1", "2"], ["3", "4"]])
    view.show(view.frame(np.eye(2) * 2, explanations=[["5", "6"], ["7", "8"]]))
    assert view.explain(0, 0) == "5"
    view.show(view.frame(np.eye(2) * 3))  # a new frame without texts: the old ones are stale
    assert view.explain(0, 0) == ""


def test_a_view_without_explanations_tells_the_browser_not_to_ask() -> None:
    view = HeatmapView(np.eye(2))
    assert not view.explained
    view.show(view.frame(np.eye(2), explanations=lambda: None))  # a function may find the matrix too large
    assert view.explained and view.explanations == [] and view.explain(0, 0) == ""


def test_view_refuses_non_finite_matrices() -> None:
    view = HeatmapView(np.eye(2))
    with pytest.raises(ValueError, match="NaN or infinite"):
        view.frame(np.array([[np.nan, 1.0], [0.0, 1.0]]))
    assert view.values == [[1.0, 0.0], [0.0, 1.0]]


def test_view_highlights_replace_each_other() -> None:
    view = HeatmapView(np.zeros((3, 4)))
    view.show(view.frame(np.zeros((3, 4)), rows=[1], cols=[2], cells=[(0, 3)]))
    assert (view.highlight_rows, view.highlight_cols, view.highlight_cells) == ([1], [2], [[0, 3]])
    view.show(view.frame(np.zeros((3, 4)), cells=[(2, 0)]))
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


def test_an_edit_no_callback_takes_is_refused_and_changes_nothing() -> None:
    view = HeatmapView(np.eye(2), editable=True)
    assert view.edit(0, 1, " 2.5 ") is False
    assert "takes no typed numbers" in view.message
    assert view.values == [[1.0, 0.0], [0.0, 1.0]]  # only its explorer's next frame changes what it shows


def test_view_edit_goes_to_the_callback_and_a_cell_outside_is_refused() -> None:
    view = HeatmapView(np.eye(2), editable=True)
    seen = []
    view.on_edit(lambda i, j, v: seen.append((i, j, v)))
    assert view.edit(1, 0, "-3") is True
    assert seen == [(1, 0, -3.0)]
    assert view.edit(5, 0, "1") is False
    assert "outside the 2×2 matrix" in view.message and seen == [(1, 0, -3.0)]


def test_view_callback_error_is_shown_and_nothing_changes() -> None:
    view = HeatmapView(np.eye(2), editable=True)

    def refuse(i: int, j: int, value: float) -> None:
        raise ValueError("weights must stay below 1")

    view.on_edit(refuse)
    assert view.edit(0, 0, "2") is False
    assert "weights must stay below 1" in view.message
    assert view.values == [[1.0, 0.0], [0.0, 1.0]]


def test_view_select_calls_back() -> None:
    view = HeatmapView(np.eye(3))
    chosen = []
    view.on_select(lambda i, j: chosen.append((i, j)))
    view.select(2, 1)
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
    js = (STATIC / "heatmap.js").read_text()
    urls = set(re.findall(r"https?://[^\s\"'`]+", js))
    assert "export function createHeatmap" in js and urls <= {"http://www.w3.org/2000/svg"}, urls
    assert (STATIC / "heatmap.css").is_file()


def test_a_view_is_no_widget_and_keeps_its_look_apart_from_what_a_change_moves() -> None:
    from attnlib.show.view import DRAWN, LOOK

    view = HeatmapView(np.eye(2), xlabel="key", title="a")
    assert not hasattr(view, "comm") and not hasattr(view, "model_id")  # no model of its own
    assert view.look()["xlabel"] == "key" and set(view.look()) == set(LOOK)
    assert not DRAWN & set(LOOK)
    assert set(view.drawn(view.frame(np.eye(2)))) == DRAWN


# --------------------------------------------------------------------------- the page formats as Python
# The page writes numbers as Python does: heatmap.js's ``formatValue`` against :func:`attnlib.formatting.annotation`
# over zero, tiny, huge, negative, exactly-tied and random values, run by node.
RUN = """
import { formatValue } from %s;
let input = "";
process.stdin.on("data", (chunk) => (input += chunk));
process.stdin.on("end", () => {
  const cases = JSON.parse(input);
  process.stdout.write(JSON.stringify(cases.map(([v, d]) => formatValue(v, d))));
});
"""


def values() -> list[float]:
    rng = np.random.default_rng(37)
    special = [0.0, -0.0, 1.0, -1.0, 0.5, 1.5, 2.5, -2.5, 0.125, -0.125, 0.375, 1.005, 99999.99, 99999.999, 1e5, -1e5]
    special += [125000.0, 135000.0, 9.95, 0.0995, 0.995, 9.5e-5, 5e-324, 1.7e308, -1e-300, 1e21, 3.5e22, 2.0**-20]
    ties = [k / 2**p for k in range(-40, 41, 3) for p in (1, 3, 4, 6)]  # exactly representable halves at some digit
    spread = (rng.standard_normal(400) * 10.0 ** rng.integers(-12, 12, 400)).tolist()
    grid = (rng.integers(-5000, 5000, 200) / 1000).tolist()  # three decimals: ties at two
    return special + ties + spread + grid


def test_the_page_formats_numbers_as_python_does(tmp_path) -> None:
    node = shutil.which("node")
    assert node, "node is needed to run the page's formatter (make lint installs it with the npm packages)"
    cases = [[v, d] for v in values() for d in (0, 1, 2, 3, 4, 6)]
    script = tmp_path / "run.mjs"
    script.write_text(RUN % json.dumps((STATIC / "heatmap.js").as_uri()))
    out = subprocess.run([node, str(script)], input=json.dumps(cases), capture_output=True, text=True, check=True)
    page = json.loads(out.stdout)
    python = [annotation(v, d) for v, d in cases]
    wrong = [(v, d, js, py) for (v, d), js, py in zip(cases, page, python) if js != py]
    assert not wrong, f"{len(wrong)} of {len(cases)} differ, e.g. (value, decimals, page, python): {wrong[:5]}"
    assert page[python.index("0")] == "0"  # an exact zero is 0 in the page too
