"""Byte-pair encoding in a few lines (lesson 17): how real models cut text into subword tokens.

Start from single characters; count every pair of neighbouring symbols in the corpus (each word
weighted by how often it occurs); merge the most frequent pair into one new symbol everywhere; repeat.
Ties go to the pair seen first. GPT-2's tokeniser is this algorithm on bytes, with 50 000 merges.
"""

from __future__ import annotations

import itertools
from collections import Counter

__all__ = ["learn_merges", "pair_counts", "split_after", "tokenise"]


def _split(corpus: str) -> Counter[tuple[str, ...]]:
    if not isinstance(corpus, str) or not corpus.split():
        raise ValueError(f"corpus must be text with at least one word, got {corpus!r}"[:120])
    return Counter(tuple(word) for word in corpus.split())


def pair_counts(words: Counter[tuple[str, ...]]) -> Counter[tuple[str, str]]:
    """How often each pair of neighbouring symbols occurs, each word counted as often as it occurs."""
    counts: Counter[tuple[str, str]] = Counter()
    for symbols, n in words.items():
        for pair in itertools.pairwise(symbols):
            counts[pair] += n
    return counts


def _merge(symbols: tuple[str, ...], pair: tuple[str, str]) -> tuple[str, ...]:
    out, i = [], 0
    while i < len(symbols):
        if symbols[i : i + 2] == pair:
            out.append(pair[0] + pair[1])
            i += 2
        else:
            out.append(symbols[i])
            i += 1
    return tuple(out)


def learn_merges(corpus: str, n_merges: int) -> list[tuple[str, str]]:
    """The first ``n_merges`` merges BPE learns on ``corpus`` (words separated by spaces), in order."""
    if isinstance(n_merges, bool) or not isinstance(n_merges, int) or n_merges < 0:
        raise ValueError(f"n_merges must be a non-negative integer, got {n_merges!r}")
    words, merges = _split(corpus), []
    for _ in range(n_merges):
        counts = pair_counts(words)
        if not counts:
            break
        best = max(counts, key=counts.__getitem__)  # the first of the most frequent (Counter keeps order)
        merges.append(best)
        merged: Counter[tuple[str, ...]] = Counter()
        for symbols, n in words.items():
            merged[_merge(symbols, best)] += n
        words = merged
    return merges


def split_after(corpus: str, n_merges: int) -> Counter[tuple[str, ...]]:
    """Each word of ``corpus`` as symbols after the first ``n_merges`` merges, with how often it occurs."""
    words = _split(corpus)
    for pair in learn_merges(corpus, n_merges):
        merged: Counter[tuple[str, ...]] = Counter()
        for symbols, n in words.items():
            merged[_merge(symbols, pair)] += n
        words = merged
    return words


def tokenise(word: str, merges: list[tuple[str, str]]) -> list[str]:
    """``word`` cut into tokens by applying ``merges`` in the order they were learned."""
    if not isinstance(word, str) or not word:
        raise ValueError(f"word must be non-empty text, got {word!r}")
    symbols = tuple(word)
    for pair in merges:
        symbols = _merge(symbols, (pair[0], pair[1]))
    return list(symbols)
