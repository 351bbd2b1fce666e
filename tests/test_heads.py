"""attnlib.heads: the previous-token and induction scores on perfect heads, and ablation (zero and mean,
only the chosen head, clear errors)."""

import pytest
import torch

from attnlib import AttentionInputError
from attnlib.heads import (
    ablated,
    induction_score,
    induction_targets,
    previous_token_score,
    real_tokens,
    uniform_weights,
)
from attnlib.transformer import TinyTransformer


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


def _model():
    torch.manual_seed(0)
    return TinyTransformer(12, 16, 2, 2, max_len=8, causal=True, mlp=False).eval()


def _heads_seen(model, layer, ids):
    """The heads' outputs side by side ``(batch, n, d_model)`` as ``out_proj`` receives them."""
    captured = {}
    handle = model.blocks[layer].attention.out_proj.register_forward_pre_hook(
        lambda _m, args: captured.setdefault("heads", args[0].clone())
    )
    model(ids)
    handle.remove()
    return captured["heads"]


def test_zero_ablation_removes_exactly_one_head_and_only_inside_the_block():
    model = _model()
    ids = torch.randint(12, (4, 8), generator=torch.Generator().manual_seed(1))
    before = model(ids)
    intact = _heads_seen(model, 0, ids)
    with ablated(model, 0, 1):
        heads = _heads_seen(model, 0, ids)  # registered after the ablation's hook: sees its result
        assert not torch.allclose(model(ids), before)
    assert torch.equal(heads[..., :8], intact[..., :8]) and bool((heads[..., 8:] == 0).all())
    assert torch.equal(model(ids), before)


def test_mean_ablation_keeps_the_batch_mean_and_removes_the_rest():
    model = _model()
    ids = torch.randint(12, (6, 8), generator=torch.Generator().manual_seed(2))
    with ablated(model, 1, (0, 1), how="mean"):
        heads = _heads_seen(model, 1, ids)  # every sequence now has the same head outputs
    assert torch.allclose(heads, heads.mean(dim=0, keepdim=True).expand_as(heads), atol=1e-6)


@pytest.mark.parametrize(
    ("layer", "head", "how", "message"),
    [
        (2, 0, "zero", "layer must be from 0 to 1, got 2"),
        (0, 2, "zero", r"head must be from 0 to 1 \(or a tuple of them\), got 2"),
        (0, (), "zero", "head must be from 0 to 1"),
        (0, 0, "resample", "how must be one of"),
        (0, True, "zero", r"head must be from 0 to 1 .*, got True"),
    ],
)
def test_bad_ablations_are_named(layer, head, how, message):
    with pytest.raises(AttentionInputError, match=message):
        with ablated(_model(), layer, head, how=how):
            pass


def test_ablating_a_block_of_ones_own_is_refused_by_name():
    class Mine(torch.nn.Module):
        def __init__(self, d_model, num_heads):
            super().__init__()

        def forward(self, x, mask=None):
            return x

    model = TinyTransformer(12, 16, 2, 2, max_len=8, block=Mine)
    with pytest.raises(AttentionInputError, match=r"ablated needs attnlib's Block .*, got a Mine"):
        with ablated(model, 0, 0):
            pass


class Oracle(torch.nn.Module):
    """Predicts ``targets`` wherever ``right`` says so, token 0 elsewhere."""

    def __init__(self, targets, right):
        super().__init__()
        self.targets, self.right = targets, right

    def forward(self, ids):
        predicted = torch.where(self.right, self.targets, torch.zeros_like(self.targets))
        return torch.nn.functional.one_hot(predicted, 10).float()


def test_accuracy_by_position_counts_only_scored_predictions():
    from attnlib.heads import accuracy_by_position

    targets = torch.tensor([[1, 2, 3], [4, 5, 6]])
    counted = torch.tensor([[False, True, True], [False, True, False]])
    right = torch.tensor([[True, True, False], [True, False, True]])
    got = accuracy_by_position(Oracle(targets, right), torch.zeros_like(targets), targets, counted)
    assert torch.isnan(got[0]) and got[1:].tolist() == [0.5, 0.0]
    with pytest.raises(AttentionInputError, match="one shape"):
        accuracy_by_position(Oracle(targets, right), torch.zeros(2, 4, dtype=torch.long), targets, counted)


def test_every_score_counts_only_the_queries_named_and_so_does_its_baseline():
    ids = torch.tensor([[5, 8, 2, 5, 8, 0, 0, 0]])  # five tokens, then padding
    real = real_tokens(ids)
    assert real.tolist() == [[True] * 5 + [False] * 3]
    uniform = uniform_weights(1, 8)
    assert torch.allclose(uniform.sum(-1), torch.ones(1, 8)) and float(uniform[0].triu(1).abs().sum()) == 0.0
    # the uniform head on the previous key: 1/(i+1) at query i, averaged over the counted queries 1 … 4
    assert previous_token_score(uniform, real) == pytest.approx(sum(1 / (i + 1) for i in range(1, 5)) / 4)
    assert previous_token_score(uniform) == pytest.approx(sum(1 / (i + 1) for i in range(1, 8)) / 7)
    # a head that is perfect on the real tokens and looks at itself in the padding scores 1 only on them
    head = torch.eye(8)
    head[torch.arange(1, 5), torch.arange(1, 5)] = 0
    head[torch.arange(1, 5), torch.arange(0, 4)] = 1
    assert previous_token_score(head, real) == 1.0 and previous_token_score(head[None], real[0]) == 1.0
    assert previous_token_score(head) < 1.0
    # the padding token repeats: without queries the induction score counts it, with them it does not
    assert induction_targets(ids)[0, 6] == 6
    assert induction_score(uniform, ids, real) == pytest.approx((1 / 4 + 1 / 5) / 2)
    with pytest.raises(AttentionInputError, match="queries must be a boolean tensor"):
        previous_token_score(uniform, torch.ones(5, dtype=torch.bool))
    with pytest.raises(AttentionInputError, match="queries must be a boolean tensor"):
        induction_score(uniform, ids, real.long())
    with pytest.raises(ValueError, match="no query from the second on"):
        previous_token_score(uniform, torch.arange(8) < 1)


def test_a_uniform_head_spreads_its_weight_over_the_keys_the_causal_mask_allows() -> None:
    maps = uniform_weights(2, 5)
    assert maps.shape == (2, 5, 5) and torch.allclose(maps.sum(-1), torch.ones(2, 5))
    assert maps[0, 3, 4] == 0 and maps[0, 3, 0] == 0.25 and maps[1, 0, 0] == 1
