"""attnlib.cost: the score matrix on paper, the largest tensor a call makes, median time."""

from __future__ import annotations

import pytest
import torch

import attnlib
from attnlib.cost import GIB, MIB, kv_cache_bytes, largest_intermediate, median_seconds, score_matrix_bytes


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


def test_kv_cache_bytes_counts_keys_and_values_of_every_layer():
    # keys and values (2) × 32 layers × 4096 numbers per token × 2 bytes = 512 KiB per token
    assert kv_cache_bytes(1, num_layers=32, d_model=4096) == 512 * 1024
    assert kv_cache_bytes(4096, num_layers=32, d_model=4096) == 2 * GIB
    assert kv_cache_bytes(10, num_layers=1, d_model=3, bytes_per_number=4) == 2 * 10 * 3 * 4
    with pytest.raises(ValueError, match="num_layers must be a positive integer, got 0"):
        kv_cache_bytes(5, num_layers=0, d_model=8)


def test_kv_cache_bytes_matches_a_filled_cache():
    from attnlib.kv_cache import KVCache
    from attnlib.transformer import TinyTransformer

    model = TinyTransformer(vocab_size=11, d_model=16, num_heads=4, num_layers=3, max_len=12, causal=True)
    cache = KVCache(3)
    with torch.no_grad():
        model(torch.arange(7)[None], cache=cache)
    held = sum(t.numel() * t.element_size() for t in cache.keys + cache.values)
    assert held == kv_cache_bytes(7, num_layers=3, d_model=16, bytes_per_number=4)


def test_layer_flops_counts_multiply_adds_of_each_matmul():
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    from attnlib.cost import layer_flops

    n, d, d_mlp = 12, 8, 32
    x, w, w1, w2 = torch.randn(n, d), torch.randn(d, d), torch.randn(d, d_mlp), torch.randn(d_mlp, d)
    with FlopCounterMode(display=False) as counter:
        q, k, v = x @ w, x @ w, x @ w
        z = torch.softmax(q @ k.T, dim=-1) @ v
        out = z @ w
        _ = (out @ w1) @ w2
    flops = layer_flops(n, d, d_mlp=d_mlp)
    assert sum(flops[:3]) == counter.get_total_flops()
    assert layer_flops(6 * 64, 64).attention_share == 0.5  # n = 6d: the n² part equals the rest
    assert layer_flops(6 * 64 + 64, 64).attention_share > 0.5 > layer_flops(6 * 64 - 64, 64).attention_share
