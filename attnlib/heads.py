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
from collections.abc import Iterator

import torch
from torch import Tensor

from ._validate import AttentionInputError
from .transformer import Block, TinyTransformer

__all__ = [
    "ABLATIONS",
    "ablated",
    "accuracy_by_position",
    "induction_score",
    "induction_targets",
    "previous_token_score",
]


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


@torch.no_grad()
def accuracy_by_position(model: TinyTransformer, ids: Tensor, targets: Tensor, counted: Tensor) -> Tensor:
    """``(n,)``: at each position, the share of its scored predictions (``counted``) that are right;
    NaN where no prediction is scored. ``ids``, ``targets`` and ``counted`` ``(batch, n)`` as a task's batch."""
    if ids.shape != targets.shape or counted.expand_as(ids).shape != ids.shape:
        raise AttentionInputError(
            f"ids, targets and counted must have one shape (batch, n), got {tuple(ids.shape)}, "
            f"{tuple(targets.shape)} and {tuple(counted.shape)}"
        )
    right = (model(ids).argmax(-1) == targets) & counted
    scored = counted.expand_as(ids).sum(0)
    return torch.where(
        scored > 0, right.sum(0) / scored.clamp(min=1), torch.full_like(scored, float("nan"), dtype=torch.float32)
    )


ABLATIONS = ("zero", "mean")


@contextlib.contextmanager
def ablated(
    model: TinyTransformer, layer: int, head: int | tuple[int, ...], *, how: str = "zero"
) -> Iterator[TinyTransformer]:
    """Within the ``with`` block, head ``head`` (or each of several) of block ``layer`` is switched off.

    ``how="zero"``: the head's output ``(batch, n, d_head)`` is replaced by zeros. ``how="mean"``: by its
    mean over the batch at each position — the head then still adds its *typical* output, but nothing
    that depends on this sequence. Done with a forward pre-hook on the layer's ``out_proj``, where the
    heads' outputs arrive side by side ``(batch, n, num_heads · d_head)``.
    """
    if isinstance(layer, bool) or not isinstance(layer, int) or not 0 <= layer < len(model.blocks):
        raise AttentionInputError(f"layer must be from 0 to {len(model.blocks) - 1}, got {layer!r}")
    block = model.blocks[layer]
    if not isinstance(block, Block):
        raise AttentionInputError(
            f"ablated needs attnlib's Block (a model built with block=None), got a {type(block).__name__}"
        )
    attention = block.attention
    chosen = (head,) if isinstance(head, int) else tuple(head)  # a bool is refused below
    if not chosen or any(
        isinstance(h, bool) or not isinstance(h, int) or not 0 <= h < attention.num_heads for h in chosen
    ):
        raise AttentionInputError(
            f"head must be from 0 to {attention.num_heads - 1} (or a tuple of them), got {head!r}"
        )
    if how not in ABLATIONS:
        raise AttentionInputError(f"how must be one of {ABLATIONS}, got {how!r}")
    columns = [slice(h * attention.d_head, (h + 1) * attention.d_head) for h in chosen]

    def replace(_module, args):
        heads = args[0].clone()
        for c in columns:
            heads[..., c] = 0.0 if how == "zero" else heads[..., c].mean(dim=0, keepdim=True)
        return (heads, *args[1:])

    handle = attention.out_proj.register_forward_pre_hook(replace)
    try:
        yield model
    finally:
        handle.remove()
