"""Lesson 13 exercises: reading what a trained attention does.

- ``learning.1`` predict: in the reverse task with n = 8, which input position does output 2 attend to?
- ``learning.2`` code: ``mirror_mass(weights)`` — each row's weight on its mirrored key, run on new maps.
- ``learning.3`` transfer: the copy task without its causal mask — where would position 7 simply look?
"""

from __future__ import annotations

import torch
from torch import Tensor

from ..steps import softmax
from ..tasks import ReverseTask
from ..training import pattern_mass
from ._calls import compare_call
from ._core import Feedback, compare_number, exercise

__all__ = ["mirror_mass", "mirror_position", "no_mask", "wrong_answers"]


def _fresh() -> Tensor:
    return softmax(3 * torch.randn(6, 6, generator=torch.Generator().manual_seed(13)))


def wrong_answers() -> dict[str, list[tuple[object, str | None]]]:
    """Per exercise, typical wrong answers and the mistake id each must reveal (None: a plain hint)."""
    return {
        "learning.1": [(2, None), (6, None)],
        "learning.2": [(lambda w: torch.diagonal(w), None), (lambda w: w.flip(1).sum(0), None)],
        "learning.3": [(2, None), (7, None)],
    }


@exercise("learning.1")
def mirror_position(answer: object) -> Feedback:
    """Reverse task, n = 8 (positions 0 … 7): output 2 must copy input ``n − 1 − 2 = 5``."""
    wrong = [
        (2, "Position 2 itself would copy its own token; reversing needs the mirrored position, n − 1 − i."),
        (6, "Positions count from 0 here (0 … 7): the mirror of 2 is 8 − 1 − 2."),
    ]
    return compare_number(answer, 5, name="the input position output 2 attends to", wrong=wrong, tol=0.01)


@exercise("learning.2")
def mirror_mass(answer: object) -> Feedback:
    """A function ``mirror_mass(weights (n, n))`` → ``(n,)``: row i's weight on key ``n − 1 − i``."""
    weights = _fresh()
    expected = pattern_mass(weights, ReverseTask.pattern(weights.shape[0]))
    wrong = [
        (torch.diagonal(weights), "That is each row's weight on its own position (the diagonal); the mirror is n−1−i."),
        (weights.flip(1).sum(0), "Sum within each row, not over the rows: one number per query."),
    ]
    return compare_call(
        answer, (weights,), call="your mirror_mass(weights)", expected=expected,
        name="mirror_mass on a new 6×6 attention map", wrong=wrong,
        success="weights.flip(1).diagonal() reads the anti-diagonal: the reverse model's must be near 1.",
    )  # fmt: skip


@exercise("learning.3")
def no_mask(answer: object) -> Feedback:
    """Copy task without a causal mask: input position 7 predicts token 8 — and can simply read it at 8."""
    wrong = [
        (2, "That is where the masked model must look (one half back). Without the mask the answer itself is visible."),
        (7, "Position 7 holds the current token; the target is the next one, and nothing hides it."),
    ]
    return compare_number(answer, 8, name="the position an unmasked copy model would read", wrong=wrong, tol=0.01)
