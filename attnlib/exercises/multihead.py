"""Lesson 11 exercise: a causal ``attn_mask`` in ``torch.nn.MultiheadAttention``'s convention."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import examples
from ..modules import causal_mask
from ._core import Feedback, compare_tensor, exercise

__all__ = ["N_TOKENS", "check", "expected", "typical_mistakes"]

N_TOKENS = len(examples.translate.tokens)  # 8
NAME = f"torch's causal attn_mask for {N_TOKENS} tokens ({N_TOKENS}×{N_TOKENS}, True = NOT allowed)"


def expected() -> Tensor:
    """``~causal_mask(8)``: True strictly above the diagonal (the future is hidden)."""
    return ~causal_mask(N_TOKENS)


def typical_mistakes() -> list[tuple[Tensor, str]]:
    allowed = causal_mask(N_TOKENS)
    ones = torch.ones(N_TOKENS, N_TOKENS, dtype=torch.bool)
    return [
        (
            allowed,
            "That is attnlib's convention (True = may attend). torch.nn.MultiheadAttention's boolean attn_mask "
            "means the opposite (True = NOT allowed): invert it with ~.",
        ),
        (
            ones.triu(),
            "The diagonal is masked too: every token may attend to itself. Use triu(diagonal=1).",
        ),
        (
            ones.tril(-1),
            "That hides the past instead of the future: token i must not see the tokens after it (j > i).",
        ),
    ]


@exercise("multihead.1")
def check(answer: object) -> Feedback:
    return compare_tensor(
        answer,
        expected(),
        name=NAME,
        wrong=typical_mistakes(),
        success="attnlib's mask is its negation: ~causal_mask(8).",
    )
