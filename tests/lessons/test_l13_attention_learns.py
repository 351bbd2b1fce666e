"""Lesson 13: TrainingExplorer (bad input gets an inline message naming the problem; the last good map
stays) and the lesson's checkers (solutions pass; typical slips get their hint; the library is not an
answer)."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from attnlib import MultiHeadAttention, pretrained
from attnlib.lessons import check
from attnlib.lessons.l13_attention_learns import TrainingExplorer, parse_tokens, pick_yours
from attnlib.tasks import ReverseTask
from attnlib.training import train
from attnlib.transformer import Block, TinyTransformer


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


def test_parse_tokens_says_what_is_wrong():
    with pytest.raises(ValueError, match="type exactly 4 token ids"):
        parse_tokens("1 2", vocab_size=10, n_tokens=4)
    assert parse_tokens("1, 2, 3", vocab_size=10, n_tokens=3).tolist() == [[1, 2, 3]]


class Parts(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.attention = MultiHeadAttention(d_model, num_heads)
        self.norm_attention = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.GELU(), nn.Linear(4 * d_model, d_model))
        self.norm_mlp = nn.LayerNorm(d_model)


class Right(Parts):
    def forward(self, x, mask=None):
        x = x + self.attention(self.norm_attention(x), mask=mask)
        return x + self.mlp(self.norm_mlp(x))


def _block(forward):
    return type("Learner", (Parts,), {"forward": forward})


def step(model, optimiser, inputs, targets):
    logits = model(inputs)
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
    optimiser.zero_grad()
    loss.backward()
    optimiser.step()
    return loss


def test_predict_and_transfer():
    assert check("attention_learns.1", 5).correct
    assert "from 0" in check("attention_learns.1", 6).message
    assert check("attention_learns.5", 8).correct
    assert "5 positions back" in check("attention_learns.5", 2).message


def test_block_right_and_its_typical_mistakes():
    assert check("attention_learns.2", Right).correct
    post = _block(lambda s, x, mask=None: s.norm_mlp((h := s.norm_attention(x + s.attention(x, mask=mask))) + s.mlp(h)))
    assert "post-LN" in check("attention_learns.2", post).message
    no_residual = _block(lambda s, x, mask=None: s.mlp(s.norm_mlp(s.attention(s.norm_attention(x), mask=mask))))
    assert "residual connections are missing" in check("attention_learns.2", no_residual).message
    no_mlp_residual = _block(lambda s, x, mask=None: s.mlp(s.norm_mlp(x + s.attention(s.norm_attention(x), mask=mask))))
    assert "MLP's residual is missing" in check("attention_learns.2", no_mlp_residual).message
    no_mask = _block(lambda s, x, mask=None: (h := x + s.attention(s.norm_attention(x))) + s.mlp(s.norm_mlp(h)))
    assert "mask is not passed" in check("attention_learns.2", no_mask).message
    returns_tuple = _block(lambda s, x, mask=None: (Right.forward(s, x, mask), None))
    assert check("attention_learns.2", returns_tuple).correct


def test_block_library_and_junk_are_refused_kindly():
    assert "write" in check("attention_learns.2", Block).message

    class Borrowed(Block):
        pass

    assert "write" in check("attention_learns.2", Borrowed).message
    calls_block = _block(lambda s, x, mask=None: Block.forward(s, x, mask=mask))
    assert "write" in check("attention_learns.2", calls_block).message
    assert "class itself" in check("attention_learns.2", Right(16, 2)).message
    assert "Replace the ..." in check("attention_learns.2", ...).message

    class Renamed(nn.Module):
        def __init__(self, d_model, num_heads):
            super().__init__()
            self.attn = MultiHeadAttention(d_model, num_heads)

    assert "has no attention" in check("attention_learns.2", Renamed).message
    stub = _block(lambda s, x, mask=None: None)
    assert "returned None" in check("attention_learns.2", stub).message


def test_train_step_right_and_its_typical_mistakes():
    assert check("attention_learns.3", step).correct

    def no_zero_grad(model, optimiser, inputs, targets):
        logits = model(inputs)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
        loss.backward()
        optimiser.step()
        return loss

    assert "zero_grad" in check("attention_learns.3", no_zero_grad).message

    def late_zero_grad(model, optimiser, inputs, targets):
        logits = model(inputs)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
        loss.backward()
        optimiser.zero_grad()
        optimiser.step()
        return loss

    assert "did not change" in check("attention_learns.3", late_zero_grad).message

    def softmaxed(model, optimiser, inputs, targets):
        probs = model(inputs).softmax(-1)
        loss = F.cross_entropy(probs.reshape(-1, probs.shape[-1]), targets.reshape(-1))
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        return loss

    assert "raw logits" in check("attention_learns.3", softmaxed).message
    assert "returned None" in check("attention_learns.3", lambda *a: None).message
    assert "write" in check("attention_learns.3", train).message


def test_next_token_loss_and_the_shift():
    def right(logits, ids):
        return F.cross_entropy(logits[:, :-1].reshape(-1, logits.shape[-1]), ids[:, 1:].reshape(-1))

    assert check("attention_learns.4", right).correct
    unshifted = check(
        "attention_learns.4", lambda lo, ids: F.cross_entropy(lo.reshape(-1, lo.shape[-1]), ids.reshape(-1))
    )
    assert "No shift" in unshifted.message
    backwards = check(
        "attention_learns.4",
        lambda lo, ids: F.cross_entropy(lo[:, 1:].reshape(-1, lo.shape[-1]), ids[:, :-1].reshape(-1)),
    )
    assert "wrong way" in backwards.message
    assert "does not shift" in check("attention_learns.4", F.cross_entropy).message


def test_causal_reverse_report():
    assert check("attention_learns.6", 0.52).correct
    assert check("attention_learns.6", torch.tensor(0.5)).correct
    assert "too good" in check("attention_learns.6", 1.0).message
    assert "per SEQUENCE" in check("attention_learns.6", 0.0).message
    assert not check("attention_learns.6", "0.5").correct


def test_a_training_step_that_calls_attnlibs_train_is_refused():
    def wraps(model, optimiser, inputs, targets):
        train(model, ReverseTask(10, 6), steps=1, progress=False)
        return step(model, optimiser, inputs, targets)

    assert check("attention_learns.3", wraps).mistake == "library-function"
    assert check("attention_learns.3", train).mistake == "library-function"
    # a method of the same name (nn.Module.train) is not attnlib's train
    assert check("attention_learns.3", lambda m, o, i, t: (m.train(), step(m, o, i, t))[1]).correct


def test_the_lesson_runs_before_and_after_the_exercises():
    block, chosen_step, said = pick_yours(None, None)
    assert "reference block" in said and block is not None and chosen_step is not None
    block, chosen_step, said = pick_yours(Right, step)
    assert block is Right and chosen_step is step and said.startswith("Training with your MyBlock and your")
