"""What heads learn (lesson 14): scores for two head types, and ablating a head to test a claim.

- A **previous-token head** attends from each token to the one just before it.
- An **induction head** attends from a token to the token that *followed* the previous occurrence of
  the same token (``… A B … A`` → look at ``B``), and so can copy ``B`` — in-context copying. It needs a
  previous-token head in an earlier layer: that head writes "the token before me was A" into ``B``'s
  vector, which the induction head's query (the current ``A``) can match.

Shapes: ``weights (batch, n_q, n_k)`` of one head, ``ids (batch, n)``.

**One rule for every head score.** A score is a mean over the queries where its task exists, named by
``queries`` (a boolean ``(batch, n)`` or ``(n,)``): the real tokens, never padding — a padding run has no
previous token worth looking at and no earlier copy to find. Its baseline is the same score of a head that
spreads its weight evenly over the keys the causal mask allows (:func:`uniform_weights`), over the same
queries: ``score(uniform_weights(batch, n), …, queries)``. :func:`real_tokens` gives the usual ``queries``.
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
    "real_tokens",
    "uniform_weights",
]


def _queries(queries: Tensor | None, batch: int, n: int) -> Tensor:
    """``queries`` as a boolean ``(batch, n)``: every query when ``None``."""
    if queries is None:
        return torch.ones(batch, n, dtype=torch.bool)
    if not isinstance(queries, Tensor) or queries.dtype != torch.bool or queries.shape[-1] != n:
        got = f"{queries.dtype} {tuple(queries.shape)}" if isinstance(queries, Tensor) else type(queries).__name__
        raise AttentionInputError(f"queries must be a boolean tensor (batch, n) or (n,) with n = {n}, got {got}")
    try:
        return queries.expand(batch, n)
    except RuntimeError:
        raise AttentionInputError(
            f"queries must be a boolean tensor (batch, n) = {(batch, n)} or (n,), got {tuple(queries.shape)}"
        ) from None


def real_tokens(ids: Tensor, *, pad: int = 0) -> Tensor:
    """``(batch, n)`` boolean: True at the sequence's own tokens, False at the padding token ``pad``."""
    return ids != pad


def uniform_weights(batch: int, n: int) -> Tensor:
    """``(batch, n, n)``: the maps of a head that spreads its weight evenly over the keys the causal mask
    allows — query ``i`` puts ``1/(i+1)`` on each key ``0 … i``. Any score of it is that score's baseline."""
    allowed = torch.ones(n, n).tril()
    return (allowed / allowed.sum(-1, keepdim=True)).expand(batch, n, n)


def previous_token_score(weights: Tensor, queries: Tensor | None = None) -> float:
    """Mean weight a query puts on the key just before it, over the queries from the second on that
    ``queries`` (boolean ``(batch, n)`` or ``(n,)``) counts; every query from the second on when ``None``
    (a text with no padding). ``weights (batch, n, n)`` or ``(n, n)``."""
    if not isinstance(weights, Tensor) or weights.dim() not in (2, 3) or weights.shape[-1] != weights.shape[-2]:
        got = tuple(weights.shape) if isinstance(weights, Tensor) else type(weights).__name__
        raise AttentionInputError(f"weights must be one head's maps (batch, n, n) or (n, n), got {got}")
    maps = weights if weights.dim() == 3 else weights[None]
    batch, n = maps.shape[0], maps.shape[-1]
    counted = _queries(queries, batch, n)
    on_previous = torch.diagonal(maps, offset=-1, dim1=-2, dim2=-1)  # (batch, n - 1): queries 1 … n - 1
    counted = counted[:, 1:]
    if not bool(counted.any()):
        raise ValueError("no query from the second on is counted: a previous-token score needs one")
    return float(on_previous[counted].mean())


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


def induction_score(weights: Tensor, ids: Tensor, queries: Tensor | None = None) -> float:
    """Mean weight on the induction target, over the queries that have one and that ``queries`` (boolean
    ``(batch, n)`` or ``(n,)``) counts — in a padded batch the scored tokens, so that the padding, which
    repeats, is never scored. ``weights (batch, n, n)``, ``ids (batch, n)``."""
    targets = induction_targets(ids)
    valid = targets >= 0
    if queries is not None:
        valid &= _queries(queries, *valid.shape)
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

    def replace(_module: torch.nn.Module, args: tuple[Tensor, ...]) -> tuple[Tensor, ...]:
        heads = args[0].clone()
        for c in columns:
            heads[..., c] = 0.0 if how == "zero" else heads[..., c].mean(dim=0, keepdim=True)
        return (heads, *args[1:])

    handle = attention.out_proj.register_forward_pre_hook(replace)
    try:
        yield model
    finally:
        handle.remove()
