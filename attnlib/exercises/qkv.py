"""Lesson 03 exercise: document 001's queries ``Q = X W_q``, shape ``(n_tokens, d_k) = (3, 3)``."""

from __future__ import annotations

import torch

from ..examples import three_inputs
from ..steps import derive_qkv
from ._core import Feedback, compare_tensor, exercise

__all__ = ["check", "expected"]


def expected() -> torch.Tensor:
    """``Q = X W_q`` of document 001, shape ``(3, 3)``."""
    return derive_qkv(three_inputs.inputs, *three_inputs.weights).queries


@exercise("qkv.1")
def check(answer: object) -> Feedback:
    """Check ``answer`` against the queries of document 001, ``(n_tokens, d_k) = (3, 3)``."""
    queries, keys, values = derive_qkv(three_inputs.inputs, *three_inputs.weights)
    wrong = [
        (keys, "Those are the keys (X W_k): the queries use W_q."),
        (values, "Those are the values (X W_v): the queries use W_q."),
        (
            queries.T.contiguous(),
            "Transposed (W_qᵀ Xᵀ instead of X W_q): row i must be the query of Input i, x_i W_q.",
        ),
        (
            queries[:1],
            "That is only Input 1's query; stack all three: X @ W_q gives them at once.",
        ),
    ]
    return compare_tensor(
        answer,
        queries,
        name="the queries of document 001",
        wrong=wrong,
        success="Row i is q_i = x_i W_q.",
    )
