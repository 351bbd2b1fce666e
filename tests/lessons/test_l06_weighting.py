"""Lesson 06: WeightingExplorer headless (the grid shown is weight_values(W, V)[query]) and the lesson's
checkers (solutions pass; typical slips get their hint and mistake id)."""

import math

import numpy as np
import pytest
import torch

from attnlib import examples, scale_scores, score, softmax, weight_values
from attnlib.lessons import check
from attnlib.lessons.l06_weighting import WeightingExplorer


def _wv(key, scaled=False):
    q, k, v = examples.get(key).qkv()
    s = score(q, k)
    if scaled:
        s = scale_scores(s, q.shape[-1])
    return softmax(s), v


def test_starts_on_001_input_1():
    e = WeightingExplorer()
    w, v = _wv("001")
    assert np.allclose(e.views["weighted"].data, weight_values(w, v)[0].numpy())
    texts = e.views["weighted"].annotations
    assert texts[:3] == ["0.0634", "0.1268", "0.1901"]
    assert np.allclose(e.views["weights"].data, w[:1].numpy())
    assert np.allclose(e.views["values"].data, v.numpy())
    assert e.summary() == "WeightingExplorer(example='001', query='Input 1', scaled=False)"


@pytest.mark.parametrize(("key", "query"), [("001", 1), ("001", 2), ("000", 0), ("000", 3)])
def test_each_query(key, query):
    e = WeightingExplorer()
    e.controls["example"].value = key
    e.controls["query"].value = query
    w, v = _wv(key)
    assert np.allclose(e.views["weighted"].data, weight_values(w, v)[query].numpy())
    assert np.allclose(e.views["weights"].data, w[query : query + 1].numpy())
    labels = e.views["weighted"].row_labels
    assert labels[0] == f"α{query + 1},1·v1"
    assert examples.get(key).token_labels[query] in e.summary()


def test_scaled_toggle():
    e = WeightingExplorer(example="000")
    e.controls["scaled"].value = True
    w, v = _wv("000", scaled=True)
    assert np.allclose(e.views["weighted"].data, weight_values(w, v)[0].numpy(), atol=1e-6)
    assert "scaled=True" in e.summary()


def test_bad_example_raises_clearly():
    with pytest.raises(ValueError, match="example must be one of"):
        WeightingExplorer(example="042")


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
