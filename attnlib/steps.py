"""The eight steps of self-attention, one function per step, and their composition.

Shapes use the lessons' names: ``n_tokens`` inputs of size ``d_in``; queries and keys of size
``d_k``; values of size ``d_v``; ``n_q`` queries attend over ``n_k`` keys. Leading ``...`` are
optional batch dimensions (a batch of sentences, several heads).

==============  ==============================  ==========================================
step            function                        result shape
==============  ==============================  ==========================================
1 inputs        :func:`prepare_inputs`          ``(n_tokens, d_in)``
2 projections   :func:`init_projections`        3 × ``(d_in, d_k)`` / ``(d_in, d_v)``
3 Q, K, V       :func:`derive_qkv`              ``(n_tokens, d_k)`` ×2, ``(n_tokens, d_v)``
4 scores        :func:`score`                   ``(..., n_q, n_k)``
5 softmax       :func:`softmax`                 ``(..., n_q, n_k)``, rows sum to 1
6 weighting     :func:`weight_values`           ``(..., n_q, n_k, d_v)``
7 summing       :func:`sum_weighted_values`     ``(..., n_q, d_v)``
8 scaling       :func:`scale_scores`            ``(..., n_q, n_k)``
==============  ==============================  ==========================================

One composition runs steps 4, 8 and 5 (scores, scaling, masking, softmax), checking every argument
once at the door; three entries share it. :func:`attention_weights` stops after the softmax;
:func:`attention` then takes ``A V`` (steps 6 and 7 fused into one matrix product, the same sum
without materialising the ``(n_q, n_k, d_v)`` grid); :func:`trace` runs steps 6 and 7 one at a time
and keeps every intermediate (the modules' ``intermediates``, the linked explorer and lesson 08 use it).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

import torch
from torch import Tensor

from ._validate import (
    AttentionInputError,
    check_attention,
    check_mask,
    check_positive_int,
    check_qkv,
    check_scale,
    check_scores,
    check_tensor,
    shape_str,
)

__all__ = [
    "QKV",
    "Projections",
    "Trace",
    "attention",
    "attention_weights",
    "derive_qkv",
    "init_projections",
    "mask_scores",
    "prepare_inputs",
    "project",
    "scale_scores",
    "score",
    "softmax",
    "sum_weighted_values",
    "trace",
    "weight_values",
]


# ---------------------------------------------------------------- step 1: inputs
def prepare_inputs(rows: Sequence[Sequence[float]] | Tensor) -> Tensor:
    """Step 1 — stack the input vectors as the rows of a float32 matrix.

    Args:
        rows: one vector per token, e.g. ``[[1, 0, 1, 0], [0, 2, 0, 2]]``.

    Returns:
        ``X`` of shape ``(n_tokens, d_in)``, dtype float32.
    """
    x = rows.detach().clone() if isinstance(rows, Tensor) else torch.tensor(rows)
    if x.dim() != 2:
        raise AttentionInputError(
            f"inputs must be a matrix (n_tokens, d_in): one row per token, got shape {shape_str(x)}"
        )
    if x.shape[0] == 0 or x.shape[1] == 0:
        raise AttentionInputError(f"inputs must have at least one token and one feature, got {shape_str(x)}")
    x = x.to(torch.float32)
    check_tensor("inputs", x)
    return x


# ---------------------------------------------------------------- step 2: projections
class Projections(NamedTuple):
    """The three projection matrices: ``w_query``, ``w_key`` ``(d_in, d_k)``, ``w_value`` ``(d_in, d_v)``."""

    w_query: Tensor
    w_key: Tensor
    w_value: Tensor


def init_projections(d_in: int, d_k: int, d_v: int | None = None, *, seed: int = 123) -> Projections:
    """Step 2 — draw the three projections from U[0, 1), reproducibly.

    The documents draw with ``torch.rand`` after ``torch.manual_seed``; a private generator does
    the same without touching the global random state.

    Args:
        d_in: size of each input vector.
        d_k: size of queries and keys (they meet in a dot product, so they share it).
        d_v: size of values (defaults to ``d_k``); the outputs will have this size.
        seed: seed of the generator; the same seed gives the same weights.

    Returns:
        ``Projections(w_query (d_in, d_k), w_key (d_in, d_k), w_value (d_in, d_v))``.
    """
    d_v = d_k if d_v is None else d_v
    for name, value in (("d_in", d_in), ("d_k", d_k), ("d_v", d_v)):
        check_positive_int(name, value)
    gen = torch.Generator().manual_seed(seed)
    return Projections(
        torch.rand(d_in, d_k, generator=gen),
        torch.rand(d_in, d_k, generator=gen),
        torch.rand(d_in, d_v, generator=gen),
    )


# ---------------------------------------------------------------- step 3: Q, K, V
class QKV(NamedTuple):
    """Queries ``(n_tokens, d_k)``, keys ``(n_tokens, d_k)`` and values ``(n_tokens, d_v)``."""

    queries: Tensor
    keys: Tensor
    values: Tensor


def project(inputs: Tensor, weight: Tensor, *, name: str = "weight") -> Tensor:
    """``inputs @ weight``: ``(..., n_tokens, d_in) @ (d_in, d_out) -> (..., n_tokens, d_out)``."""
    check_tensor("inputs", inputs, layout="(..., n_tokens, d_in)")
    check_tensor(name, weight, layout="(d_in, d_out)")
    if weight.dim() != 2:
        raise AttentionInputError(f"{name} must be a matrix (d_in, d_out), got shape {shape_str(weight)}")
    if inputs.shape[-1] != weight.shape[0]:
        raise AttentionInputError(
            f"inputs have d_in={inputs.shape[-1]} but {name} expects d_in={weight.shape[0]} "
            f"(inputs {shape_str(inputs)}, {name} {shape_str(weight)})"
        )
    return inputs @ weight


def derive_qkv(inputs: Tensor, w_query: Tensor, w_key: Tensor, w_value: Tensor) -> QKV:
    """Step 3 — project every input to its query, key and value.

    Args:
        inputs: ``X``, shape ``(n_tokens, d_in)`` (or ``(..., n_tokens, d_in)``).
        w_query, w_key: ``(d_in, d_k)``; w_value: ``(d_in, d_v)``.

    Returns:
        ``QKV(queries = X W_q, keys = X W_k, values = X W_v)``.
    """
    if w_query.shape[-1] != w_key.shape[-1]:
        raise AttentionInputError(
            f"w_query gives d_k={w_query.shape[-1]} but w_key gives d_k={w_key.shape[-1]} "
            f"(w_query {shape_str(w_query)}, w_key {shape_str(w_key)}); queries and keys must match"
        )
    return QKV(
        project(inputs, w_query, name="w_query"),
        project(inputs, w_key, name="w_key"),
        project(inputs, w_value, name="w_value"),
    )


# ---------------------------------------------------------------- step 4: scores
def score(queries: Tensor, keys: Tensor) -> Tensor:
    """Step 4 — dot product of every query with every key: ``Q Kᵀ``.

    Args:
        queries: ``(..., n_q, d_k)``.
        keys: ``(..., n_k, d_k)``.

    Returns:
        scores ``(..., n_q, n_k)``; entry ``[i, j]`` is ``q_i · k_j``.
    """
    check_qkv(queries, keys, None, finite=False)
    return queries @ keys.transpose(-2, -1)


# ---------------------------------------------------------------- step 5: softmax
def softmax(scores: Tensor, dim: int = -1) -> Tensor:
    """Step 5 — numerically stable softmax, written out.

    ``softmax(s)_j = exp(s_j - max s) / sum_l exp(s_l - max s)``. Subtracting the row maximum
    changes nothing mathematically (it cancels) but keeps every ``exp`` in ``(0, 1]``, so scores
    of ±1e4 neither overflow to inf nor underflow to an all-zero row.

    Args:
        scores: any shape; ``dim`` is normalised (the keys' axis, ``-1``, for attention).

    Returns:
        weights of the same shape, non-negative, summing to 1 along ``dim``. Entries of ``-inf``
        (masked keys) get weight exactly 0.
    """
    check_scores(scores, dim)  # a float tensor; no NaN, no +inf, no row with every key hidden
    exp = (scores - scores.amax(dim=dim, keepdim=True)).exp()  # every exponent ≤ 0: nothing overflows
    return exp / exp.sum(dim=dim, keepdim=True)


# ---------------------------------------------------------------- step 6: weighting
def weight_values(weights: Tensor, values: Tensor) -> Tensor:
    """Step 6 — multiply each value by its attention weight: ``α_ij · v_j``.

    Args:
        weights: ``(..., n_q, n_k)``, rows from :func:`softmax`.
        values: ``(..., n_k, d_v)``.

    Returns:
        weighted values ``(..., n_q, n_k, d_v)``: entry ``[i, j]`` is ``weights[i, j] * values[j]``.
    """
    check_tensor("weights", weights, finite=False)
    check_tensor("values", values, layout="(..., n_k, d_v)", finite=False)
    if weights.shape[-1] != values.shape[-2]:
        raise AttentionInputError(
            f"weights have n_k={weights.shape[-1]} but values have n_k={values.shape[-2]} "
            f"(weights {shape_str(weights)}, values {shape_str(values)})"
        )
    return weights.unsqueeze(-1) * values.unsqueeze(-3)


# ---------------------------------------------------------------- step 7: summing
def sum_weighted_values(weighted_values: Tensor) -> Tensor:
    """Step 7 — add the weighted values of each query: ``z_i = Σ_j α_ij v_j``.

    Args:
        weighted_values: ``(..., n_q, n_k, d_v)`` from :func:`weight_values`.

    Returns:
        context ``(..., n_q, d_v)``; equal to ``weights @ values``.
    """
    check_tensor("weighted_values", weighted_values, min_rank=3, layout="(..., n_q, n_k, d_v)", finite=False)
    return weighted_values.sum(dim=-2)


# ---------------------------------------------------------------- step 8: scaling
def scale_scores(scores: Tensor, d_k: int | None = None, *, scale: float | None = None) -> Tensor:
    """Step 8 — divide the scores by ``sqrt(d_k)`` (or multiply by an explicit ``scale``).

    A dot product of two random vectors with unit-variance entries has variance ``d_k``;
    dividing by ``sqrt(d_k)`` brings it back to 1, so the softmax does not saturate.

    Args:
        scores: ``(..., n_q, n_k)``.
        d_k: size of the queries and keys; used when ``scale`` is not given.
        scale: multiply by this instead (must be positive).

    Returns:
        scaled scores, same shape.
    """
    check_tensor("scores", scores, finite=False)
    if scale is None:
        scale = 1.0 / math.sqrt(check_positive_int("d_k", d_k))  # d_k is needed when scale is not given
    return scores * check_scale(scale, 1)


# ---------------------------------------------------------------- masking (lesson 09)
def mask_scores(scores: Tensor, mask: Tensor | None) -> Tensor:
    """Hide keys: every score where ``mask`` is False becomes ``-inf``, so the softmax gives it weight 0.

    Masking happens after scaling and before the softmax (masking after it would break the rows'
    sum of 1; masking with 0 would still give the key weight).

    Args:
        scores: ``(..., n_q, n_k)``.
        mask: broadcastable with ``(..., n_q, n_k)``; ``None`` hides nothing. Boolean: True = may
            attend, False → ``-inf``. Floating point (additive, as in torch's SDPA): added to the
            scores, ``0`` = attend, ``-inf`` = hidden. Its type and shape are checked here, its
            contents (a query with every key hidden, a 0/1 float mask) by :func:`attention` and
            :func:`trace`.

    Returns:
        masked scores, the shape of ``scores`` broadcast with ``mask`` (a mask may add batch dimensions).
    """
    check_tensor("scores", scores, finite=False)
    mask = check_mask(mask, scores.shape, dtype=scores.dtype, contents=False, extra_batch=True)
    if mask is None:
        return scores
    return scores + mask if mask.is_floating_point() else scores.masked_fill(~mask, float("-inf"))


# ---------------------------------------------------------------- the whole
def attention_weights(
    queries: Tensor,
    keys: Tensor,
    values: Tensor | None = None,
    *,
    scale: float | None = None,
    mask: Tensor | None = None,
) -> Tensor:
    """Steps 4, 8 and 5 — ``softmax(mask(scale · Q Kᵀ))``: the weights ``A``.

    Args:
        queries: ``(..., n_q, d_k)``.
        keys: ``(..., n_k, d_k)``.
        values: ``(..., n_k, d_v)``, optional; only checked (and its batch dimensions used), so that
            the call mirrors :func:`attention`.
        scale: factor on the scores; default ``1/sqrt(d_k)``; ``1.0`` gives the unscaled form.
        mask: boolean (True = may attend) or additive (0 / ``-inf``), broadcastable to ``(..., n_q, n_k)``.

    Returns:
        weights ``(..., n_q, n_k)``; each row sums to 1.
    """
    return _weights(queries, keys, values, scale=scale, mask=mask).weights


def attention(
    queries: Tensor,
    keys: Tensor,
    values: Tensor,
    *,
    scale: float | None = None,
    mask: Tensor | None = None,
) -> Tensor:
    """Scaled dot-product attention, read as the formula: ``softmax(mask(Q Kᵀ / √d_k)) V``.

    The steps in the order they run: scores (step 4), scaling (step 8), masking, softmax (step 5),
    then the weighted sum — steps 6 and 7 in one matrix product, ``A V``, which is the same sum
    ``z_i = Σ_j α_ij v_j`` without building the ``(n_q, n_k, d_v)`` grid of weighted values.
    It agrees with ``torch.nn.functional.scaled_dot_product_attention`` (whose boolean mask has
    the same convention, True = may attend). The memory-lean path is
    :func:`attnlib.tiled_attention`; this one is the one to read.

    Args:
        queries: ``(..., n_q, d_k)``.
        keys: ``(..., n_k, d_k)``.
        values: ``(..., n_k, d_v)``.
        scale: factor on the scores; default ``1/sqrt(d_k)``; ``1.0`` gives document 000's
            unscaled form.
        mask: boolean (True = may attend) or additive (added to the scores: 0 = attend, ``-inf`` =
            hidden), broadcastable to ``(..., n_q, n_k)``. A query that may attend to no key is an
            error, not an output: its softmax is 0/0 (``torch.softmax`` gives a row of NaN, SDPA may
            silently give a row of zeros).

    Returns:
        context ``Z`` ``(..., n_q, d_v)``.
    """
    weights = attention_weights(queries, keys, values, scale=scale, mask=mask)
    return weights @ values  # steps 6 and 7: z_i = Σ_j α_ij v_j


def _weights(
    queries: Tensor, keys: Tensor, values: Tensor | None, *, scale: float | None, mask: Tensor | None
) -> Trace:
    """The one composition of steps 4, 8 and 5 (with the mask) that :func:`attention_weights`,
    :func:`attention` and :func:`trace` share; ``weighted_values`` and ``context`` are left ``None``."""
    _, scale, mask = check_attention(queries, keys, values, scale=scale, mask=mask)  # every argument, once
    scores = score(queries, keys)  # step 4: S = Q Kᵀ
    scaled_scores = scale_scores(scores, scale=scale)  # step 8: S / √d_k
    scaled_scores = mask_scores(scaled_scores, mask)  # hidden keys → -inf (lesson 09)
    weights = softmax(scaled_scores)  # step 5: each row sums to 1
    return Trace(scores, scaled_scores, weights, None, None)


class Trace(NamedTuple):
    """Every intermediate of one attention call, from :func:`trace`.

    ``scores`` ``(..., n_q, n_k)`` = ``Q Kᵀ``; ``scaled_scores`` the same shape after scaling and
    masking (``-inf`` where a key is hidden); ``weights`` their softmax; ``weighted_values``
    ``(..., n_q, n_k, d_v)`` and ``context`` ``(..., n_q, d_v)``, both ``None`` without values.
    """

    scores: Tensor
    scaled_scores: Tensor
    weights: Tensor
    weighted_values: Tensor | None
    context: Tensor | None


def trace(
    queries: Tensor,
    keys: Tensor,
    values: Tensor | None = None,
    *,
    scale: float | None = None,
    mask: Tensor | None = None,
) -> Trace:
    """:func:`attention` one step at a time, keeping every intermediate (for lessons and checks).

    Arguments as for :func:`attention`; ``values`` is optional. Steps 6 and 7 run as two steps here
    (the ``(..., n_q, n_k, d_v)`` grid is built), so ``context`` may differ from :func:`attention`'s
    in the last bit: compare them with ``torch.allclose``.
    """
    steps = _weights(queries, keys, values, scale=scale, mask=mask)
    if values is None:
        return steps
    weighted_values = weight_values(steps.weights, values)  # step 6: α_ij v_j
    return steps._replace(weighted_values=weighted_values, context=sum_weighted_values(weighted_values))  # step 7
