"""Lesson 11 checkers: the lesson's solutions pass; the typical slips get their hint and mistake id."""

import torch

from attnlib import MultiHeadAttention
from attnlib.lessons import check


def test_parameters():
    count = sum(p.numel() for p in MultiHeadAttention(512, num_heads=8).parameters())
    assert check("multihead.1", count).correct
    assert check("multihead.1", 8 * count).mistake == "heads-parameters"


def test_split_runs_on_fresh_inputs():
    def split(x, h):
        b, n, d = x.shape
        return x.view(b, n, h, d // h).transpose(1, 2)

    assert check("multihead.2", split).correct
    no_transpose = check("multihead.2", lambda x, h: x.view(x.shape[0], h, x.shape[1], x.shape[2] // h))
    assert no_transpose.mistake == "heads-view-no-transpose"


def test_window_mask():
    i = torch.arange(5)
    assert check("multihead.3", (i[:, None] - i[None, :]).abs() > 1).correct
    assert not check("multihead.3", (i[:, None] - i[None, :]).abs() <= 1).correct
