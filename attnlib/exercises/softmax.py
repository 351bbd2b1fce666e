"""Lesson 05 exercises: from scores to weights with a softmax you write yourself.

- ``softmax.1`` by hand: softmax([0, 0, ln 2]) — exponentiate, add up, divide.
- ``softmax.2`` code: ``my_softmax(scores)`` row by row and stable, run on scores the lesson never
  showed, ±1e4 included.
- ``softmax.3`` transfer: document 000's weights after dividing its scores by √d_k = √5.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from .. import examples
from ..steps import score, softmax
from ._core import Feedback, compare_tensor, exercise, run_learner_code

__all__ = ["by_hand", "my_softmax", "scaled_000", "wrong_answers"]

HAND_SCORES = (0.0, 0.0, math.log(2.0))


def _fresh() -> tuple[Tensor, Tensor]:
    """Ordinary scores ``(3, 4)`` and extreme ones ``(2, 3)`` (±1e4, a row of equal scores)."""
    gen = torch.Generator().manual_seed(5)
    ordinary = 2 * torch.randn(3, 4, generator=gen)
    extreme = torch.tensor([[1e4, 1e4 - 1.0, -1e4], [7.0, 7.0, 7.0]])
    return ordinary, extreme


def _scores_000() -> Tensor:
    queries, keys, _ = examples.four_inputs.qkv()
    return score(queries, keys)


def _naive(s: Tensor) -> Tensor:
    return s.exp() / s.exp().sum(dim=-1, keepdim=True)


def wrong_answers() -> dict[str, list[tuple[object, str | None]]]:
    """Per exercise, typical wrong answers and the mistake id each must reveal (None: a plain hint)."""
    s = torch.tensor(HAND_SCORES)
    s000 = _scores_000()
    return {
        "softmax.1": [(s / s.sum(), None), (s.exp(), None)],
        "softmax.2": [(lambda t: softmax(t, dim=0), "softmax-axis"), (_naive, None), (lambda t: t.exp(), None)],
        "softmax.3": [
            (softmax(s000 / 5), "scale-by-d"),
            (softmax(s000), "scale-forgotten"),
            (softmax(s000 / math.sqrt(5), dim=0), "softmax-axis"),
        ],
    }


@exercise("softmax.1")
def by_hand(answer: object) -> Feedback:
    """softmax([0, 0, ln 2]) = [1, 1, 2] / 4."""
    s = torch.tensor(HAND_SCORES, dtype=torch.float64)
    wrong = [
        (s / s.sum(), "You divided the scores by their sum without exponentiating: softmax takes e^s first."),
        (s.exp(), "These are the exponentials e^s = [1, 1, 2]; divide by their sum so the weights add up to 1."),
    ]
    return compare_tensor(answer, softmax(s), name="softmax([0, 0, ln 2])", wrong=wrong, success="[1, 1, 2] / 4.")


@exercise("softmax.2")
def my_softmax(answer: object) -> Feedback:
    """A function ``my_softmax(scores (n_q, n_k))`` → weights, rows summing to 1, finite for ±1e4."""
    ordinary, extreme = _fresh()
    got = run_learner_code(answer, ordinary.clone(), name="your my_softmax(scores)")
    if isinstance(got, Feedback):
        return got
    if got is None:
        return Feedback(False, "your my_softmax returned None: replace the ... in its body and return the weights.")
    wrong = [
        (
            softmax(ordinary, dim=0),
            "Each COLUMN sums to 1: you normalised over the queries (dim=0). Each query spreads its attention "
            "over the keys: normalise along dim=-1.",
            "softmax-axis",
        ),
        (ordinary.exp(), "These are e^s; divide each row by its sum."),
    ]
    feedback = compare_tensor(got, softmax(ordinary), name="my_softmax on new 3×4 scores", wrong=wrong)
    if not feedback.correct:
        return feedback
    got = run_learner_code(answer, extreme.clone(), name="your my_softmax(scores)")
    if isinstance(got, Feedback):
        return got
    naive = Feedback(
        False,
        "Right on ordinary scores, but e^10000 overflows to inf and inf/inf is NaN: subtract each row's "
        "maximum before exp (it changes nothing mathematically).",
    )
    try:
        if not bool(torch.isfinite(torch.as_tensor(got, dtype=torch.float64)).all()):
            return naive
    except (TypeError, ValueError, RuntimeError):
        pass
    feedback = compare_tensor(got, softmax(extreme), name="my_softmax on scores of ±1e4 and a row of equal scores")
    if not feedback.correct:
        return feedback
    return Feedback(True, "Row by row, summing to 1, and stable: scores of ±1e4 give finite weights.")


@exercise("softmax.3")
def scaled_000(answer: object) -> Feedback:
    """Document 000's weights with its scores divided by √d_k = √5: ``(4, 4)``."""
    s = _scores_000()
    wrong = [
        (softmax(s / 5), "You divided by d_k = 5; the scale is √d_k = √5 ≈ 2.24.", "scale-by-d"),
        (softmax(s), "These are the lesson's unscaled weights: divide the scores by √5 first.", "scale-forgotten"),
        (
            softmax(s / math.sqrt(5), dim=0),
            "Each column sums to 1: the softmax runs over the keys, along each row (dim=-1).",
            "softmax-axis",
        ),
    ]
    return compare_tensor(
        answer, softmax(s / math.sqrt(5)), name="000's weights softmax(S / √5)", wrong=wrong,
        success="Row 1 now keeps 11 % off key 4, but rows 2–4 still give it over 99.7 %: scaling alone does not "
        "undo 000's saturation, because its inputs and weights make scores up to 54.",
    )  # fmt: skip
