"""Lesson 05 exercise: the attention weights of document 001 (softmax of its 3×3 scores).

The learner answers with ``weights`` of shape ``(n_q, n_k) = (3, 3)``: the softmax, row by row,
of 001's scores ``Q Kᵀ`` (unscaled, as 001 does it).
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from .. import examples
from ..steps import score, softmax
from ._core import Feedback, compare_tensor, exercise

__all__ = ["check", "expected"]

NAME = "the weights of document 001 (softmax of each row of its 3×3 scores)"


def _scores() -> Tensor:
    queries, keys, _ = examples.three_inputs.qkv()
    return score(queries, keys)


def expected() -> Tensor:
    """``softmax(Q Kᵀ)`` over the keys for document 001: ``(3, 3)``."""
    return softmax(_scores(), dim=-1)


@exercise("softmax.1")
def check(answer: object) -> Feedback:
    """Check ``answer`` against :func:`expected`, with hints for the typical slips."""
    scores = _scores()
    weights = expected()
    wrong = [
        (
            softmax(scores, dim=0),
            "Each column sums to 1, not each row: you normalised over the queries (dim=0). "
            "Every query spreads its attention over the keys, so take the softmax along dim=-1.",
        ),
        (
            torch.round(weights * 10) / 10,
            "These are rounded to one decimal, like document 001's [0.0, 0.5, 0.5]. "
            "Keep the exact values (0.0634 is not 0).",
        ),
        (
            scores.exp(),
            "You took exp of the scores but did not divide by the row sum: the rows must sum to 1.",
        ),
        (
            scores / scores.sum(dim=-1, keepdim=True),
            "You divided each score by the row sum without exp: softmax exponentiates first.",
        ),
        (
            softmax(scores / math.sqrt(scores.shape[-1]), dim=-1),
            "You scaled the scores by 1/sqrt(d_k); lesson 05 follows document 001, which does not "
            "scale (scaling is lesson 08).",
        ),
    ]
    return compare_tensor(answer, weights, name=NAME, wrong=wrong, success="Every row sums to 1.")
