"""Positions: what self-attention cannot see by itself, and three ways to tell it (lesson 12).

Self-attention treats its inputs as a *set*: permute the tokens and the outputs are permuted the
same way (:func:`permutation_equivariance_gap` measures it). To give it word order, either add a
position vector to each input — fixed sinusoids (:func:`sinusoidal_encoding`,
:class:`SinusoidalPositions`) or a learned table (:class:`LearnedPositions`) — or rotate the
queries and keys by an angle that grows with the position (:func:`apply_rope`), so that a score
depends on how far apart two tokens are.

Shapes: ``n_tokens`` positions, vectors of size ``d_model`` (``d`` for RoPE, which acts on
queries and keys of size ``d_k``); ``...`` are optional batch dimensions.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor, nn

from ._validate import AttentionInputError, check_positive_int, check_tensor, shape_str

__all__ = [
    "LearnedPositions",
    "SinusoidalPositions",
    "apply_rope",
    "permutation_equivariance_gap",
    "rope_angles",
    "sinusoidal_encoding",
]


def _check_base(base: float) -> float:
    if isinstance(base, bool) or not isinstance(base, int | float) or not base > 1:
        raise AttentionInputError(f"base must be a number greater than 1, got {base!r}")
    return float(base)


def sinusoidal_encoding(n_tokens: int, d_model: int, *, base: float = 10000.0) -> Tensor:
    """The sinusoidal position encodings of "Attention Is All You Need": ``P`` of shape ``(n_tokens, d_model)``.

    ``P[pos, 2c] = sin(pos · θ_c)`` and ``P[pos, 2c + 1] = cos(pos · θ_c)`` with the frequency
    ``θ_c = base^(−2c / d_model)``: column pair ``c`` turns at its own speed, the first pair fastest.
    Because ``sin a sin b + cos a cos b = cos(a − b)``, the dot product ``P[i] · P[j]`` depends only
    on ``i − j``. An odd ``d_model`` keeps the sine of its last pair.
    """
    check_positive_int("n_tokens", n_tokens)
    check_positive_int("d_model", d_model)
    base = _check_base(base)
    positions = torch.arange(n_tokens, dtype=torch.float64)[:, None]
    angles = positions * base ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)  # (n, ⌈d/2⌉)
    encoding = torch.empty(n_tokens, d_model, dtype=torch.float64)
    encoding[:, 0::2] = angles.sin()
    encoding[:, 1::2] = angles.cos()[:, : d_model // 2]
    return encoding.to(torch.float32)


def _check_positions(x: Tensor, offset: int, max_len: int, d_model: int) -> None:
    check_tensor("x", x, layout="(..., n_tokens, d_model)")
    if x.shape[-1] != d_model:
        raise AttentionInputError(
            f"x has d_model={x.shape[-1]} but the positions have d_model={d_model} (x {shape_str(x)})"
        )
    if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
        raise AttentionInputError(f"offset must be a non-negative integer, got {offset!r}")
    if offset + x.shape[-2] > max_len:
        raise AttentionInputError(
            f"positions {offset}…{offset + x.shape[-2] - 1} do not fit max_len={max_len} (x {shape_str(x)})"
        )


class SinusoidalPositions(nn.Module):
    """Adds :func:`sinusoidal_encoding` to its input: ``x (..., n, d_model) → x + P[offset : offset + n]``.

    Nothing is learned; ``offset`` is the position of the first token (used with a KV cache).
    """

    encoding: Tensor  # (max_len, d_model), a buffer: moves with the module, is not a parameter

    def __init__(self, max_len: int, d_model: int, *, base: float = 10000.0) -> None:
        super().__init__()
        self.max_len, self.d_model = check_positive_int("max_len", max_len), check_positive_int("d_model", d_model)
        self.register_buffer("encoding", sinusoidal_encoding(max_len, d_model, base=base), persistent=False)

    def forward(self, x: Tensor, offset: int = 0) -> Tensor:
        _check_positions(x, offset, self.max_len, self.d_model)
        return x + self.encoding[offset : offset + x.shape[-2]].to(x.dtype)


class LearnedPositions(nn.Module):
    """Adds a learned vector per position: ``x (..., n, d_model) → x + table[offset : offset + n]``.

    The table ``(max_len, d_model)`` starts small and random (N(0, 0.02²), as BERT's position table does;
    GPT-2's ``wpe`` draws at 0.01) and is trained with the rest of the model; positions beyond ``max_len``
    do not exist.
    """

    def __init__(self, max_len: int, d_model: int) -> None:
        super().__init__()
        self.max_len, self.d_model = check_positive_int("max_len", max_len), check_positive_int("d_model", d_model)
        self.table = nn.Parameter(torch.randn(max_len, d_model) * 0.02)

    def forward(self, x: Tensor, offset: int = 0) -> Tensor:
        _check_positions(x, offset, self.max_len, self.d_model)
        return x + self.table[offset : offset + x.shape[-2]]


def rope_angles(n_tokens: int, d: int, *, offset: int = 0, base: float = 10000.0) -> Tensor:
    """The rotation angles of RoPE: ``(n_tokens, d / 2)``, angle ``pos · θ_c`` with ``θ_c = base^(−2c/d)``."""
    check_positive_int("n_tokens", n_tokens)
    check_positive_int("d", d)
    if d % 2:
        raise AttentionInputError(f"RoPE rotates pairs of features: d must be even, got d={d}")
    base = _check_base(base)
    positions = torch.arange(offset, offset + n_tokens, dtype=torch.float64)[:, None]
    return positions * base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)


def apply_rope(x: Tensor, *, offset: int = 0, base: float = 10000.0) -> Tensor:
    """Rotary position embedding: rotate each feature pair ``(x_2c, x_2c+1)`` of token ``pos`` by ``pos · θ_c``.

    Apply it to the queries and the keys (not the values): a rotation keeps lengths, and the dot
    product of a query rotated by ``m θ`` with a key rotated by ``n θ`` depends only on ``m − n``,
    so the scores see relative positions.

    Args:
        x: ``(..., n_tokens, d)`` with even ``d`` (queries or keys).
        offset: position of the first token (a KV cache's length).
        base: the wavelength scale; ``θ_c = base^(−2c/d)``.

    Returns:
        the rotated tensor, same shape and dtype.
    """
    check_tensor("x", x, layout="(..., n_tokens, d)")
    if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
        raise AttentionInputError(f"offset must be a non-negative integer, got {offset!r}")
    angles = rope_angles(x.shape[-2], x.shape[-1], offset=offset, base=base)
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
    even, odd = x[..., 0::2], x[..., 1::2]
    rotated = torch.stack((even * cos - odd * sin, even * sin + odd * cos), dim=-1)
    return rotated.flatten(-2)


def permutation_equivariance_gap(
    function: Callable[[Tensor], Tensor], inputs: Tensor, permutation: Tensor | list[int]
) -> float:
    """``max |Attn(P X) − P Attn(X)|``: how far ``function`` is from permutation-equivariant on ``inputs``.

    Args:
        function: maps ``(n_tokens, d_in)`` to ``(n_tokens, d_out)``, e.g. a self-attention layer.
        inputs: ``X`` ``(n_tokens, d_in)``.
        permutation: a reordering of ``0 … n_tokens − 1``.

    Returns:
        0 (up to rounding) for self-attention without positions; clearly positive with them.
    """
    order = torch.as_tensor(permutation)
    if sorted(order.tolist()) != list(range(inputs.shape[-2])):
        raise AttentionInputError(
            f"permutation must reorder 0…{inputs.shape[-2] - 1}, got {order.tolist()} (inputs {shape_str(inputs)})"
        )
    with torch.no_grad():
        return float((function(inputs[order]) - function(inputs)[order]).abs().max())
