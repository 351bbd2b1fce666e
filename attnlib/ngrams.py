"""Counted n-gram models of text (lesson 17): the baselines a trained language model must beat.

An **n-gram** model predicts the next token $a'$ from the $n - 1$ tokens before it (its *context* $h$), by
counting in the training text how often each context was followed by each token, with **add-k smoothing**:

    p(a' | h) = (count(h a') + k) / (count(h ·) + k |V|)

so a pair never counted keeps a small probability. ``n = 1`` has an empty context (the unigram model),
``n = 2`` is the bigram model. ``k`` is chosen on a validation slice cut from the end of the *training*
text (:func:`choose_k`), never on the held-out text. A context the training text never showed gets
``count(h ·) = 0``: its prediction is uniform, ``ln |V|`` nats whatever the truth (:func:`unseen_context_share`).

Shapes: ``train (N,)``, ``held_out (M,)`` integer ids below ``vocab_size``. Losses in nats per token.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from ._validate import AttentionInputError, check_positive_int, shape_str

__all__ = ["K_GRID", "choose_k", "ngram_loss", "ngram_table", "unseen_context_share"]

#: The smoothing constants :func:`choose_k` tries.
K_GRID = (1.0, 0.3, 0.1, 0.03, 0.01, 0.003, 0.001)


def _check(name: str, ids: object, vocab_size: int) -> Tensor:
    if not isinstance(ids, Tensor) or ids.dim() != 1 or ids.is_floating_point() or ids.is_complex():
        got = shape_str(ids) if isinstance(ids, Tensor) else type(ids).__name__
        raise AttentionInputError(f"{name} must be a 1-D integer tensor of token ids (N,), got {got}")
    if ids.numel() and (int(ids.min()) < 0 or int(ids.max()) >= vocab_size):
        raise AttentionInputError(f"{name} has ids {int(ids.min())}…{int(ids.max())}, outside 0…{vocab_size - 1}")
    return ids.long()


def _check_args(train: object, held_out: object, vocab_size: int, n: int) -> tuple[Tensor, Tensor]:
    check_positive_int("vocab_size", vocab_size)
    check_positive_int("n", n)
    if n * math.log2(vocab_size) > 62:
        raise AttentionInputError(f"n={n} with vocab_size={vocab_size}: the n-gram codes would overflow int64")
    train, held_out = _check("train", train, vocab_size), _check("held_out", held_out, vocab_size)
    if len(train) < n or len(held_out) < n:
        raise AttentionInputError(
            f"train ({len(train)} tokens) and held_out ({len(held_out)}) need at least n={n} tokens each"
        )
    return train, held_out


def _codes(ids: Tensor, width: int, vocab_size: int) -> Tensor:
    """``(len(ids) - width + 1,)``: each run of ``width`` ids as one integer (base ``vocab_size``)."""
    code = torch.zeros(len(ids) - width + 1, dtype=torch.int64)
    for i in range(width):
        code = code * vocab_size + ids[i : len(ids) - width + 1 + i]
    return code


def _lookup(table: Tensor, counts: Tensor, codes: Tensor) -> Tensor:
    """The count of each code in ``codes`` (0 where ``table``, sorted and unique, lacks it)."""
    if not len(table):
        return torch.zeros(len(codes), dtype=torch.int64)
    where = torch.searchsorted(table, codes).clamp(max=len(table) - 1)
    return torch.where(table[where] == codes, counts[where], 0)


def _counts(train: Tensor, held_out: Tensor, vocab_size: int, n: int) -> tuple[Tensor, Tensor]:
    """For each scored position of ``held_out`` (``n - 1`` onwards): count(h a') and count(h ·) in ``train``."""
    grams, gram_counts = torch.unique(_codes(train, n, vocab_size), return_counts=True)
    held_grams = _codes(held_out, n, vocab_size)
    pair = _lookup(grams, gram_counts, held_grams)
    if n == 1:
        return pair, torch.full_like(pair, len(train))
    contexts, context_counts = torch.unique(_codes(train[:-1], n - 1, vocab_size), return_counts=True)
    context = _lookup(contexts, context_counts, held_grams // vocab_size)
    return pair, context


def ngram_loss(train: Tensor, held_out: Tensor, vocab_size: int, n: int, k: float = 1.0) -> float:
    """Mean ``-ln p(a' | h)`` of the add-``k`` ``n``-gram model counted on ``train``, over ``held_out[n - 1:]``.

    Each scored token's context is the ``n - 1`` tokens before it in ``held_out`` (so the first ``n - 1``
    tokens are context only; prepend the end of the training text to score them too).
    """
    train, held_out = _check_args(train, held_out, vocab_size, n)
    if isinstance(k, bool) or not isinstance(k, int | float) or not k > 0:
        raise AttentionInputError(f"k must be a number > 0 (add-k smoothing), got {k!r}")
    return _loss(*_counts(train, held_out, vocab_size, n), vocab_size, k)


def _loss(pair: Tensor, context: Tensor, vocab_size: int, k: float) -> float:
    log_p = (pair.double() + k).log() - (context.double() + k * vocab_size).log()
    return float(-log_p.mean())


def unseen_context_share(train: Tensor, held_out: Tensor, vocab_size: int, n: int) -> float:
    """The share of the scored positions of ``held_out`` whose ``n - 1``-token context ``train`` never showed."""
    train, held_out = _check_args(train, held_out, vocab_size, n)
    _, context = _counts(train, held_out, vocab_size, n)
    return float((context == 0).double().mean())


def choose_k(
    train: Tensor, vocab_size: int, n: int, *, fraction: float = 0.9, grid: tuple[float, ...] = K_GRID
) -> tuple[float, dict[float, float]]:
    """The ``k`` of :data:`K_GRID` with the lowest loss on the last ``1 - fraction`` of ``train``, counted on the rest.

    Returns ``(best k, {k: validation loss})``. Only the training text is used.
    """
    train = _check("train", train, check_positive_int("vocab_size", vocab_size))
    if not 0 < fraction < 1:
        raise AttentionInputError(f"fraction must be between 0 and 1, got {fraction!r}")
    cut = int(len(train) * fraction)
    fit, validation = _check_args(train[:cut], train[max(0, cut - (n - 1)) :], vocab_size, n)
    pair, context = _counts(fit, validation, vocab_size, n)  # counted once, scored for every k
    losses = {k: _loss(pair, context, vocab_size, k) for k in grid}
    return min(losses, key=losses.__getitem__), losses


def ngram_table(
    train: Tensor,
    held_out: Tensor,
    vocab_size: int,
    orders: tuple[int, ...] = (1, 2, 3, 4, 5),
    *,
    before: Tensor | None = None,
) -> list[dict[str, float]]:
    """Per order ``n``: its chosen ``k``, held-out loss and perplexity, and the share of unseen contexts.

    Every order is scored on all of ``held_out``: the first tokens' contexts come from the end of ``before``,
    the text ``held_out`` continues (default ``train``). Rows: ``{"n", "k", "loss", "perplexity", "unseen"}``.
    """
    before = train if before is None else _check("before", before, vocab_size)
    rows = []
    for n in orders:
        k, _ = choose_k(train, vocab_size, n)
        if len(before) < n - 1:
            raise AttentionInputError(f"before has {len(before)} tokens: the context of n={n} needs {n - 1}")
        scored = torch.cat([before[len(before) - (n - 1) :], held_out]) if n > 1 else held_out
        loss = ngram_loss(train, scored, vocab_size, n, k)
        unseen = unseen_context_share(train, scored, vocab_size, n)
        rows.append({"n": n, "k": k, "loss": loss, "perplexity": math.exp(loss), "unseen": unseen})
    return rows
