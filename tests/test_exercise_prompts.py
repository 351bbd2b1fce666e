"""Before the learner has done anything, every exercise shows the same neutral prompt ("✎ Your turn."),
never a failure: an answer still ``...`` (or None), and a function whose body is still ``...``.

Written over :func:`attnlib.lessons.exercises`, so every lesson gets it from the shared machinery.
"""

from __future__ import annotations

import pytest

from attnlib.lessons import check, compare_number, exercises


@pytest.mark.parametrize("name", exercises())
def test_an_untouched_answer_is_a_prompt(name):
    for missing in (..., None):
        feedback = check(name, missing)
        assert not feedback.correct and not feedback.tried, feedback
        assert repr(feedback).startswith("✎ Your turn. ") and "Replace the ..." in feedback.message


@pytest.mark.parametrize("name", exercises())
def test_an_untouched_function_is_a_prompt(name):
    calls = []

    def stub(*args):
        calls.append(args)  # the body of an untouched exercise: ... (returns None)

    feedback = check(name, stub)
    if calls:  # the exercise asks for a function, and its checker called it
        assert not feedback.correct and not feedback.tried, feedback
        assert "returned None: replace the ... in its body" in feedback.message


def test_a_percentage_where_a_fraction_is_asked_is_named():
    feedback = compare_number(26.3, 0.263, name="the held-out accuracy")
    assert not feedback.correct and "as a fraction" in feedback.message and "0.263" in feedback.message
    assert "as a fraction" not in compare_number(40.0, 0.263, name="the accuracy").message
    assert "as a fraction" not in compare_number(26.3, 26.0, name="a length", tol=0.1).message
