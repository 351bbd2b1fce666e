"""Lesson 09 checkers: the lesson's solutions pass; the typical slips get their hint and mistake id."""

import torch

from attnlib.lessons import check


def masked_softmax(scores, mask):
    return torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)


def safe_masked_softmax(scores, mask):
    weights = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)
    return torch.where(mask.any(dim=-1, keepdim=True), weights, torch.zeros_like(weights))


def test_predict():
    assert check("module.1", [0.2689, 0.7311, 0.0]).correct
    assert check("module.1", torch.softmax(torch.tensor([1.0, 2.0, 0.0]), 0)).mistake == "mask-with-zero"
    after = torch.softmax(torch.tensor([1.0, 2.0, 3.0]), 0) * torch.tensor([1.0, 1.0, 0.0])
    assert check("module.1", after).mistake == "mask-after-softmax"


def test_masked_softmax_runs_on_fresh_inputs():
    assert check("module.2", masked_softmax).correct
    assert check("module.2", lambda s, m: torch.softmax(s.masked_fill(~m, 0.0), -1)).mistake == "mask-with-zero"
    assert check("module.2", lambda s, m: torch.softmax(s, -1) * m).mistake == "mask-after-softmax"


def test_a_fully_masked_row():
    assert check("module.3", safe_masked_softmax).correct
    assert check("module.3", masked_softmax).mistake == "fully-masked-row"  # NaN
    large = check("module.3", lambda s, m: torch.softmax(s.masked_fill(~m, -1e9), -1))
    assert large.mistake == "fully-masked-row" and "uniform" in large.message
