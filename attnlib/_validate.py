"""Input checks shared by the steps and the modules.

Every check raises with a message that names the argument and its shape, so that a learner
sees "queries have d_k=5 but keys have d_k=3" instead of a bare broadcasting traceback.

Where each check runs: a public entry (:func:`attnlib.attention`, ``attention_weights``, ``trace``,
``tiled_attention``, the modules' ``forward``) checks its arguments once, values included
(:func:`check_attention`: no NaN or inf, the mask's contents, the scale). A step function checks
only the types and shapes of its own arguments (``finite=False``, ``contents=False``: no pass over
the data), so that a learner calling one step alone still reads a clear message, and a composition
does not check the same tensor twice. The one exception is :func:`check_scores`, the softmax's
check: one pass over the row maxima, because a NaN, a ``+inf`` (``Q Kᵀ`` of finite queries and keys
can overflow) or a row with every key hidden would otherwise come out as a silent row of NaN.
"""

from __future__ import annotations

import itertools
import math
import numbers

import torch
from torch import Tensor


class AttentionInputError(ValueError):
    """Raised when the arguments of an attention step do not fit together."""


def check_positive_int(name: str, value: object, *, zero: bool = False) -> int:
    """``value`` if it is an ``int`` >= 1 (>= 0 with ``zero=True``; ``True`` is not a size), else an error.

    The one home of this check: sizes, counts, block sizes. ``AttentionInputError`` is a ``ValueError``.
    """
    if isinstance(value, bool) or not isinstance(value, int) or value < (0 if zero else 1):
        kind = "a non-negative" if zero else "a positive"
        raise AttentionInputError(f"{name} must be {kind} integer, got {value!r}")
    return value


def shape_str(t: Tensor | tuple[int, ...] | torch.Size) -> str:
    """``(3, 4)`` for a tensor of shape ``torch.Size([3, 4])``."""
    dims = tuple(t.shape) if isinstance(t, Tensor) else tuple(t)
    return "(" + ", ".join(str(d) for d in dims) + ("," if len(dims) == 1 else "") + ")"


def check_scores(scores: object, dim: int) -> Tensor:
    """``scores`` if it is a floating-point tensor whose every row along ``dim`` has something to
    normalise: no NaN or ``+inf``, not every entry ``-inf`` (one pass: the rows' maxima)."""
    if not isinstance(scores, Tensor) or not scores.is_floating_point():
        got = scores.dtype if isinstance(scores, Tensor) else type(scores).__name__
        raise TypeError(f"scores must be a floating-point tensor, got {got}")
    if scores.dim() == 0:
        raise AttentionInputError(f"scores must have an axis to normalise along, got shape {shape_str(scores)}")
    if scores.numel() == 0:
        return scores
    maxima = scores.amax(dim=dim)  # NaN if the row holds a NaN, +inf if it holds +inf, -inf if all are -inf
    if bool(torch.isnan(maxima).any()) or bool((maxima == float("inf")).any()):
        raise AttentionInputError(f"scores contain NaN or +inf (shape {shape_str(scores)})")
    if bool((maxima == float("-inf")).any()):
        raise AttentionInputError(
            f"every score along dim={dim} is -inf in some row (shape {shape_str(scores)}): "
            "there is nothing to normalise"
        )
    return scores


