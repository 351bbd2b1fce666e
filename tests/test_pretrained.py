"""The committed checkpoints of lessons 13–14 still do what they must (held-out accuracy, attention
pattern) — measured, not compared byte for byte (another CPU may differ in the last bits)."""

from __future__ import annotations

import pytest
import torch

from attnlib import pretrained
from attnlib.training import accuracy, pattern_mass

ROW_MASS = 0.90  # each row's mean weight on the right key, over held-out sequences


def _row_mass(name: str) -> torch.Tensor:
    recipe = pretrained.RECIPES[name]
    model = pretrained.load(name)
    inputs = recipe.task.batch(256, torch.Generator().manual_seed(123))[0]
    with torch.no_grad():
        model(inputs)
    pattern = recipe.task.pattern(recipe.task.n_tokens) if name == "reverse" else recipe.task.pattern()
    return pattern_mass(model.attention_maps[0][:, 0], pattern).nanmean(dim=0)


@pytest.mark.parametrize("name", sorted(pretrained.RECIPES))
def test_committed_checkpoint_is_small(name):
    assert pretrained.RECIPES[name].path.stat().st_size <= 2 * 1024 * 1024


@pytest.mark.parametrize("name", ["reverse", "copy"])
def test_committed_checkpoint_is_accurate(name):
    assert accuracy(pretrained.load(name), pretrained.RECIPES[name].task) >= 0.99


@pytest.mark.parametrize("name", ["reverse", "copy"])
def test_committed_checkpoint_attends_where_it_must(name):
    mass = _row_mass(name)
    defined = mass[~mass.isnan()]
    assert float(defined.min()) >= ROW_MASS, defined


def test_short_budget_from_scratch_learns_reverse():
    recipe = pretrained.RECIPES["reverse"]
    model, _ = pretrained.train_recipe(recipe, steps=400, progress=False)
    assert accuracy(model, recipe.task) >= 0.95
    inputs = recipe.task.batch(128, torch.Generator().manual_seed(5))[0]
    with torch.no_grad():
        model(inputs)
    mass = pattern_mass(model.attention_maps[0][:, 0], recipe.task.pattern(recipe.task.n_tokens))
    assert float(mass.mean()) >= 0.6


def test_induction_model_grew_a_previous_token_head_and_induction_heads():
    from attnlib.heads import ablated, induction_score, previous_token_score

    recipe = pretrained.RECIPES["induction"]
    model = pretrained.load("induction")
    ids, _, counted = recipe.task.batch(256, torch.Generator().manual_seed(123))
    with torch.no_grad():
        model(ids)
    previous = max(previous_token_score(model.attention_maps[0][:, h]) for h in range(2))
    induction = max(induction_score(model.attention_maps[1][:, h], ids, counted) for h in range(2))
    assert previous >= 0.3 and induction >= 0.5, (previous, induction)
    full = accuracy(model, recipe.task)
    assert full >= 0.7
    with ablated(model, 1, (0, 1)):  # without the induction heads, in-context copying is gone
        assert accuracy(model, recipe.task) <= 0.2
    with ablated(model, 0, 1):  # the other layer-1 head does a smaller share of the job
        assert full - 0.2 <= accuracy(model, recipe.task) < full


def _layer_2_induction(model, ids, counted) -> float:
    from attnlib.heads import induction_score

    with torch.no_grad():
        model(ids)
    return sum(induction_score(model.attention_maps[1][:, h], ids, counted) for h in range(2)) / 2


def test_induction_heads_build_on_layer_1_composition():
    from attnlib.heads import ablated

    recipe = pretrained.RECIPES["induction"]
    model = pretrained.load("induction")
    ids, _, counted = recipe.task.batch(256, torch.Generator().manual_seed(123))
    intact = _layer_2_induction(model, ids, counted)
    for how in ("zero", "mean"):
        with ablated(model, 0, (0, 1), how=how):  # without layer 1, layer 2 no longer finds the target
            assert _layer_2_induction(model, ids, counted) <= intact - 0.4
            assert accuracy(model, recipe.task) <= 0.05
    with ablated(model, 0, 0):
        one_gone = _layer_2_induction(model, ids, counted)
    assert one_gone < intact


def test_one_layer_control_cannot_copy_in_context():
    control = pretrained.load("induction_one_layer")
    task = pretrained.RECIPES["induction_one_layer"].task
    assert len(control.blocks) == 1
    assert accuracy(control, task) <= 0.1
    assert accuracy(pretrained.load("induction"), task) >= 0.7
