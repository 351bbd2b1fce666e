"""Lesson 02: ProjectionsExplorer headless (the three heatmaps show the documents' or init_projections'
matrices) and the lesson's checkers (solutions pass; typical slips get their hint and mistake id)."""

import numpy as np
import pytest
from torch import nn

from attnlib import examples, init_projections
from attnlib.lessons import check
from attnlib.lessons.l02_projections import ProjectionsExplorer

VIEWS = ("w_query", "w_key", "w_value")


def _shown(e):
    return [e.views[v].data for v in VIEWS]


@pytest.mark.parametrize("source", ["001", "000"])
def test_documents_weights(source):
    e = ProjectionsExplorer(source)
    want = examples.get(source).projections
    for shown, w in zip(_shown(e), want):
        assert np.array_equal(shown, w.numpy())
    texts = e.views["w_value"].annotations
    assert texts == [str(int(v)) for v in want.w_value.reshape(-1).tolist()]
    assert e.views["w_key"].title == f"W_k  ({want.w_key.shape[0]}×{want.w_key.shape[1]})"
    assert str(tuple(want.w_value.shape)) in e.shapes.value
    assert e.controls["d_k"].disabled and e.controls["d_k"].value == want.w_key.shape[1]
    assert e.summary().startswith(f"ProjectionsExplorer(source={source!r}")


def test_switching_source_and_random_sizes():
    e = ProjectionsExplorer()
    e.controls["source"].value = "random"
    assert not e.controls["seed"].disabled
    e.controls["d_k"].value = 5
    e.controls["d_v"].value = 2
    e.controls["seed"].value = 7
    want = init_projections(4, 5, 2, seed=7)
    for shown, w in zip(_shown(e), want):
        assert np.allclose(shown, w.numpy())
    assert "(4, 5)" in e.shapes.value and "(4, 2)" in e.shapes.value
    assert e.summary() == "ProjectionsExplorer(source='random', d_in=4, d_k=5, d_v=2, seed=7)"
    assert e.views["w_value"].annotations[0] == f"{float(want.w_value[0, 0]):.2f}"
    e.controls["source"].value = "000"
    for shown, w in zip(_shown(e), examples.four_inputs.projections):
        assert np.array_equal(shown, w.numpy())
    assert e.summary() == "ProjectionsExplorer(source='000', shapes=[(4, 5), (4, 5), (4, 5)])"


def test_same_seed_same_weights_other_seed_other_weights():
    e = ProjectionsExplorer("random", seed=1)
    first = [m.copy() for m in _shown(e)]
    e.controls["seed"].value = 2
    assert not np.allclose(first[0], _shown(e)[0])
    e.controls["seed"].value = 1
    assert all(np.array_equal(a, b) for a, b in zip(first, _shown(e)))


def test_bad_source_rejected():
    with pytest.raises(ValueError, match="source"):
        ProjectionsExplorer("002")


def test_weights():
    assert check("projections.1", [[6, 2], [6, 2], [6, 3]]).correct
    assert check("projections.1", [[2, 6], [2, 6], [3, 6]]).mistake == "transposed"
    swapped = check("projections.1", [[6, 2], [6, 3], [6, 2]])
    assert not swapped.correct and "W_k and W_v are swapped" in swapped.message

    def count_parameters(d_in, d_k, d_v):
        return d_in * (2 * d_k + d_v)

    assert check("projections.2", count_parameters).correct
    assert "W_v is d_in × d_v" in check("projections.2", lambda a, b, c: 3 * a * b).message
    via_library = check("projections.2", lambda a, b, c: sum(w.numel() for w in init_projections(a, b, c)))
    assert via_library.mistake == "library-function"
    assert check("projections.3", list(nn.Linear(4, 3).weight.shape)).correct
    assert check("projections.3", [4, 3]).mistake == "transposed"
