"""What every lesson checker that lists its typical mistakes promises (lessons 09–11):
the right answer passes as a tensor and as a list, ``...``/None ask to be replaced, each typical
mistake differs from the right answer and gets its own hint, and a wrong shape is named."""

from __future__ import annotations

import importlib

import pytest
import torch

from attnlib.exercises import check

LESSONS = ("module", "sentence", "multihead")
CASES = [
    (lesson, i)
    for lesson in LESSONS
    for i in range(len(importlib.import_module(f"attnlib.exercises.{lesson}").typical_mistakes()))
]


def _exercise(lesson: str):
    return importlib.import_module(f"attnlib.exercises.{lesson}")


@pytest.mark.parametrize("lesson", LESSONS)
def test_missing_answer_asks_to_replace_the_dots(lesson):
    for missing in (..., None):
        feedback = check(lesson, missing)
        assert not feedback.correct
        assert feedback.message.startswith("Replace the ...")


@pytest.mark.parametrize("lesson", LESSONS)
def test_right_answer_passes_as_tensor_and_list(lesson):
    right = _exercise(lesson).expected()
    assert check(lesson, right).correct
    assert check(lesson, right.tolist()).correct


@pytest.mark.parametrize(("lesson", "index"), CASES, ids=[f"{lesson}-{i}" for lesson, i in CASES])
def test_each_typical_mistake_differs_and_gets_its_hint(lesson, index):
    exercise = _exercise(lesson)
    wrong, hint = exercise.typical_mistakes()[index]
    assert not torch.allclose(wrong.to(torch.float64), exercise.expected().to(torch.float64), atol=1e-3)
    feedback = check(lesson, wrong)
    assert not feedback.correct
    assert feedback.message == hint


@pytest.mark.parametrize("lesson", LESSONS)
def test_wrong_shape_is_named(lesson):
    feedback = check(lesson, [1.0, 2.0])
    assert not feedback.correct
    assert "shape" in feedback.message
