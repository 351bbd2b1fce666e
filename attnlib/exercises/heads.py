"""Lesson 14 exercises: previous-token and induction heads.

- ``heads.1`` predict: in ``5 8 2 6 5 8 2``, where does an induction head look from position 4?
- ``heads.2`` code: ``previous_token_score(weights)``, run on a map the lesson never showed.
- ``heads.3`` transfer: the parameters of one ``MultiHeadAttention(64, num_heads=2)`` — vs one head.
"""

from __future__ import annotations

import torch

from ..heads import previous_token_score
from ..modules import MultiHeadAttention
from ..steps import softmax
from ._calls import compare_call
from ._core import Feedback, compare_number, exercise

__all__ = ["induction_position", "parameters", "previous_token", "wrong_answers"]


def _fresh() -> torch.Tensor:
    scores = 3 * torch.randn(7, 7, generator=torch.Generator().manual_seed(14))
    return softmax(scores.masked_fill(torch.ones(7, 7, dtype=torch.bool).triu(1), float("-inf")))


def _parameters() -> int:
    return sum(p.numel() for p in MultiHeadAttention(64, 2).parameters())


def wrong_answers() -> dict[str, list[tuple[object, str | None]]]:
    """Per exercise, typical wrong answers and the mistake id each must reveal (None: a plain hint)."""
    return {
        "heads.1": [(0, None), (3, None)],
        "heads.2": [
            (lambda w: torch.diagonal(w).mean(), None),
            (lambda w: torch.diagonal(w, offset=-1).sum(), None),
        ],
        "heads.3": [(2 * _parameters(), "heads-parameters"), (4 * 64 * 64, None)],
    }


@exercise("heads.1")
def induction_position(answer: object) -> Feedback:
    """``5 8 2 6 5 8 2`` (positions 0 … 6): from position 4 (the second 5) an induction head looks at 1."""
    wrong = [
        (0, "Position 0 is the previous 5 itself. An induction head looks one step further: at what FOLLOWED it."),
        (3, "Position 3 is the token just before: that is a previous-token head's job."),
    ]
    return compare_number(answer, 1, name="the position the induction head attends to", wrong=wrong, tol=0.01)


@exercise("heads.2")
def previous_token(answer: object) -> Feedback:
    """A function ``previous_token_score(weights (n, n))`` → the mean weight on the key just before each query."""
    weights = _fresh()
    wrong = [
        (
            torch.diagonal(weights).mean(),
            "That is the weight on the token itself (the diagonal); the previous token is one below.",
        ),
        (
            torch.diagonal(weights, offset=-1).sum(),
            "Take the mean over the n − 1 queries that have a previous token, not the sum.",
        ),
    ]
    return compare_call(
        answer, (weights,), call="your previous_token_score(weights)",
        expected=torch.tensor(previous_token_score(weights)), name="the score of a new 7×7 causal map", wrong=wrong,
    )  # fmt: skip


@exercise("heads.3")
def parameters(answer: object) -> Feedback:
    """Parameters of ``MultiHeadAttention(64, num_heads=2)`` with biases: 4 × (64·64 + 64) = 16 640."""
    n = _parameters()
    wrong = [
        (
            2 * n,
            "Two heads do not double the parameters: W_q, W_k, W_v (64×64) are split into two 32-wide slices, one "
            "per head. One head or two: the same 16 640 numbers.",
            "heads-parameters",
        ),
        (4 * 64 * 64, "Close: the four projections also have biases, 64 numbers each."),
    ]
    return compare_number(answer, n, name="the parameters of MultiHeadAttention(64, num_heads=2)", wrong=wrong, tol=0.5)
