"""Lesson 01: InputsExplorer headless (the heatmap shows attnlib's inputs; bad text keeps the last good
state) and the lesson's checkers (solutions pass; typical slips get their hint and mistake id)."""

import numpy as np
import pytest
import torch

from attnlib import examples, prepare_inputs
from attnlib.lessons import check
from attnlib.lessons.l01_inputs import (
    EXAMPLE_CHOICES,
    HAND_VECTORS,
    InputsExplorer,
    example_inputs,
    format_matrix,
    format_number,
)
from attnlib.show.explorer import parse_matrix


def _ticks(view, axis="y"):
    return view.row_labels if axis == "y" else view.col_labels


def test_starts_on_document_001():
    e = InputsExplorer()
    plot = e.views["inputs"]
    x = examples.three_inputs.inputs
    assert np.array_equal(plot.data, x.numpy())
    assert plot.annotations == [format_number(v, 0) for v in x.reshape(-1).tolist()]
    assert _ticks(plot) == ["Input 1", "Input 2", "Input 3"]
    assert e.summary() == "InputsExplorer(example='001', shape=(3, 4))"
    assert "(3, 4)" in e.shape.value
    bundle, _ = e._repr_mimebundle_()
    assert bundle["text/plain"] == e.summary() and "image/png" in bundle


@pytest.mark.parametrize("key", [v for _, v in EXAMPLE_CHOICES])
def test_every_document_shows_its_inputs(key):
    e = InputsExplorer()
    e.controls["example"].value = key
    ex = examples.get(key)
    want = ex.inputs if isinstance(ex, examples.MatrixExample) else ex.run().embedded
    labels = list(ex.token_labels) if isinstance(ex, examples.MatrixExample) else ex.tokens
    plot = e.views["inputs"]
    assert np.allclose(plot.data, want.numpy())
    assert _ticks(plot)[0] == labels[0]
    assert e.message.value == ""
    # the text box now holds the document's numbers (to 4 decimals)
    assert np.allclose(parse_matrix(e.controls["values"].value), want.numpy(), atol=5e-5)
    assert e.summary() == f"InputsExplorer(example={key!r}, shape={tuple(want.shape)})"


def test_editing_the_text_updates_the_heatmap():
    e = InputsExplorer()
    e.controls["values"].value = "1 0 1 0\n0 2 0 2\n1 1 1 1\n3 1 1 1"
    plot = e.views["inputs"]
    assert np.array_equal(plot.data, examples.four_inputs.inputs.numpy())
    assert _ticks(plot) == ["token 1", "token 2", "token 3", "token 4"]
    e.controls["values"].value = "0.5, 1.25\n2, 3"
    assert plot.annotations == ["0.50", "1.25", "2.00", "3.00"]
    assert e.summary() == "InputsExplorer(example='001', shape=(2, 2))"


@pytest.mark.parametrize(
    ("text", "words"),
    [("1 0 1 0\n0 2 x 2", "not a number"), ("1 0 1 0\n0 2 0", "same length"), ("", "empty")],
)
def test_bad_text_shows_a_message_and_keeps_the_state(text, words):
    e = InputsExplorer()
    before = e.views["inputs"].data.copy()
    png = e.views["inputs"].to_png()
    e.controls["values"].value = text
    assert words in e.message.value
    assert np.array_equal(e.views["inputs"].data, before)
    assert e.views["inputs"].to_png() == png
    assert e.summary() == "InputsExplorer(example='001', shape=(3, 4))"
    e.controls["values"].value = "1 2"  # a good text clears the message
    assert e.message.value == ""


def test_format_matrix_round_trips():
    x = examples.encodings.inputs
    assert np.allclose(parse_matrix(format_matrix(x)), x.numpy())
    assert format_matrix(examples.three_inputs.inputs).splitlines()[0] == "1, 0, 1, 0"


def test_unknown_example_is_rejected():
    with pytest.raises(ValueError, match="example"):
        InputsExplorer("999")


def test_inputs():
    assert check("inputs.1", [[1, 2], [0, -1], [3, 0.5]]).correct
    assert check("inputs.1", [[1, 0, 3], [2, -1, 0.5]]).mistake == "transposed"
    assert check("inputs.2", lambda vectors: torch.stack(vectors)).correct
    assert check("inputs.2", lambda vectors: torch.stack(vectors, dim=1)).mistake == "transposed"
    assert check("inputs.2", prepare_inputs).mistake == "library-function"
    assert check("inputs.3", [28, 16]).correct
    assert check("inputs.3", (28, 16)).correct
    assert "distinct" in check("inputs.3", [26, 16]).message
    assert len(examples.history.tokens) == 28 and len(set(examples.history.tokens)) == 26


def test_the_stack_checker_runs_on_a_size_no_input_of_the_lesson_has():
    """Exercise 1.2 says the checker's vectors have a size (5) that no input of the lesson has, either way round."""
    seen = []

    def stack(vectors):
        seen.append([tuple(v.shape) for v in vectors])
        return torch.stack(vectors)

    assert check("inputs.2", stack).correct
    assert seen and all(shapes == [(5,)] * 4 for shapes in seen), seen
    shown = {size for _, key in EXAMPLE_CHOICES for size in example_inputs(key)[0].shape}
    shown |= {len(HAND_VECTORS), len(HAND_VECTORS[0])}  # exercise 1.1's cats chase mice, (3, 2)
    assert 5 not in shown, sorted(shown)
