"""The checker of lesson multihead's exercise: right answer, typical mistakes, missing answer."""

from __future__ import annotations

import pytest
import torch

from attnlib.exercises import check
from attnlib.exercises import multihead as exercise

MISTAKES = exercise.typical_mistakes()


def test_missing_answer_asks_to_replace_the_dots():
    for missing in (..., None):
        feedback = check("multihead", missing)
        assert not feedback.correct
        assert feedback.message.startswith("Replace the ...")


def test_right_answer_passes_as_tensor_and_list():
    right = exercise.expected()
    assert check("multihead", right).correct
    assert check("multihead", right.tolist()).correct


def test_mistakes_differ_from_the_right_answer():
    right = exercise.expected().to(torch.float64)
    for wrong, _ in MISTAKES:
        assert not torch.allclose(wrong.to(torch.float64), right, atol=1e-3)


@pytest.mark.parametrize(("wrong", "hint"), MISTAKES, ids=[str(i) for i in range(len(MISTAKES))])
def test_each_typical_mistake_gets_its_hint(wrong, hint):
    feedback = check("multihead", wrong)
    assert not feedback.correct
    assert feedback.message == hint


def test_wrong_shape_is_named():
    feedback = check("multihead", [1.0, 2.0])
    assert not feedback.correct
    assert "shape" in feedback.message


def test_expected_is_torchs_convention():
    # torch's attn_mask True = NOT allowed: the masked MultiheadAttention must equal attnlib with the mask inverted
    from attnlib import MultiHeadAttention
    from attnlib.modules import causal_mask

    torch.manual_seed(0)
    mha = torch.nn.MultiheadAttention(16, 4, batch_first=True).eval()
    x = torch.randn(1, exercise.N_TOKENS, 16)
    want, _ = mha(x, x, x, attn_mask=exercise.expected())
    ours = MultiHeadAttention.from_torch(mha)(x, mask=causal_mask(exercise.N_TOKENS))
    assert torch.allclose(want, ours, atol=1e-5)
