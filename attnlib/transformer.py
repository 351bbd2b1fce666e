"""A tiny transformer built from the series' own pieces, small enough to train on a CPU in seconds.

``TinyTransformer`` = token embedding + positions (lesson 12) + ``num_layers`` blocks + a linear
read-out. A block is what lessons 01–11 built — :class:`attnlib.MultiHeadAttention`, which calls
:func:`attnlib.attention` — plus two pieces those lessons did not cover: a **residual** connection
around each part (``x + f(x)``: the block adds to its input instead of replacing it) and **layer
norm** before each part (each token vector rescaled to mean 0 and variance 1, so training stays
stable), and a small two-layer **MLP** applied to every token separately.

:class:`CrossAttentionModel` is learned-query pooling (as in DETR or the Perceiver), not an encoder–decoder:
a fixed set of learned query vectors attends over the input tokens (keys and values) with cross-attention.

Shapes: ``ids (batch, n)`` integer token ids → ``logits (batch, n, vocab_size)``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import torch
from torch import Tensor, nn

from ._validate import AttentionInputError, check_positive_int, shape_str
from .modules import MultiHeadAttention, causal_mask
from .positions import LearnedPositions, SinusoidalPositions

__all__ = ["ACTIVATIONS", "Block", "CrossAttentionModel", "TinyTransformer"]

POSITIONS = ("learned", "sinusoidal", "none")
#: the MLP's nonlinearity: ``"gelu"`` the exact GELU (attnlib's models), ``"gelu_tanh"`` its tanh approximation
#: (GPT-2's ``gelu_new``, :mod:`attnlib.gpt2`)
ACTIVATIONS = ("gelu", "gelu_tanh")


class Cache(Protocol):
    """What a key/value cache offers (:class:`attnlib.kv_cache.KVCache`)."""

    def __len__(self) -> int: ...

    def update(self, layer: int, keys: Tensor, values: Tensor) -> tuple[Tensor, Tensor]: ...


class Block(nn.Module):
    """One transformer block (pre-LN): ``x + attention(norm(x))``, then ``x + mlp(norm(x))``.

    Args:
        d_model, num_heads: as :class:`attnlib.MultiHeadAttention`.
        d_mlp: hidden size of the MLP (default ``4 · d_model``).
        layer_norm: normalise before each part (``False``: identity).
        mlp: include the MLP (``False``: an attention-only block, lesson 14).
        residual: add each part's output to its input (``False``: ``x = attention(norm(x))`` replaces ``x``;
            for the experiment of lesson 13 only).
        activation: the MLP's nonlinearity, one of :data:`ACTIVATIONS`.
    """

    def __init__(
        self,
        d_model: int,
        num_heads: int,
        *,
        d_mlp: int | None = None,
        layer_norm: bool = True,
        mlp: bool = True,
        residual: bool = True,
        activation: str = "gelu",
    ) -> None:
        super().__init__()
        check_positive_int("d_model", d_model)
        if activation not in ACTIVATIONS:
            raise AttentionInputError(f"activation must be one of {ACTIVATIONS}, got {activation!r}")
        self.d_model, self.residual = d_model, residual
        self.attention = MultiHeadAttention(d_model, num_heads)
        self.norm_attention = nn.LayerNorm(d_model) if layer_norm else nn.Identity()
        self.norm_mlp = nn.LayerNorm(d_model) if layer_norm and mlp else nn.Identity()
        d_mlp = 4 * d_model if d_mlp is None else check_positive_int("d_mlp", d_mlp)
        self.mlp = (
            nn.Sequential(
                nn.Linear(d_model, d_mlp),
                nn.GELU() if activation == "gelu" else nn.GELU(approximate="tanh"),
                nn.Linear(d_mlp, d_model),
            )
            if mlp
            else None
        )

    def forward(
        self, x: Tensor, *, mask: Tensor | None = None, cache: Cache | None = None, layer: int = 0
    ) -> tuple[Tensor, Tensor]:
        """``x (batch, n, d_model)`` → ``(x', weights (batch, num_heads, n, n_k))``."""
        if not isinstance(x, Tensor) or x.dim() != 3 or x.shape[-1] != self.d_model:
            got = shape_str(x) if isinstance(x, Tensor) else type(x).__name__
            raise AttentionInputError(f"x must be (batch, n, d_model={self.d_model}), got {got}")
        out, weights = self.attention(self.norm_attention(x), mask=mask, return_weights=True, cache=cache, layer=layer)
        x = x + out if self.residual else out
        if self.mlp is not None:
            out = self.mlp(self.norm_mlp(x))
            x = x + out if self.residual else out
        return x, weights


class TinyTransformer(nn.Module):
    """Embedding + positions + blocks + read-out; keeps every layer's attention weights of the last call.

    Args:
        vocab_size: number of token ids (``|𝒱|``).
        d_model: width of the token vectors.
        num_heads: heads per block; must divide ``d_model``.
        num_layers: number of blocks.
        max_len: longest sequence (positions ``0 … max_len − 1``).
        d_mlp: hidden size of each MLP (default ``4 · d_model``).
        causal: every token sees only itself and earlier tokens (next-token prediction, lesson 09's mask).
        positions: ``"learned"``, ``"sinusoidal"`` or ``"none"`` (lesson 12).
        layer_norm, mlp, residual, activation: as :class:`Block`.
        readout_bias: give the read-out a bias (GPT-2's has none: :mod:`attnlib.gpt2`).
        block: build each block with ``block(d_model, num_heads)`` instead of :class:`Block` — e.g. a
            block you wrote (lesson 13). Its ``forward(x, mask=None)`` returns ``x`` or ``(x, weights)``.

    After a forward, :attr:`attention_maps` holds one ``(batch, num_heads, n_q, n_k)`` tensor per layer
    (only for blocks that return their weights).
    """

    def __init__(
        self,
        vocab_size: int,
        d_model: int,
        num_heads: int,
        num_layers: int,
        max_len: int,
        *,
        d_mlp: int | None = None,
        causal: bool = False,
        positions: str = "learned",
        layer_norm: bool = True,
        mlp: bool = True,
        residual: bool = True,
        block: Callable[[int, int], nn.Module] | None = None,
        activation: str = "gelu",
        readout_bias: bool = True,
    ) -> None:
        super().__init__()
        for name, value in (
            ("vocab_size", vocab_size),
            ("d_model", d_model),
            ("num_layers", num_layers),
            ("max_len", max_len),
        ):
            check_positive_int(name, value)
        if positions not in POSITIONS:
            raise AttentionInputError(f"positions must be one of {POSITIONS}, got {positions!r}")
        check_positive_int("num_heads", num_heads)
        if activation not in ACTIVATIONS:
            raise AttentionInputError(f"activation must be one of {ACTIVATIONS}, got {activation!r}")
        if d_model % num_heads:
            raise AttentionInputError(
                f"num_heads={num_heads} must divide d_model={d_model}: every head gets d_head = d_model / num_heads"
            )
        if block is not None and not callable(block):
            raise AttentionInputError(f"block must be a class or function block(d_model, num_heads), got {block!r}")
        self.vocab_size, self.max_len, self.causal = vocab_size, max_len, causal
        self.own_blocks = block is None
        self.embedding = nn.Embedding(vocab_size, d_model)
        makers: dict[str, Callable[[], LearnedPositions | SinusoidalPositions | None]] = {
            "learned": lambda: LearnedPositions(max_len, d_model),
            "sinusoidal": lambda: SinusoidalPositions(max_len, d_model),
            "none": lambda: None,
        }
        self.positions = makers[positions]()
        if block is None:
            self.blocks = nn.ModuleList(
                Block(
                    d_model,
                    num_heads,
                    d_mlp=d_mlp,
                    layer_norm=layer_norm,
                    mlp=mlp,
                    residual=residual,
                    activation=activation,
                )
                for _ in range(num_layers)
            )
        else:
            self.blocks = nn.ModuleList(block(d_model, num_heads) for _ in range(num_layers))
        self.norm = nn.LayerNorm(d_model) if layer_norm else nn.Identity()
        self.readout = nn.Linear(d_model, vocab_size, bias=readout_bias)
        self.attention_maps: list[Tensor] = []

    def forward(self, ids: Tensor, *, cache: Cache | None = None) -> Tensor:
        """``ids (batch, n)`` → ``logits (batch, n, vocab_size)``.

        With a ``cache`` (needs ``causal=True``), ``ids`` are only the new tokens: their positions start
        at ``len(cache)`` and each layer attends over the cached keys and values plus the new ones.
        """
        if not isinstance(ids, Tensor) or ids.dtype not in (torch.int64, torch.int32) or ids.dim() != 2:
            got = shape_str(ids) + f" {ids.dtype}" if isinstance(ids, Tensor) else type(ids).__name__
            raise AttentionInputError(f"ids must be an integer tensor (batch, n), got {got}")
        offset = len(cache) if cache is not None else 0
        if cache is not None and not self.own_blocks:
            raise AttentionInputError("a key/value cache needs attnlib's Block (block=None)")
        if cache is not None and not self.causal:
            raise AttentionInputError("a key/value cache needs causal=True: later tokens must not change earlier ones")
        n = ids.shape[1]
        if offset + n > self.max_len:
            raise AttentionInputError(
                f"ids has {n} tokens (positions {offset}…{offset + n - 1}) but the model was built with "
                f"max_len={self.max_len}"
            )
        if ids.numel() and (int(ids.min()) < 0 or int(ids.max()) >= self.vocab_size):
            low, high = int(ids.min()), int(ids.max())
            raise AttentionInputError(f"token ids must be in 0…{self.vocab_size - 1}, got {low}…{high}")
        x = self.embedding(ids)
        if self.positions is not None:
            x = self.positions(x, offset=offset)
        mask = causal_mask(n, offset=offset) if self.causal and n > 1 else None  # one new token sees all
        self.attention_maps = []
        for layer, block in enumerate(self.blocks):
            if self.own_blocks:
                x, weights = block(x, mask=mask, cache=cache, layer=layer)
            else:
                x, weights = block(x, mask=mask), None
                if isinstance(x, tuple):
                    x, weights = x
            if weights is not None:
                self.attention_maps.append(weights.detach())
        logits: Tensor = self.readout(self.norm(x))
        return logits


class CrossAttentionModel(nn.Module):
    """Learned-query pooling: ``n_out`` learned query vectors attend over the input tokens.

    Not an encoder–decoder: the queries are constant learned vectors (one per output slot) that depend
    on neither the input nor any output sequence; keys and values are the embedded input tokens with
    their positions. One :class:`attnlib.MultiHeadAttention` does the
    cross-attention (its ``key``/``value`` arguments), a linear layer reads each slot's token out.

    Shapes: ``ids (batch, n)`` → ``logits (batch, n_out, vocab_size)``; :attr:`attention_map`
    ``(batch, num_heads, n_out, n)`` after a forward.
    """

    def __init__(self, vocab_size: int, d_model: int, num_heads: int, n_out: int, max_len: int) -> None:
        super().__init__()
        self.vocab_size, self.max_len, self.causal = vocab_size, max_len, False
        self.embedding = nn.Embedding(check_positive_int("vocab_size", vocab_size), d_model)
        self.positions = LearnedPositions(max_len, d_model)
        self.slots = nn.Parameter(torch.randn(check_positive_int("n_out", n_out), d_model) * 0.02)
        self.cross = MultiHeadAttention(d_model, num_heads)
        self.readout = nn.Linear(d_model, vocab_size)
        self.attention_map = torch.empty(0)

    def forward(self, ids: Tensor) -> Tensor:
        memory = self.positions(self.embedding(ids))  # keys and values: the input sequence
        queries = self.slots.expand(ids.shape[0], -1, -1)  # queries: the output slots
        out, weights = self.cross(queries, memory, memory, return_weights=True)
        self.attention_map = weights.detach()
        logits: Tensor = self.readout(out)
        return logits

    @property
    def attention_maps(self) -> list[Tensor]:
        """``[attention_map]``: the one cross-attention layer, as :class:`TinyTransformer` lists its layers."""
        return [self.attention_map]
