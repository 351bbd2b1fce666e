"""Lesson 01 exercise: write document 001's inputs as the matrix ``X`` ``(n_tokens, d_in)``."""

from __future__ import annotations

import torch

from ..examples import four_inputs, three_inputs
from ..steps import prepare_inputs
from ._core import Feedback, compare_tensor, exercise

__all__ = ["check", "expected"]


def expected() -> torch.Tensor:
    """Document 001's inputs stacked as rows: ``X`` of shape ``(3, 4)``."""
    return prepare_inputs(three_inputs.rows)


@exercise("inputs.1")
def check(answer: object) -> Feedback:
    """Check ``answer`` against ``X`` of document 001, shape ``(n_tokens, d_in) = (3, 4)``."""
    x = expected()
    wrong = [
        (
            x.reshape(-1),
            "You concatenated the inputs into one long vector of 12 numbers; "
            "stack them instead: one row per token, shape (n_tokens, d_in) = (3, 4).",
        ),
        (
            x.T.contiguous(),
            "Each input is a column here: X has one ROW per token, shape (n_tokens, d_in) = (3, 4).",
        ),
        (
            four_inputs.inputs,
            "That is document 000's X with four inputs; document 001 has only the first three.",
        ),
        (
            x.flip(0),
            "The rows are in reverse order: row 1 is Input 1 = [1, 0, 1, 0].",
        ),
    ]
    return compare_tensor(
        answer,
        x,
        name="the inputs X of document 001",
        wrong=wrong,
        success="Three tokens, four features each: n_tokens = 3, d_in = 4.",
    )
