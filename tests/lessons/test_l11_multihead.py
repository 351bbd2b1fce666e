"""Lesson 11: MultiHeadExplorer (head selector, all-heads grid, scaling and causal toggles) and the
lesson's checkers (solutions pass; typical slips get their hint and mistake id)."""

from __future__ import annotations

import pytest
import torch

from attnlib import MultiHeadAttention, examples
from attnlib.formatting import annotation
from attnlib.lessons import check
from attnlib.lessons.l11_multihead import MultiHeadExplorer, multihead_inputs
from attnlib.modules import causal_mask, split_heads


def _reference(num_heads: int, scaled: bool, causal: bool) -> torch.Tensor:
    x, _, module = multihead_inputs(num_heads)
    with torch.no_grad():
        q = split_heads(module.w_query(x), num_heads)
        k = split_heads(module.w_key(x), num_heads)
        scores = q @ k.transpose(-2, -1)
        if scaled:
            scores = scores / (16 // num_heads) ** 0.5
        if causal:
            scores = scores.masked_fill(~causal_mask(x.shape[0]), float("-inf"))
        return torch.softmax(scores, dim=-1)


@pytest.mark.parametrize("scaled", [True, False])
@pytest.mark.parametrize("causal", [False, True])
def test_each_head_shows_its_weights(scaled, causal):
    explorer = MultiHeadExplorer()
    explorer.controls["scaled"].value = scaled
    explorer.controls["causal"].value = causal
    want = _reference(4, scaled, causal)
    plot = explorer.views["head"]
    for h in (3, 1):
        explorer.controls["head"].value = h
        assert plot.data == pytest.approx(want[h].double().numpy(), abs=1e-6)
        assert plot.annotations == [annotation(float(w), plot.decimals) for w in want[h].flatten()]
        assert plot.title.startswith(f"head {h + 1} of 4")
    assert plot.row_labels == examples.translate.tokens


def test_all_heads_grid():
    explorer = MultiHeadExplorer()
    explorer.controls["head"].value = "all"
    explorer.controls["causal"].value = True
    want = _reference(4, True, True)
    grid = [explorer.views[f"head {h + 1}"] for h in range(4)]
    for h, heatmap in enumerate(grid):
        assert heatmap.data == pytest.approx(want[h].double().numpy(), abs=1e-6)
        assert heatmap.col_labels == examples.translate.tokens
    assert explorer.grid.layout.display != "none"
    assert explorer.views["head"].layout.display == "none"
    assert explorer.summary() == "MultiHeadExplorer(num_heads=4, head='all', scaled=True, causal=True)"
    explorer.controls["head"].value = 0
    assert explorer.grid.layout.display == "none"


def test_heads_differ_and_rows_sum_to_one():
    weights = MultiHeadExplorer().weights()
    assert weights.shape == (4, 8, 8)
    assert torch.allclose(weights.sum(-1), torch.ones(4, 8))
    assert not torch.allclose(weights[0], weights[1], atol=1e-3)


def test_two_heads_and_png_fallback():
    explorer = MultiHeadExplorer(num_heads=2, head="all")
    assert [name for name in explorer.views if name != "head"] == ["head 1", "head 2"]
    bundle, _ = explorer._repr_mimebundle_()
    assert bundle["text/plain"] == "MultiHeadExplorer(num_heads=2, head='all', scaled=True, causal=False)"
    assert bundle["image/png"]


def test_parameters():
    count = sum(p.numel() for p in MultiHeadAttention(512, num_heads=8).parameters())
    assert check("multihead.1", count).correct
    assert check("multihead.1", 8 * count).mistake == "heads-parameters"


def test_split_runs_on_fresh_inputs():
    def split(x, h):
        b, n, d = x.shape
        return x.view(b, n, h, d // h).transpose(1, 2)

    assert check("multihead.2", split).correct
    no_transpose = check("multihead.2", lambda x, h: x.view(x.shape[0], h, x.shape[1], x.shape[2] // h))
    assert no_transpose.mistake == "heads-view-no-transpose"


def test_window_mask():
    i = torch.arange(5)
    assert check("multihead.3", (i[:, None] - i[None, :]).abs() > 1).correct
    assert not check("multihead.3", (i[:, None] - i[None, :]).abs() <= 1).correct


def test_window_mask_must_be_boolean():
    i = torch.arange(5)
    forbidden = (i[:, None] - i[None, :]).abs() > 1
    for answer in (forbidden.int(), forbidden.float(), forbidden.long().tolist()):
        feedback = check("multihead.3", answer)  # the review: int and 0/1 float masks passed
        assert not feedback.correct and feedback.mistake == "mask-not-boolean" and "boolean mask" in feedback.message
    additive = torch.zeros(5, 5).masked_fill(forbidden, float("-inf"))  # valid in torch, but not what is asked
    feedback = check("multihead.3", additive)
    assert feedback.mistake == "mask-not-boolean" and "give a boolean mask" in feedback.message
    assert "NaN" not in feedback.message
    assert check("multihead.3", forbidden.tolist()).correct  # a nested list of bools is boolean
