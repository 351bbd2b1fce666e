"""The key/value cache of autoregressive generation (lesson 15 idea).

Generating token ``t + 1`` needs attention of the newest token over tokens ``0 … t``. Without a cache
every step recomputes the keys and values (step 3) and the scores (step 4) of *all* earlier tokens,
although they have not changed — the causal mask guarantees it. A cache keeps each layer's keys and
values and appends only the new token's: each step then computes one query row instead of a matrix.

Shapes: per layer ``(batch, num_heads, n_cached, d_head)``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence, Sized
from typing import Any, Protocol

import torch
from torch import Tensor
from torch.utils.hooks import RemovableHandle

from ._validate import AttentionInputError, check_positive_int, shape_str

__all__ = [
    "CausalModel",
    "KVCache",
    "count_dot_products",
    "generate",
    "next_token",
    "sampling_probabilities",
    "score_dot_products",
]


class CausalModel(Protocol):
    """What generation needs of a model (:class:`attnlib.transformer.TinyTransformer`, whose modules import this
    one): its blocks, its attention maps, and ``model(ids, cache=...)`` giving ``(batch, n, vocab_size)`` logits."""

    @property
    def blocks(self) -> Sized: ...
    @property
    def attention_maps(self) -> Sequence[Tensor]: ...
    def __call__(self, ids: Tensor, *, cache: KVCache | None = None) -> Tensor: ...
    def register_forward_hook(self, hook: Callable[[Any, Any, Any], None]) -> RemovableHandle: ...


class KVCache:
    """Keys and values of the tokens seen so far, one entry per layer: ``(batch, h, n_cached, d_head)``."""

    def __init__(self, num_layers: int) -> None:
        self.keys: list[Tensor | None] = [None] * check_positive_int("num_layers", num_layers)
        self.values: list[Tensor | None] = [None] * num_layers

    def __len__(self) -> int:
        """``n_cached``: how many tokens are cached (0 when empty)."""
        return 0 if self.keys[0] is None else self.keys[0].shape[-2]

    def update(self, layer: int, keys: Tensor, values: Tensor) -> tuple[Tensor, Tensor]:
        """Append the new tokens' ``keys``/``values`` ``(batch, h, n_new, d_head)`` for ``layer``; return all so far."""
        if not 0 <= layer < len(self.keys):
            raise AttentionInputError(f"layer must be from 0 to {len(self.keys) - 1}, got {layer}")
        cached_keys, cached_values = self.keys[layer], self.values[layer]
        if cached_keys is not None and cached_values is not None:
            keys = torch.cat([cached_keys, keys], dim=-2)
            values = torch.cat([cached_values, values], dim=-2)
        self.keys[layer], self.values[layer] = keys, values
        return keys, values


def sampling_probabilities(logits: Tensor, temperature: float = 1.0, top_k: int | None = None) -> Tensor:
    """What a token is drawn from: ``softmax(logits / temperature)`` over the ``top_k`` highest logits.

    ``logits (..., vocab_size)`` → probabilities of the same shape; the tokens outside the top ``k`` get 0
    (ties with the ``k``-th logit are kept). ``temperature`` > 0: below 1 sharper, above 1 flatter.
    """
    if not isinstance(logits, Tensor) or logits.dim() < 1 or not logits.is_floating_point():
        got = shape_str(logits) if isinstance(logits, Tensor) else type(logits).__name__
        raise AttentionInputError(f"logits must be a float tensor (..., vocab_size), got {got}")
    if isinstance(temperature, bool) or not isinstance(temperature, int | float) or not temperature > 0:
        raise AttentionInputError(f"temperature must be a number > 0, got {temperature!r}")
    scaled = logits / temperature
    if top_k is not None:
        check_positive_int("top_k", top_k)
        if top_k > logits.shape[-1]:
            raise AttentionInputError(f"top_k={top_k} is larger than the vocabulary ({logits.shape[-1]} tokens)")
        kth = torch.topk(scaled, top_k, dim=-1).values[..., -1:]
        scaled = scaled.masked_fill(scaled < kth, -math.inf)
    return torch.softmax(scaled, dim=-1)


