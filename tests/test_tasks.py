"""attnlib.tasks: the two-colours task of lesson 11 (the sequence tasks are tested through lessons 13–14)."""

from __future__ import annotations

import pytest
import torch

from attnlib._validate import AttentionInputError
from attnlib.tasks import BLUE, GREY, RED, TwoColoursTask


def test_two_colours_batches_hold_each_colour_as_often_as_asked():
    task = TwoColoursTask(n_values=6, per_colour=3, n_grey=2)
    colours, numbers, targets = task.batch(50, torch.Generator().manual_seed(0))
    assert colours.shape == numbers.shape == (50, 8) and targets.shape == (50,)
    assert ((colours == RED).sum(1) == 3).all() and ((colours == BLUE).sum(1) == 3).all()
    assert ((colours == GREY).sum(1) == 2).all()
    assert 0 <= int(numbers.min()) and int(numbers.max()) < 6
    assert 0 <= int(targets.min()) and int(targets.max()) < task.n_classes == 31
    # the target is the red sum minus the blue sum, shifted into a class index, for every set
    for c, n, t in zip(colours.tolist(), numbers.tolist(), targets.tolist()):
        red = sum(v for k, v in zip(c, n) if k == RED)
        blue = sum(v for k, v in zip(c, n) if k == BLUE)
        assert t == red - blue + task.offset


def test_two_colours_places_vary_and_are_seeded():
    task = TwoColoursTask()
    first = task.batch(64, torch.Generator().manual_seed(3))
    again = task.batch(64, torch.Generator().manual_seed(3))
    assert all(torch.equal(a, b) for a, b in zip(first, again))
    assert len({tuple(row) for row in first[0].tolist()}) > 10  # the red and blue places move


def test_answer_by_hand():
    task = TwoColoursTask(n_values=5, per_colour=1, n_grey=1)
    colours = torch.tensor([[RED, GREY, BLUE], [BLUE, RED, GREY]])
    numbers = torch.tensor([[4, 3, 1], [2, 0, 4]])
    assert task.answer(colours, numbers).tolist() == [3, -2]


def test_bad_input_is_named_with_its_shape():
    with pytest.raises(AttentionInputError, match="n_values must be an integer from 2"):
        TwoColoursTask(n_values=1)
    with pytest.raises(AttentionInputError, match="per_colour"):
        TwoColoursTask(per_colour=0)
    task = TwoColoursTask()
    with pytest.raises(AttentionInputError, match="batch_size"):
        task.batch(0, torch.Generator())
    with pytest.raises(AttentionInputError, match=r"generator must be a torch\.Generator"):
        task.batch(4, 0)
    with pytest.raises(AttentionInputError, match=r"colours \(2, 3\) and numbers \(2, 4\) must have the same shape"):
        task.answer(torch.zeros(2, 3, dtype=torch.long), torch.zeros(2, 4, dtype=torch.long))
    with pytest.raises(
        AttentionInputError, match=r"numbers must be a \(batch, n_items\) tensor of integers, got \(6,\)"
    ):
        task.answer(torch.zeros(1, 6, dtype=torch.long), torch.zeros(6, dtype=torch.long))
    with pytest.raises(AttentionInputError, match="numbers must be from 0 to n_values − 1 = 4, got 0 … 7"):
        task.answer(torch.zeros(1, 2, dtype=torch.long), torch.tensor([[0, 7]]))
    with pytest.raises(AttentionInputError, match="colours must be ids 0 … 2"):
        task.answer(torch.tensor([[3, 0]]), torch.zeros(1, 2, dtype=torch.long))
