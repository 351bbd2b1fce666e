"""Lesson 08 checker: right answer, each typical slip's hint, the placeholder."""

import math

import pytest
import torch

from attnlib import attention_weights, examples, score
from attnlib.exercises import check
from attnlib.exercises import scaling as ex


def _scores():
    q, k, _ = examples.four_inputs.qkv()
    return score(q, k)


def test_right_answer_is_default_scaled_attention_weights():
    q, k, _v = examples.four_inputs.qkv()
    assert q.shape[-1] == 5
    assert torch.allclose(ex.expected(), torch.softmax(_scores() / math.sqrt(5), dim=-1))
    assert torch.allclose(ex.expected(), attention_weights(q, k))
    assert check("scaling", ex.expected()).correct


@pytest.mark.parametrize("answer", [..., None])
def test_placeholder(answer):
    fb = check("scaling", answer)
    assert not fb.correct and fb.message.startswith("Replace the ...")


@pytest.mark.parametrize(
    ("make", "phrase"),
    [
        (lambda s: torch.softmax(s, dim=-1), "forgot to divide"),
        (lambda s: torch.softmax(s / 5, dim=-1), "square root"),
        (lambda s: torch.softmax(s / 2, dim=-1), "sqrt(4)"),
        (lambda s: torch.softmax(s * math.sqrt(5), dim=-1), "multiplied"),
        (lambda s: s / math.sqrt(5), "scaled scores"),
        (lambda s: torch.softmax(s / math.sqrt(5), dim=0), "dim=-1"),
        (lambda s: torch.softmax(s.T / math.sqrt(5), dim=-1), "K Qᵀ"),
    ],
)
def test_typical_wrong_answers_get_their_hint(make, phrase):
    fb = check("scaling", make(_scores()))
    assert not fb.correct
    assert phrase in fb.message
