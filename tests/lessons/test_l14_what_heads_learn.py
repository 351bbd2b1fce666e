"""Lesson 14: HeadsExplorer's message for bad input and the lesson's checkers (the head scores and
ablation themselves: tests/test_heads.py)."""

import html

import torch

from attnlib import pretrained
from attnlib.heads import ablated, accuracy_by_position, previous_token_score
from attnlib.lessons import check
from attnlib.lessons.l14_what_heads_learn import HeadsExplorer, pick_yours, scores_along
from attnlib.training import accuracy, train
from attnlib.transformer import TinyTransformer

TASK = pretrained.RECIPES["induction"].task


def test_heads_exercises():
    assert check("what_heads_learn.1", 1).correct
    assert "FOLLOWED" in check("what_heads_learn.1", 0).message
    assert check("what_heads_learn.2", lambda w, real: w.diagonal(offset=-1)[real[1:]].mean()).correct
    assert "offset=-1" in check("what_heads_learn.2", lambda w, real: w.diagonal(offset=1)[real[1:]].mean()).message
    assert "padding" in check("what_heads_learn.2", lambda w, real: w.diagonal(offset=-1).mean()).message
    assert "Off by one" in check("what_heads_learn.2", lambda w, real: w.diagonal(offset=-1)[real[:-1]].mean()).message
    assert not check("what_heads_learn.2", lambda w, real: w.diagonal(offset=-1)[real[1:]].sum()).correct


def test_the_library_function_is_not_an_answer_to_write_it():
    assert check("what_heads_learn.2", previous_token_score).mistake == "library-function"

    def wraps(weights, real):
        return previous_token_score(weights, real)

    assert check("what_heads_learn.2", wraps).mistake == "library-function"
    assert "asks you to write" in check("what_heads_learn.2", wraps).message
    assert check("what_heads_learn.3", accuracy_by_position).mistake == "library-function"


def right_by_position(model, ids, targets, counted):
    with torch.no_grad():
        right = (model(ids).argmax(-1) == targets) & counted
    return right.sum(0) / counted.sum(0)


def test_accuracy_by_position_right_and_its_slips():
    assert check("what_heads_learn.3", right_by_position).correct

    def everything_counted(model, ids, targets, counted):
        with torch.no_grad():
            return (model(ids).argmax(-1) == targets).float().mean(0)

    assert "padding" in check("what_heads_learn.3", everything_counted).message

    def one_number(model, ids, targets, counted):
        with torch.no_grad():
            return ((model(ids).argmax(-1) == targets) & counted).sum() / counted.sum()

    assert "one number" in check("what_heads_learn.3", one_number).message
    assert not check("what_heads_learn.3", lambda *a: torch.full((23,), 0.4)).correct
    assert check("what_heads_learn.3", lambda *a: None).tried is False
    used, said = pick_yours(right_by_position)
    assert used is right_by_position and said.startswith("Measured with your")
    used, said = pick_yours(...)
    assert used is accuracy_by_position and "not solved" in said


def test_accuracy_without_is_run_on_heads_the_lesson_never_asked_about():
    def right(model, layer, heads):
        with ablated(model, layer, heads):
            return accuracy(model, TASK)

    verdict = check("what_heads_learn.4", right)
    assert verdict.correct and "fallback checkpoint" in verdict.message

    def outside(model, layer, heads):
        with ablated(model, layer, heads):
            pass
        return accuracy(model, TASK)

    assert "INSIDE" in check("what_heads_learn.4", outside).message
    model = pretrained.load("induction")
    with ablated(model, 1, (0, 1)):
        printed = accuracy(model, TASK)
    for constant in (printed, 0.0, 0.79):
        assert not check("what_heads_learn.4", lambda m, layer, heads, c=constant: c).correct
        assert not check("what_heads_learn.4", constant).correct
    assert not check("what_heads_learn.4", ablated).correct

    def table_of_the_lesson(model, layer, heads):  # the lesson's printed figures, looked up by head
        with ablated(pretrained.load("induction"), layer, heads) as shown:
            return accuracy(shown, TASK)

    assert not check("what_heads_learn.4", table_of_the_lesson).correct
    assert not check("what_heads_learn.4", accuracy).correct


def test_scores_along_training_reads_the_snapshots():
    torch.manual_seed(0)
    model = TinyTransformer(64, 16, 2, 2, max_len=23, causal=True, mlp=False)
    history = train(model, TASK, steps=4, progress=False, snapshot_steps=(0, 2, 4))
    along = scores_along(history)
    assert along["step"] == [0, 2, 4]
    assert all(0.0 <= v <= 1.0 for v in along["previous_token"] + along["induction"])


def test_heads_explorer_names_a_sequence_longer_than_max_len():
    model = pretrained.load("induction")
    e = HeadsExplorer(model, [7, 21, 3, 7, 21, 3], layer=1, head=0)
    assert e.message.value == ""
    e.controls["sequence"].value = " ".join(["5"] * 30)
    assert "type from 2 to 23 token ids, got 30" in e.message.value
    e.controls["sequence"].value = "5 x 7"
    assert "'x' is not a token id" in html.unescape(e.message.value)
