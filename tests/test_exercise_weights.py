"""The lesson 02 checker: shapes of W_q, W_k, W_v for d_in=4, d_k=3, d_v=5."""

import pytest

from attnlib import init_weights
from attnlib.exercises import check
from attnlib.exercises.weights import D_IN, D_K, D_V

RIGHT = [tuple(w.shape) for w in init_weights(D_IN, D_K, D_V)]


def test_expected_shapes_follow_the_rule():
    assert RIGHT == [(D_IN, D_K), (D_IN, D_K), (D_IN, D_V)]


def test_right_answer_passes():
    assert check("weights", RIGHT).correct
    assert check("weights", [list(s) for s in RIGHT]).correct


def test_placeholder():
    assert check("weights", ...).message.startswith("Replace the ...")


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        ([(D_K, D_IN), (D_K, D_IN), (D_V, D_IN)], "d_in rows"),
        ([(D_IN, D_K)] * 3, "d_v = 5"),
        ([(D_IN, D_V)] * 3, "d_k = 3"),
        ([(D_IN, D_V), (D_IN, D_K), (D_IN, D_K)], "The order is W_q, W_k, W_v"),
    ],
)
def test_typical_mistakes_get_their_hint(answer, hint):
    feedback = check("weights", answer)
    assert not feedback.correct
    assert hint in feedback.message


def test_wrong_length_is_rejected():
    assert not check("weights", [(D_IN, D_K)]).correct
