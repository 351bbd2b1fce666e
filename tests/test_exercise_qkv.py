"""The lesson 03 checker: queries of document 001."""

import pytest

from attnlib import derive_qkv, examples
from attnlib.exercises import check

EX = examples.three_inputs
Q, K, V = derive_qkv(EX.inputs, *EX.weights)


def test_document_facts():
    # document 001 prints these three products
    assert K.tolist() == [[0, 1, 1], [4, 4, 0], [2, 3, 1]]
    assert V.tolist() == [[1, 2, 3], [2, 8, 0], [2, 6, 3]]
    assert Q.tolist() == [[1, 0, 2], [2, 2, 2], [2, 1, 3]]


def test_right_answer_passes():
    assert check("qkv", EX.inputs @ EX.weights.w_query).correct
    assert check("qkv", Q.tolist()).correct


def test_placeholder():
    assert check("qkv", None).message.startswith("Replace the ...")


@pytest.mark.parametrize(
    ("answer", "hint"),
    [(K, "keys"), (V, "values"), (Q.T, "Transposed"), (Q[:1], "only Input 1")],
)
def test_typical_mistakes_get_their_hint(answer, hint):
    feedback = check("qkv", answer)
    assert not feedback.correct
    assert hint in feedback.message
