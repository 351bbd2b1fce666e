"""Lessons 01–05 checkers: the lessons' solutions pass; the typical slips get their hint and mistake id
(every wrong answer of ``wrong_answers()`` is also run by tests/test_exercise_contract.py)."""

import math

import torch
import torch.nn.functional as F
from torch import nn

from attnlib import derive_qkv, examples, init_projections, prepare_inputs, project, score, softmax
from attnlib.lessons import check


def test_inputs():
    assert check("inputs.1", [[1, 2], [0, -1], [3, 0.5]]).correct
    assert check("inputs.1", [[1, 0, 3], [2, -1, 0.5]]).mistake == "transposed"
    assert check("inputs.2", lambda vectors: torch.stack(vectors)).correct
    assert check("inputs.2", lambda vectors: torch.stack(vectors, dim=1)).mistake == "transposed"
    assert check("inputs.2", prepare_inputs).mistake == "library-function"
    assert check("inputs.3", [28, 16]).correct
    assert check("inputs.3", (28, 16)).correct
    assert "distinct" in check("inputs.3", [26, 16]).message
    assert len(examples.history.tokens) == 28 and len(set(examples.history.tokens)) == 26


def test_weights():
    assert check("projections.1", [[6, 2], [6, 2], [6, 3]]).correct
    assert check("projections.1", [[2, 6], [2, 6], [3, 6]]).mistake == "transposed"
    swapped = check("projections.1", [[6, 2], [6, 3], [6, 2]])
    assert not swapped.correct and "W_k and W_v are swapped" in swapped.message

    def count_parameters(d_in, d_k, d_v):
        return d_in * (2 * d_k + d_v)

    assert check("projections.2", count_parameters).correct
    assert "W_v is d_in × d_v" in check("projections.2", lambda a, b, c: 3 * a * b).message
    via_library = check("projections.2", lambda a, b, c: sum(w.numel() for w in init_projections(a, b, c)))
    assert via_library.mistake == "library-function"
    assert check("projections.3", list(nn.Linear(4, 3).weight.shape)).correct
    assert check("projections.3", [4, 3]).mistake == "transposed"


def test_qkv():
    w = examples.three_inputs.projections
    assert check("qkv.1", torch.tensor([2.0, 0, 0, 1]) @ w.w_key).correct
    assert check("qkv.1", [1, 1, 2]).correct
    assert check("qkv.2", lambda x, wq, wk, wv: (x @ wq, x @ wk, x @ wv)).correct
    assert check("qkv.2", lambda x, wq, wk, wv: tuple(derive_qkv(x, wq, wk, wv))).mistake == "library-function"
    assert check("qkv.2", lambda x, wq, wk, wv: (project(x, wq), project(x, wk), project(x, wv))).mistake == (
        "library-function"
    )
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
    assert check("scores.2", score).mistake == "library-function"
    x = torch.tensor([[1.0, 0, 1], [0, 2, 1], [1, 1, 0], [2, 0, 0]])
    w = torch.tensor([[1.0, 0], [0, 1], [1, 1]])
    assert check("scores.3", (x @ w) @ (x @ w).T).correct
    assert check("scores.3", [[5, 5, 3, 4], [5, 10, 4, 2], [3, 4, 2, 2], [4, 2, 2, 4]]).correct
    assert "project them first" in check("scores.3", x @ x.T).message
    _, keys, _ = examples.three_inputs.qkv()
    assert not check("scores.3", keys @ keys.T).correct  # the old one-liner on the lesson's variable


def test_softmax():
    assert check("softmax.1", [0.25, 0.25, 0.5]).correct

    def my_softmax(scores):
        exps = (scores - scores.max(dim=-1, keepdim=True).values).exp()
        return exps / exps.sum(dim=-1, keepdim=True)

    assert check("softmax.2", my_softmax).correct
    naive = check("softmax.2", lambda s: s.exp() / s.exp().sum(dim=-1, keepdim=True))
    assert not naive.correct and "subtract each row's maximum" in naive.message
    over_queries = check("softmax.2", lambda s: (s - s.max(0).values).exp() / (s - s.max(0).values).exp().sum(0))
    assert over_queries.mistake == "softmax-axis"
    for library in (softmax, torch.softmax, F.softmax, lambda s: s.softmax(-1), lambda s: torch.softmax(s, dim=0)):
        assert check("softmax.2", library).mistake == "library-function"
    global_max = check("softmax.2", lambda s: (s - s.max()).exp() / (s - s.max()).exp().sum(-1, keepdim=True))
    assert not global_max.correct and "underflows" in global_max.message and "overflows" not in global_max.message

    q, k, _ = examples.four_inputs.qkv()
    s = score(q, k).double()
    low, high = 1.0, 100.0  # the smallest T with every weight of softmax(s / T) at most 0.9, by bisection
    for _ in range(60):
        mid = (low + high) / 2
        low, high = (mid, high) if softmax(s / mid).max() > 0.9 else (low, mid)
    assert 7.9 < high < 8.0
    assert check("softmax.3", high).correct
    assert check("softmax.3", high + 0.005).correct
    assert not check("softmax.3", high + 0.05).correct
    assert "√5 is lesson 08's scale" in check("softmax.3", math.sqrt(5)).message
    assert "row 1 alone" in check("softmax.3", 2.1258).message
    assert not check("softmax.3", softmax(s / math.sqrt(5))).correct  # the old one-liner
