"""Lesson 08 exercise: the scaled attention weights of document 000's example.

The learner answers with ``softmax(Q Kᵀ / sqrt(d_k))`` for 000's four inputs, shape
``(n_q, n_k) = (4, 4)``, with ``d_k = 5`` (000 itself never scales).
"""

from __future__ import annotations

import math

from torch import Tensor

from .. import examples
from ..steps import scale_scores, score, softmax
from ._core import Feedback, compare_tensor, exercise

__all__ = ["check", "expected"]

NAME = "the scaled weights of document 000 (softmax of Q Kᵀ / sqrt(5))"


def expected() -> Tensor:
    """``softmax(scale_scores(Q Kᵀ, d_k=5))`` for document 000: ``(4, 4)``."""
    queries, keys, _ = examples.four_inputs.qkv()
    return softmax(scale_scores(score(queries, keys), queries.shape[-1]))


@exercise("scaling.1")
def check(answer: object) -> Feedback:
    """Check ``answer`` against :func:`expected`, with hints for the typical slips."""
    queries, keys, _ = examples.four_inputs.qkv()
    scores = score(queries, keys)
    d_k = queries.shape[-1]
    d_in = examples.four_inputs.inputs.shape[-1]
    wrong = [
        (softmax(scores), "These are 000's unscaled weights: you forgot to divide the scores by sqrt(d_k)."),
        (softmax(scores / d_k), "You divided by d_k = 5; divide by its square root, sqrt(5) ≈ 2.236."),
        (
            softmax(scores / math.sqrt(d_in)),
            "You divided by sqrt(4), the size of the inputs; the dot products are over the queries "
            "and keys, of size d_k = 5.",
        ),
        (
            softmax(scores * math.sqrt(d_k)),
            "You multiplied by sqrt(d_k); scaling divides, so that the scores shrink.",
        ),
        (
            scale_scores(scores, d_k),
            "These are the scaled scores; apply the softmax to turn them into weights.",
        ),
        (softmax(scale_scores(scores, d_k), dim=0), "Take the softmax over the keys (dim=-1), not the queries."),
        (
            softmax(scale_scores(scores.T, d_k)),
            "You used K Qᵀ (keys times queries): the scores are Q Kᵀ, row i = query i against every key.",
        ),
    ]
    return compare_tensor(answer, expected(), name=NAME, wrong=wrong)
