"""PositionsExplorer headless: the views show attnlib's encodings; sliders stay in range; a bad base keeps the state."""

import numpy as np

from attnlib.lessons.l12_positions import PositionsExplorer
from attnlib.positions import sinusoidal_encoding


def test_views_are_the_encoding_and_its_similarity():
    e = PositionsExplorer(12, 8, position=3, frequency=1)
    p = sinusoidal_encoding(12, 8).numpy()
    assert np.allclose(e.views["encoding"].data, p, atol=1e-6)
    assert np.allclose(e.views["similarity"].data, p @ p.T, atol=1e-5)
    assert e.views["encoding"].highlight_rows == [3] and e.views["encoding"].highlight_cols == [2, 3]
    assert e.summary() == "PositionsExplorer(n_tokens=12, d_model=8, position=3, frequency=1)"
    assert "θ_c" in e.caption.value


def test_shrinking_keeps_the_choices_in_range():
    e = PositionsExplorer(32, 16, position=30, frequency=7)
    e.controls["n_tokens"].value = 10
    e.controls["d_model"].value = 4
    assert e.controls["position"].value == 9 and e.controls["frequency"].value == 1
    assert e.views["encoding"].data.shape == (10, 4)


def test_bad_base_is_reported_and_the_last_good_state_kept():
    e = PositionsExplorer(8, 4)
    before = e.views["encoding"].data.copy()
    e.controls["base"].value = 0.5
    assert "base must be a number greater than 1" in e.message.value
    assert np.array_equal(e.views["encoding"].data, before)
    e.controls["base"].value = 100.0
    assert e.message.value == ""
    assert np.allclose(e.views["encoding"].data, sinusoidal_encoding(8, 4, base=100.0).numpy(), atol=1e-6)
