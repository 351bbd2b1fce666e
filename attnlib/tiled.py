"""The fast, memory-lean path: attention over blocks of keys with an online softmax (lesson 15 idea).

:func:`attnlib.attention` builds the whole ``(n_q, n_k)`` matrix of scores — ``n²`` numbers, 256 MiB
in float32 for 8192 tokens. :func:`tiled_attention` visits the keys ``block_size`` at a time and keeps,
for every query, three running quantities (the algorithm inside FlashAttention):

- ``m``, the largest score seen so far (lesson 05's "subtract the row maximum", kept up to date);
- ``ℓ``, the sum of ``e^(s − m)`` over the keys seen so far — the softmax's denominator;
- ``acc``, the sum of ``e^(s − m) v`` — the numerator of the output.

When a block raises the maximum from ``m`` to ``m'``, everything accumulated so far is rescaled by
``e^(m − m')``; at the end ``Z = acc / ℓ``. No ``(n_q, n_k)`` matrix ever exists: memory is
``(n_q, block_size)`` per batch element.
"""

from __future__ import annotations

import torch
from torch import Tensor

from ._validate import AttentionInputError, check_mask, check_positive_int, check_qkv, check_scale

__all__ = ["tiled_attention"]


def tiled_attention(
    queries: Tensor,
    keys: Tensor,
    values: Tensor,
    *,
    mask: Tensor | None = None,
    scale: float | None = None,
    is_causal: bool = False,
    block_size: int = 128,
) -> Tensor:
    """``softmax(mask(Q Kᵀ · scale)) V`` computed block by block over the keys; equal to :func:`attnlib.attention`.

    Args:
        queries: ``(..., n_q, d_k)``.
        keys: ``(..., n_k, d_k)``.
        values: ``(..., n_k, d_v)``.
        mask: boolean (True = may attend) or additive (added to the scores: 0 = attend, ``-inf`` =
            hidden), broadcastable to ``(..., n_q, n_k)``; sliced block by block, never expanded.
        scale: factor on the scores; default ``1/sqrt(d_k)``.
        is_causal: query ``i`` sees keys ``0 … i`` only (the mask is built block by block, never
            whole). Give either ``mask`` or ``is_causal=True``, not both.
        block_size: keys per block (a positive integer; need not divide ``n_k``).

    Returns:
        context ``(..., n_q, d_v)``. As for :func:`attnlib.attention`, a query that may attend to no
        key is an error (torch 2.13's SDPA would return a zero row there).
    """
    check_positive_int("block_size", block_size)  # a ValueError naming the argument and its value
    if not isinstance(is_causal, bool):
        raise TypeError(f"is_causal must be True or False, got {is_causal!r}")
    if is_causal and mask is not None:
        raise AttentionInputError(
            "give either mask or is_causal=True, not both: a fused kernel would apply only one of them"
        )
    batch = check_qkv(queries, keys, values)
    s = check_scale(scale, queries.shape[-1])
    n_q, n_k = queries.shape[-2], keys.shape[-2]
    shape = (*batch, n_q, n_k)
    mask = check_mask(mask, shape, dtype=queries.dtype)
    if mask is not None:
        mask = mask.broadcast_to((*mask.shape[:-1], n_k))  # so that it can be sliced along the keys
    q = queries * s  # scaling n_q × d_k numbers once instead of every block of scores
    rows = torch.arange(n_q)[:, None]
    m = ell = acc = None
    for start in range(0, n_k, block_size):
        stop = min(start + block_size, n_k)
        scores = q @ keys[..., start:stop, :].transpose(-2, -1)  # (..., n_q, b)
        if mask is not None and mask.is_floating_point():
            scores = scores + mask[..., start:stop]  # additive: 0 = attend, -inf = hidden
        elif mask is not None:
            scores = scores.masked_fill(~mask[..., start:stop], float("-inf"))
        if is_causal:
            scores = scores.masked_fill(torch.arange(start, stop)[None, :] > rows, float("-inf"))
        block_max = scores.amax(dim=-1, keepdim=True)
        m_new = block_max if m is None else torch.maximum(m, block_max)
        safe = torch.where(torch.isinf(m_new), torch.zeros_like(m_new), m_new)  # no key seen yet: no shift
        p = (scores - safe).exp()  # masked keys: e^(-inf) = 0
        block_sum = p.sum(dim=-1, keepdim=True)
        block_acc = p @ values[..., start:stop, :]
        if m is None:
            ell, acc = block_sum, block_acc
        else:
            correction = (m - safe).exp()  # rescale what was accumulated under the old maximum
            ell = ell * correction + block_sum
            acc = acc * correction + block_acc
        m = m_new
    return acc / ell  # is_causal never hides every key: query i always sees key 0
