"""attnlib.bpe, lesson 17's byte-pair merges: the most frequent pair weighted by word counts; clear errors."""

import pytest

from attnlib import bpe


def test_bpe_merges_the_most_frequent_pair_weighted_by_word_counts():
    corpus = "hug " * 10 + "pug " * 5 + "pun " * 12 + "bun " * 10 + "hugs " * 5
    assert bpe.learn_merges(corpus, 1) == [("u", "n")]  # u-n 22 times, u-g 20
    merges = bpe.learn_merges("low " * 5 + "lower " * 2 + "newest " * 6 + "widest " * 3, 10)
    assert merges[:2] == [("e", "s"), ("es", "t")]
    assert bpe.tokenise("lowest", merges) == ["low", "est"]
    assert bpe.tokenise("xyz", merges) == ["x", "y", "z"]
    assert bpe.learn_merges("ab", 5) == [("a", "b")]  # stops when nothing is left to merge


def test_bpe_refuses_bad_input_with_a_message():
    with pytest.raises(ValueError, match="corpus must be text with at least one word"):
        bpe.learn_merges("  ", 3)
    with pytest.raises(ValueError, match="n_merges must be a non-negative integer"):
        bpe.learn_merges("low", -1)
    with pytest.raises(ValueError, match="word must be non-empty text"):
        bpe.tokenise("", [])
