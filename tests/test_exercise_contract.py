"""What every checker of lessons 01–11 promises: ``...``/None ask to be replaced, each typical wrong
answer (``wrong_answers()`` of the lesson's module) is refused with its own hint and the mistake id it
reveals, no wrong answer reaches the checker's safety net, and there are at least three exercises."""

from __future__ import annotations

import pytest

from attnlib.lessons import MISTAKES, check, exercises, lesson_module
from attnlib.lessons._check import CHECKER_FAILED

LESSONS = (
    "what_it_refers_to",
    "inputs",
    "projections",
    "queries_keys_values",
    "scores",
    "softmax",
    "positions",
    "attention_learns",
    "what_heads_learn",
    "attention_at_scale",
    "weighting",
    "summing",
    "scaling",
    "module",
    "sentence",
    "multihead",
)
# every exercise of those lessons; their wrong answers are built when a test asks (lesson 16's need its trained
# encoders: not while every worker collects)
NAMES = [n for lesson in LESSONS for n in exercises(lesson)]


@pytest.mark.parametrize("lesson", LESSONS)
def test_at_least_three_exercises_each_with_typical_wrong_answers(lesson):
    names = exercises(lesson)
    assert names[:3] == [f"{lesson}.1", f"{lesson}.2", f"{lesson}.3"]
    wrong = lesson_module(lesson).wrong_answers()
    assert set(wrong) == set(names)
    assert all(len(answers) >= 2 for answers in wrong.values())


@pytest.mark.parametrize("name", NAMES)
def test_missing_answer_asks_to_replace_the_dots(name):
    for missing in (..., None):
        feedback = check(name, missing)
        assert not feedback.correct
        assert feedback.message.startswith("Replace the ...")


@pytest.mark.parametrize("name", NAMES)
def test_each_typical_wrong_answer_gets_its_hint(name):
    for index, (answer, mistake) in enumerate(lesson_module(name.split(".")[0]).wrong_answers()[name]):
        feedback = check(name, answer)
        assert not feedback.correct, f"{name}, wrong answer {index}: accepted"
        assert not feedback.message.startswith(CHECKER_FAILED), f"{name}, wrong answer {index}: {feedback.message}"
        assert feedback.mistake == mistake, (
            f"{name}, wrong answer {index}: mistake {feedback.mistake!r}, not {mistake!r}"
        )
        assert mistake is None or mistake in MISTAKES, f"{name}, wrong answer {index}: unknown mistake {mistake!r}"


def test_the_known_misconceptions_each_have_feedback():
    revealed = {
        mistake
        for lesson in LESSONS
        for answers in lesson_module(lesson).wrong_answers().values()
        for _answer, mistake in answers
    }
    assert {
        "scale-by-d-model",
        "scale-by-d",
        "mask-with-zero",
        "mask-after-softmax",
        "fully-masked-row",
        "heads-view-no-transpose",
        "heads-parameters",
        "k-q-transposed",
        "weights-not-values",
        "softmax-axis",
    } <= revealed


def test_a_function_stub_is_asked_for_its_body():
    def stub(*args): ...

    for name in (
        "inputs.2",
        "scores.2",
        "softmax.2",
        "weighting.2",
        "summing.2",
        "scaling.2",
        "module.2",
        "sentence.2",
        "multihead.2",
    ):
        feedback = check(name, stub)
        assert not feedback.correct and "returned None" in feedback.message


def test_every_exercise_is_named_after_its_lesson_module():
    from attnlib.lessons import registry

    for name, checker in registry(aliases=False).items():
        module = checker.__module__.rsplit(".", 1)[-1]  # e.g. l05_softmax
        assert name.split(".")[0] == module[4:], f"{name} lives in {module}"
