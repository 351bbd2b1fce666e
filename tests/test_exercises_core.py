"""The exercise machinery (attnlib.exercises): Feedback, compare_tensor, compare_number, check()."""

from __future__ import annotations

import importlib

import pytest
import torch

from attnlib import exercises
from attnlib.exercises import Feedback, check, compare_number, compare_tensor

EXPECTED = torch.tensor([[2.0, 4.0, 4.0], [4.0, 16.0, 12.0]])


def test_feedback_truthiness_repr_and_html() -> None:
    ok, no = Feedback(True, "fine"), Feedback(False, "a <hint>")
    assert bool(ok) and not bool(no)
    assert repr(ok) == "✅ Correct. fine"
    assert repr(no) == "❌ Not yet. a <hint>"
    assert "a &lt;hint&gt;" in no._repr_html_() and "<b>Not yet.</b>" in no._repr_html_()


@pytest.mark.parametrize("missing", [None, ...])
def test_compare_tensor_unanswered(missing: object) -> None:
    fb = compare_tensor(missing, EXPECTED, name="the scores")
    assert not fb and fb.message == "Replace the ... with the scores, then run the cell again."


def test_compare_tensor_right_answer_as_list_or_tensor() -> None:
    assert compare_tensor([[2, 4, 4], [4, 16, 12]], EXPECTED, name="the scores")
    fb = compare_tensor(EXPECTED + 1e-4, EXPECTED, name="the scores", success="Well done.")
    assert fb and fb.message == "That is the scores. Well done."


def test_compare_tensor_tolerance() -> None:
    assert not compare_tensor(EXPECTED + 0.01, EXPECTED, name="x")
    assert compare_tensor(EXPECTED + 0.01, EXPECTED, name="x", atol=0.05)


def test_compare_tensor_not_numbers() -> None:
    fb = compare_tensor("abc", EXPECTED, name="the scores")
    assert not fb and fb.message.startswith("the scores should be a tensor or a nested list of numbers")


def test_compare_tensor_transposed() -> None:
    fb = compare_tensor(EXPECTED.T, EXPECTED, name="the scores")
    assert not fb
    assert fb.message == "the scores has shape (3, 2): it looks transposed; expected (2, 3)."


def test_compare_tensor_wrong_shape() -> None:
    fb = compare_tensor(torch.zeros(4), EXPECTED, name="the scores")
    assert fb.message == "the scores should have shape (2, 3), yours has (4,)."


def test_compare_tensor_known_wrong_answers_get_their_hint() -> None:
    forgot_scaling = EXPECTED / 2
    wrong = [(forgot_scaling, "divide by sqrt(d_k)"), (EXPECTED.T, "transposed on purpose")]
    assert compare_tensor(forgot_scaling, EXPECTED, name="s", wrong=wrong).message == "divide by sqrt(d_k)"
    # a known wrong answer of another shape is recognised before the generic shape message
    assert compare_tensor(EXPECTED.T, EXPECTED, name="s", wrong=wrong).message == "transposed on purpose"


def test_compare_tensor_points_at_the_worst_entry() -> None:
    answer = EXPECTED.clone()
    answer[1, 2] = 13.0
    fb = compare_tensor(answer, EXPECTED, name="the scores")
    assert not fb
    assert fb.message == "the scores is off by up to 1 at index [1, 2]; check that entry by hand."


def test_compare_number() -> None:
    assert compare_number(0.5, 0.5004, name="the weight")
    assert compare_number("0.5", 0.5, name="the weight")
    assert compare_number(None, 0.5, name="the weight").message.startswith("Replace the ...")
    assert compare_number([1], 0.5, name="the weight").message == "the weight should be a number, got list."
    assert compare_number(0.25, 0.5, name="w", wrong=[(0.25, "you halved it")]).message == "you halved it"
    assert compare_number(0.7, 0.5, name="the weight").message == "the weight is not 0.7; recompute it step by step."


def test_check_unknown_lesson_names_the_choices() -> None:
    with pytest.raises(ValueError, match=r"no exercise 'attention'; choose one of \('inputs', 'weights'"):
        check("attention", None)


def test_lessons_are_the_eleven_lesson_keys() -> None:
    assert exercises.LESSONS == (
        "inputs", "weights", "qkv", "scores", "softmax", "weighting", "summing", "scaling",
        "module", "sentence", "multihead",
    )  # fmt: skip


@pytest.mark.parametrize("lesson", exercises.LESSONS)
def test_check_dispatches_to_the_lesson_checker(lesson: str) -> None:
    module = importlib.import_module(f"attnlib.exercises.{lesson}")
    assert callable(module.check)
    # an unanswered exercise is never correct, and check() returns the checker's Feedback
    fb = check(lesson, ...)
    assert isinstance(fb, Feedback) and not fb
    assert fb == module.check(...)
