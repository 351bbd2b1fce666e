"""Lesson 12 checkers: the solutions pass; the typical slips get their hint."""

import math

import torch

from attnlib import attention, derive_qkv, examples
from attnlib.lessons import check


def test_by_hand():
    assert check("positions.1", [math.sin(1), math.cos(1)]).correct
    assert "Sine first" in check("positions.1", [math.cos(1), math.sin(1)]).message


def test_sinusoid_code():
    def sinusoid(n_tokens, d_model):
        pos = torch.arange(n_tokens)[:, None]
        theta = 10000 ** (-torch.arange(0, d_model, 2) / d_model)
        p = torch.zeros(n_tokens, d_model)
        p[:, 0::2], p[:, 1::2] = torch.sin(pos * theta), torch.cos(pos * theta)
        return p

    assert check("positions.2", sinusoid).correct


def test_bites():
    w = examples.three_inputs.projections
    z = attention(*derive_qkv(examples.three_inputs.inputs, *w), scale=1.0)
    assert check("positions.3", z[[2, 1, 0]]).correct
    assert "own order" in check("positions.3", z).message
