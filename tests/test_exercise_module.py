"""The checker of lesson module's exercise: right answer, typical mistakes, missing answer."""

from __future__ import annotations

import pytest
import torch

from attnlib.exercises import check
from attnlib.exercises import module as exercise

MISTAKES = exercise.typical_mistakes()


def test_missing_answer_asks_to_replace_the_dots():
    for missing in (..., None):
        feedback = check("module", missing)
        assert not feedback.correct
        assert feedback.message.startswith("Replace the ...")


def test_right_answer_passes_as_tensor_and_list():
    right = exercise.expected()
    assert check("module", right).correct
    assert check("module", right.tolist()).correct


def test_mistakes_differ_from_the_right_answer():
    right = exercise.expected().to(torch.float64)
    for wrong, _ in MISTAKES:
        assert not torch.allclose(wrong.to(torch.float64), right, atol=1e-3)


@pytest.mark.parametrize(("wrong", "hint"), MISTAKES, ids=[str(i) for i in range(len(MISTAKES))])
def test_each_typical_mistake_gets_its_hint(wrong, hint):
    feedback = check("module", wrong)
    assert not feedback.correct
    assert feedback.message == hint


def test_wrong_shape_is_named():
    feedback = check("module", [1.0, 2.0])
    assert not feedback.correct
    assert "shape" in feedback.message


def test_expected_is_004s_module_with_a_causal_mask():
    from attnlib import SelfAttention, attention, examples
    from attnlib.modules import causal_mask

    torch.manual_seed(42)
    module = SelfAttention(2)
    x = examples.encodings.inputs
    weights = exercise.expected()
    # row i attends only to tokens 0..i and sums to 1
    assert torch.equal(weights > 0, causal_mask(3))
    assert torch.allclose(weights.sum(-1), torch.ones(3))
    with torch.no_grad():
        context = attention(module.W_query(x), module.W_key(x), module.W_value(x), mask=causal_mask(3))
        assert torch.allclose(weights @ module.W_value(x), context, atol=1e-6)
    # the last token sees everything, so its row equals 004's unmasked attention_percents row
    assert torch.allclose(weights[2], torch.tensor([0.3715, 0.2413, 0.3872]), atol=1e-4)
