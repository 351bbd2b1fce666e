"""Property-based tests (hypothesis): attention against torch's SDPA, and an exact, finite softmax.

Deterministic: ``derandomize=True`` and no example database, so CI runs the same examples every
time; ``deadline=None`` because a shared CI machine makes timings meaningless.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from attention_strategies import PROPERTY, attention_inputs, ensure_visible
from hypothesis import given
from hypothesis import strategies as st

import attnlib
from attnlib import AttentionInputError, steps


@PROPERTY
@given(attention_inputs(masked=False))
def test_attention_agrees_with_sdpa(inputs: tuple[torch.Tensor, ...]) -> None:
    q, k, v, _ = inputs
    got = attnlib.attention(q, k, v)
    expected = F.scaled_dot_product_attention(q, k, v)
    assert got.shape == expected.shape
    torch.testing.assert_close(got, expected, atol=1e-6, rtol=1e-5)


@PROPERTY
@given(attention_inputs(masked=False), st.floats(0.05, 4.0))
def test_attention_with_scale_agrees_with_sdpa(inputs: tuple[torch.Tensor, ...], scale: float) -> None:
    q, k, v, _ = inputs
    got = attnlib.attention(q, k, v, scale=scale)
    expected = F.scaled_dot_product_attention(q, k, v, scale=scale)
    # a large scale sharpens the softmax, which amplifies float32 rounding of the scores alike in
    # both implementations (both are ~4e-6 from float64 at scale 4, d_k 16): tolerance grows with it
    sharpness = max(1.0, scale * q.shape[-1] ** 0.5)
    torch.testing.assert_close(got, expected, atol=1e-6 * sharpness, rtol=1e-5)


@PROPERTY
@given(attention_inputs(masked=True))
def test_masked_attention_agrees_with_sdpa(inputs: tuple[torch.Tensor, ...]) -> None:
    q, k, v, mask = inputs
    mask = ensure_visible(mask)
    got = attnlib.attention(q, k, v, mask=mask)
    full_mask = mask.expand(*q.shape[:-1], k.shape[-2])  # SDPA wants at least (n_q, n_k)
    expected = F.scaled_dot_product_attention(q, k, v, attn_mask=full_mask)
    torch.testing.assert_close(got, expected, atol=1e-6, rtol=1e-5)
    weights = attnlib.attention_weights(q, k, v, mask=mask)
    # masked keys get weight exactly 0; every row sums to 1
    assert bool((weights.masked_select(~mask.expand_as(weights)) == 0).all())
    torch.testing.assert_close(weights.sum(-1), torch.ones(weights.shape[:-1]), atol=1e-6, rtol=0)


@PROPERTY
@given(attention_inputs(masked=True))
def test_fully_masked_rows_are_an_error_not_nan(inputs: tuple[torch.Tensor, ...]) -> None:
    q, k, v, mask = inputs
    if bool(mask.any(dim=-1).all()):
        out = attnlib.attention(q, k, v, mask=mask)
        assert bool(torch.isfinite(out).all())
    else:
        with pytest.raises(AttentionInputError, match="mask hides every key from at least one query"):
            attnlib.attention(q, k, v, mask=mask)


@PROPERTY
@given(attention_inputs(masked=False))
def test_attention_weights_agree_with_softmax_of_scaled_scores(inputs: tuple[torch.Tensor, ...]) -> None:
    q, k, v, _ = inputs
    d_k = q.shape[-1]
    expected = F.softmax(q @ k.transpose(-2, -1) / d_k**0.5, dim=-1)
    torch.testing.assert_close(attnlib.attention_weights(q, k, v), expected, atol=1e-6, rtol=1e-5)


score_rows = st.lists(
    st.lists(st.floats(-1e4, 1e4, allow_nan=False, width=32), min_size=1, max_size=12),
    min_size=1,
    max_size=6,
).filter(lambda rows: len({len(r) for r in rows}) == 1)


@PROPERTY
@given(score_rows)
def test_softmax_is_finite_and_exact_up_to_1e4(rows: list[list[float]]) -> None:
    scores = torch.tensor(rows, dtype=torch.float32)
    weights = steps.softmax(scores)
    assert bool(torch.isfinite(weights).all())
    assert bool((weights >= 0).all())
    torch.testing.assert_close(weights.sum(-1), torch.ones(len(rows)), atol=1e-6, rtol=0)
    reference = torch.softmax(scores.to(torch.float64), dim=-1)
    torch.testing.assert_close(weights.to(torch.float64), reference, atol=1e-6, rtol=1e-5)


@PROPERTY
@given(score_rows, st.floats(-1e3, 1e3, width=32))
def test_softmax_ignores_a_constant_shift(rows: list[list[float]], shift: float) -> None:
    scores = torch.tensor(rows, dtype=torch.float64)
    torch.testing.assert_close(steps.softmax(scores + shift), steps.softmax(scores), atol=1e-9, rtol=1e-7)


@PROPERTY
@given(attention_inputs(masked=False))
def test_steps_compose_to_attention(inputs: tuple[torch.Tensor, ...]) -> None:
    q, k, v, _ = inputs
    weights = steps.softmax(steps.scale_scores(steps.score(q, k), q.shape[-1]))
    context = steps.sum_weighted_values(steps.weight_values(weights, v))
    torch.testing.assert_close(context, attnlib.attention(q, k, v), atol=1e-6, rtol=1e-5)
