"""tiled_attention, the fast path: equal to attnlib.attention and to torch's SDPA for every block size
(dividing n_k or not), with masks, causal, n_q ≠ n_k and batch dimensions — and the same clear errors."""

from __future__ import annotations

import functools
import math

import pytest
import torch
import torch.nn.functional as F
from attention_strategies import PROPERTY, attention_inputs, ensure_visible
from hypothesis import given
from hypothesis import strategies as st

import attnlib
from attnlib import AttentionInputError, examples, tiled_attention
from attnlib.cost import largest_intermediate
from attnlib.tiled import online_softmax_blocks


@PROPERTY
@given(attention_inputs(masked=True), st.integers(1, 12), st.booleans())
def test_tiled_equals_attention_and_sdpa(inputs, block_size, use_mask):
    q, k, v, mask = inputs
    mask = ensure_visible(mask) if use_mask else None
    got = tiled_attention(q, k, v, mask=mask, block_size=block_size)
    torch.testing.assert_close(got, attnlib.attention(q, k, v, mask=mask), atol=2e-6, rtol=1e-5)
    full = None if mask is None else mask.expand(*q.shape[:-1], k.shape[-2])
    torch.testing.assert_close(got, F.scaled_dot_product_attention(q, k, v, attn_mask=full), atol=2e-6, rtol=1e-5)


@PROPERTY
@given(attention_inputs(masked=False), st.integers(1, 12))
def test_tiled_causal_equals_sdpa_is_causal(inputs, block_size):
    q, k, v, _ = inputs
    got = tiled_attention(q, k, v, is_causal=True, block_size=block_size)
    torch.testing.assert_close(got, F.scaled_dot_product_attention(q, k, v, is_causal=True), atol=2e-6, rtol=1e-5)


def test_large_scores_and_a_long_sequence_stay_as_accurate_as_sdpa():
    gen = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(1, 300, 16, generator=gen) * 8 for _ in range(3))  # scores with std ≈ 64
    exact = F.scaled_dot_product_attention(q.double(), k.double(), v.double())
    # such sharp rows amplify float32 rounding of the scores in any implementation: measure SDPA's own
    # error against float64 and ask the tiled path to be no worse (the running rescaling adds nothing)
    sdpa_error = (F.scaled_dot_product_attention(q, k, v).double() - exact).abs().max()
    for block in (1, 7, 128, 300, 1000):
        error = (tiled_attention(q, k, v, block_size=block).double() - exact).abs().max()
        assert error <= 2 * sdpa_error + 1e-5, (block, float(error), float(sdpa_error))


def test_gradients_flow():
    gen = torch.Generator().manual_seed(1)
    q, k, v = (torch.randn(5, 4, generator=gen, requires_grad=True) for _ in range(3))
    tiled_attention(q, k, v, block_size=2).sum().backward()
    grads = [t.grad.clone() for t in (q, k, v)]
    for t in (q, k, v):
        t.grad = None
    attnlib.attention(q, k, v).sum().backward()
    for got, t in zip(grads, (q, k, v)):
        torch.testing.assert_close(got, t.grad, atol=1e-6, rtol=1e-5)


@pytest.mark.parametrize("block_size", [0, -3, 2.5, True, "8"])
def test_block_size_is_checked(block_size):
    q = torch.zeros(2, 3)
    with pytest.raises(ValueError, match=f"block_size must be a positive integer, got {block_size!r}"):
        tiled_attention(q, q, q, block_size=block_size)


def test_mask_and_is_causal_together_is_the_fused_kernel_trap():
    q = torch.zeros(3, 2)
    with pytest.raises(AttentionInputError, match="either mask or is_causal=True, not both"):
        tiled_attention(q, q, q, mask=torch.ones(3, 3, dtype=torch.bool), is_causal=True)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((torch.zeros(4, 5), torch.zeros(4, 3), torch.zeros(4, 3)), "queries have d_k=5 but keys have d_k=3"),
        ((torch.zeros(2, 2), torch.zeros(3, 2), torch.zeros(4, 2)), "keys have n_k=3 but values have n_k=4"),
        ((torch.full((2, 2), float("nan")), torch.zeros(2, 2), torch.zeros(2, 2)), "NaN"),
        ((torch.zeros(2, 3), torch.zeros(0, 3), torch.zeros(0, 3)), r"keys have n_k=0 \(keys \(0, 3\)\)"),
    ],
)
def test_same_errors_as_attention(args, message):
    with pytest.raises(AttentionInputError, match=message):
        attnlib.attention(*args)
    with pytest.raises(AttentionInputError, match=message):
        tiled_attention(*args)


