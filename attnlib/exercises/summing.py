"""Lesson 07 exercise: all three outputs of document 001 (Outputs 1–3).

The learner answers with the context ``(n_q, d_v) = (3, 3)``: row ``i`` is ``Σ_j α_ij v_j``.
"""

from __future__ import annotations

import torch
from torch import Tensor

from .. import examples
from ..steps import score, softmax, sum_weighted_values, weight_values
from ._core import Feedback, compare_tensor, exercise

__all__ = ["check", "expected"]

NAME = "the outputs of document 001 (one row per input, Σ_j α_ij v_j)"


def expected() -> Tensor:
    """``sum_weighted_values(weight_values(weights, values))`` for document 001: ``(3, 3)``."""
    queries, keys, values = examples.three_inputs.qkv()
    return sum_weighted_values(weight_values(softmax(score(queries, keys)), values))


@exercise("summing.1")
def check(answer: object) -> Feedback:
    """Check ``answer`` against :func:`expected`, with hints for the typical slips."""
    queries, keys, values = examples.three_inputs.qkv()
    scores = score(queries, keys)
    weights = softmax(scores)
    grid = weight_values(weights, values)
    right = expected()
    rounded_first = right.clone()
    rounded_first[0] = torch.tensor(examples.three_inputs.notes["printed_output_1"])
    wrong = [
        (
            grid.sum(dim=0),
            "You summed over the queries (dim 0 of the (n_q, n_k, d_v) grid): each output adds up "
            "its own query's weighted values, over the keys (dim=-2).",
        ),
        (
            weights.T @ values,
            "You used the transposed weights (Wᵀ V): row i of the weights belongs to query i, so the context is W V.",
        ),
        (
            scores @ values,
            "You multiplied the raw scores by the values: apply the softmax first.",
        ),
        (
            rounded_first,
            "Output 1 is document 001's rounded [2.0, 7.0, 1.5]; with exact weights it is [1.9366, 6.6831, 1.5951].",
        ),
        (
            right[:1],
            "That is only Output 1: stack all three outputs, one row per input.",
        ),
    ]
    return compare_tensor(answer, right, name=NAME, wrong=wrong)
