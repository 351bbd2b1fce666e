"""The checker of lesson sentence's exercise: right answer, typical mistakes, missing answer."""

from __future__ import annotations

import pytest
import torch

from attnlib.exercises import check
from attnlib.exercises import sentence as exercise

MISTAKES = exercise.typical_mistakes()


def test_missing_answer_asks_to_replace_the_dots():
    for missing in (..., None):
        feedback = check("sentence", missing)
        assert not feedback.correct
        assert feedback.message.startswith("Replace the ...")


def test_right_answer_passes_as_tensor_and_list():
    right = exercise.expected()
    assert check("sentence", right).correct
    assert check("sentence", right.tolist()).correct


def test_mistakes_differ_from_the_right_answer():
    right = exercise.expected().to(torch.float64)
    for wrong, _ in MISTAKES:
        assert not torch.allclose(wrong.to(torch.float64), right, atol=1e-3)


@pytest.mark.parametrize(("wrong", "hint"), MISTAKES, ids=[str(i) for i in range(len(MISTAKES))])
def test_each_typical_mistake_gets_its_hint(wrong, hint):
    feedback = check("sentence", wrong)
    assert not feedback.correct
    assert feedback.message == hint


def test_wrong_shape_is_named():
    feedback = check("sentence", [1.0, 2.0])
    assert not feedback.correct
    assert "shape" in feedback.message


def test_expected_comes_from_003s_omega():
    from attnlib import examples

    om = exercise.omega()
    # 003 prints omega[1] (the row of "you"); our omega must reproduce it
    printed = torch.tensor([-25.1623, 9.3602, 14.3667, 32.1482, 53.8976, 46.6626, -1.2131, -32.9392])
    assert torch.allclose(om[1], printed, atol=1e-3)
    assert examples.translate.tokens[exercise.QUERY_INDEX] == "translate"
    assert torch.allclose(exercise.expected(), torch.softmax(om[5] / 4, dim=0))
