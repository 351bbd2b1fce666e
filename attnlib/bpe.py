"""Byte-pair encoding in a few lines (lesson 17): how real models cut text into subword tokens.

Start from single characters; count every pair of neighbouring symbols in the corpus (each word
weighted by how often it occurs); merge the most frequent pair into one new symbol everywhere; repeat.
Ties go to the pair seen first. GPT-2's tokeniser is this algorithm on bytes, with 50 000 merges.

To cut a whole text (spaces and line breaks included, lesson 17), it is first split into **pieces** as GPT-2
does — a word with the space before it, a run of punctuation with its space, a run of white space
(:data:`PIECES`) — so no token spans two words; :func:`learn_text_merges` learns merges over the pieces and
:func:`encode_text` cuts any text into tokens with them (joined, the tokens give the text back).
"""

from __future__ import annotations

import itertools
import re
from collections import Counter

__all__ = ["PIECES", "encode_text", "learn_merges", "learn_text_merges", "pair_counts", "split_after", "tokenise"]

#: How a text is cut into pieces before BPE (as GPT-2): a word or a number with one space before it, a run of
#: other characters with one space before it, or a run of white space.
PIECES = re.compile(r" ?[A-Za-z]+| ?[0-9]+| ?[^\sA-Za-z0-9]+|\s+(?!\S)|\s+")


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
    return _learn(_split(corpus), n_merges)


def learn_text_merges(text: str, n_merges: int) -> list[tuple[str, str]]:
    """The first ``n_merges`` merges BPE learns on the :data:`PIECES` of ``text`` (white space kept), in order."""
    if not isinstance(text, str) or not text:
        raise ValueError(f"text must be non-empty text, got {text!r}"[:120])
    return _learn(Counter(tuple(piece) for piece in PIECES.findall(text)), n_merges)


def encode_text(text: str, merges: list[tuple[str, str]]) -> list[str]:
    """``text`` cut into tokens: its :data:`PIECES`, each cut by ``merges``; ``"".join`` gives ``text`` back."""
    if not isinstance(text, str):
        raise ValueError(f"text must be text, got {type(text).__name__}")
    cut: dict[str, list[str]] = {}
    tokens: list[str] = []
    for piece in PIECES.findall(text):
        if piece not in cut:
            cut[piece] = tokenise(piece, merges)
        tokens.extend(cut[piece])
    return tokens


def _learn(words: Counter[tuple[str, ...]], n_merges: int) -> list[tuple[str, str]]:
    if isinstance(n_merges, bool) or not isinstance(n_merges, int) or n_merges < 0:
        raise ValueError(f"n_merges must be a non-negative integer, got {n_merges!r}")
    merges: list[tuple[str, str]] = []
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
