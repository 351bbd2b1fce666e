""" "Check yourself" exercises: each lesson's answer checked against attnlib, with hints.

A lesson calls ``check("<lesson>", answer)``; the checker for lesson ``<lesson>`` lives in
``attnlib/exercises/<lesson>.py`` as a function ``check(answer) -> Feedback``. Checkers compare
with attnlib's own computation and recognise the typical wrong answers (a transposed matrix,
the softmax over the wrong axis, the scaling forgotten …) to give a hint instead of a bare "no".
"""

from __future__ import annotations

import html
import importlib
import math
from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

__all__ = ["LESSONS", "Feedback", "check", "compare_number", "compare_tensor"]

LESSONS = (
    "inputs", "weights", "qkv", "scores", "softmax", "weighting", "summing", "scaling",
    "module", "sentence", "multihead",
)  # fmt: skip


@dataclass(frozen=True)
class Feedback:
    """The verdict on an answer: ``correct`` and a message (a hint when it is wrong)."""

    correct: bool
    message: str

    def __bool__(self) -> bool:
        return self.correct

    def __repr__(self) -> str:
        return ("✅ Correct. " if self.correct else "❌ Not yet. ") + self.message

    def _repr_html_(self) -> str:
        colour, mark, word = ("#1a7f37", "✅", "Correct.") if self.correct else ("#b35900", "❌", "Not yet.")
        return (
            f'<div style="border-left:4px solid {colour};padding:4px 8px">'
            f"{mark} <b>{word}</b> {html.escape(self.message)}</div>"
        )


def check(lesson: str, answer: object) -> Feedback:
    """Check ``answer`` to the exercise of ``lesson`` (one of :data:`LESSONS`)."""
    if lesson not in LESSONS:
        raise ValueError(f"no exercise {lesson!r}; choose one of {LESSONS}")
    module = importlib.import_module(f"{__name__}.{lesson}")
    return module.check(answer)


def _missing(answer: object) -> bool:
    return answer is None or answer is Ellipsis


def compare_tensor(
    answer: object,
    expected: Tensor,
    *,
    name: str,
    wrong: Sequence[tuple[Tensor, str]] = (),
    atol: float = 1e-3,
    success: str = "",
) -> Feedback:
    """Compare ``answer`` with ``expected`` (tolerance ``atol``), hinting on known wrong answers.

    Args:
        answer: the learner's tensor, array or nested list (``None``/``...`` = not answered yet).
        expected: the right answer, computed by attnlib.
        name: what the answer is, for the messages ("the scores of Input 1").
        wrong: pairs ``(typical wrong answer, hint)``, tried in order.
        success: extra sentence for a right answer.
    """
    if _missing(answer):
        return Feedback(False, f"Replace the ... with {name}, then run the cell again.")
    try:
        got = torch.as_tensor(answer, dtype=torch.float64)
    except (TypeError, ValueError, RuntimeError) as exc:
        return Feedback(False, f"{name} should be a tensor or a nested list of numbers ({exc}).")
    want = expected.detach().to(torch.float64)
    if got.shape != want.shape:
        for candidate, hint in wrong:
            if candidate.shape == got.shape and torch.allclose(got, candidate.to(torch.float64), atol=atol):
                return Feedback(False, hint)
        if got.dim() == 2 and got.shape == want.shape[::-1]:
            return Feedback(
                False,
                f"{name} has shape {tuple(got.shape)}: it looks transposed; expected {tuple(want.shape)}.",
            )
        return Feedback(False, f"{name} should have shape {tuple(want.shape)}, yours has {tuple(got.shape)}.")
    if torch.allclose(got, want, atol=atol, rtol=0):
        return Feedback(True, (f"That is {name}. " + success).strip())
    for candidate, hint in wrong:
        if candidate.shape == got.shape and torch.allclose(got, candidate.to(torch.float64), atol=atol):
            return Feedback(False, hint)
    diff = (got - want).abs()
    idx = tuple(int(i) for i in torch.nonzero(diff == diff.max())[0])
    where = f" at index {list(idx)}" if idx else ""
    return Feedback(False, f"{name} is off by up to {float(diff.max()):.4g}{where}; check that entry by hand.")


def compare_number(
    answer: object, expected: float, *, name: str, wrong: Sequence[tuple[float, str]] = (), tol: float = 1e-3
) -> Feedback:
    """Like :func:`compare_tensor` for a single number."""
    if _missing(answer):
        return Feedback(False, f"Replace the ... with {name}, then run the cell again.")
    try:
        got = float(answer)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return Feedback(False, f"{name} should be a number, got {type(answer).__name__}.")
    if math.isclose(got, expected, abs_tol=tol):
        return Feedback(True, f"That is {name}.")
    for candidate, hint in wrong:
        if math.isclose(got, candidate, abs_tol=tol):
            return Feedback(False, hint)
    return Feedback(False, f"{name} is not {got:g}; recompute it step by step.")
