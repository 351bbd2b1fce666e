"""What heads learn (lesson 14): scores for two head types, and ablating a head to test a claim.

- A **previous-token head** attends from each token to the one just before it.
- An **induction head** attends from a token to the token that *followed* the previous occurrence of
  the same token (``… A B … A`` → look at ``B``), and so can copy ``B`` — in-context copying. It needs a
  previous-token head in an earlier layer: that head writes "the token before me was A" into ``B``'s
  vector, which the induction head's query (the current ``A``) can match.

Shapes: ``weights (batch, n_q, n_k)`` of one head, ``ids (batch, n)``.
"""

from __future__ import annotations

import contextlib

import torch
from torch import Tensor

from .transformer import TinyTransformer

__all__ = ["ablated", "induction_score", "induction_targets", "previous_token_score"]


def previous_token_score(weights: Tensor) -> float:
    """Mean weight each query (from the second on) puts on the key just before it."""
    return float(torch.diagonal(weights, offset=-1, dim1=-2, dim2=-1).mean())


def induction_targets(ids: Tensor) -> Tensor:
    """``(batch, n)``: for each token that occurred before, the position right after its previous
    occurrence (where an induction head should look); ``-1`` where the token is new."""
    batch, n = ids.shape
    targets = torch.full((batch, n), -1, dtype=torch.int64)
    for b in range(batch):
        last: dict[int, int] = {}
        for i, token in enumerate(ids[b].tolist()):
            if token in last:
                targets[b, i] = last[token] + 1
            last[token] = i
    return targets


def induction_score(weights: Tensor, ids: Tensor, counted: Tensor | None = None) -> float:
    """Mean weight on the induction target, over the queries that have one (and ``counted``, if given)."""
    targets = induction_targets(ids)
    valid = targets >= 0
    if counted is not None:
        valid &= counted.expand_as(valid)
    if not bool(valid.any()):
        raise ValueError("no token in ids occurs twice: an induction score needs repeats")
    picked = weights.gather(-1, targets.clamp(min=0).unsqueeze(-1)).squeeze(-1)
    return float(picked[valid].mean())


@contextlib.contextmanager
def ablated(model: TinyTransformer, layer: int, head: int | tuple[int, ...]):
    """Within the ``with`` block, head ``head`` (or each of several) of block ``layer`` contributes nothing."""
    if not 0 <= layer < len(model.blocks):
        raise ValueError(f"layer must be from 0 to {len(model.blocks) - 1}, got {layer}")
    attention = model.blocks[layer].attention
    chosen = (head,) if isinstance(head, int) else tuple(head)
    if not chosen or any(not 0 <= h < attention.num_heads for h in chosen):
        raise ValueError(f"head must be from 0 to {attention.num_heads - 1}, got {head}")
    before = attention.head_mask
    mask = torch.ones(attention.num_heads)
    mask[list(chosen)] = 0.0
    attention.head_mask = mask
    try:
        yield model
    finally:
        attention.head_mask = before
