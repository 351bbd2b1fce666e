"""Lesson 07 checker: right answer, each typical slip's hint, the placeholder."""

import pytest
import torch

from attnlib import attention, examples, score, softmax, weight_values
from attnlib.exercises import check
from attnlib.exercises import summing as ex


def _parts():
    q, k, v = examples.three_inputs.qkv()
    s = score(q, k)
    return s, softmax(s), v


def test_right_answer_equals_w_at_v_and_unscaled_attention():
    _s, w, v = _parts()
    q, k, _ = examples.three_inputs.qkv()
    assert torch.allclose(ex.expected(), w @ v)
    assert torch.allclose(ex.expected(), attention(q, k, v, scale=1.0))
    assert torch.allclose(ex.expected()[0], torch.tensor([1.9366, 6.6831, 1.5951]), atol=1e-4)
    assert check("summing", w @ v).correct


@pytest.mark.parametrize("answer", [..., None])
def test_placeholder(answer):
    fb = check("summing", answer)
    assert not fb.correct and fb.message.startswith("Replace the ...")


@pytest.mark.parametrize(
    ("make", "phrase"),
    [
        (lambda s, w, v: weight_values(w, v).sum(dim=0), "over the queries"),
        (lambda s, w, v: w.T @ v, "transposed"),
        (lambda s, w, v: s @ v, "softmax first"),
        (lambda s, w, v: torch.cat([torch.tensor([[2.0, 7.0, 1.5]]), (w @ v)[1:]]), "rounded"),
        (lambda s, w, v: (w @ v)[:1], "only Output 1"),
    ],
)
def test_typical_wrong_answers_get_their_hint(make, phrase):
    fb = check("summing", make(*_parts()))
    assert not fb.correct
    assert phrase in fb.message
