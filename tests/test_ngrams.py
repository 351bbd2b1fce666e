"""attnlib.ngrams (lesson 17): counted n-gram models with add-k smoothing, k chosen on training text only."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import pytest
import torch

from attnlib import language, ngrams
from attnlib._validate import AttentionInputError


def counted(train, held_out, vocab_size, n, k):
    """The definition, with plain counters: p(a' | h) = (count(h a') + k) / (count(h ·) + k |V|)."""
    t, h = train.tolist(), held_out.tolist()
    pair, context = Counter(), Counter()
    for i in range(n - 1, len(t)):
        pair[tuple(t[i - n + 1 : i + 1])] += 1
        context[tuple(t[i - n + 1 : i])] += 1
    logs = [
        math.log((pair[tuple(h[i - n + 1 : i + 1])] + k) / (context[tuple(h[i - n + 1 : i])] + k * vocab_size))
        for i in range(n - 1, len(h))
    ]
    return -sum(logs) / len(logs)


@pytest.fixture(scope="module")
def text():
    rhyme = "the cat sat on the mat; the rat sat on the hat and the cat ran. " * 4 + "a bat? no: a gnat!"
    vocabulary = language.Vocabulary(rhyme)
    return vocabulary.encode(rhyme), len(vocabulary)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
@pytest.mark.parametrize("k", [1.0, 0.05])
def test_ngram_loss_is_the_definition(text, n, k):
    ids, vocab_size = text
    train, held_out = ids[:200], ids[200:]
    assert ngrams.ngram_loss(train, held_out, vocab_size, n, k) == pytest.approx(
        counted(train, held_out, vocab_size, n, k), abs=1e-12
    )


def test_bigram_and_unigram_agree_with_the_add_one_baselines(text):
    ids, vocab_size = text
    train, held_out = ids[:200], ids[200:]
    assert ngrams.ngram_loss(train, held_out, vocab_size, 2, 1.0) == pytest.approx(
        language.bigram_loss(train, held_out, vocab_size), abs=1e-12
    )
    # the unigram of language.unigram_loss normalises by N + |V|: the same as add-one over N
    assert ngrams.ngram_loss(train, held_out, vocab_size, 1, 1.0) == pytest.approx(
        language.unigram_loss(train, held_out, vocab_size), abs=1e-12
    )


def test_unseen_contexts_are_uniform_and_their_share_grows_with_n(text):
    ids, vocab_size = text
    train, held_out = ids[:150], ids[150:]
    shares = [ngrams.unseen_context_share(train, held_out, vocab_size, n) for n in range(1, 7)]
    assert shares[0] == 0 and all(a <= b for a, b in itertools.pairwise(shares)) and shares[-1] > 0
    # a context never seen: the prediction is uniform whatever k
    never = torch.tensor([vocab_size - 1, vocab_size - 1, 0])
    lonely = torch.cat([train, torch.tensor([0])])  # vocab_size - 1 twice in a row never occurs in train
    assert ngrams.ngram_loss(lonely, never, vocab_size, 3, 0.01) == pytest.approx(math.log(vocab_size))


def test_choose_k_uses_only_the_training_text(text):
    ids, vocab_size = text
    k, losses = ngrams.choose_k(ids[:200], vocab_size, 3)
    assert set(losses) == set(ngrams.K_GRID) and losses[k] == min(losses.values())
    cut = int(200 * 0.9)
    assert losses[1.0] == pytest.approx(counted(ids[:cut], ids[cut - 2 : 200], vocab_size, 3, 1.0))


def test_table_scores_every_order_on_the_same_characters(text):
    ids, vocab_size = text
    train, held_out = ids[:200], ids[200:]
    rows = ngrams.ngram_table(train, held_out, vocab_size, (1, 2, 3))
    assert [row["n"] for row in rows] == [1, 2, 3]
    for row in rows:
        scored = torch.cat([train[len(train) - (row["n"] - 1) :], held_out])
        assert row["loss"] == pytest.approx(counted(train, scored, vocab_size, row["n"], row["k"]))
        assert row["perplexity"] == pytest.approx(math.exp(row["loss"]))


def test_bad_input_names_the_argument(text):
    ids, vocab_size = text
    with pytest.raises(AttentionInputError, match="held_out must be a 1-D integer tensor"):
        ngrams.ngram_loss(ids, ids.float(), vocab_size, 2)
    with pytest.raises(AttentionInputError, match="k must be a number > 0"):
        ngrams.ngram_loss(ids, ids, vocab_size, 2, 0)
    with pytest.raises(AttentionInputError, match="train has ids"):
        ngrams.ngram_loss(ids, ids, 3, 2)
    with pytest.raises(AttentionInputError, match="overflow"):
        ngrams.ngram_loss(ids, ids, vocab_size, 20)
