"""Lesson-specific facts of the multihead exercise (the shared contract is in test_exercise_contract.py)."""

from __future__ import annotations

import torch

from attnlib.exercises import multihead as exercise


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
