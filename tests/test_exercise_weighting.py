"""Lesson 06 checker: right answer, each typical slip's hint, the placeholder."""

import pytest
import torch

from attnlib import examples, score, softmax, weight_values
from attnlib.exercises import check
from attnlib.exercises import weighting as ex


def _parts():
    q, k, v = examples.three_inputs.qkv()
    s = score(q, k)
    return s, softmax(s), v


def test_right_answer():
    _s, w, v = _parts()
    by_hand = torch.stack([w[0, j] * v[j] for j in range(3)])
    assert torch.allclose(ex.expected(), by_hand)
    assert torch.allclose(ex.expected(), weight_values(w, v)[0])
    assert check("weighting", by_hand).correct


def test_document_000_indexing_is_attnlib_layout_transposed():
    q, k, v = examples.four_inputs.qkv()
    w = softmax(score(q, k))
    doc = v[:, None] * w.T[:, :, None]  # document 000: [value j, query i]
    assert torch.equal(doc, weight_values(w, v).transpose(0, 1))


@pytest.mark.parametrize("answer", [..., None])
def test_placeholder(answer):
    fb = check("weighting", answer)
    assert not fb.correct and fb.message.startswith("Replace the ...")


@pytest.mark.parametrize(
    ("make", "phrase"),
    [
        (lambda s, w, v: w[:, 0:1] * v, "column 1"),
        (lambda s, w, v: s[0][:, None] * v, "raw scores"),
        (lambda s, w, v: torch.tensor([0.0, 0.5, 0.5])[:, None] * v, "rounded"),
        (lambda s, w, v: w[0][:, None] * v.T, "Vᵀ"),
    ],
)
def test_typical_wrong_answers_get_their_hint(make, phrase):
    fb = check("weighting", make(*_parts()))
    assert not fb.correct
    assert phrase in fb.message
