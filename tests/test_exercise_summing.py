"""Lesson 07 checkers: the lesson's solutions pass; the typical slips get their hint and mistake id."""

import torch

from attnlib import derive_qkv, examples, score, softmax, sum_weighted_values, weight_values
from attnlib.lessons import check


def test_by_hand():
    assert check("summing.1", [1.0, 6.5]).correct
    assert check("summing.1", [4.0, 10.0]).mistake == "weights-not-values"


def test_outputs_runs_on_fresh_inputs():
    assert check("summing.2", lambda w, v: (w[:, :, None] * v[None]).sum(dim=-2)).correct
    assert check("summing.2", lambda w, v: w @ v).correct
    assert check("summing.2", lambda w, v: w.sum(dim=-1)).mistake == "weights-not-values"
    assert check("summing.2", lambda w, v: sum_weighted_values(weight_values(w, v))).mistake == "library-function"
    assert check("summing.2", lambda w, v: attention_from_weights(w, v)).correct  # a helper of one's own is fine


def test_new_token():
    x = torch.cat([examples.three_inputs.inputs, torch.tensor([[3.0, 1.0, 1.0, 1.0]])])
    q, k, v = derive_qkv(x, *examples.three_inputs.projections)
    assert check("summing.3", (softmax(score(q, k)) @ v)[3]).correct
    value_4 = check("summing.3", v[3])  # what "whose value will it copy most?" invites
    assert not value_4.correct and "value 4 itself" in value_4.message and "You scored" not in value_4.message
    assert "value 4 itself" in check("summing.3", (softmax(score(k[3:], q)) @ v)[0]).message
    assert check("summing.3", softmax(score(q, k), dim=0)[3] @ v).mistake == "softmax-axis"


def attention_from_weights(w, v):
    return w @ v
