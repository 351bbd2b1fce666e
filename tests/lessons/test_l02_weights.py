"""WeightsExplorer headless: the three heatmaps show the documents' or init_projections' matrices."""

import numpy as np
import pytest

from attnlib import examples, init_projections
from attnlib.lessons.l02_weights import WeightsExplorer

VIEWS = ("w_query", "w_key", "w_value")


def _shown(e):
    return [e.views[v].data for v in VIEWS]


@pytest.mark.parametrize("source", ["001", "000"])
def test_documents_weights(source):
    e = WeightsExplorer(source)
    want = examples.get(source).projections
    for shown, w in zip(_shown(e), want):
        assert np.array_equal(shown, w.numpy())
    texts = e.views["w_value"].annotations
    assert texts == [str(int(v)) for v in want.w_value.reshape(-1).tolist()]
    assert e.views["w_key"].title == f"W_k  ({want.w_key.shape[0]}×{want.w_key.shape[1]})"
    assert str(tuple(want.w_value.shape)) in e.shapes.value
    assert e.controls["d_k"].disabled and e.controls["d_k"].value == want.w_key.shape[1]
    assert e.summary().startswith(f"WeightsExplorer(source={source!r}")


def test_switching_source_and_random_sizes():
    e = WeightsExplorer()
    e.controls["source"].value = "random"
    assert not e.controls["seed"].disabled
    e.controls["d_k"].value = 5
    e.controls["d_v"].value = 2
    e.controls["seed"].value = 7
    want = init_projections(4, 5, 2, seed=7)
    for shown, w in zip(_shown(e), want):
        assert np.allclose(shown, w.numpy())
    assert "(4, 5)" in e.shapes.value and "(4, 2)" in e.shapes.value
    assert e.summary() == "WeightsExplorer(source='random', d_in=4, d_k=5, d_v=2, seed=7)"
    assert e.views["w_value"].annotations[0] == f"{float(want.w_value[0, 0]):.2f}"
    e.controls["source"].value = "000"
    for shown, w in zip(_shown(e), examples.four_inputs.projections):
        assert np.array_equal(shown, w.numpy())
    assert e.summary() == "WeightsExplorer(source='000', shapes=[(4, 5), (4, 5), (4, 5)])"


def test_same_seed_same_weights_other_seed_other_weights():
    e = WeightsExplorer("random", seed=1)
    first = [m.copy() for m in _shown(e)]
    e.controls["seed"].value = 2
    assert not np.allclose(first[0], _shown(e)[0])
    e.controls["seed"].value = 1
    assert all(np.array_equal(a, b) for a, b in zip(first, _shown(e)))


def test_bad_source_rejected():
    with pytest.raises(ValueError, match="source"):
        WeightsExplorer("002")
