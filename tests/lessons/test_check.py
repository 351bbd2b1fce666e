"""The exercise machinery (attnlib.lessons): Feedback, compare_tensor, compare_number, check()."""

from __future__ import annotations

import sys

import pytest
import torch

from attnlib import lessons
from attnlib.lessons import Feedback, check, compare_number, compare_tensor, lesson_module, run_learner_code
from attnlib.lessons._check import registry

EXPECTED = torch.tensor([[2.0, 4.0, 4.0], [4.0, 16.0, 12.0]])


def test_feedback_truthiness_repr_and_html() -> None:
    ok, no = Feedback(True, "fine"), Feedback(False, "a <hint>")
    assert bool(ok) and not bool(no)
    assert repr(ok) == "✓ Correct. fine"
    assert repr(no) == "✗ Not yet. a <hint>"
    assert "a &lt;hint&gt;" in no._repr_html_() and "<b>Not yet.</b>" in no._repr_html_()


@pytest.mark.parametrize("missing", [None, ...])
def test_an_untried_exercise_is_a_prompt_not_a_failure(missing: object) -> None:
    for fb in (
        compare_tensor(missing, EXPECTED, name="the scores"),
        compare_number(missing, 1.0, name="the divisor"),
        run_learner_code(missing, name="your softmax"),
    ):
        assert not fb and not fb.tried
        assert repr(fb).startswith("✎ Your turn. Replace the ...") and "Not yet" not in fb._repr_html_()


def test_marks_are_text_symbols_not_emoji() -> None:
    # an emoji needs a colour-emoji font, which many machines and projectors lack
    for fb in (Feedback(True, "x"), Feedback(False, "x"), Feedback(False, "x", tried=False)):
        assert all(ord(ch) < 0x1F000 and ch not in "✅❌" for ch in repr(fb) + fb._repr_html_())


def test_a_number_given_as_text_is_refused_like_text() -> None:
    fb = compare_number("8", 8.0, name="the divisor")
    assert not fb and "not the text '8'" in fb.message


def _own_softmax(s):
    e = (s - s.amax(-1, keepdim=True)).exp()
    return e / e.sum(-1, keepdim=True)


def test_the_library_function_for_the_step_is_not_an_answer() -> None:
    import functools

    import torch.nn.functional as F

    from attnlib import softmax

    write_it = (softmax, torch.softmax, F.softmax)
    handed_in = [
        softmax,
        torch.softmax,
        F.softmax,
        functools.partial(torch.softmax, dim=-1),
        lambda s: softmax(s),
        lambda s: torch.softmax(s, -1),
        lambda s: F.softmax(s, dim=-1),
        lambda s: s.softmax(-1),
    ]
    for answer in handed_in:
        fb = run_learner_code(answer, EXPECTED, name="your softmax", write_it=write_it)
        assert isinstance(fb, Feedback) and fb.mistake == "library-function", answer
        assert "the very thing this exercise asks you to write" in fb.message
    written = run_learner_code(_own_softmax, EXPECTED, name="your softmax", write_it=write_it)
    assert torch.allclose(written, torch.softmax(EXPECTED, -1))
    # the watch is switched off again: the library works as usual afterwards
    assert torch.allclose(softmax(EXPECTED), torch.softmax(EXPECTED, -1))
    assert sys.getprofile() is None


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
    assert not compare_number("0.5", 0.5, name="the weight")  # text is refused, as for tensors
    assert compare_number(None, 0.5, name="the weight").message.startswith("Replace the ...")
    assert compare_number([1], 0.5, name="the weight").message == "the weight should be a number, got list."
    assert compare_number(0.25, 0.5, name="w", wrong=[(0.25, "you halved it")]).message == "you halved it"
    assert compare_number(0.7, 0.5, name="the weight").message == "the weight is not 0.7; recompute it step by step."


def test_check_unknown_lesson_names_the_choices() -> None:
    feedback = check("attention", None)
    assert not feedback.correct
    assert feedback.message.startswith("there is no exercise 'attention'; the lessons with exercises are ")
    assert "softmax" in feedback.message


