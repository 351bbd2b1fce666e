"""The steps as PyTorch modules: single-head :class:`SelfAttention` (lesson 09) and
:class:`MultiHeadAttention` (lesson 11), both built on :func:`attnlib.attention`."""

from __future__ import annotations

from types import SimpleNamespace
from typing import TYPE_CHECKING

import torch
from torch import Tensor, nn

from ._validate import AttentionInputError, check_positive_int, check_tensor, shape_str
from .steps import attention, attention_weights, trace

if TYPE_CHECKING:  # kv_cache.py needs no module of this one at run time
    from .kv_cache import KVCache

__all__ = ["MultiHeadAttention", "SelfAttention", "causal_mask", "combine_heads", "split_heads"]


def causal_mask(n_tokens: int, *, offset: int = 0) -> Tensor:
    """Boolean ``(n_tokens, offset + n_tokens)`` mask, True = may attend: query ``i`` sees keys ``0 … offset + i``.

    ``offset=0`` gives the square mask of lessons 09 and 11: token ``i`` sees tokens ``0 … i``. With
    ``offset`` earlier tokens already cached (generation, :mod:`attnlib.kv_cache`), the ``n_tokens``
    new queries sit at positions ``offset …`` and see every position up to their own. The one
    causal-mask builder of attnlib.

    attnlib's convention (shared with ``torch.nn.functional.scaled_dot_product_attention``);
    ``torch.nn.MultiheadAttention``'s ``attn_mask`` uses the opposite one (True = NOT allowed),
    so pass it ``~causal_mask(n)``.
    """
    check_positive_int("n_tokens", n_tokens)
    check_positive_int("offset", offset, zero=True)
    return torch.ones(n_tokens, offset + n_tokens, dtype=torch.bool).tril(diagonal=offset)


def _check_features(name: str, x: Tensor, expected: int, what: str) -> None:
    check_tensor(name, x, layout=f"(..., n_tokens, {what})")
    if x.shape[-1] != expected:
        raise AttentionInputError(
            f"{name} has {what}={x.shape[-1]} but the module expects {what}={expected} ({name} shape {shape_str(x)})"
        )


class SelfAttention(nn.Module):
    """Single-head self-attention: ``softmax(Q Kᵀ / sqrt(d_out)) V`` with ``Q, K, V = X W``.

    The three projections are bias-free ``nn.Linear`` layers, as in "Attention Is All You Need"
    and document 004. They are created in document 004's order — query, *value*, key — so that
    ``torch.manual_seed(42); SelfAttention(2)`` draws 004's weights (:func:`attnlib.examples.document_004_module`).
    Created in another order, the layers take other numbers from the stream and the output changes.

    Args:
        d_in: size of each input vector (004 calls it ``d_model``).
        d_out: size of queries, keys and values (default ``d_in``).
        scaled: divide the scores by ``sqrt(d_out)`` (True) or not (document 000's form).
        bias: add a bias to the projections.

    Shapes:
        ``x (..., n_tokens, d_in) -> context (..., n_tokens, d_out)``
    """

    def __init__(self, d_in: int = 2, d_out: int | None = None, *, scaled: bool = True, bias: bool = False):
        super().__init__()
        d_out = d_in if d_out is None else d_out
        self.d_in, self.d_out, self.scaled = d_in, d_out, scaled
        self.w_query = nn.Linear(d_in, d_out, bias=bias)
        self.w_value = nn.Linear(d_in, d_out, bias=bias)
        self.w_key = nn.Linear(d_in, d_out, bias=bias)

    def forward(self, x: Tensor, mask: Tensor | None = None) -> Tensor:
        """``x (..., n_tokens, d_in)`` → context ``(..., n_tokens, d_out)``; ``mask`` True = may attend."""
        _check_features("x", x, self.d_in, "d_in")
        return attention(self.w_query(x), self.w_key(x), self.w_value(x), scale=None if self.scaled else 1.0, mask=mask)

    @torch.no_grad()
    def intermediates(self, x: Tensor, mask: Tensor | None = None) -> SimpleNamespace:
        """Every intermediate matrix of :meth:`forward`, for checking it step by step.

        The same maths as :meth:`forward`, one step at a time (:func:`attnlib.steps.trace`); the two may
        differ in the last bit (``forward`` calls :func:`attnlib.attention`), so compare them with
        ``torch.allclose``.

        Returns a namespace with ``queries``, ``keys``, ``values`` ``(..., n, d_out)``, ``scores``,
        ``scaled_scores`` (``-inf`` where ``mask`` is False), ``weights`` ``(..., n, n)`` and
        ``context`` ``(..., n, d_out)``.
        """
        _check_features("x", x, self.d_in, "d_in")
        q, k, v = self.w_query(x), self.w_key(x), self.w_value(x)
        t = trace(q, k, v, scale=None if self.scaled else 1.0, mask=mask)
        return SimpleNamespace(
            queries=q,
            keys=k,
            values=v,
            scores=t.scores,
            scaled_scores=t.scaled_scores,
            weights=t.weights,
            context=t.context,
        )

    def extra_repr(self) -> str:
        return f"d_in={self.d_in}, d_out={self.d_out}, scaled={self.scaled}"


