"""The memory-lean path: attention over blocks of keys with an online softmax (lesson 15).

:func:`attnlib.attention` builds the whole ``(n_q, n_k)`` matrix of scores — ``n²`` numbers, 256 MiB
in float32 for 8192 tokens. :func:`tiled_attention` visits the keys ``block_size`` at a time and keeps,
for every query ``i``, three running quantities (the algorithm inside FlashAttention):

- ``m_i``, the largest score seen so far (lesson 05's "subtract the row maximum", kept up to date);
- ``ℓ_i = Σ_l e^(s_il − m_i)`` over the keys seen so far — the softmax's denominator;
- ``acc_i = Σ_l e^(s_il − m_i) v_l`` — the numerator of the output.

They start at ``m = −∞``, ``ℓ = 0``, ``acc = 0``. When a block raises the maximum from ``m`` to
``m'``, what was accumulated is rescaled by ``e^(m − m')`` (old terms were measured from ``m``, new
ones from ``m'``); at the end ``z_i = acc_i / ℓ_i``. No ``(n_q, n_k)`` matrix ever exists: memory is
``(n_q, block_size)`` scores plus ``(n_q, d_v + 2)`` state per batch element.

:func:`online_softmax_blocks` yields that state after every block (the lesson and its explorer
print it); :func:`tiled_attention` keeps only the last one.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from typing import NamedTuple

import torch
from torch import Tensor

from ._validate import AttentionInputError, check_attention, check_positive_int

__all__ = ["OnlineState", "online_softmax_blocks", "tiled_attention"]


class OnlineState(NamedTuple):
    """The running state after visiting keys ``start … stop − 1`` (shapes for ``n_q`` queries).

    ``p`` ``(..., n_q, stop − start)``: ``e^(s_ij − m_i)`` for this block's keys (0 where hidden) —
    computed in place of the block's scores, the only ``n_q × block`` numbers held; ``m``
    ``(..., n_q, 1)``: running maximum; ``correction`` ``(..., n_q, 1)``: ``e^(m_before − m)``, the
    factor this block applied to what was accumulated (0 on the first); ``ell`` ``(..., n_q, 1)``:
    running normaliser ℓ; ``acc`` ``(..., n_q, d_v)``: rescaled accumulator. ``acc / ell`` is the
    attention over the keys seen so far. Every state holds its own tensors (none is reused).
    """

    start: int
    stop: int
    p: Tensor
    m: Tensor
    correction: Tensor
    ell: Tensor
    acc: Tensor


def online_softmax_blocks(
    queries: Tensor,
    keys: Tensor,
    values: Tensor,
    *,
    mask: Tensor | None = None,
    scale: float | None = None,
    is_causal: bool = False,
    block_size: int = 128,
) -> Iterator[OnlineState]:
    """Visit the keys in blocks of ``block_size``; yield the running state after each block.

    Arguments as for :func:`tiled_attention` (checked the same way, before the first block).
    """
    check_positive_int("block_size", block_size)  # a ValueError naming the argument and its value
    if not isinstance(is_causal, bool):
        raise TypeError(f"is_causal must be True or False, got {is_causal!r}")
    if is_causal and mask is not None:
        raise AttentionInputError(
            "give either mask or is_causal=True, not both: what torch's SDPA does with the pair depends on "
            "the backend that takes the call (on a CPU its math backend, which takes 3-D inputs, refuses it; "
            "its fused kernel, which takes 4-D ones, applies both), so code relying on either silently "
            "changes with the path; build one boolean mask instead, e.g. mask & attnlib.causal_mask(n)"
        )
    batch, s, mask = check_attention(queries, keys, values, scale=scale, mask=mask)
    n_q, n_k = queries.shape[-2], keys.shape[-2]
    if mask is not None:
        mask = mask.broadcast_to((*mask.shape[:-1], n_k))  # a view, so that it can be sliced along the keys
    q = queries * s  # scale the n_q × d_k queries once instead of every block of scores: (q·s)·k = s(q·k)
    rows = torch.arange(n_q)[:, None]
    m = torch.full((*batch, n_q, 1), float("-inf"), dtype=queries.dtype)
    ell = torch.zeros((*batch, n_q, 1), dtype=queries.dtype)
    acc = torch.zeros((*batch, n_q, values.shape[-1]), dtype=queries.dtype)
    for start in range(0, n_k, block_size):
        stop = min(start + block_size, n_k)
        scores = q @ keys[..., start:stop, :].transpose(-2, -1)  # (..., n_q, b): the only scores held
        if mask is not None and mask.is_floating_point():
            scores = scores + mask[..., start:stop]  # additive: 0 = attend, -inf = hidden
        elif mask is not None:
            scores = scores.masked_fill(~mask[..., start:stop], float("-inf"))
        elif is_causal:
            scores = scores.masked_fill(torch.arange(start, stop) > rows, float("-inf"))  # key j > query i
        # the maximum is only a shift that cancels in acc / ℓ, so no gradient flows through it (as in
        # FlashAttention); that is also what lets the block be overwritten in place below
        m_new = torch.maximum(m, scores.detach().amax(dim=-1, keepdim=True))
        shift = m_new.nan_to_num(neginf=0.0)  # a query that has seen no visible key yet: shift by 0, not -inf
        correction = (m - shift).exp()  # e^(m − m'): 0 on the first block (m = −∞)
        p = scores.sub_(shift).exp_()  # e^(s − m') in place of s (no second n_q × b buffer); hidden: 0
        ell = ell * correction + p.sum(dim=-1, keepdim=True)
        acc = acc * correction + p @ values[..., start:stop, :]
        m = m_new
        yield OnlineState(start, stop, p, m, correction, ell, acc)


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
        key is an error (SDPA may silently give a row of zeros there).
    """
    blocks = online_softmax_blocks(
        queries, keys, values, mask=mask, scale=scale, is_causal=is_causal, block_size=block_size
    )
    (last,) = deque(blocks, maxlen=1)  # run every block (n_k ≥ 1, checked), keep only the final state
    return last.acc / last.ell  # ℓ > 0: every query sees at least one key (checked; causal: key 0)