def test_every_lesson_module_has_checkers_and_is_named_for_its_notebook() -> None:
    from pathlib import Path

    import nbformat

    def appendix(path: Path) -> bool:  # an appendix (``# 20 · Appendix: …``) has a module only if it has exercises
        cells = nbformat.read(path, as_version=4).cells
        return "· Appendix" in cells[0].source.splitlines()[0] and not any('check("' in c.source for c in cells)

    paths = sorted((Path(__file__).parents[2] / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    notebooks = [p.stem for p in paths if not appendix(p)]
    assert list(lessons.MODULES) == [f"l{stem}" for stem in notebooks]
    owners = {lesson_module(prefix).__name__.rsplit(".", 1)[1] for prefix in lessons.lessons()}
    assert owners == set(lessons.MODULES)


def test_exercise_names_are_checked_and_unique() -> None:
    from attnlib.lessons._check import exercise

    lessons.exercises("softmax")  # import the lesson module: softmax.1 is registered
    with pytest.raises(ValueError, match=r"exercise names look like .softmax\.2."):
        exercise("Softmax 2")
    with pytest.raises(ValueError, match="registered twice"):
        exercise("softmax.1")(lambda answer: Feedback(True, "x"))


def test_a_failing_checker_becomes_a_sentence(monkeypatch) -> None:
    from attnlib.lessons import _check as _core

    def broken(answer: object) -> Feedback:
        raise IndexError("boom")

    lessons.exercises("softmax")  # registered first, so that the broken checker replaces it
    monkeypatch.setitem(_core._REGISTRY, "softmax.1", broken)
    feedback = check("softmax.1", 1)
    assert (
        not feedback.correct and feedback.message.startswith(_core.CHECKER_FAILED) and "IndexError" in feedback.message
    )


def test_known_mistakes_carry_their_id() -> None:
    fb = compare_tensor(EXPECTED / 2, EXPECTED, name="s", wrong=[(EXPECTED / 2, "scale by sqrt", "scale-by-d")])
    assert fb.mistake == "scale-by-d" and fb.message == "scale by sqrt"
    assert compare_number(2.0, 1.0, name="x", wrong=[(2.0, "doubled", "rounded")]).mistake == "rounded"


def test_learner_code_errors_become_sentences() -> None:
    from attnlib.lessons import run_learner_code

    assert run_learner_code(lambda x: x + 1, 1, name="your function") == 2
    assert run_learner_code(..., name="your softmax").message.startswith("Replace the ...")
    assert (
        run_learner_code(3, name="your softmax").message
        == "your softmax should be a function (def … or lambda …), not int."
    )
    fb = run_learner_code(lambda x: 1 / 0, 1, name="your softmax")
    assert fb.message == "your softmax raised ZeroDivisionError on new inputs (1): division by zero"
    assert run_learner_code(lambda x: None, 1, name="your softmax").tried is False  # the body is still ...


@pytest.mark.parametrize("lesson", lessons.lessons())
def test_check_dispatches_to_the_lesson_checker(lesson: str) -> None:
    lesson_module(lesson)  # registers the lesson's checkers
    checker = registry()[f"{lesson}.1"]
    # an unanswered exercise is never correct, and check() returns the checker's Feedback
    fb = check(f"{lesson}.1", ...)
    assert isinstance(fb, Feedback) and not fb
    assert fb.message == checker(...).message
    assert not fb.tried  # an untouched exercise is a prompt, whatever its checker says


def test_a_decorated_learner_function_is_not_taken_for_a_decorated_library_one() -> None:
    from attnlib.lessons._check import run_learner_code

    @torch.no_grad()
    def library(x):
        return x * 2

    @torch.no_grad()  # the same decorator: one wrapper's code for both functions
    def yours(x):
        return x * 2

    assert torch.equal(run_learner_code(yours, torch.ones(2), name="yours", write_it=(library,)), torch.full((2,), 2.0))
    refused = run_learner_code(library, torch.ones(2), name="yours", write_it=(library,))
    assert not refused.correct and refused.mistake == "library-function"


def test_a_write_it_exercise_refuses_all_of_attnlib_and_names_it() -> None:
    from attnlib import examples, pretrained
    from attnlib.lessons import l09_module
    from attnlib.modules import split_heads

    scores = torch.randn(3, 4)
    own = run_learner_code(_own_softmax, scores, name="your softmax", write_it=(torch.softmax,))
    assert isinstance(own, torch.Tensor)
    for answer, named in (
        (lambda s: split_heads(s[None], 1)[0, 0], "attnlib.modules.split_heads"),  # a public helper
        (lambda s: l09_module._reference(s, torch.ones_like(s, dtype=torch.bool)), "l09_module._reference"),
        (lambda s: s + examples.translate.run().embedded.sum() * 0, "attnlib.examples"),
    ):
        fb = run_learner_code(answer, scores, name="your softmax", write_it=(torch.softmax,))
        assert isinstance(fb, Feedback) and fb.mistake == "library-function" and named in fb.message, fb
    # an exercise without write_it (an experiment that trains with the library) is not watched
    assert isinstance(run_learner_code(lambda s: split_heads(s[None], 1), scores, name="yours"), torch.Tensor)
    # a model the checker hands in may be called, unless write_it names its method
    model = pretrained.load("reverse")
    ids = torch.zeros(1, 8, dtype=torch.long)
    got = run_learner_code(lambda m, x: m(x), model, ids, name="yours", write_it=(torch.softmax,))
    assert isinstance(got, torch.Tensor)
    refused = run_learner_code(lambda m, x: m(x), model, ids, name="yours", write_it=(type(model).forward,))
    assert isinstance(refused, Feedback) and refused.mistake == "library-function"


def test_the_course_runs_its_own_reference_through_the_same_path() -> None:
    from attnlib.lessons._check import course_code
    from attnlib.lessons.l09_module import _reference

    mask = torch.ones(3, 4, dtype=torch.bool)
    with course_code():
        got = run_learner_code(_reference, torch.randn(3, 4), mask, name="the reference", write_it=(torch.linalg.det,))
    assert isinstance(got, torch.Tensor)
    fb = run_learner_code(_reference, torch.randn(3, 4), mask, name="yours", write_it=(torch.linalg.det,))
    assert isinstance(fb, Feedback) and fb.mistake == "library-function"
