"""Lesson 11 exercises: heads, their parameters and torch's mask convention.

- ``multihead.1`` predict: the parameters of ``MultiHeadAttention(512, num_heads=8)`` (biases included).
- ``multihead.2`` code: ``split(x, h)``: ``(batch, n, d_model) -> (batch, h, n, d_head)``, run on fresh inputs.
- ``multihead.3`` transfer: torch's ``attn_mask`` for a window (token i sees i−1, i, i+1) over 5 tokens.
"""

from __future__ import annotations

import torch
from torch import Tensor

from ..modules import split_heads
from ._calls import compare_call
from ._core import Feedback, compare_number, compare_tensor, exercise

__all__ = ["parameters", "split", "window_mask", "wrong_answers"]

D_MODEL, NUM_HEADS = 512, 8
WINDOW_TOKENS = 5


def _fresh_input() -> Tensor:
    """``x (batch, n, d_model) = (2, 5, 12)``, to split into 3 heads of 4, never shown in a lesson."""
    return torch.randn(2, 5, 12, generator=torch.Generator().manual_seed(11))


def _window_allowed() -> Tensor:
    """attnlib's convention (True = may attend): ``|i − j| ≤ 1``, shape ``(5, 5)``."""
    i = torch.arange(WINDOW_TOKENS)
    return (i[:, None] - i[None, :]).abs() <= 1


def wrong_answers() -> dict[str, list[tuple[object, str | None]]]:
    """Per exercise, typical wrong answers and the mistake id each must reveal (None: a plain hint)."""
    per_projection = D_MODEL * D_MODEL + D_MODEL
    return {
        "multihead.1": [
            (NUM_HEADS * 4 * per_projection, "heads-parameters"),
            (4 * D_MODEL * D_MODEL, None),
            (3 * per_projection, None),
        ],
        "multihead.2": [
            (lambda x, h: x.view(x.shape[0], h, x.shape[1], x.shape[2] // h), "heads-view-no-transpose"),
            (lambda x, h: x.view(x.shape[0], x.shape[1], h, x.shape[2] // h), "heads-view-no-transpose"),
        ],
        "multihead.3": [(_window_allowed(), None), (~torch.ones(5, 5, dtype=torch.bool).tril(), None)],
    }


@exercise("multihead.1")
def parameters(answer: object) -> Feedback:
    """``sum(p.numel() for p in MultiHeadAttention(512, num_heads=8).parameters())``, predicted."""
    per_projection = D_MODEL * D_MODEL + D_MODEL  # weight (512, 512) and bias (512,)
    wrong = [
        (
            NUM_HEADS * 4 * per_projection,
            "Eight heads do not need eight sets of projections: one (512 × 512) projection is *split* into "
            "8 slices of d_head = 64 columns. The count does not depend on h.",
            "heads-parameters",
        ),
        (4 * D_MODEL * D_MODEL, "Close: the four projections (query, key, value, output) also have a bias each."),
        (3 * per_projection, "Do not forget the output projection out_proj: four projections in all."),
    ]
    return compare_number(answer, 4 * per_projection, name="the number of parameters", wrong=wrong, tol=0.5)


@exercise("multihead.2")
def split(answer: object) -> Feedback:
    """A function ``split(x (batch, n, d_model), h) -> (batch, h, n, d_head)``."""
    x = _fresh_input()
    b, n, d = x.shape
    wrong = [
        (
            x.reshape(b, 3, n, d // 3),
            "The shape is right but the numbers are scrambled: view(batch, h, n, d_head) cuts the memory in "
            "order, so a 'head' gets pieces of several tokens. Split the features first, view(batch, n, h, "
            "d_head), then move the head axis with .transpose(1, 2).",
            "heads-view-no-transpose",
        ),
        (
            x.reshape(b, n, 3, d // 3),
            "You split the features into heads, (batch, n, h, d_head); now move the head axis in front of the "
            "tokens with .transpose(1, 2).",
            "heads-view-no-transpose",
        ),
    ]
    return compare_call(
        answer,
        (x, 3),
        call="your split(x, h)",
        expected=split_heads(x, 3),
        name="split(x, 3) on a new x (2, 5, 12)",
        wrong=wrong,
        success="Head j holds feature columns 4j … 4j+3 of every token.",
    )


@exercise("multihead.3")
def window_mask(answer: object) -> Feedback:
    """torch's boolean ``attn_mask`` (True = NOT allowed) for 5 tokens, token i seeing i−1, i and i+1."""
    allowed = _window_allowed()
    wrong = [
        (
            allowed,
            "That is attnlib's convention (True = may attend). torch.nn.MultiheadAttention's boolean attn_mask "
            "means the opposite (True = NOT allowed): invert it with ~.",
        ),
        (
            ~torch.ones(5, 5, dtype=torch.bool).tril(),
            "That is the causal mask: this window also lets token i see token i+1, and hides i−2 and before.",
        ),
    ]
    return compare_tensor(
        answer,
        ~allowed,
        name="torch's attn_mask for the window (5×5, True = NOT allowed)",
        wrong=wrong,
        success="True off the three central diagonals.",
    )
