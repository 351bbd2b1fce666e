"""Lesson 19: its two checkers with right, typical wrong and missing answers."""

from __future__ import annotations

import itertools

import pytest

from attnlib.lessons import MISTAKES, check, exercises, lesson_module
from attnlib.lessons._check import CHECKER_FAILED

WRONG = lesson_module("next").wrong_answers()
CASES = [(name, i) for name, answers in WRONG.items() for i in range(len(answers))]


def test_each_exercise_has_typical_wrong_answers():
    assert exercises("where_next") == ["where_next.1", "where_next.2"]
    assert set(WRONG) == {"where_next.1", "where_next.2"} and all(len(a) >= 2 for a in WRONG.values())


@pytest.mark.parametrize(("name", "index"), CASES)
def test_each_typical_wrong_answer_gets_its_hint(name, index):
    answer, mistake = WRONG[name][index]
    feedback = check(name, answer)
    assert not feedback.correct and not feedback.message.startswith(CHECKER_FAILED)
    assert not feedback.message.endswith("recompute it step by step.")
    assert feedback.mistake == mistake and (mistake is None or mistake in MISTAKES)


@pytest.mark.parametrize("name", ["where_next.1", "where_next.2"])
def test_missing_answer_asks_to_replace_the_dots(name):
    for missing in (..., None):
        assert check(name, missing).message.startswith("Replace the ...")


def test_next_exercises():
    from collections import Counter

    def right(counts):
        pairs = Counter()
        for word, n in counts.items():
            for a, b in itertools.pairwise(word):
                pairs[a, b] += n
        return max(pairs, key=pairs.get)

    assert check("where_next.1", right).correct
    assert check("where_next.1", lambda counts: ["u", "n"]).correct
    assert "pair of characters" in check("where_next.1", lambda counts: "un").message
    assert "every word counts once" in check("where_next.1", lambda counts: ("u", "g")).message
    from attnlib import bpe

    learned = check(
        "where_next.1", lambda counts: bpe.learn_merges(" ".join(w for w, n in counts.items() for _ in range(n)), 1)[0]
    )
    assert not learned.correct and learned.mistake == "library-function"  # the review: learn_merges passed

    def stub(counts): ...

    assert "returned None" in check("where_next.1", stub).message
    assert "raised" in check("where_next.1", lambda counts: counts["x"]).message


def test_share_kv_groups_consecutive_query_heads():
    assert check("where_next.2", lambda kv, h: kv.repeat_interleave(h // kv.shape[1], dim=1)).correct
    b, g = 2, 3
    expand = lambda kv, h: kv[:, :, None].expand(b, 2, g, 5, 3).reshape(b, h, 5, 3)  # noqa: E731
    assert check("where_next.2", expand).correct
    assert "CONSECUTIVE" in check("where_next.2", lambda kv, h: kv.repeat(1, h // kv.shape[1], 1, 1)).message
    assert "still the 2 key/value heads" in check("where_next.2", lambda kv, h: kv).message
    assert "times smaller" in check("where_next.2", lambda kv, h: kv.repeat_interleave(3, dim=1)).message
    assert not check("where_next.2", 4).correct  # the former one-line division is not an answer any more


def test_merges_explorer_counts_pairs_and_outlines_the_next_merge():
    from attnlib.lessons.l19_where_next import MergesExplorer

    corpus = "hug " * 10 + "pug " * 5 + "pun " * 12 + "bun " * 10 + "hugs " * 5
    e = MergesExplorer(corpus)
    labels = e.views["pairs"].row_labels
    u, n = labels.index("u"), labels.index("n")
    assert e.views["pairs"].data[u, n] == 22 and e.next_merge == ("u", "n")
    assert e.views["pairs"].highlight_cells == [[u, n]]
    e.controls["merges"].value = 1
    assert "un" in e.views["pairs"].row_labels and e.next_merge == ("u", "g")
    assert e.summary() == "MergesExplorer(merges=1, next merge=('u', 'g'))"
    before = e.views["pairs"].data.copy()
    e.controls["corpus"].value = "   "
    assert "corpus must be text with at least one word" in e.message.value
    assert (e.views["pairs"].data == before).all()
