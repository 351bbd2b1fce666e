"""Lesson 09: ModuleExplorer (what it shows equals SelfAttention's computation for each setting) and the
lesson's checkers (solutions pass; typical slips get their hint and mistake id)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attnlib import SelfAttention, examples
from attnlib.formatting import annotation
from attnlib.lessons import check
from attnlib.lessons.l09_module import ModuleExplorer, module_inputs
from attnlib.modules import causal_mask


def _reference(source: str, scaled: bool, causal: bool):
    x, labels, _ = module_inputs(source)
    torch.manual_seed(42)
    module = SelfAttention(x.shape[-1], scaled=scaled)
    with torch.no_grad():
        mask = causal_mask(x.shape[0]) if causal else None
        q, k, v = module.w_query(x), module.w_key(x), module.w_value(x)
        scores = q @ k.T / (x.shape[-1] ** 0.5 if scaled else 1.0)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
    return weights, weights @ v, labels


def test_starts_on_004s_numbers():
    explorer = ModuleExplorer()
    texts = explorer.views["weights"].annotations
    # document 004's attention_percents, printed to 4 decimals
    assert texts == ["0.1403", "0.0845", "0.7752", "0.0292", "0.0123", "0.9586", "0.3715", "0.2413", "0.3872"]
    context = explorer.views["context"].data
    printed = [[-0.7802, -1.8837], [-0.9534, -2.3194], [-0.4130, -0.9592]]  # document 004's final output
    assert context == pytest.approx(np.array(printed), abs=1.01e-4)
    assert str(explorer) == "ModuleExplorer(source='004', scaled=True, causal=False)"


@pytest.mark.parametrize("source", ["004", "003"])
@pytest.mark.parametrize("scaled", [True, False])
@pytest.mark.parametrize("causal", [False, True])
def test_each_setting_shows_attnlibs_computation(source, scaled, causal):
    explorer = ModuleExplorer()
    explorer.controls["source"].value = source
    explorer.controls["scaled"].value = scaled
    explorer.controls["causal"].value = causal
    weights, context, labels = _reference(source, scaled, causal)
    plot = explorer.views["weights"]
    assert plot.data == pytest.approx(weights.double().numpy(), abs=1e-6)
    assert explorer.views["context"].data == pytest.approx(context.double().numpy(), abs=1e-5)
    # the numbers written in the cells are the weights to 4 decimals; the explorer and this reference
    # compute them in a different order, so a weight that lies on a rounding boundary (003 unscaled has
    # 0.28925: 0.28925002 here, 0.28924999 there, on AVX-512) may round either way: allow half a unit
    # of the last decimal plus float32's error, never more
    assert plot.annotations == [annotation(float(w), plot.decimals) for w in plot.data.flatten()]
    shown = np.array([float(text) for text in plot.annotations])
    assert np.abs(shown - weights.double().numpy().flatten()).max() <= 0.5e-4 + 1e-7
    assert plot.row_labels == labels
    assert explorer.message.value == ""
    if causal:
        assert (plot.data[~causal_mask(len(labels)).numpy()] == 0).all()


def test_causal_first_row_is_one_hot_and_summary_follows():
    explorer = ModuleExplorer(causal=True)
    assert explorer.views["weights"].data[0].tolist() == [1.0, 0.0, 0.0]
    explorer.controls["source"].value = "003"
    assert explorer.views["weights"].data.shape == (8, 8)
    assert explorer.views["weights"].col_labels == examples.translate.tokens
    assert "source='003'" in explorer.summary() and "causal=True" in explorer.summary()


def test_display_bundle_has_png_fallback_and_summary():
    bundle, _ = ModuleExplorer()._repr_mimebundle_()
    assert bundle["text/plain"] == "ModuleExplorer(source='004', scaled=True, causal=False)"
    assert "image/png" in bundle


def test_unknown_source_is_named():
    with pytest.raises(ValueError, match="source"):
        module_inputs("005")


def masked_softmax(scores, mask):
    return torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)


def safe_masked_softmax(scores, mask):
    weights = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)
    return torch.where(mask.any(dim=-1, keepdim=True), weights, torch.zeros_like(weights))


def test_predict():
    assert check("module.1", [0.2689, 0.7311, 0.0]).correct
    assert check("module.1", torch.softmax(torch.tensor([1.0, 2.0, 0.0]), 0)).mistake == "mask-with-zero"
    after = torch.softmax(torch.tensor([1.0, 2.0, 3.0]), 0) * torch.tensor([1.0, 1.0, 0.0])
    assert check("module.1", after).mistake == "mask-after-softmax"


def test_masked_softmax_runs_on_fresh_inputs():
    assert check("module.2", masked_softmax).correct
    assert check("module.2", lambda s, m: torch.softmax(s.masked_fill(~m, 0.0), -1)).mistake == "mask-with-zero"
    assert check("module.2", lambda s, m: torch.softmax(s, -1) * m).mistake == "mask-after-softmax"


def test_a_fully_masked_row():
    assert check("module.3", safe_masked_softmax).correct
    assert check("module.3", masked_softmax).mistake == "fully-masked-row"  # NaN
    large = check("module.3", lambda s, m: torch.softmax(s.masked_fill(~m, -1e9), -1))
    assert large.mistake == "fully-masked-row" and "uniform" in large.message


def test_masked_softmax_over_the_queries_is_named():
    feedback = check("module.2", lambda s, m: torch.softmax(s.masked_fill(~m, float("-inf")), dim=0))
    assert feedback.mistake == "softmax-axis" and "dim=0" in feedback.message


@pytest.mark.parametrize("name", ["module.2", "module.3"])
def test_masked_softmax_refuses_the_library(name):
    import torch.nn.functional as F

    from attnlib import attention_weights

    eye = lambda s: torch.eye(s.shape[-1])  # noqa: E731
    handed_in = [
        lambda s, m: attention_weights(s, eye(s), mask=m, scale=1.0),  # the review: attnlib's masked softmax
        lambda s, m: F.scaled_dot_product_attention(s[None], eye(s)[None], eye(s)[None], attn_mask=m[None], scale=1.0)[
            0
        ],
    ]
    for answer in handed_in:
        assert check(name, answer).mistake == "library-function"


def test_safe_masked_softmax_stub_prompt_reads_as_a_sentence():
    def safe_masked_softmax(scores, mask): ...

    feedback = check("module.3", safe_masked_softmax)
    assert not feedback.tried and "with a row (row 2)" not in feedback.message
    assert feedback.message.startswith("your safe_masked_softmax(scores, mask) returned None")
    assert (
        check("module.3", ...).message
        == "Replace the ... with your safe_masked_softmax(scores, mask), then run the cell again."
    )
