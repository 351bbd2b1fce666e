"""Lessons 01–05 checkers: the lessons' solutions pass; the typical slips get their hint and mistake id
(every wrong answer of ``wrong_answers()`` is also run by tests/test_exercise_contract.py)."""

import math

import torch
from torch import nn

from attnlib import derive_qkv, examples, score, softmax
from attnlib.lessons import check


def test_inputs():
    assert check("inputs.1", [[1, 2], [0, -1], [3, 0.5]]).correct
    assert check("inputs.1", [[1, 0, 3], [2, -1, 0.5]]).mistake == "transposed"
    assert check("inputs.2", lambda vectors: torch.stack(vectors)).correct
    assert check("inputs.2", lambda vectors: torch.stack(vectors, dim=1)).mistake == "transposed"
    assert check("inputs.3", [28, 16]).correct
    assert check("inputs.3", (28, 16)).correct
    assert "distinct" in check("inputs.3", [26, 16]).message
    assert len(examples.history.tokens) == 28 and len(set(examples.history.tokens)) == 26


def test_weights():
    assert check("weights.1", [[6, 2], [6, 2], [6, 3]]).correct
    assert check("weights.1", [[2, 6], [2, 6], [3, 6]]).mistake == "transposed"

    def count_weights(d_in, d_k, d_v):
        return d_in * (2 * d_k + d_v)

    assert check("weights.2", count_weights).correct
    assert "W_v is d_in × d_v" in check("weights.2", lambda a, b, c: 3 * a * b).message
    assert check("weights.3", list(nn.Linear(4, 3).weight.shape)).correct
    assert check("weights.3", [4, 3]).mistake == "transposed"


def test_qkv():
    w = examples.three_inputs.weights
    assert check("qkv.1", torch.tensor([2.0, 0, 0, 1]) @ w.w_key).correct
    assert check("qkv.1", [1, 1, 2]).correct
    assert check("qkv.2", lambda x, wq, wk, wv: (x @ wq, x @ wk, x @ wv)).correct
    assert check("qkv.2", lambda x, wq, wk, wv: tuple(derive_qkv(x, wq, wk, wv))).correct
    assert "three tensors" in check("qkv.2", lambda x, wq, wk, wv: x @ wq).message
    assert "swapped" in check("qkv.2", lambda x, wq, wk, wv: (x @ wk, x @ wq, x @ wv)).message
    x, u = torch.tensor([[1.0, 2.0], [3.0, -1.0]]), torch.tensor([[0.0, 1.0], [2.0, 1.0]])
    assert check("qkv.3", x @ u.T).correct
    assert check("qkv.3", x @ u).mistake == "transposed"


def test_scores():
    assert check("scores.1", [1, 2, 4]).correct
    assert check("scores.1", [1, 2, 7]).mistake == "k-q-transposed"
    assert check("scores.2", lambda q, k: q @ k.T).correct
    assert check("scores.2", lambda q, k: k @ q.T).mistake == "k-q-transposed"
    _, keys, _ = examples.three_inputs.qkv()
    assert check("scores.3", keys @ keys.T).correct
    assert check("scores.3", [[2, 4, 4], [4, 32, 20], [4, 20, 14]]).correct


def test_softmax():
    assert check("softmax.1", [0.25, 0.25, 0.5]).correct

    def my_softmax(scores):
        exps = (scores - scores.max(dim=-1, keepdim=True).values).exp()
        return exps / exps.sum(dim=-1, keepdim=True)

    assert check("softmax.2", my_softmax).correct
    naive = check("softmax.2", lambda s: s.exp() / s.exp().sum(dim=-1, keepdim=True))
    assert not naive.correct and "subtract each row's maximum" in naive.message
    assert check("softmax.2", lambda s: torch.softmax(s, dim=0)).mistake == "softmax-axis"
    q, k, _ = examples.four_inputs.qkv()
    s = score(q, k)
    assert check("softmax.3", softmax(s / math.sqrt(5))).correct
    assert check("softmax.3", softmax(s / 5)).mistake == "scale-by-d"
    assert check("softmax.3", softmax(s)).mistake == "scale-forgotten"
