"""WeightingExplorer headless: the grid shown is weight_values(W, V)[query]."""

import numpy as np
import pytest

from attnlib import examples, scale_scores, score, softmax, weight_values
from attnlib.lessons.l06_weighting import WeightingExplorer


def _wv(key, scaled=False):
    q, k, v = examples.get(key).qkv()
    s = score(q, k)
    if scaled:
        s = scale_scores(s, q.shape[-1])
    return softmax(s), v


def test_starts_on_001_input_1():
    e = WeightingExplorer()
    w, v = _wv("001")
    assert np.allclose(e.views["weighted"].data, weight_values(w, v)[0].numpy())
    texts = e.views["weighted"].annotations
    assert texts[:3] == ["0.0634", "0.1268", "0.1901"]
    assert np.allclose(e.views["weights"].data, w[:1].numpy())
    assert np.allclose(e.views["values"].data, v.numpy())
    assert e.summary() == "WeightingExplorer(example='001', query='Input 1', scaled=False)"


@pytest.mark.parametrize(("key", "query"), [("001", 1), ("001", 2), ("000", 0), ("000", 3)])
def test_each_query(key, query):
    e = WeightingExplorer()
    e.controls["example"].value = key
    e.controls["query"].value = query
    w, v = _wv(key)
    assert np.allclose(e.views["weighted"].data, weight_values(w, v)[query].numpy())
    assert np.allclose(e.views["weights"].data, w[query : query + 1].numpy())
    labels = e.views["weighted"].row_labels
    assert labels[0] == f"α{query + 1},1·v1"
    assert examples.get(key).token_labels[query] in e.summary()


def test_scaled_toggle():
    e = WeightingExplorer(example="000")
    e.controls["scaled"].value = True
    w, v = _wv("000", scaled=True)
    assert np.allclose(e.views["weighted"].data, weight_values(w, v)[0].numpy(), atol=1e-6)
    assert "scaled=True" in e.summary()


def test_bad_example_raises_clearly():
    with pytest.raises(ValueError, match="example must be one of"):
        WeightingExplorer(example="042")
