"""Lesson 04 exercise: document 000's scores ``S = Q Kᵀ``, shape ``(n_q, n_k) = (4, 4)``.

Document 000 rather than 001: 001's ``Q Kᵀ`` happens to be symmetric, so a ``K Qᵀ`` mix-up
would go unnoticed there.
"""

from __future__ import annotations

import math

import torch

from ..examples import four_inputs
from ..steps import score
from ._core import Feedback, compare_tensor, exercise

__all__ = ["check", "expected"]


def expected() -> torch.Tensor:
    """``S = Q Kᵀ`` of document 000, shape ``(4, 4)``; ``S[i, j] = q_i · k_j``."""
    queries, keys, _ = four_inputs.qkv()
    return score(queries, keys)


@exercise("scores.1")
def check(answer: object) -> Feedback:
    """Check ``answer`` against ``Q Kᵀ`` of document 000 (every query against every key)."""
    queries, keys, values = four_inputs.qkv()
    scores = score(queries, keys)
    d_k = queries.shape[-1]
    wrong = [
        (
            scores.T.contiguous(),
            "You computed K Qᵀ (or transposed the result): row i must hold query i's scores, "
            "S[i, j] = q_i · k_j. Compute queries @ keys.T.",
        ),
        (
            scores[0],
            "That is the row of Input 1 only; the exercise asks for every query: a (4, 4) matrix.",
        ),
        (
            scores / math.sqrt(d_k),
            "Those are scaled by 1/√d_k; scaling is step 8 (lesson 08), and document 000 never scales. "
            "Here: plain Q Kᵀ.",
        ),
        (queries @ queries.T, "You multiplied the queries with themselves: use the keys, Q Kᵀ."),
        (keys @ keys.T, "You multiplied the keys with themselves: use the queries, Q Kᵀ."),
        (queries @ values.T, "You used the values; the scores compare queries with KEYS: Q Kᵀ."),
        (queries * keys, "That is an element-wise product: a score is a dot product, summed over d_k."),
    ]
    return compare_tensor(
        answer,
        scores,
        name="the scores Q Kᵀ of document 000",
        wrong=wrong,
        success="Row i lists how strongly query i matches each key.",
    )
