"""Lesson 06 checkers: the lesson's solutions pass; the typical slips get their hint and mistake id."""

import math

import torch

from attnlib import examples, score, softmax, weight_values
from attnlib.lessons import check


def test_by_hand():
    alpha, v = torch.tensor([0.25, 0.75]), torch.tensor([[4.0, 2.0], [0.0, 8.0]])
    assert check("weighting.1", [[1.0, 0.5], [0.0, 6.0]]).correct
    assert check("weighting.1", alpha[:, None] * v).correct
    summed = check("weighting.1", [1.0, 6.5])
    assert summed.mistake == "weights-not-values" and "[1, 6.5]" in summed.message


def test_weigh_runs_on_fresh_inputs():
    def weigh(weights, values):
        return weights[:, :, None] * values[None, :, :]

    assert check("weighting.2", weigh).correct
    assert check("weighting.2", lambda a, b: b[:, None] * a.T[:, :, None]).mistake == "transposed"
    assert check("weighting.2", lambda a, b: a @ b).mistake == "weights-not-values"
    assert check("weighting.2", weight_values).mistake == "library-function"
    assert check("weighting.2", lambda a, b: weight_values(a, b)).mistake == "library-function"
    fb = check("weighting.2", lambda a, b: 1 / 0)
    assert not fb.correct and "ZeroDivisionError" in fb.message


def test_scaled_input_1():
    q, k, v = examples.three_inputs.qkv()
    s = score(q, k)
    assert check("weighting.3", softmax(s / math.sqrt(3))[0][:, None] * v).correct
    assert check("weighting.3", softmax(s)[0][:, None] * v).mistake == "scale-forgotten"
    assert check("weighting.3", softmax(s / 3)[0][:, None] * v).mistake == "scale-by-d"
