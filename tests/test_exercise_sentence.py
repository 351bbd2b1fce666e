"""Lesson-specific facts of the sentence exercise (the shared contract is in test_exercise_contract.py)."""

from __future__ import annotations

import torch

from attnlib.exercises import sentence as exercise


def test_expected_comes_from_003s_omega():
    from attnlib import examples

    om = exercise.omega()
    # 003 prints omega[1] (the row of "you"); our omega must reproduce it
    printed = torch.tensor([-25.1623, 9.3602, 14.3667, 32.1482, 53.8976, 46.6626, -1.2131, -32.9392])
    assert torch.allclose(om[1], printed, atol=1e-3)
    assert examples.translate.tokens[exercise.QUERY_INDEX] == "translate"
    assert torch.allclose(exercise.expected(), torch.softmax(om[5] / 4, dim=0))
