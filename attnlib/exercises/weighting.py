"""Lesson 06 exercise: the weighted values of Input 1 in document 001.

The learner answers with a ``(n_k, d_v) = (3, 3)`` matrix whose row ``j`` is ``α_1j · v_j``
(the weight of Input 1's query on key ``j`` times value ``j``), i.e. ``weight_values(W, V)[0]``.
"""

from __future__ import annotations

import torch
from torch import Tensor

from .. import examples
from ..steps import score, softmax, weight_values
from ._core import Feedback, compare_tensor, exercise

__all__ = ["check", "expected"]

NAME = "the three weighted values of Input 1 (row j = α_1j · v_j)"


def expected() -> Tensor:
    """``weight_values(weights, values)[0]`` for document 001: ``(3, 3)``."""
    queries, keys, values = examples.three_inputs.qkv()
    return weight_values(softmax(score(queries, keys)), values)[0]


@exercise("weighting.1")
def check(answer: object) -> Feedback:
    """Check ``answer`` against :func:`expected`, with hints for the typical slips."""
    queries, keys, values = examples.three_inputs.qkv()
    scores = score(queries, keys)
    weights = softmax(scores)
    printed = torch.tensor(examples.three_inputs.notes["printed_softmax_1"])
    wrong = [
        (
            weights[:, 0:1] * values,
            "You used column 1 of the weights (how much every query attends to key 1) instead of "
            "row 1 (how much Input 1's query attends to every key): take weights[0, j] * values[j].",
        ),
        (
            scores[0][:, None] * values,
            "You multiplied the values by the raw scores [2, 4, 4]; use the softmax weights.",
        ),
        (
            printed[:, None] * values,
            "These are document 001's rounded figures (weights [0.0, 0.5, 0.5]); use the exact "
            "weights [0.0634, 0.4683, 0.4683].",
        ),
        (
            weights[0][:, None] * values.T,
            "You weighted the rows of Vᵀ: value j is row j of V (one value per key).",
        ),
    ]
    return compare_tensor(answer, expected(), name=NAME, wrong=wrong)
