"""The lesson 01 checker: X of document 001 passes; typical wrong answers get their hint."""

import pytest
import torch

from attnlib import examples, prepare_inputs
from attnlib.exercises import check

X = prepare_inputs(examples.three_inputs.rows)


def test_document_fact():
    assert X.tolist() == [[1, 0, 1, 0], [0, 2, 0, 2], [1, 1, 1, 1]]


@pytest.mark.parametrize("answer", [X, X.tolist(), X.to(torch.int64)])
def test_right_answer_passes(answer):
    assert check("inputs", answer).correct


@pytest.mark.parametrize("answer", [..., None])
def test_placeholder_asks_for_an_answer(answer):
    feedback = check("inputs", answer)
    assert not feedback.correct and feedback.message.startswith("Replace the ...")


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (X.T, "one ROW per token"),
        (X.reshape(-1), "one long vector"),
        (examples.four_inputs.inputs, "document 000"),
        (X.flip(0), "reverse order"),
    ],
)
def test_typical_mistakes_get_their_hint(answer, hint):
    feedback = check("inputs", answer)
    assert not feedback.correct
    assert hint in feedback.message


def test_other_numbers_are_wrong():
    feedback = check("inputs", X + torch.eye(3, 4))
    assert not feedback.correct and "off by" in feedback.message
