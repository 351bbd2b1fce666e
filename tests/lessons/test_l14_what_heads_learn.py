"""Lesson 14: HeadsExplorer's message for bad input and the lesson's checkers (the head scores and
ablation themselves: tests/test_heads.py)."""

import html

from attnlib import pretrained
from attnlib.heads import ablated, previous_token_score
from attnlib.lessons import check
from attnlib.lessons.l14_what_heads_learn import HeadsExplorer


def test_heads_exercises():
    assert check("what_heads_learn.1", 1).correct
    assert "FOLLOWED" in check("what_heads_learn.1", 0).message
    assert check("what_heads_learn.2", lambda w: w.diagonal(offset=-1).mean()).correct
    assert "offset=-1" in check("what_heads_learn.2", lambda w: w.diagonal(offset=1).mean()).message
    assert check("what_heads_learn.3", 16640).correct
    assert check("what_heads_learn.3", 33280).mistake == "heads-parameters"


def test_the_library_function_is_not_an_answer_to_write_it():
    assert check("what_heads_learn.2", previous_token_score).mistake == "library-function"

    def wraps(weights):
        return previous_token_score(weights)

    assert check("what_heads_learn.2", wraps).mistake == "library-function"
    assert "asks you to write" in check("what_heads_learn.2", wraps).message


def test_both_layer_2_heads_report():
    from attnlib import pretrained
    from attnlib.training import accuracy

    model = pretrained.load("induction")
    with ablated(model, 1, (0, 1)):
        measured = accuracy(model, pretrained.RECIPES["induction"].task)
    assert check("what_heads_learn.4", measured).correct
    intact = accuracy(model, pretrained.RECIPES["induction"].task)
    assert "INSIDE" in check("what_heads_learn.4", intact).message


def test_heads_explorer_names_a_sequence_longer_than_max_len():
    model = pretrained.load("induction")
    e = HeadsExplorer(model, [7, 21, 3, 7, 21, 3], layer=1, head=0)
    assert e.message.value == ""
    e.controls["sequence"].value = " ".join(["5"] * 30)
    assert "type from 2 to 23 token ids, got 30" in e.message.value
    e.controls["sequence"].value = "5 x 7"
    assert "'x' is not a token id" in html.unescape(e.message.value)
