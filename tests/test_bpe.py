"""attnlib.bpe, lesson 17's byte-pair merges: the most frequent pair weighted by word counts; clear errors."""

from collections import Counter

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


def test_a_whole_text_is_cut_into_pieces_and_tokens_that_give_it_back():
    text = "FIRST WITCH.\nWhen shall we three meet again?\n\n  In thunder, lightning, or in rain?\n"
    pieces = bpe.PIECES.findall(text)
    assert "".join(pieces) == text and " shall" in pieces and "\n\n " in pieces  # a word keeps its space
    merges = bpe.learn_text_merges(text * 3, 30)
    pair_counts = bpe.pair_counts(Counter(tuple(p) for p in bpe.PIECES.findall(text * 3)))
    assert merges[0] == ("i", "n") and pair_counts[("i", "n")] == max(pair_counts.values())  # in, rain, lightning
    tokens = bpe.encode_text("When thunder meets rain.", merges)
    assert "".join(tokens) == "When thunder meets rain." and len(tokens) < len("When thunder meets rain.")
    assert all(not (t.strip() and " " in t.strip()) for t in tokens)  # no token spans two words
    with pytest.raises(ValueError, match="text must be non-empty text"):
        bpe.learn_text_merges("", 3)
