"""SelfAttention, MultiHeadAttention and causal_mask (attnlib.modules) against torch's own modules and formulas,
with their steps (masked, scaled or not) and clear errors."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn

import attnlib
from attnlib import AttentionInputError, MultiHeadAttention, SelfAttention, examples
from attnlib.modules import causal_mask, combine_heads, split_heads


def rand(*shape: int, seed: int = 0) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


# ---------------------------------------------------------------- SelfAttention
def test_self_attention_is_softmax_qk_over_sqrt_d_times_v() -> None:
    torch.manual_seed(0)
    m = attnlib.SelfAttention(4, 3)
    x = rand(5, 4)
    with torch.no_grad():
        q, k, v = m.w_query(x), m.w_key(x), m.w_value(x)
        expected = F.softmax(q @ k.T / math.sqrt(3), dim=-1) @ v
        got = m(x)
    assert got.shape == (5, 3)
    torch.testing.assert_close(got, expected)


def test_self_attention_unscaled() -> None:
    torch.manual_seed(0)
    m = attnlib.SelfAttention(4, scaled=False)
    x = rand(5, 4)
    with torch.no_grad():
        q, k, v = m.w_query(x), m.w_key(x), m.w_value(x)
        torch.testing.assert_close(m(x), F.softmax(q @ k.T, dim=-1) @ v)


def test_self_attention_reproduces_document_004_weights_order() -> None:
    # 004 creates W_q, W_v, W_k in this order after torch.manual_seed(42)
    torch.manual_seed(42)
    w_q, w_v, w_k = (nn.Linear(2, 2, bias=False) for _ in range(3))
    torch.manual_seed(42)
    m = attnlib.SelfAttention(2)
    assert torch.equal(m.w_query.weight, w_q.weight)
    assert torch.equal(m.w_value.weight, w_v.weight)
    assert torch.equal(m.w_key.weight, w_k.weight)
    assert m.w_query.bias is None


def test_self_attention_steps_are_consistent_with_forward() -> None:
    torch.manual_seed(42)
    m = attnlib.SelfAttention(2)
    x = examples.encodings.inputs
    s = m.intermediates(x)
    torch.testing.assert_close(s.scores, s.queries @ s.keys.T)
    torch.testing.assert_close(s.scaled_scores, s.scores / math.sqrt(2))
    torch.testing.assert_close(s.weights, F.softmax(s.scaled_scores, dim=-1))
    torch.testing.assert_close(s.context, m(x).detach())
    assert not s.context.requires_grad


def test_self_attention_batched_and_masked() -> None:
    torch.manual_seed(1)
    m = attnlib.SelfAttention(4, 6)
    x = rand(2, 5, 4)
    causal = torch.ones(5, 5, dtype=torch.bool).tril()
    got = m(x, mask=causal)
    with torch.no_grad():
        expected = F.scaled_dot_product_attention(m.w_query(x), m.w_key(x), m.w_value(x), is_causal=True)
    torch.testing.assert_close(got.detach(), expected, atol=1e-6, rtol=1e-6)


def test_self_attention_trains() -> None:
    torch.manual_seed(0)
    m = attnlib.SelfAttention(4, 4)
    x, target = rand(6, 4), rand(6, 4, seed=1)
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    losses = []
    for _ in range(20):
        opt.zero_grad()
        loss = F.mse_loss(m(x), target)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert all(p.grad is not None for p in m.parameters())
    assert losses[-1] < losses[0]


def test_self_attention_repr() -> None:
    assert "d_in=4, d_out=3, scaled=True" in repr(attnlib.SelfAttention(4, 3))


# ---------------------------------------------------------------- heads
def test_split_and_combine_heads_are_inverse() -> None:
    x = rand(2, 5, 12)
    heads = attnlib.split_heads(x, 3)
    assert heads.shape == (2, 3, 5, 4)
    torch.testing.assert_close(heads[:, 1], x[..., 4:8])  # head 1 is the second slice of 4 features
    torch.testing.assert_close(attnlib.combine_heads(heads), x)


# ---------------------------------------------------------------- MultiHeadAttention
@pytest.mark.parametrize("batch_first", [True, False])
@pytest.mark.parametrize("bias", [True, False])
def test_from_torch_gives_torch_output(batch_first: bool, bias: bool) -> None:
    torch.manual_seed(0)
    ref = nn.MultiheadAttention(8, 2, bias=bias, batch_first=batch_first).eval()
    ours = attnlib.MultiHeadAttention.from_torch(ref)
    assert ours.batch_first == batch_first
    x = rand(3, 5, 8) if batch_first else rand(5, 3, 8)
    with torch.no_grad():
        expected, _ = ref(x, x, x, need_weights=False)
        got = ours(x)
    assert got.shape == x.shape
    torch.testing.assert_close(got, expected, atol=1e-6, rtol=1e-5)


@pytest.mark.parametrize("batch_first", [True, False])
def test_from_torch_cross_attention_weights_and_mask(batch_first: bool) -> None:
    torch.manual_seed(1)
    ref = nn.MultiheadAttention(12, 3, batch_first=batch_first).eval()
    ours = attnlib.MultiHeadAttention.from_torch(ref)
    if batch_first:
        query, key, value = rand(2, 4, 12, seed=1), rand(2, 6, 12, seed=2), rand(2, 6, 12, seed=3)
    else:
        query, key, value = rand(4, 2, 12, seed=1), rand(6, 2, 12, seed=2), rand(6, 2, 12, seed=3)
    allowed = torch.rand(4, 6, generator=torch.Generator().manual_seed(5)) > 0.5
    allowed[:, 0] = True
    with torch.no_grad():
        # torch's boolean attn_mask marks what may NOT be attended: the opposite convention
        expected, expected_w = ref(query, key, value, attn_mask=~allowed, average_attn_weights=False)
        got, got_w = ours(query, key, value, mask=allowed, return_weights=True)
    torch.testing.assert_close(got, expected, atol=1e-6, rtol=1e-5)
    torch.testing.assert_close(got_w, expected_w, atol=1e-6, rtol=1e-5)
    assert got_w.shape == (2, 3, 4, 6)


def test_from_torch_unbatched() -> None:
    torch.manual_seed(2)
    ref = nn.MultiheadAttention(6, 3).eval()
    ours = attnlib.MultiHeadAttention.from_torch(ref)
    x = rand(5, 6)
    with torch.no_grad():
        expected, expected_w = ref(x, x, x, average_attn_weights=False)
        got, got_w = ours(x, return_weights=True)
    torch.testing.assert_close(got, expected, atol=1e-6, rtol=1e-5)
    torch.testing.assert_close(got_w, expected_w, atol=1e-6, rtol=1e-5)


def test_from_torch_keeps_dtype() -> None:
    ref = nn.MultiheadAttention(4, 2).double()
    assert attnlib.MultiHeadAttention.from_torch(ref).w_query.weight.dtype == torch.float64


def test_from_torch_rejects_other_modules_and_configurations() -> None:
    with pytest.raises(TypeError, match=r"needs a torch.nn.MultiheadAttention, got Linear"):
        attnlib.MultiHeadAttention.from_torch(nn.Linear(2, 2))  # type: ignore[arg-type]
    with pytest.raises(NotImplementedError, match=r"add_bias_kv=False"):
        attnlib.MultiHeadAttention.from_torch(nn.MultiheadAttention(4, 2, add_bias_kv=True))
    with pytest.raises(NotImplementedError):
        attnlib.MultiHeadAttention.from_torch(nn.MultiheadAttention(4, 2, kdim=3, vdim=3))


def test_one_head_is_single_head_attention_plus_projections() -> None:
    torch.manual_seed(3)
    m = attnlib.MultiHeadAttention(4, 1, bias=False)
    x = rand(2, 3, 4)
    with torch.no_grad():
        inner = attnlib.attention(m.w_query(x), m.w_key(x), m.w_value(x))
        torch.testing.assert_close(m(x), m.out_proj(inner))


def test_multihead_repr_and_sizes() -> None:
    m = attnlib.MultiHeadAttention(8, 4)
    assert m.d_head == 2
    assert "d_model=8, num_heads=4, d_head=2, batch_first=True" in repr(m)


def test_causal_mask_is_lower_triangular_true_may_attend():
    mask = causal_mask(4)
    assert mask.dtype == torch.bool and mask.shape == (4, 4)
    for i in range(4):
        for j in range(4):
            assert bool(mask[i, j]) == (j <= i)


@pytest.mark.parametrize("bad", [0, -1, 2.0, True, "3"])
def test_causal_mask_rejects_bad_sizes(bad):
    with pytest.raises(AttentionInputError, match="n_tokens"):
        causal_mask(bad)


@pytest.mark.parametrize("offset", [1, 3])
def test_causal_mask_with_an_offset_is_the_last_rows_of_the_square_one(offset):
    mask = causal_mask(2, offset=offset)
    assert mask.shape == (2, offset + 2)
    assert torch.equal(mask, causal_mask(offset + 2)[offset:])


@pytest.mark.parametrize("bad", [-1, 1.0, True])
def test_causal_mask_rejects_a_bad_offset(bad):
    with pytest.raises(AttentionInputError, match="offset must be a non-negative integer"):
        causal_mask(2, offset=bad)


@pytest.mark.parametrize("scaled", [True, False])
def test_self_attention_steps_with_mask_match_sdpa_and_forward(scaled):
    torch.manual_seed(1)
    module = SelfAttention(4, 3, scaled=scaled)
    x = torch.randn(2, 5, 4)
    mask = causal_mask(5)
    steps = module.intermediates(x, mask=mask)
    with torch.no_grad():
        q, k, v = module.w_query(x), module.w_key(x), module.w_value(x)
        want = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=None if scaled else 1.0)
        assert torch.allclose(steps.context, want, atol=1e-6)
        assert torch.allclose(steps.context, module(x, mask=mask), atol=1e-6)
    assert torch.isinf(steps.scaled_scores[..., 0, 1:]).all()
    assert (steps.weights[..., ~mask] == 0).all()
    assert torch.allclose(steps.weights.sum(-1), torch.ones(2, 5))


def test_self_attention_steps_rejects_a_mask_of_the_wrong_shape():
    torch.manual_seed(0)
    module = SelfAttention(2)
    with pytest.raises(AttentionInputError, match="mask"):
        module.intermediates(examples.encodings.inputs, mask=causal_mask(4))


@pytest.mark.parametrize("batched", [True, False])
def test_multihead_steps_shapes_and_output(batched):
    torch.manual_seed(2)
    module = MultiHeadAttention(12, 3)
    x = torch.randn(2, 5, 12) if batched else torch.randn(5, 12)
    steps = module.intermediates(x, mask=causal_mask(5))
    lead = (2,) if batched else ()
    assert steps.queries.shape == (*lead, 5, 12)
    assert steps.queries_split.shape == (*lead, 3, 5, 4)
    assert steps.weights.shape == (*lead, 3, 5, 5)
    assert steps.heads.shape == (*lead, 3, 5, 4)
    assert steps.concatenated.shape == (*lead, 5, 12)
    with torch.no_grad():
        assert torch.allclose(steps.output, module(x, mask=causal_mask(5)), atol=1e-6)
        assert torch.equal(steps.queries_split, split_heads(module.w_query(x), 3))
    assert torch.equal(combine_heads(steps.heads), steps.concatenated)


def test_multihead_steps_unscaled_differs_and_matches_sdpa_with_scale_one():
    torch.manual_seed(3)
    module = MultiHeadAttention(8, 2)
    x = torch.randn(1, 4, 8)
    scaled, unscaled = module.intermediates(x), module.intermediates(x, scaled=False)
    assert not torch.allclose(scaled.weights, unscaled.weights)
    want = F.scaled_dot_product_attention(unscaled.queries_split, unscaled.keys_split, unscaled.values_split, scale=1.0)
    assert torch.allclose(unscaled.heads, want, atol=1e-6)


def test_multihead_steps_rejects_wrong_features():
    module = MultiHeadAttention(8, 2)
    with pytest.raises(AttentionInputError, match="d_model"):
        module.intermediates(torch.randn(4, 6))
