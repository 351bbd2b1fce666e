"""attnlib.positions: sinusoids against their formula, distance-only dot products, RoPE's relative
scores, learned and fixed position modules, permutation equivariance — and clear errors."""

from __future__ import annotations

import math

import pytest
import torch

import attnlib
from attnlib import AttentionInputError, examples
from attnlib.positions import (
    LearnedPositions,
    SinusoidalPositions,
    apply_rope,
    permutation_equivariance_gap,
    sinusoidal_encoding,
)


def test_sinusoids_follow_the_formula():
    p = sinusoidal_encoding(10, 6)
    assert p.shape == (10, 6) and p.dtype == torch.float32
    for pos in (0, 3, 9):
        for c in range(3):
            theta = 10000 ** (-2 * c / 6)
            assert math.isclose(p[pos, 2 * c], math.sin(pos * theta), abs_tol=1e-6)
            assert math.isclose(p[pos, 2 * c + 1], math.cos(pos * theta), abs_tol=1e-6)
    assert sinusoidal_encoding(4, 5).shape == (4, 5)  # odd d keeps the last sine


def test_dot_products_depend_only_on_the_distance():
    p = sinusoidal_encoding(40, 16).double()
    g = p @ p.T
    for k in range(-5, 6):
        diagonal = torch.diagonal(g, offset=k)
        assert torch.allclose(diagonal, diagonal[0].expand_as(diagonal), atol=1e-5)
    assert torch.allclose(torch.diagonal(g), torch.full((40,), 8.0, dtype=torch.float64), atol=1e-5)  # d/2


def test_rope_scores_depend_only_on_relative_position_and_keep_lengths():
    gen = torch.Generator().manual_seed(0)
    q, k = torch.randn(1, 8, generator=gen).double(), torch.randn(1, 8, generator=gen).double()
    qs, ks = apply_rope(q.expand(12, 8).clone()), apply_rope(k.expand(12, 8).clone())
    s = qs @ ks.T
    assert math.isclose(s[3, 1], s[7, 5], rel_tol=1e-9) and math.isclose(s[9, 2], s[10, 3], rel_tol=1e-9)
    assert not math.isclose(s[3, 1], s[3, 2], rel_tol=1e-3)
    assert torch.allclose(qs.norm(dim=-1), q.norm(dim=-1).expand(12), atol=1e-9)
    assert torch.equal(apply_rope(q)[0], q[0])  # position 0 is not rotated


def test_rope_offset_continues_the_positions():
    x = torch.randn(2, 6, 4, generator=torch.Generator().manual_seed(1))
    whole = apply_rope(x)
    assert torch.allclose(apply_rope(x[:, 4:], offset=4), whole[:, 4:], atol=1e-6)


def test_position_modules_add_their_table_with_offsets():
    x = torch.zeros(2, 5, 8)
    fixed = SinusoidalPositions(16, 8)
    assert torch.allclose(fixed(x)[0], sinusoidal_encoding(5, 8))
    assert torch.allclose(fixed(x, offset=3)[1], sinusoidal_encoding(8, 8)[3:])
    torch.manual_seed(0)
    learned = LearnedPositions(16, 8)
    assert torch.allclose(learned(x)[0], learned.table[:5])
    assert [n for n, _ in learned.named_parameters()] == ["table"]
    assert list(fixed.parameters()) == []


def test_self_attention_is_permutation_equivariant_until_positions_are_added():
    x = examples.three_inputs.inputs
    w = examples.three_inputs.projections

    def layer(inputs):
        return attnlib.attention(*attnlib.derive_qkv(inputs, *w))

    assert permutation_equivariance_gap(layer, x, [2, 0, 1]) < 1e-5
    with_positions = lambda inputs: layer(inputs + sinusoidal_encoding(3, 4))  # noqa: E731
    assert permutation_equivariance_gap(with_positions, x, [2, 0, 1]) > 0.1


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: sinusoidal_encoding(0, 4), "n_tokens must be a positive integer, got 0"),
        (lambda: sinusoidal_encoding(3, 4, base=1), "base must be a number greater than 1"),
        (lambda: apply_rope(torch.zeros(3, 5)), "d must be even, got d=5"),
        (lambda: apply_rope(torch.zeros(3, 4), offset=-1), "offset must be a non-negative integer"),
        (lambda: SinusoidalPositions(4, 8)(torch.zeros(5, 8)), r"positions 0…4 do not fit max_len=4"),
        (lambda: LearnedPositions(8, 8)(torch.zeros(3, 6)), "x has d_model=6 but the positions have d_model=8"),
        (lambda: permutation_equivariance_gap(lambda x: x, torch.zeros(3, 2), [0, 0, 1]), "must reorder 0…2"),
    ],
)
def test_bad_input_is_named(call, message):
    with pytest.raises(AttentionInputError, match=message):
        call()
