"""Lesson 18: its two checkers with right, typical wrong and missing answers."""

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
    assert check("where_next.2", 4).correct and check("where_next.2", 4.0).correct
    assert "invert" in check("where_next.2", 0.25).message

    def stub(counts): ...

    assert "returned None" in check("where_next.1", stub).message
    assert "raised" in check("where_next.1", lambda counts: counts["x"]).message


def test_merges_explorer_counts_pairs_and_outlines_the_next_merge():
    from attnlib.lessons.l18_where_next import MergesExplorer

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
