"""Lessons 13–14's explorers: bad input gets an inline message naming the problem; the last good map stays."""

from __future__ import annotations

import html

import pytest
import torch

from attnlib import pretrained
from attnlib.lessons.l13_attention_learns import TrainingExplorer, parse_tokens
from attnlib.lessons.l14_what_heads_learn import HeadsExplorer
from attnlib.training import train
from attnlib.transformer import TinyTransformer


@pytest.fixture(scope="module")
def trained():
    recipe = pretrained.RECIPES["reverse"]
    torch.manual_seed(0)
    model = TinyTransformer(**recipe.config)
    history = train(model, recipe.task, steps=20, progress=False, snapshot_steps=(0, 20))
    return history, model.eval(), recipe.task


def test_training_explorer_names_bad_sequences_and_keeps_the_map(trained):
    history, model, task = trained
    e = TrainingExplorer(history, model, task, step=0)
    e.controls["sequence"].value = "1 2 3 4 5 6 7 8"
    good = e.views["trained"].spec()
    e.controls["sequence"].value = "1 2 3"
    assert "type exactly 8 token ids" in e.message.value
    e.controls["sequence"].value = "1 2 3 4 5 6 7 99"
    assert "token id 99 is out of range" in e.message.value
    assert e.views["trained"].spec() == good
    e.controls["sequence"].value = "7 6 5 4 3 2 1 0"
    assert e.message.value == ""


def test_training_explorer_refuses_a_step_it_does_not_have(trained):
    history, model, task = trained
    with pytest.raises(ValueError, match=r"step must be one of the stored steps \[0, 20\]"):
        TrainingExplorer(history, model, task, step=5)


def test_heads_explorer_names_a_sequence_longer_than_max_len():
    model = pretrained.load("induction")
    e = HeadsExplorer(model, [7, 21, 3, 7, 21, 3], layer=1, head=0)
    assert e.message.value == ""
    e.controls["sequence"].value = " ".join(["5"] * 30)
    assert "type from 2 to 23 token ids, got 30" in e.message.value
    e.controls["sequence"].value = "5 x 7"
    assert "'x' is not a token id" in html.unescape(e.message.value)


def test_parse_tokens_says_what_is_wrong():
    with pytest.raises(ValueError, match="type exactly 4 token ids"):
        parse_tokens("1 2", vocab_size=10, n_tokens=4)
    assert parse_tokens("1, 2, 3", vocab_size=10, n_tokens=3).tolist() == [[1, 2, 3]]