def check_tensor(name: str, t: object, *, min_rank: int = 2, layout: str = "", finite: bool = True) -> Tensor:
    """Check that ``t`` is a floating-point tensor of rank >= ``min_rank``, and finite unless ``finite=False``."""
    if not isinstance(t, Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
    if not t.is_floating_point():
        raise TypeError(
            f"{name} must be a floating-point tensor, got dtype {t.dtype} with shape "
            f"{shape_str(t)}; convert it with {name}.float()"
        )
    if t.dim() < min_rank:
        want = f" {layout}" if layout else ""
        raise AttentionInputError(f"{name} must have at least {min_rank} dimensions{want}, got shape {shape_str(t)}")
    if not finite:
        return t
    # a NaN or an inf makes the sum NaN or inf, so one cheap reduction clears finite tensors;
    # only when it fails (a NaN/inf, or a sum of huge finite values overflowing) look closer
    if not math.isfinite(float(t.detach().sum())) and not bool(torch.isfinite(t).all()):
        bad = int((~torch.isfinite(t)).sum())
        raise AttentionInputError(f"{name} contains {bad} NaN or infinite value(s) (shape {shape_str(t)})")
    return t


def check_same_dtype(**tensors: Tensor) -> None:
    items = list(tensors.items())
    first_name, first = items[0]
    for name, t in items[1:]:
        if t.dtype != first.dtype:
            raise TypeError(
                f"{first_name} are {first.dtype} but {name} are {t.dtype}; convert them to one floating-point dtype"
            )


def broadcast(*shapes: tuple[int, ...] | torch.Size) -> tuple[int, ...]:
    """The shape ``shapes`` broadcast to, by torch's rules (a ``ValueError`` if they do not).

    Written out because ``torch.broadcast_shapes`` imports torch's symbolic-shape machinery (sympy) on
    its first call, seconds that every lesson's first attention call would otherwise wait.
    """
    result = []
    for sizes in itertools.zip_longest(*(reversed(tuple(s)) for s in shapes), fillvalue=1):
        others = {size for size in sizes if size != 1}
        if len(others) > 1:
            raise ValueError(f"shapes {[tuple(s) for s in shapes]} do not broadcast")
        result.append(others.pop() if others else 1)
    return tuple(reversed(result))


def check_batch_dims(**tensors: Tensor) -> tuple[int, ...]:
    """The broadcast batch shape of tensors laid out as ``(..., n, d)``."""
    try:
        return broadcast(*(t.shape[:-2] for t in tensors.values()))
    except ValueError:
        desc = ", ".join(f"{n} {shape_str(t)}" for n, t in tensors.items())
        raise AttentionInputError(f"the batch dimensions (all but the last two) do not broadcast: {desc}") from None


def check_qkv(queries: Tensor, keys: Tensor, values: Tensor | None, *, finite: bool = True) -> tuple[int, ...]:
    """Validate ``(..., n_q, d_k)``, ``(..., n_k, d_k)``, ``(..., n_k, d_v)``; return batch shape."""
    check_tensor("queries", queries, layout="(..., n_q, d_k)", finite=finite)
    check_tensor("keys", keys, layout="(..., n_k, d_k)", finite=finite)
    if queries.shape[-1] != keys.shape[-1]:
        raise AttentionInputError(
            f"queries have d_k={queries.shape[-1]} but keys have d_k={keys.shape[-1]} "
            f"(queries {shape_str(queries)}, keys {shape_str(keys)}); "
            "a dot product needs vectors of the same length"
        )
    if keys.shape[-2] == 0:
        raise AttentionInputError(f"keys have n_k=0 (keys {shape_str(keys)}): a query needs at least one key")
    tensors = {"queries": queries, "keys": keys}
    if values is not None:
        check_tensor("values", values, layout="(..., n_k, d_v)", finite=finite)
        if values.shape[-2] != keys.shape[-2]:
            raise AttentionInputError(
                f"keys have n_k={keys.shape[-2]} but values have n_k={values.shape[-2]} "
                f"(keys {shape_str(keys)}, values {shape_str(values)}); "
                "every key needs exactly one value"
            )
        tensors["values"] = values
    check_same_dtype(**tensors)
    return check_batch_dims(**tensors)


def check_scale(scale: float | None, d_k: int) -> float:
    """Resolve ``scale`` (default ``1/sqrt(d_k)``) and check that it is positive and finite."""
    if scale is None:
        return 1.0 / math.sqrt(d_k)
    if isinstance(scale, Tensor):
        if scale.numel() != 1:
            raise AttentionInputError(f"scale must be a single number, got shape {shape_str(scale)}")
        scale = float(scale)
    if isinstance(scale, bool) or not isinstance(scale, numbers.Real):
        raise TypeError(f"scale must be a number, got {type(scale).__name__}")
    if not math.isfinite(scale) or scale <= 0:
        raise AttentionInputError(f"scale must be a positive finite number, got {scale}")
    return float(scale)


def check_mask(
    mask: Tensor | None,
    scores_shape: tuple[int, ...],
    *,
    dtype: torch.dtype | None = None,
    contents: bool = True,
    extra_batch: bool = False,
) -> Tensor | None:
    """Check a mask against scores of shape ``(..., n_q, n_k)``; return it unchanged.

    Two kinds, as in torch's SDPA: boolean (True = may attend) or additive (floating point, added to
    the scores: 0 = attend, ``-inf`` = hidden, any other finite number a bias). A floating-point mask
    of only 0s and 1s is refused: it is almost always a keep-mask meant as boolean, and adding it
    would hide nothing. A query whose every key is hidden is refused too (its softmax is 0/0).
    ``contents=False`` checks the type, dtype and shape only; ``extra_batch=True`` lets the mask add
    batch dimensions the scores lack (its last two still fit ``(n_q, n_k)``).
    """
    if mask is None:
        return None
    if not isinstance(mask, Tensor):
        raise TypeError(f"mask must be a torch.Tensor of dtype torch.bool, got {type(mask).__name__}")
    additive = mask.is_floating_point()
    if not additive and mask.dtype != torch.bool:
        raise TypeError(
            f"mask must have dtype torch.bool (True = may attend), got {mask.dtype} with shape "
            f"{shape_str(mask)}; build it with a comparison, e.g. mask = lengths > positions"
        )
    if additive and contents and bool(((mask == 0) | (mask == 1)).all()) and bool((mask == 1).any()):
        raise TypeError(
            f"mask must have dtype torch.bool (True = may attend), got {mask.dtype} with shape "
            f"{shape_str(mask)} holding only 0s and 1s: a floating-point mask is added to the scores, so "
            "this one would hide nothing. Use mask.bool(), or an additive mask of 0 (attend) and -inf (hidden)"
        )
    if additive and dtype is not None and mask.dtype != dtype:
        raise TypeError(f"an additive mask must have the scores' dtype {dtype}, got {mask.dtype}; convert it")
    if additive and contents and bool((torch.isnan(mask) | (mask == float("inf"))).any()):
        raise AttentionInputError("an additive mask may hold finite numbers and -inf only, got NaN or +inf")
    try:
        full: tuple[int, ...] | None = broadcast(mask.shape, tuple(scores_shape))
    except ValueError:
        full = None
    if full is None or (full[-2:] != tuple(scores_shape[-2:]) if extra_batch else full != tuple(scores_shape)):
        raise AttentionInputError(
            f"mask of shape {shape_str(mask)} does not broadcast to the scores' shape "
            f"(..., n_q, n_k) = {shape_str(scores_shape)}"
        )
    if not contents:
        return mask
    visible = mask > float("-inf") if additive else mask
    hidden = ~visible.any(dim=-1)
    if bool(hidden.any()):
        where = tuple(int(i) for i in hidden.nonzero()[0])
        raise AttentionInputError(
            f"mask hides every key from at least one query (first at mask index {where}, "
            f"mask shape {shape_str(mask)}): its softmax would divide 0 by 0"
        )
    return mask


def check_attention(
    queries: Tensor, keys: Tensor, values: Tensor | None, *, scale: float | None, mask: Tensor | None
) -> tuple[tuple[int, ...], float, Tensor | None]:
    """Every check of one attention call, run once at its entry: ``(batch, scale, mask)``.

    ``queries (..., n_q, d_k)``, ``keys (..., n_k, d_k)``, ``values (..., n_k, d_v)`` (optional) fit
    together and are finite; ``scale`` resolved (default ``1/sqrt(d_k)``); ``mask`` checked against
    the scores' full shape ``(*batch, n_q, n_k)``, the batch including the values' dimensions.
    """
    batch = check_qkv(queries, keys, values)
    scale = check_scale(scale, queries.shape[-1])
    mask = check_mask(mask, (*batch, queries.shape[-2], keys.shape[-2]), dtype=queries.dtype)
    return batch, scale, mask
