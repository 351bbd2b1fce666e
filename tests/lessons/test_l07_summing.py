"""SummingExplorer headless: the running sum and the context shown equal attnlib's."""

import numpy as np
import pytest

from attnlib import examples, score, softmax, sum_weighted_values, weight_values
from attnlib.lessons.l07_summing import SummingExplorer


def _wv(key):
    q, k, v = examples.get(key).qkv()
    return softmax(score(q, k)), v


def test_starts_with_output_1_of_001():
    e = SummingExplorer()
    w, v = _wv("001")
    shown = e.views["sum"].data
    assert np.allclose(shown[:3], weight_values(w, v)[0].numpy())
    assert np.allclose(shown[3], (w @ v)[0].numpy())
    assert e.views["sum"].annotations[-3:] == ["1.9366", "6.6831", "1.5951"]
    assert np.allclose(e.views["context"].data, sum_weighted_values(weight_values(w, v)).numpy())
    assert len(e.views["context"].highlight_boxes) == 1
    assert e.views["context"].highlight_boxes[0][1] == -0.5
    assert e.summary() == "SummingExplorer(example='001', query='Input 1', terms=3, scaled=False)"


@pytest.mark.parametrize("terms", [1, 2, 3])
def test_partial_sums(terms):
    e = SummingExplorer()
    e.controls["query"].value = 1
    e.controls["terms"].value = terms
    w, v = _wv("001")
    grid = weight_values(w, v)[1]
    assert np.allclose(e.views["sum"].data[-1], grid[:terms].sum(0).numpy())
    assert len(e.views["sum"].highlight_boxes) == terms + 1
    assert e.views["context"].highlight_boxes[0][1] == 0.5
    last = e.views["sum"].row_labels[-1]
    assert last == ("= z2" if terms == 3 else f"sum of {terms}")


def test_switch_to_000_resets_terms():
    e = SummingExplorer()
    e.controls["terms"].value = 1
    e.controls["example"].value = "000"
    w, v = _wv("000")
    assert e.controls["terms"].max == 4 and e.controls["terms"].value == 4
    assert e.views["sum"].data.shape == (5, 5)
    assert np.allclose(e.views["context"].data, (w @ v).numpy(), atol=1e-5)
    assert np.allclose(e.views["sum"].data[-1], (w @ v)[0].numpy(), atol=1e-5)
