"""PipelineExplorer headless: every view is what attnlib computes; edits, choices and toggles propagate."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import attnlib
from attnlib import examples
from attnlib.lessons.pipeline import EXAMPLES, PipelineExplorer, pipeline, pipeline_example
from attnlib.modules import causal_mask

VIEWS = (
    "inputs",
    "w_query",
    "w_key",
    "w_value",
    "queries",
    "keys",
    "values",
    "scores",
    "scaled_scores",
    "weights",
    "weighted_values",
    "context",
)


def _data(e: PipelineExplorer, name: str) -> np.ndarray:
    return e.views[name].data


@pytest.mark.parametrize("key", sorted(EXAMPLES))
def test_every_view_is_attnlibs_computation(key: str) -> None:
    e = PipelineExplorer(key)
    x, weights, labels = pipeline_example(key)
    q, k, v = attnlib.derive_qkv(x, *weights)
    assert np.allclose(_data(e, "inputs"), x.numpy())
    assert np.allclose(_data(e, "queries"), q.numpy())
    assert np.allclose(_data(e, "keys"), k.numpy()) and np.allclose(_data(e, "values"), v.numpy())
    assert np.allclose(_data(e, "scores"), (q @ k.T).numpy(), atol=1e-4)
    assert np.allclose(_data(e, "scaled_scores"), (q @ k.T / math.sqrt(k.shape[1])).numpy(), atol=1e-4)
    # the context is exactly attnlib.attention of the same Q, K, V
    assert np.allclose(_data(e, "context"), attnlib.attention(q, k, v).numpy(), atol=1e-5)
    assert list(e.views["inputs"].row_labels) == list(labels)
    assert e.summary() == f"PipelineExplorer(example={key!r}, query={labels[0]!r}, scaled=True, causal=False)"
    assert e.message.value == ""


def test_document_001_unscaled_reproduces_output_1() -> None:
    e = PipelineExplorer("001", scaled=False)
    assert np.allclose(_data(e, "context")[0], [1.9366, 6.6831, 1.5951], atol=1e-4)
    assert e.shape_strip == [
        "X (3, 4)",
        "Q, K (3, 3), V (3, 3)",
        "S (3, 3)",
        "S (3, 3)",
        "A (3, 3)",
        "α_ij v_j (3, 3, 3)",
        "Z (3, 3)",
    ]
    assert "z_1 (Input 1) = [1.9366, 6.6831, 1.5951]" in e.caption.value


def test_editing_x_changes_every_later_matrix_to_attnlibs_result() -> None:
    e = PipelineExplorer("001")
    before = _data(e, "context").copy()
    assert e.views["inputs"].edit(0, 1, "2.5")
    x = examples.three_inputs.inputs.clone()
    x[0, 1] = 2.5
    q, k, v = attnlib.derive_qkv(x, *examples.three_inputs.projections)
    assert np.allclose(_data(e, "inputs"), x.numpy())
    assert np.allclose(_data(e, "context"), attnlib.attention(q, k, v).numpy(), atol=1e-5)
    assert not np.allclose(_data(e, "context"), before)


def test_editing_a_weight_changes_q_but_not_k_or_v() -> None:
    e = PipelineExplorer("001")
    k_before, v_before = _data(e, "keys").copy(), _data(e, "values").copy()
    assert e.views["w_query"].edit(1, 2, "-3")
    w = examples.three_inputs.projections
    w_query = w.w_query.clone()
    w_query[1, 2] = -3
    assert np.allclose(_data(e, "queries"), (examples.three_inputs.inputs @ w_query).numpy())
    assert np.array_equal(_data(e, "keys"), k_before) and np.array_equal(_data(e, "values"), v_before)


@pytest.mark.parametrize(
    ("text", "words"),
    [("abc", "not a number"), ("nan", "NaN"), ("inf", "infinite"), ("1e30", "too large"), ("", "empty")],
)
def test_bad_edits_keep_the_last_good_state(text: str, words: str) -> None:
    e = PipelineExplorer("001")
    before = {name: _data(e, name).copy() for name in VIEWS}
    assert not e.views["inputs"].edit(0, 0, text)
    assert words in e.views["inputs"].message
    for name in VIEWS:
        assert np.array_equal(_data(e, name), before[name]), name


def test_overflowing_outputs_are_refused_and_the_last_good_state_kept() -> None:
    e = PipelineExplorer("001")
    before = _data(e, "context").copy()
    e.inputs = torch.full((3, 4), 1e30)  # beyond what any edit allows: Q Kᵀ overflows float32
    e.changed()
    assert "scores contain NaN or +inf (shape (3, 3))" in e.message.value
    assert np.array_equal(_data(e, "context"), before)


def test_choosing_a_query_outlines_its_row_everywhere_and_clicks_choose() -> None:
    e = PipelineExplorer("001")
    e.controls["query"].value = 2
    for name in ("inputs", "queries", "scores", "scaled_scores", "weights", "context"):
        assert e.views[name].highlight_rows == [2], name
    e.views["weights"].select(1, 0)  # clicking A[1, 0] chooses query 1 and key 0
    assert e.controls["query"].value == 1 and e.controls["key"].value == 0
    assert e.views["scores"].highlight_cells == [[1, 0]]
    assert e.views["keys"].highlight_rows == [0] and e.views["values"].highlight_rows == [0]
    weighted = attnlib.weight_values(torch.tensor(_data(e, "weights")), torch.tensor(_data(e, "values")))[1]
    assert np.allclose(_data(e, "weighted_values"), weighted.numpy())
    e.views["keys"].select(2, 1)
    assert e.controls["key"].value == 2
    assert e.summary().startswith("PipelineExplorer(example='001', query='Input 2'")


def test_causal_mask_zeroes_the_future_and_explains_it() -> None:
    e = PipelineExplorer("000", causal=True)
    weights = _data(e, "weights")
    assert np.allclose(np.triu(weights, 1), 0) and np.allclose(weights.sum(axis=1), 1)
    x, w, _ = pipeline_example("000")
    q, k, v = attnlib.derive_qkv(x, *w)
    want = attnlib.attention(q, k, v, mask=causal_mask(4))
    assert np.allclose(_data(e, "context"), want.numpy(), atol=1e-5)
    assert np.isfinite(_data(e, "scaled_scores")).all()  # masked cells drawn finite, explained in words
    assert e.views["scaled_scores"].explanations[0][3].startswith("masked")
    assert e.views["weights"].explanations[0][1].startswith("masked key")
    assert e.views["weights"].explanations[2][1].startswith("α_32")


def test_scaling_toggle_and_example_switch() -> None:
    e = PipelineExplorer("001", query=2, key=2)
    e.controls["scaled"].value = False
    assert np.allclose(_data(e, "scaled_scores"), _data(e, "scores"))
    e.controls["example"].value = "004"
    assert _data(e, "inputs").shape == (3, 2) and e.controls["query"].value == 2
    e.controls["example"].value = "003"
    assert _data(e, "inputs").shape == (8, 16)
    assert e.views["weighted_values"].data.shape == (8, 16)


def test_pipeline_matches_attention_with_mask_and_scale() -> None:
    x, w, _ = pipeline_example("004")
    steps = pipeline(x, w, scaled=True, causal=True)
    q, k, v = attnlib.derive_qkv(x, *w)
    assert torch.allclose(steps["context"], attnlib.attention(q, k, v, mask=causal_mask(3)), atol=1e-6)
    assert steps["weighted_values"].shape == (3, 3, 2)


def test_004_weights_are_the_modules() -> None:
    x, w, _ = pipeline_example("004")
    module = examples.document_004_module()
    assert torch.allclose(x @ w.w_query, module.w_query(x), atol=1e-6)
    assert torch.allclose(x @ w.w_value, module.w_value(x), atol=1e-6)


def test_bad_arguments_are_named() -> None:
    with pytest.raises(ValueError, match="example must be one of"):
        PipelineExplorer("005")
    with pytest.raises(ValueError, match="query must be a token index from 0 to 2"):
        PipelineExplorer("001", query=3)


def test_display_bundle_has_fallback_png_and_summary() -> None:
    e = PipelineExplorer("001")
    bundle, _ = e._repr_mimebundle_()
    assert bundle["text/plain"] == e.summary()
    assert bundle["image/png"]
