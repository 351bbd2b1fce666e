"""Lesson-specific facts of the module exercise (the shared contract is in test_exercise_contract.py)."""

from __future__ import annotations

import torch

from attnlib.exercises import module as exercise


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
        context = attention(module.w_query(x), module.w_key(x), module.w_value(x), mask=causal_mask(3))
        assert torch.allclose(weights @ module.w_value(x), context, atol=1e-6)
    # the last token sees everything, so its row equals 004's unmasked attention_percents row
    assert torch.allclose(weights[2], torch.tensor([0.3715, 0.2413, 0.3872]), atol=1e-4)