def test_fully_masked_row_is_refused_like_attention():
    q = torch.zeros(2, 2)
    mask = torch.tensor([[True, True], [False, False]])
    for f in (attnlib.attention, tiled_attention):
        with pytest.raises(AttentionInputError, match="mask hides every key from at least one query"):
            f(q, q, q, mask=mask)


def additive(mask: torch.Tensor) -> torch.Tensor:
    """The boolean mask as SDPA's additive one: 0 where True (attend), -inf where False (hidden)."""
    return torch.zeros(mask.shape).masked_fill(~mask, float("-inf"))


@PROPERTY
@given(attention_inputs(masked=True), st.integers(1, 12), st.booleans())
def test_additive_masks_equal_boolean_masks_and_sdpa(inputs, block_size, with_bias):
    q, k, v, mask = inputs
    mask = ensure_visible(mask)
    add = additive(mask)
    if with_bias:  # an additive mask may also carry finite biases (ALiBi-like)
        add = add + torch.linspace(-1.0, 0.5, k.shape[-2])
    full = add.expand(*q.shape[:-1], k.shape[-2])
    expected = F.scaled_dot_product_attention(q, k, v, attn_mask=full)
    readable = attnlib.attention(q, k, v, mask=add)
    torch.testing.assert_close(readable, expected, atol=2e-6, rtol=1e-5)
    tiled = tiled_attention(q, k, v, mask=add, block_size=block_size)
    torch.testing.assert_close(tiled, readable, atol=2e-6, rtol=1e-5)
    if not with_bias:
        torch.testing.assert_close(readable, attnlib.attention(q, k, v, mask=mask), atol=1e-6, rtol=1e-5)


@PROPERTY
@given(attention_inputs(masked=True), st.integers(1, 12), st.booleans())
def test_fully_masked_rows_are_refused_by_both_paths_while_sdpa_returns_zeros(inputs, block_size, as_additive):
    q, k, v, mask = inputs
    mask = mask.expand(*q.shape[:-1], k.shape[-2]).clone()
    mask[..., -1, :] = False  # the last query may see no key
    given_mask = additive(mask) if as_additive else mask
    for f in (attnlib.attention, functools.partial(tiled_attention, block_size=block_size)):
        with pytest.raises(AttentionInputError, match="mask hides every key from at least one query"):
            f(q, k, v, mask=given_mask)
    # what attention's docstring says of torch 2.13: SDPA returns a zero row there, silently
    sdpa = F.scaled_dot_product_attention(q, k, v, attn_mask=given_mask)
    assert bool((sdpa[..., -1, :] == 0).all())


