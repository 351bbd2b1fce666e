"""How heads compose, read from the weights, and activation patching of one head (lesson 18).

A head reads the residual stream and writes back into it. With attnlib's ``nn.Linear`` weights ``(out, in)``,
head ``h`` of a block has (row convention, ``x (d_model,)`` a token's vector after the block's layer norm):

- its **QK matrix** ``W_QK = W_Q^h (W_K^h)ᵀ (d_model, d_model)``: the score of query vector ``x_i`` on key vector
  ``x_j`` is ``x_i W_QK x_jᵀ / √d_head`` (plus the biases' terms);
- its **OV matrix** ``W_OV = W_V^h W_O^h (d_model, d_model)``: what the head adds to the stream for the
  weight-1 key ``x_j`` is ``x_j W_OV`` (plus the biases).

``W_Q^h, W_K^h, W_V^h (d_model, d_head)`` are head ``h``'s columns of the projections, ``W_O^h (d_head,
d_model)`` its rows of ``out_proj``. The layer norm's gain ``γ`` is folded in (``diag(γ) W``), as
TransformerLens does; its centring and its bias are left out.

A head B of a later layer **composes** with a head A of an earlier one when B reads what A wrote. Elhage et
al. (2021) and ARENA measure it with the **composition score** ``‖W_A W_B‖_F / (‖W_A‖_F ‖W_B‖_F)``, with
``W_A = W_OV`` of A and ``W_B`` = B's ``W_QK`` (Q-composition: A's output feeds B's queries), ``W_QKᵀ``
(K-composition: B's keys) or ``W_OV`` (V-composition: B's values). It is compared with the score of random
matrices of the same shapes and rank (:func:`random_composition_score`).

:func:`patched_heads` runs a model with some heads' outputs taken from its run on another input.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence

import torch
from torch import Tensor

from ._validate import AttentionInputError, check_positive_int, shape_str
from .modules import MultiHeadAttention
from .transformer import Block, TinyTransformer

__all__ = [
    "COMPOSITIONS",
    "composition_score",
    "composition_scores",
    "head_outputs",
    "ov_matrix",
    "patched_heads",
    "qk_matrix",
    "random_composition_score",
]

COMPOSITIONS = ("q", "k", "v")


def _attention(model: TinyTransformer, layer: int, head: int) -> tuple[MultiHeadAttention, slice, Tensor | None]:
    if not isinstance(model, TinyTransformer):
        raise AttentionInputError(f"model must be a TinyTransformer, got {type(model).__name__}")
    if isinstance(layer, bool) or not isinstance(layer, int) or not 0 <= layer < len(model.blocks):
        raise AttentionInputError(f"layer must be from 0 to {len(model.blocks) - 1}, got {layer!r}")
    block = model.blocks[layer]
    if not isinstance(block, Block):
        raise AttentionInputError(f"the model's blocks must be attnlib's Block, got a {type(block).__name__}")
    attention = block.attention
    if isinstance(head, bool) or not isinstance(head, int) or not 0 <= head < attention.num_heads:
        raise AttentionInputError(f"head must be from 0 to {attention.num_heads - 1}, got {head!r}")
    gain = block.norm_attention.weight if isinstance(block.norm_attention, torch.nn.LayerNorm) else None
    return attention, slice(head * attention.d_head, (head + 1) * attention.d_head), gain


def _columns(linear: torch.nn.Linear, cols: slice, gain: Tensor | None) -> Tensor:
    """``(d_model, d_head)``: the head's columns of a projection in the row convention, ``γ`` folded in."""
    w = linear.weight.detach()[cols].T
    return w if gain is None else gain.detach()[:, None] * w


def qk_matrix(model: TinyTransformer, layer: int, head: int) -> Tensor:
    """``W_QK = diag(γ) W_Q^h (diag(γ) W_K^h)ᵀ``, ``(d_model, d_model)``, of head ``head`` of block ``layer``."""
    attention, cols, gain = _attention(model, layer, head)
    return _columns(attention.w_query, cols, gain) @ _columns(attention.w_key, cols, gain).T


def ov_matrix(model: TinyTransformer, layer: int, head: int) -> Tensor:
    """``W_OV = diag(γ) W_V^h W_O^h``, ``(d_model, d_model)``, of head ``head`` of block ``layer``."""
    attention, cols, gain = _attention(model, layer, head)
    return _columns(attention.w_value, cols, gain) @ attention.out_proj.weight.detach()[:, cols].T


def composition_score(w_a: Tensor, w_b: Tensor) -> float:
    """``‖w_a w_b‖_F / (‖w_a‖_F ‖w_b‖_F)`` for ``w_a (m, d)``, ``w_b (d, p)``: 0 when what ``w_a`` writes is
    invisible to ``w_b``, at most 1."""
    for name, w in (("w_a", w_a), ("w_b", w_b)):
        if not isinstance(w, Tensor) or w.dim() != 2:
            got = shape_str(w) if isinstance(w, Tensor) else type(w).__name__
            raise AttentionInputError(f"{name} must be a matrix (2 dimensions), got {got}")
    if w_a.shape[1] != w_b.shape[0]:
        raise AttentionInputError(f"w_a {shape_str(w_a)} and w_b {shape_str(w_b)}: w_a's columns must match w_b's rows")
    return float(torch.linalg.norm(w_a @ w_b) / (torch.linalg.norm(w_a) * torch.linalg.norm(w_b)))


