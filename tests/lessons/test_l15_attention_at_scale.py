"""TiledExplorer headless: what it shows is attnlib's online softmax, block by block, ending at attention()."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attnlib import attention, examples
from attnlib.lessons.l15_attention_at_scale import TiledExplorer
from attnlib.tiled import online_softmax_blocks


def test_starts_at_the_first_block_of_three():
    e = TiledExplorer()
    assert e.summary() == "TiledExplorer(block_size=3, block=1 of 3)"
    assert e.views["scores"].highlight_cols == [0, 1, 2]
    assert e.views["tile"].data.shape == (8, 3) and e.views["state"].col_labels == ["m", "ℓ"]
    assert "Keys 4–8 not seen yet" in e.caption.value and "168 numbers" in e.caption.value


@pytest.mark.parametrize(("block_size", "block"), [(1, 1), (1, 8), (3, 2), (3, 3), (5, 2), (8, 1)])
def test_views_are_the_online_state(block_size, block):
    e = TiledExplorer(block_size=block_size)
    e.controls["block"].value = block
    q, k, v = examples.translate.qkv()
    state = list(online_softmax_blocks(q, k, v, block_size=block_size))[block - 1]
    assert np.allclose(e.views["tile"].data, state.p.numpy())
    assert np.allclose(e.views["state"].data, torch.cat([state.m, state.ell], -1).numpy())
    assert np.allclose(e.views["output"].data, (state.acc / state.ell).numpy())
    assert e.views["scores"].highlight_cols == list(range(state.start, state.stop))
    if state.stop == 8:
        assert np.allclose(e.views["output"].data, attention(q, k, v).numpy(), atol=1e-6)
        assert "equals attention() (within 1e-6: True)" in e.caption.value


def test_a_larger_block_size_clamps_the_block_slider():
    e = TiledExplorer(block_size=1, block=7)
    e.controls["block_size"].value = 4
    assert e.summary() == "TiledExplorer(block_size=4, block=2 of 2)"
    assert e.views["tile"].col_labels == examples.translate.tokens[4:8]
    e.controls["block_size"].value = 2
    assert e.controls["block"].max == 4 and e.controls["block"].value == 2


def test_static_fallback_is_a_png():
    bundle, _ = TiledExplorer()._repr_mimebundle_()
    assert bundle["text/plain"] == "TiledExplorer(block_size=3, block=1 of 3)"
    assert bundle["image/png"]
