"""attnlib.cost: the score matrix on paper, the largest tensor a call makes, median time."""

from __future__ import annotations

import pytest
import torch

import attnlib
from attnlib.cost import GIB, MIB, largest_intermediate, median_seconds, score_matrix_bytes


def test_score_matrix_on_paper():
    assert score_matrix_bytes(8192) == 256 * MIB  # float32, one head, one layer
    assert score_matrix_bytes(32768) == 4 * GIB
    assert score_matrix_bytes(131072, bytes_per_number=2) == 32 * GIB  # bfloat16
    assert score_matrix_bytes(3, 5) == 60
    with pytest.raises(ValueError, match="n_q must be a positive integer, got 0"):
        score_matrix_bytes(0)


@pytest.mark.parametrize("n", [200, 513])
def test_attention_holds_the_score_matrix_and_tiled_only_a_block(n):
    q, k, v = (torch.randn(n, 16) for _ in range(3))
    assert largest_intermediate(attnlib.attention, q, k, v) == ((n, n), n * n * 4)
    shape, size = largest_intermediate(attnlib.tiled_attention, q, k, v, block_size=64)
    assert shape == (n, 64) and size == n * 64 * 4


def test_median_seconds_calls_and_measures():
    calls = []
    seconds = median_seconds(lambda: calls.append(1), repeats=3)
    assert len(calls) == 4 and 0 <= seconds < 1