def test_a_float_mask_of_zeros_and_ones_is_refused_as_a_mistaken_keep_mask():
    q = torch.zeros(3, 2)
    keep = torch.tensor([[1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [1.0, 1.0, 1.0]])
    for f in (attnlib.attention, tiled_attention):
        with pytest.raises(TypeError, match=r"holding only 0s and 1s.*mask.bool\(\)"):
            f(q, q, q, mask=keep)
    torch.testing.assert_close(attnlib.attention(q, q, q, mask=torch.zeros(3, 3)), attnlib.attention(q, q, q))


@pytest.mark.parametrize(
    ("mask", "error", "message"),
    [
        (torch.tensor([[0.0, float("nan")]] * 2), AttentionInputError, "finite numbers and -inf only"),
        (torch.tensor([[0.0, float("inf")]] * 2), AttentionInputError, "finite numbers and -inf only"),
        (torch.zeros(2, 2, dtype=torch.float64), TypeError, "additive mask must have the scores' dtype torch.float32"),
        (torch.zeros(2, 3), AttentionInputError, r"mask of shape \(2, 3\) does not broadcast"),
    ],
)
def test_bad_additive_masks(mask, error, message):
    q = torch.zeros(2, 2)
    for f in (attnlib.attention, tiled_attention):
        with pytest.raises(error, match=message):
            f(q, q, q, mask=mask)


def test_tiled_never_holds_the_score_matrix():
    """Every tensor tiled_attention makes is at most (batch, n_q, block_size), causal or not."""
    gen = torch.Generator().manual_seed(3)
    q, k, v = (torch.randn(2, 50, 8, generator=gen) for _ in range(3))
    for is_causal in (False, True):
        assert largest_intermediate(tiled_attention, q, k, v, block_size=16, is_causal=is_causal)[0] == (2, 50, 16)
    assert largest_intermediate(attnlib.attention, q, k, v)[0] == (2, 50, 50)


@pytest.mark.parametrize("kind", ["causal", "mask", "additive"])
def test_gradients_flow_with_masks(kind):
    gen = torch.Generator().manual_seed(4)
    q, k, v = (torch.randn(2, 6, 4, generator=gen, requires_grad=True) for _ in range(3))
    causal = torch.ones(6, 6, dtype=torch.bool).tril()
    options = {"causal": {"is_causal": True}, "mask": {"mask": causal}, "additive": {"mask": additive(causal)}}[kind]
    tiled_attention(q, k, v, block_size=4, **options).square().sum().backward()
    grads = [t.grad.clone() for t in (q, k, v)]
    for t in (q, k, v):
        t.grad = None
    attnlib.attention(q, k, v, mask=causal).square().sum().backward()
    for got, t in zip(grads, (q, k, v)):
        torch.testing.assert_close(got, t.grad, atol=1e-5, rtol=1e-5)


@PROPERTY
@given(attention_inputs(masked=False), st.integers(1, 5))
def test_each_state_is_attention_over_the_keys_seen_so_far(inputs, block_size):
    q, k, v, _ = inputs
    states = list(online_softmax_blocks(q, k, v, block_size=block_size))
    assert [s.stop for s in states] == [min(b + block_size, k.shape[-2]) for b in range(0, k.shape[-2], block_size)]
    for state in states:
        seen = attnlib.attention(q, k[..., : state.stop, :], v[..., : state.stop, :])
        torch.testing.assert_close(state.acc / state.ell, seen, atol=2e-6, rtol=1e-5)
        assert state.p.shape[-1] == state.stop - state.start  # only this block's numbers are held
    assert bool((states[0].correction == 0).all()) and bool((states[-1].correction <= 1).all())


def test_document_001_by_hand():
    """Query 1 of document 001, unscaled, one key per block: the numbers lesson 15 follows by hand."""
    q, k, v = examples.three_inputs.qkv()  # scores of query 1: [2, 4, 4]
    states = list(online_softmax_blocks(q[:1], k, v, scale=1.0, block_size=1))
    assert [float(s.m) for s in states] == [2.0, 4.0, 4.0]
    e2 = math.exp(-2)
    torch.testing.assert_close(torch.tensor([float(s.correction) for s in states]), torch.tensor([0.0, e2, 1.0]))
    torch.testing.assert_close(torch.tensor([float(s.ell) for s in states]), torch.tensor([1.0, 1 + e2, 2 + e2]))
    torch.testing.assert_close(states[1].acc[0], e2 * v[0] + v[1])
    torch.testing.assert_close(states[-1].acc / states[-1].ell, attnlib.attention(q, k, v, scale=1.0)[:1])


def test_what_sdpa_does_with_mask_and_is_causal_together():
    """The trap the error message describes, as torch 2.13 behaves: 3-D inputs raise, 4-D inputs apply both."""
    gen = torch.Generator().manual_seed(6)
    q, k, v = (torch.randn(1, 1, 4, 8, generator=gen) for _ in range(3))
    padding = torch.tensor([True, True, True, False]).expand(4, 4)
    with pytest.raises(RuntimeError, match="attn_mask should not be set when is_causal=True"):
        F.scaled_dot_product_attention(q[0], k[0], v[0], attn_mask=padding, is_causal=True)
    both = F.scaled_dot_product_attention(q, k, v, attn_mask=padding, is_causal=True)
    combined = padding & torch.ones(4, 4, dtype=torch.bool).tril()
    torch.testing.assert_close(both, F.scaled_dot_product_attention(q, k, v, attn_mask=combined))
    torch.testing.assert_close(tiled_attention(q, k, v, mask=combined), both, atol=1e-6, rtol=1e-5)
