"""Lesson 02 exercise: the shapes of ``W_q``, ``W_k``, ``W_v`` for ``d_in=4``, ``d_k=3``, ``d_v=5``."""

from __future__ import annotations

import torch

from ..steps import init_weights
from ._core import Feedback, compare_tensor, exercise

__all__ = ["D_IN", "D_K", "D_V", "check", "expected"]

D_IN, D_K, D_V = 4, 3, 5


def expected() -> torch.Tensor:
    """The three shapes as rows ``[rows, cols]``: ``(3, 2)``, read from :func:`attnlib.init_weights`."""
    weights = init_weights(D_IN, D_K, D_V)
    return torch.tensor([list(w.shape) for w in weights], dtype=torch.float64)


@exercise("weights.1")
def check(answer: object) -> Feedback:
    """Check ``answer = [shape of W_q, shape of W_k, shape of W_v]`` for d_in=4, d_k=3, d_v=5."""
    shapes = expected()
    wrong = [
        (
            shapes.flip(1),
            "Rows and columns are swapped: X (n_tokens, d_in) is multiplied on the LEFT, "
            "so every W needs d_in rows: (d_in, d_out).",
        ),
        (
            torch.tensor([[D_IN, D_K]] * 3, dtype=torch.float64),
            "W_v makes the values, and values have their own size d_v = 5 (only queries and keys must share d_k).",
        ),
        (
            torch.tensor([[D_IN, D_V]] * 3, dtype=torch.float64),
            "Queries and keys have size d_k = 3; only W_v has d_v = 5 columns.",
        ),
        (
            torch.tensor([[D_IN, D_V], [D_IN, D_K], [D_IN, D_K]], dtype=torch.float64),
            "The order is W_q, W_k, W_v: the one with d_v = 5 columns comes last.",
        ),
    ]
    return compare_tensor(
        answer,
        shapes,
        name="the shapes of W_q, W_k and W_v",
        wrong=wrong,
        success="Every W has d_in rows; its columns give the size of what it makes.",
    )
