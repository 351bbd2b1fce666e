"""Lesson 07: SummingExplorer headless (the running sum and the context shown equal attnlib's) and the
lesson's checkers (solutions pass; typical slips get their hint and mistake id)."""

import numpy as np
import pytest
import torch

from attnlib import attention, derive_qkv, examples, score, softmax, sum_weighted_values, weight_values
from attnlib.lessons import check
from attnlib.lessons.l07_summing import SummingExplorer


def _wv(key):
    q, k, v = examples.get(key).qkv()
    return softmax(score(q, k)), v


def test_starts_with_output_1_of_001():
    e = SummingExplorer()
    w, v = _wv("001")
    shown = e.views["sum"].data
    assert np.allclose(shown[:3], weight_values(w, v)[0].numpy())
    assert np.allclose(shown[3], (w @ v)[0].numpy())
    assert e.views["sum"].annotations[-3:] == ["1.9366", "6.6831", "1.5951"]
    assert np.allclose(e.views["context"].data, sum_weighted_values(weight_values(w, v)).numpy())
    assert len(e.views["context"].highlight_boxes) == 1
    assert e.views["context"].highlight_boxes[0][1] == -0.5
    assert e.summary() == "SummingExplorer(example='001', query='Input 1', terms=3, scaled=False)"


@pytest.mark.parametrize("terms", [1, 2, 3])
def test_partial_sums(terms):
    e = SummingExplorer()
    e.controls["query"].value = 1
    e.controls["terms"].value = terms
    w, v = _wv("001")
    grid = weight_values(w, v)[1]
    assert np.allclose(e.views["sum"].data[-1], grid[:terms].sum(0).numpy())
    assert len(e.views["sum"].highlight_boxes) == terms + 1
    assert e.views["context"].highlight_boxes[0][1] == 0.5
    last = e.views["sum"].row_labels[-1]
    assert last == ("= z2" if terms == 3 else f"sum of {terms}")


def test_switch_to_000_resets_terms():
    e = SummingExplorer()
    e.controls["terms"].value = 1
    e.controls["example"].value = "000"
    w, v = _wv("000")
    assert e.controls["terms"].max == 4 and e.controls["terms"].value == 4
    assert e.views["sum"].data.shape == (5, 5)
    assert np.allclose(e.views["context"].data, (w @ v).numpy(), atol=1e-5)
    assert np.allclose(e.views["sum"].data[-1], (w @ v)[0].numpy(), atol=1e-5)


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
    scaled = check("summing.3", attention(q, k, v)[3])  # attention() scales by default: 001 does not
    assert not scaled.correct and "001 does not scale: scale=1.0" in scaled.message
    assert check("summing.3", attention(q, k, v, scale=1.0)[3]).correct


def attention_from_weights(w, v):
    return w @ v


def test_context_of_refuses_attnlib():
    from attnlib import project

    assert check("summing.2", lambda weights, values: project(weights, values)).mistake == "library-function"
