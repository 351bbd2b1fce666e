"""Lesson 14 checkers and the head scores."""

import torch

from attnlib.heads import induction_score, induction_targets, previous_token_score
from attnlib.lessons import check


def test_heads_exercises():
    assert check("heads.1", 1).correct
    assert "FOLLOWED" in check("heads.1", 0).message
    assert check("heads.2", lambda w: w.diagonal(offset=-1).mean()).correct
    assert check("heads.3", 16640).correct
    assert check("heads.3", 33280).mistake == "heads-parameters"


def test_scores_on_perfect_heads():
    ids = torch.tensor([[5, 8, 2, 6, 5, 8, 2]])
    assert induction_targets(ids).tolist() == [[-1, -1, -1, -1, 1, 2, 3]]
    previous = torch.zeros(7, 7)
    previous[0, 0] = 1
    previous[torch.arange(1, 7), torch.arange(0, 6)] = 1
    assert previous_token_score(previous) == 1.0
    induction = torch.eye(7)
    for i, j in ((4, 1), (5, 2), (6, 3)):
        induction[i] = 0
        induction[i, j] = 1
    assert induction_score(induction[None], ids) == 1.0
    assert induction_score(previous[None], ids) == 0.0