def split_heads(x: Tensor, num_heads: int) -> Tensor:
    """``(batch, n_tokens, d_model) -> (batch, num_heads, n_tokens, d_head)``, ``d_head = d_model / num_heads``."""
    *batch, n, d_model = x.shape
    if d_model % num_heads:
        raise AttentionInputError(f"d_model={d_model} is not divisible by num_heads={num_heads}")
    return x.reshape(*batch, n, num_heads, d_model // num_heads).transpose(-3, -2)


def combine_heads(x: Tensor) -> Tensor:
    """``(batch, num_heads, n_tokens, d_head) -> (batch, n_tokens, num_heads * d_head)``: concatenation."""
    *batch, h, n, d_head = x.shape
    return x.transpose(-3, -2).reshape(*batch, n, h * d_head)


class MultiHeadAttention(nn.Module):
    """Multi-head attention: ``num_heads`` scaled dot-product attentions side by side.

    Each head attends with its own ``d_head = d_model / num_heads`` slice of the projected
    queries, keys and values; the heads' contexts are concatenated and mixed by ``out_proj``.

    Args:
        d_model: size of the token vectors (``embed_dim`` in ``torch.nn.MultiheadAttention``).
        num_heads: number of heads; must divide ``d_model``.
        bias: biases in the four projections (torch's default is True).
        batch_first: inputs are ``(batch, n, d_model)`` if True, ``(n, batch, d_model)`` if False.

    Shapes:
        ``query (batch, n_q, d_model)``, ``key``/``value`` ``(batch, n_k, d_model)`` (default: ``query``,
        i.e. self-attention) → ``(batch, n_q, d_model)``; unbatched ``(n, d_model)`` also works.
        ``mask`` is boolean, True = may attend, broadcastable to ``(batch, num_heads, n_q, n_k)``.

    To switch a head off (lesson 14), :func:`attnlib.heads.ablated` hooks ``out_proj`` from outside.
    """

    def __init__(self, d_model: int, num_heads: int, *, bias: bool = True, batch_first: bool = True):
        super().__init__()
        check_positive_int("num_heads", num_heads)
        if d_model % num_heads:
            raise AttentionInputError(
                f"d_model={d_model} is not divisible by num_heads={num_heads}: every head needs "
                f"the same d_head = d_model / num_heads"
            )
        self.d_model, self.num_heads, self.d_head = d_model, num_heads, d_model // num_heads
        self.batch_first = batch_first
        self.w_query = nn.Linear(d_model, d_model, bias=bias)
        self.w_key = nn.Linear(d_model, d_model, bias=bias)
        self.w_value = nn.Linear(d_model, d_model, bias=bias)
        self.out_proj = nn.Linear(d_model, d_model, bias=bias)

    def forward(
        self,
        query: Tensor,
        key: Tensor | None = None,
        value: Tensor | None = None,
        *,
        mask: Tensor | None = None,
        return_weights: bool = False,
        cache: KVCache | None = None,
        layer: int = 0,
    ) -> Tensor | tuple[Tensor, Tensor]:
        """Attend; with ``return_weights=True`` also return the per-head weights ``(batch, heads, n_q, n_k)``.

        ``cache`` (a :class:`attnlib.kv_cache.KVCache`): the new keys and values ``(batch, heads, n_new,
        d_head)`` are appended to the ones cached for ``layer`` and the queries attend over all of them.
        """
        key = query if key is None else key
        value = key if value is None else value
        for name, t in (("query", query), ("key", key), ("value", value)):
            _check_features(name, t, self.d_model, "d_model")
            if t.dim() not in (2, 3):
                raise AttentionInputError(
                    f"{name} must be (batch, n, d_model) or (n, d_model), got shape {shape_str(t)}"
                )
        unbatched = query.dim() == 2
        if unbatched:
            query, key, value = query.unsqueeze(0), key.unsqueeze(0), value.unsqueeze(0)
        elif not self.batch_first:
            query, key, value = (t.transpose(0, 1) for t in (query, key, value))
        q = split_heads(self.w_query(query), self.num_heads)
        k = split_heads(self.w_key(key), self.num_heads)
        v = split_heads(self.w_value(value), self.num_heads)
        if cache is not None:
            k, v = cache.update(layer, k, v)
        weights = attention_weights(q, k, v, mask=mask)  # (batch, heads, n_q, n_k)
        heads = weights @ v  # attention(q, k, v, mask=mask), keeping the weights
        out = self.out_proj(combine_heads(heads))
        if unbatched:
            out, weights = out.squeeze(0), weights.squeeze(0)
        elif not self.batch_first:
            out = out.transpose(0, 1)
        return (out, weights) if return_weights else out

    @torch.no_grad()
    def intermediates(self, query: Tensor, *, mask: Tensor | None = None, scaled: bool = True) -> SimpleNamespace:
        """Every intermediate of self-attention on ``query`` (lesson 11), batch-first or unbatched.

        For ``query (batch, n, d_model)`` (or ``(n, d_model)``, then without the batch axis):
        ``queries``/``keys``/``values`` ``(batch, n, d_model)`` after the projections;
        ``queries_split``/``keys_split``/``values_split`` ``(batch, num_heads, n, d_head)``;
        ``weights`` ``(batch, num_heads, n, n)``; ``heads`` ``(batch, num_heads, n, d_head)``;
        ``concatenated`` ``(batch, n, d_model)``; ``output`` ``(batch, n, d_model)``.
        ``batch_first`` is ignored: the layout is always batch-first here. ``scaled=False`` drops
        the ``1/sqrt(d_head)`` (for comparison only; :meth:`forward` always scales).
        """
        _check_features("query", query, self.d_model, "d_model")
        if query.dim() not in (2, 3):
            raise AttentionInputError(
                f"query must be (batch, n, d_model) or (n, d_model), got shape {shape_str(query)}"
            )
        unbatched = query.dim() == 2
        x = query.unsqueeze(0) if unbatched else query
        q, k, v = self.w_query(x), self.w_key(x), self.w_value(x)
        qs, ks, vs = (split_heads(t, self.num_heads) for t in (q, k, v))
        steps = trace(qs, ks, vs, mask=mask, scale=None if scaled else 1.0)
        weights, heads = steps.weights, steps.context
        assert heads is not None  # trace() was given values
        concatenated = combine_heads(heads)
        output = self.out_proj(concatenated)
        out = SimpleNamespace(
            queries=q,
            keys=k,
            values=v,
            queries_split=qs,
            keys_split=ks,
            values_split=vs,
            weights=weights,
            heads=heads,
            concatenated=concatenated,
            output=output,
        )
        if unbatched:
            for name, value in vars(out).items():
                setattr(out, name, value.squeeze(0))
        return out

    @classmethod
    def from_torch(cls, m: nn.MultiheadAttention) -> MultiHeadAttention:
        """A copy of ``m``'s weights; in eval mode (no dropout) it gives ``m``'s output.

        Supports the usual configuration (same size for query, key and value, no ``add_bias_kv``,
        no ``add_zero_attn``); ``m.batch_first`` is kept.
        """
        if not isinstance(m, nn.MultiheadAttention):
            raise TypeError(f"from_torch needs a torch.nn.MultiheadAttention, got {type(m).__name__}")
        if m.in_proj_weight is None or m.bias_k is not None or m.add_zero_attn:  # None: kdim or vdim differs
            raise NotImplementedError(
                "from_torch supports kdim == vdim == embed_dim, add_bias_kv=False and add_zero_attn=False"
            )
        bias = m.in_proj_bias is not None
        new = cls(m.embed_dim, m.num_heads, bias=bias, batch_first=m.batch_first)
        with torch.no_grad():
            for i, lin in enumerate((new.w_query, new.w_key, new.w_value)):
                rows = slice(i * m.embed_dim, (i + 1) * m.embed_dim)
                lin.weight.copy_(m.in_proj_weight[rows])
                if bias:
                    lin.bias.copy_(m.in_proj_bias[rows])
            new.out_proj.weight.copy_(m.out_proj.weight)
            if bias:
                new.out_proj.bias.copy_(m.out_proj.bias)
        return new.to(m.in_proj_weight.dtype)

    def extra_repr(self) -> str:
        return (
            f"d_model={self.d_model}, num_heads={self.num_heads}, d_head={self.d_head}, batch_first={self.batch_first}"
        )
