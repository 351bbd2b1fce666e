"""Lesson 05 checker: right answer, each typical slip's hint, the placeholder."""

import math

import pytest
import torch

from attnlib import examples, score, softmax
from attnlib.exercises import check
from attnlib.exercises import softmax as ex


def _scores():
    q, k, _ = examples.three_inputs.qkv()
    return score(q, k)


def test_right_answer_is_torch_softmax_of_001_scores():
    assert torch.allclose(ex.expected(), torch.softmax(_scores(), dim=-1))
    assert check("softmax", ex.expected()).correct
    assert check("softmax", ex.expected().tolist()).correct


def test_input_1_row_is_exact_not_document_rounding():
    row = ex.expected()[0]
    assert torch.allclose(row, torch.tensor([0.0634, 0.4683, 0.4683]), atol=1e-4)


@pytest.mark.parametrize("answer", [..., None])
def test_placeholder(answer):
    fb = check("softmax", answer)
    assert not fb.correct and fb.message.startswith("Replace the ...")


@pytest.mark.parametrize(
    ("make", "phrase"),
    [
        (lambda s: torch.softmax(s, dim=0), "dim=0"),
        (lambda s: torch.round(torch.softmax(s, dim=-1) * 10) / 10, "rounded"),
        (lambda s: s.exp(), "did not divide"),
        (lambda s: s / s.sum(dim=-1, keepdim=True), "without exp"),
        (lambda s: torch.softmax(s / math.sqrt(3), dim=-1), "scale"),
    ],
)
def test_typical_wrong_answers_get_their_hint(make, phrase):
    fb = check("softmax", make(_scores()))
    assert not fb.correct
    assert phrase in fb.message


def test_transposed_and_off_answers():
    w = softmax(_scores())
    fb = check("softmax", w + 0.01)
    assert not fb.correct and "off by" in fb.message
    fb = check("softmax", w[:2])
    assert not fb.correct and "shape" in fb.message