def next_token(
    logits: Tensor, *, temperature: float = 0.0, top_k: int | None = None, generator: torch.Generator | None = None
) -> Tensor:
    """Choose the next token from the last position's ``logits (batch, vocab_size)`` → ``(batch, 1)``.

    ``temperature=0``: greedy, the highest logit. ``temperature > 0``: sample from
    ``softmax(logits / temperature)`` (lesson 05's temperature: below 1 sharper, above 1 flatter);
    ``top_k``: first keep only the ``k`` highest logits (the rest get probability 0).
    """
    if isinstance(temperature, bool) or not isinstance(temperature, int | float) or not temperature >= 0:
        raise AttentionInputError(f"temperature must be a number >= 0 (0 = greedy), got {temperature!r}")
    if temperature == 0:  # greedy: the highest logit, which top_k cannot change (but is checked all the same)
        sampling_probabilities(logits, 1.0, top_k)
        return logits.argmax(dim=-1, keepdim=True)
    return torch.multinomial(sampling_probabilities(logits, temperature, top_k), 1, generator=generator)


@torch.no_grad()
def generate(
    model: CausalModel,
    prompt: Tensor,
    max_new_tokens: int,
    *,
    use_cache: bool = True,
    temperature: float = 0.0,
    top_k: int | None = None,
    generator: torch.Generator | None = None,
) -> Tensor:
    """Append ``max_new_tokens`` tokens to ``prompt`` ``(batch, n_prompt)``, one at a time.

    ``model`` is a causal :class:`attnlib.transformer.TinyTransformer` (any model whose
    ``forward(ids, *, cache=None)`` returns ``(batch, n, vocab_size)`` logits and accepts a
    :class:`KVCache` works). With ``use_cache`` each step feeds only the newest token; without it,
    the whole sequence so far, or its last ``max_len`` tokens once it is longer (a sliding window, as a
    model of text writes on past its context). Within ``max_len`` both give the same tokens. ``temperature``,
    ``top_k`` and ``generator`` choose each token as :func:`next_token` does (default: greedy).

    Returns:
        ``(batch, n_prompt + max_new_tokens)`` token ids.
    """
    check_positive_int("max_new_tokens", max_new_tokens, zero=True)
    if not isinstance(prompt, Tensor) or prompt.dim() != 2:
        got = tuple(prompt.shape) if isinstance(prompt, Tensor) else type(prompt).__name__
        raise AttentionInputError(f"prompt must be token ids (batch, n_prompt), got {got}")
    limit = getattr(model, "max_len", None)
    if use_cache and limit is not None and prompt.shape[-1] + max_new_tokens > limit:
        raise AttentionInputError(
            f"prompt ({prompt.shape[-1]} tokens) + max_new_tokens ({max_new_tokens}) exceed the model's max_len={limit}"
        )
    ids = prompt
    cache = KVCache(len(model.blocks)) if use_cache else None
    logits = model(ids, cache=cache) if use_cache else prompt  # replaced before it is read
    for step in range(max_new_tokens):
        if not use_cache:
            logits = model(ids if limit is None else ids[:, -limit:])
        chosen = next_token(logits[:, -1], temperature=temperature, top_k=top_k, generator=generator)
        ids = torch.cat([ids, chosen], dim=1)
        if use_cache and step < max_new_tokens - 1:
            logits = model(chosen, cache=cache)
    return ids


def score_dot_products(n_prompt: int, max_new_tokens: int, *, use_cache: bool) -> int:
    """How many query·key dot products one head of one layer computes to generate ``max_new_tokens``.

    Without a cache, step ``t`` (sequence length ``L``) computes the full ``L × L`` score matrix; with
    one, the prompt's ``n_prompt × n_prompt`` once, then one row of ``L`` per new token.
    """
    check_positive_int("n_prompt", n_prompt)
    lengths = range(n_prompt, n_prompt + max_new_tokens)
    if use_cache:
        return n_prompt * n_prompt + sum(length + 1 for length in lengths[:-1]) if max_new_tokens else n_prompt**2
    return sum(length * length for length in lengths)


def count_dot_products(model: CausalModel, prompt: Tensor, max_new_tokens: int, *, use_cache: bool = True) -> int:
    """Run :func:`generate` and count the query·key dot products one head of one layer really computed.

    Counted from the attention maps the model leaves after each forward (``(batch, h, n_q, n_k)``:
    ``n_q · n_k`` products per head), not from a formula; :func:`score_dot_products` predicts it.
    """
    counted = 0

    def after_forward(module: CausalModel, _args: object, _output: object) -> None:
        nonlocal counted
        weights = module.attention_maps[0]
        counted += weights.shape[-2] * weights.shape[-1]

    handle = model.register_forward_hook(after_forward)
    try:
        generate(model, prompt, max_new_tokens, use_cache=use_cache)
    finally:
        handle.remove()
    return counted
