"""From a sentence to numbers: tokens, a vocabulary, token ids and embeddings (lesson 10)."""

from __future__ import annotations

from types import SimpleNamespace

import torch
from torch import Tensor

from ._validate import AttentionInputError
from .steps import QKV, attention_weights, derive_qkv, init_projections

__all__ = [
    "MAX_TOKENS",
    "build_vocabulary",
    "embed",
    "encode",
    "project_as_columns",
    "sentence_attention",
    "tokenize",
]

MAX_TOKENS = 32  # what the sentence explorer accepts: a 32×32 map is still readable


def tokenize(sentence: str) -> list[str]:
    """Split on whitespace after dropping commas, as document 002 does."""
    if not isinstance(sentence, str):
        raise TypeError(f"sentence must be a str, got {type(sentence).__name__}")
    tokens = sentence.replace(",", "").split()
    if not tokens:
        raise AttentionInputError("sentence has no words")
    return tokens


def build_vocabulary(sentence: str, *, unique: bool = False) -> dict[str, int]:
    """Map each word to an integer id, in alphabetical order.

    With ``unique=False`` this reproduces document 002 exactly: it numbers the *sorted list of
    tokens*, duplicates included, so a repeated word is numbered once per occurrence and the
    dictionary keeps its last number. Ids are then skipped ('the' appears twice, so 22 is never
    used). ``unique=True`` numbers each distinct word once: ids ``0 … n_words-1``.
    """
    words = sorted(set(tokenize(sentence))) if unique else sorted(tokenize(sentence))
    return {word: i for i, word in enumerate(words)}


def encode(sentence: str, vocabulary: dict[str, int]) -> Tensor:
    """Token ids of ``sentence``: shape ``(n_tokens,)``, dtype int64."""
    tokens = tokenize(sentence)
    missing = [t for t in tokens if t not in vocabulary]
    if missing:
        raise AttentionInputError(f"words not in the vocabulary: {missing}")
    return torch.tensor([vocabulary[t] for t in tokens])


def embed(token_ids: Tensor, *, num_embeddings: int, d: int, seed: int) -> Tensor:
    """Look the ids up in a freshly seeded ``nn.Embedding(num_embeddings, d)``.

    Runs ``torch.manual_seed(seed)`` inside ``torch.random.fork_rng`` so the documents' numbers
    come out without changing the caller's random state.

    Returns:
        ``(n_tokens, d)`` float32, detached.
    """
    if token_ids.dtype not in (torch.int64, torch.int32):
        raise TypeError(f"token_ids must be an integer tensor, got {token_ids.dtype}")
    if token_ids.numel() and int(token_ids.max()) >= num_embeddings:
        raise AttentionInputError(f"token id {int(token_ids.max())} does not fit num_embeddings={num_embeddings}")
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        table = torch.nn.Embedding(num_embeddings, d)
        embedded: Tensor = table(token_ids).detach()
        return embedded


def project_as_columns(embedded: Tensor, u_query: Tensor, u_key: Tensor, u_value: Tensor) -> QKV:
    """Document 003's projections ``q = U x`` for every row ``x`` of ``embedded``: ``Q = X Uᵀ``.

    Args:
        embedded: ``X``, shape ``(n_tokens, d)``.
        u_query, u_key, u_value: ``(d_k, d)``, ``(d_k, d)``, ``(d_v, d)``, applied to column vectors.

    Returns:
        ``QKV(X U_queryᵀ, X U_keyᵀ, X U_valueᵀ)``: the row-vector weights are ``W = Uᵀ``.
    """
    return derive_qkv(embedded, u_query.T, u_key.T, u_value.T)


def sentence_attention(
    sentence: str,
    *,
    projections: bool = True,
    scaled: bool = True,
    d: int = 16,
    seed: int = 123,
    max_tokens: int = MAX_TOKENS,
) -> SimpleNamespace:
    """Self-attention over any sentence, from words to context vectors (lesson 10's explorer).

    Tokens → ``build_vocabulary(unique=True)`` ids → ``embed(..., d=d, seed=seed)`` → either
    document 003's simplified attention (``projections=False``: queries = keys = values = the
    embeddings, ``ω = X Xᵀ``) or projections by the three ``(d, d)`` matrices ``U`` of
    ``init_projections(d, d, seed=seed)``, applied as document 003 applies them (``q = U x``, i.e.
    ``Q = X Uᵀ``), so that 003's sentence reproduces 003's scaled dot-product weights.
    ``scaled`` divides the scores by ``sqrt(d)``.

    Returns:
        namespace with ``tokens`` (list of str), ``ids (n,)``, ``embedded (n, d)``, ``queries``,
        ``keys``, ``values`` ``(n, d)``, ``scores (n, n)``, ``weights (n, n)``, ``context (n, d)``.

    Raises:
        AttentionInputError: no words, or more than ``max_tokens`` tokens.
    """
    tokens = tokenize(sentence)
    if len(tokens) > max_tokens:
        raise AttentionInputError(f"sentence has {len(tokens)} tokens; at most {max_tokens} are shown")
    vocabulary = build_vocabulary(sentence, unique=True)
    ids = encode(sentence, vocabulary)
    embedded = embed(ids, num_embeddings=len(vocabulary), d=d, seed=seed)
    if projections:
        u_query, u_key, u_value = init_projections(d, d, seed=seed)
        queries, keys, values = project_as_columns(embedded, u_query, u_key, u_value)
    else:
        queries = keys = values = embedded
    scores = queries @ keys.T
    weights = attention_weights(queries, keys, values, scale=None if scaled else 1.0)
    return SimpleNamespace(
        tokens=tokens,
        ids=ids,
        embedded=embedded,
        queries=queries,
        keys=keys,
        values=values,
        scores=scores,
        weights=weights,
        context=weights @ values,
    )