def composition_scores(model: TinyTransformer, kind: str, *, writer: int = 0, reader: int = 1) -> Tensor:
    """``(num_heads, num_heads)``: entry ``[a, b]`` the ``kind`` (``"q"``, ``"k"`` or ``"v"``) composition score of
    head ``a`` of block ``writer`` with head ``b`` of block ``reader``."""
    if kind not in COMPOSITIONS:
        raise AttentionInputError(f"kind must be one of {COMPOSITIONS}, got {kind!r}")
    if not isinstance(writer, int) or not isinstance(reader, int) or not writer < reader:
        raise AttentionInputError(f"writer={writer!r} must be an earlier block than reader={reader!r}")
    heads = _attention(model, reader, 0)[0].num_heads
    out = torch.zeros(heads, heads)
    for a in range(heads):
        w_a = ov_matrix(model, writer, a)
        for b in range(heads):
            w_b = {"q": qk_matrix, "k": lambda m, la, h: qk_matrix(m, la, h).T, "v": ov_matrix}[kind](model, reader, b)
            out[a, b] = composition_score(w_a, w_b)
    return out


def random_composition_score(d_model: int, d_head: int, *, samples: int = 200, seed: int = 0) -> float:
    """The mean composition score of random ``(d_model, d_model)`` matrices of rank ``d_head`` (each a product
    of two Gaussian ``(d_model, d_head)`` factors, as ARENA's baseline): what no composition scores."""
    check_positive_int("d_model", d_model)
    check_positive_int("d_head", d_head)
    check_positive_int("samples", samples)
    g = torch.Generator().manual_seed(seed)
    factors = torch.randn(samples, 4, d_model, d_head, generator=g, dtype=torch.float64)
    w_a = factors[:, 0] @ factors[:, 1].transpose(-1, -2)
    w_b = factors[:, 2] @ factors[:, 3].transpose(-1, -2)
    norm = torch.linalg.matrix_norm
    return float((norm(w_a @ w_b) / (norm(w_a) * norm(w_b))).mean())


@torch.no_grad()
def head_outputs(model: TinyTransformer, ids: Tensor, layer: int) -> Tensor:
    """``(batch, num_heads, n, d_head)``: what each head of block ``layer`` outputs on ``ids (batch, n)``,
    before ``out_proj`` mixes the heads."""
    attention, _, _ = _attention(model, layer, 0)
    saved: list[Tensor] = []
    handle = attention.out_proj.register_forward_pre_hook(lambda _m, args: saved.append(args[0].clone()))
    try:
        model(ids)
    finally:
        handle.remove()
    batch, n, _ = saved[0].shape
    return saved[0].reshape(batch, n, attention.num_heads, attention.d_head).transpose(1, 2)


@contextlib.contextmanager
def _replaced(
    model: TinyTransformer, layer: int, heads: Sequence[int], donor: Tensor, positions: Sequence[int]
) -> Iterator[None]:
    attention, _, _ = _attention(model, layer, 0)
    for h in heads:
        _attention(model, layer, h)
    d = attention.d_head

    def replace(_module: torch.nn.Module, args: tuple[Tensor, ...]) -> tuple[Tensor, ...]:
        x = args[0].clone()
        for h in heads:
            for p in positions:
                x[:, p, h * d : (h + 1) * d] = donor[:, h, p]
        return (x, *args[1:])

    handle = attention.out_proj.register_forward_pre_hook(replace)
    try:
        yield
    finally:
        handle.remove()


@torch.no_grad()
def patched_heads(
    model: TinyTransformer,
    ids: Tensor,
    donor: Tensor,
    layer: int,
    heads: int | Sequence[int],
    positions: Sequence[int] | None = None,
) -> Tensor:
    """The logits ``(batch, n, vocab_size)`` of ``model`` on ``ids`` when the outputs of ``heads`` of block
    ``layer``, at ``positions`` (default: all), are those of its run on ``donor`` (same shape as ``ids``)."""
    if not isinstance(ids, Tensor) or not isinstance(donor, Tensor) or ids.shape != donor.shape or ids.dim() != 2:
        got = [shape_str(t) if isinstance(t, Tensor) else type(t).__name__ for t in (ids, donor)]
        raise AttentionInputError(f"ids and donor must be token ids of one shape (batch, n), got {got[0]} and {got[1]}")
    chosen = [heads] if isinstance(heads, int) else list(heads)
    n = ids.shape[1]
    where = list(range(n)) if positions is None else list(positions)
    if any(isinstance(p, bool) or not isinstance(p, int) or not -n <= p < n for p in where):
        raise AttentionInputError(f"positions must be token positions 0…{n - 1}, got {positions!r}")
    saved = head_outputs(model, donor, layer)
    with _replaced(model, layer, chosen, saved, where):
        logits: Tensor = model(ids)
        return logits
