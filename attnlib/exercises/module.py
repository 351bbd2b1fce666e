"""Lesson 09 exercise: the attention weights of document 004's module under a causal mask."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import examples
from ..modules import SelfAttention, causal_mask
from ._core import Feedback, compare_tensor, exercise

__all__ = ["check", "expected", "typical_mistakes"]

NAME = "the causal attention weights of 004's module (3×3)"


def _module() -> SelfAttention:
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(examples.encodings.notes["seed"])
        return SelfAttention(2)


def expected() -> Tensor:
    """``softmax(mask(Q Kᵀ / sqrt(2)))`` for 004's encodings, causal mask; shape ``(3, 3)``."""
    return _module().steps(examples.encodings.inputs, mask=causal_mask(3)).weights


def typical_mistakes() -> list[tuple[Tensor, str]]:
    """``(wrong answer, hint)`` pairs the checker recognises."""
    module = _module()
    x = examples.encodings.inputs
    plain = module.steps(x)
    unscaled_module = _module()
    unscaled_module.scaled = False
    unscaled = unscaled_module.steps(x, mask=causal_mask(3)).weights
    upper = module.steps(x, mask=causal_mask(3).T).weights
    zeroed = plain.weights * causal_mask(3)
    return [
        (
            plain.weights,
            "These are the weights without a mask: pass mask=causal_mask(3) so that token i only sees 0…i.",
        ),
        (upper, "The mask is flipped: True means *may attend*, and token i may attend to tokens 0…i (lower triangle)."),
        (
            zeroed,
            "You zeroed the weights after the softmax: the rows no longer sum to 1. Mask the scores with -inf "
            "before the softmax instead.",
        ),
        (unscaled, "Forgot to scale: divide the scores by sqrt(d_k) = sqrt(2) before the softmax."),
    ]


@exercise("module.1")
def check(answer: object) -> Feedback:
    return compare_tensor(
        answer,
        expected(),
        name=NAME,
        wrong=typical_mistakes(),
        success="Row 1 is [1, 0, 0]: the first token can only attend to itself.",
    )
