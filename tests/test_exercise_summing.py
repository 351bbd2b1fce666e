"""Lesson 07 checkers: the lesson's solutions pass; the typical slips get their hint and mistake id."""

import torch

from attnlib import derive_qkv, examples, score, softmax
from attnlib.lessons import check


def test_by_hand():
    assert check("summing.1", [1.0, 6.5]).correct
    assert check("summing.1", [4.0, 10.0]).mistake == "weights-not-values"


def test_outputs_runs_on_fresh_inputs():
    assert check("summing.2", lambda w, v: (w[:, :, None] * v[None]).sum(dim=-2)).correct
    assert check("summing.2", lambda w, v: w @ v).correct
    assert check("summing.2", lambda w, v: w.sum(dim=-1)).mistake == "weights-not-values"


def test_new_token():
    x = torch.cat([examples.three_inputs.inputs, torch.tensor([[3.0, 1.0, 1.0, 1.0]])])
    q, k, v = derive_qkv(x, *examples.three_inputs.weights)
    assert check("summing.3", (softmax(score(q, k)) @ v)[3]).correct
    assert check("summing.3", (softmax(score(k[3:], q)) @ v)[0]).mistake == "k-q-transposed"
    assert check("summing.3", softmax(score(q, k), dim=0)[3] @ v).mistake == "softmax-axis"
