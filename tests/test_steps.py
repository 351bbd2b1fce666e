"""Unit tests of the eight steps and their composition (attnlib.steps).

Expected values come from torch's own implementations (``F.softmax``,
``F.scaled_dot_product_attention``, matrix products written differently) or from the documents'
integer examples worked by hand; nothing is copied from a run of attnlib.
"""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

import attnlib
from attnlib import examples, steps

GEN_SEED = 1234


def rand(*shape: int, seed: int = GEN_SEED, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=dtype)


# ---------------------------------------------------------------- step 1
def test_prepare_inputs_stacks_rows_as_float32() -> None:
    x = steps.prepare_inputs([[1, 0, 1, 0], [0, 2, 0, 2]])
    assert x.dtype == torch.float32
    assert x.shape == (2, 4)
    assert x[1, 3].item() == 2.0


def test_prepare_inputs_copies_a_tensor() -> None:
    source = torch.ones(2, 3, dtype=torch.float64)
    x = steps.prepare_inputs(source)
    x[0, 0] = 5.0
    assert source[0, 0].item() == 1.0  # a copy, not a view
    assert x.dtype == torch.float32


# ---------------------------------------------------------------- step 2
def test_init_projections_shapes_and_range() -> None:
    w = steps.init_projections(4, 3, 5)
    assert isinstance(w, steps.Projections)
    assert (w.w_query.shape, w.w_key.shape, w.w_value.shape) == ((4, 3), (4, 3), (4, 5))
    for m in w:
        assert bool(((m >= 0) & (m < 1)).all())


def test_init_projections_d_v_defaults_to_d_k() -> None:
    assert steps.init_projections(4, 3).w_value.shape == (4, 3)


def test_init_projections_reproducible_like_the_documents_and_leaves_global_rng_alone() -> None:
    torch.manual_seed(0)
    before = torch.random.get_rng_state()
    w = steps.init_projections(16, 24, 28, seed=123)
    assert torch.equal(torch.random.get_rng_state(), before)
    torch.manual_seed(123)
    expected = (torch.rand(16, 24), torch.rand(16, 24), torch.rand(16, 28))
    for got, want in zip(w, expected):
        assert torch.equal(got, want)
    assert not torch.equal(steps.init_projections(16, 24, seed=124).w_query, w.w_query)


# ---------------------------------------------------------------- step 3
def test_derive_qkv_is_three_matrix_products() -> None:
    x = examples.four_inputs.inputs
    w = examples.four_inputs.projections
    q, k, v = steps.derive_qkv(x, *w)
    assert torch.equal(q, torch.matmul(x, w.w_query))
    assert torch.equal(k, torch.matmul(x, w.w_key))
    assert torch.equal(v, torch.matmul(x, w.w_value))


def test_derive_qkv_by_hand_on_document_001() -> None:
    # 001 works the key of Input 1 by hand: [1, 0, 1, 0] x W_key = [0, 1, 1]
    q, k, v = examples.three_inputs.qkv()
    assert k[0].tolist() == [0.0, 1.0, 1.0]
    assert v.shape == (3, 3) and q.shape == (3, 3)


def test_project_batched_inputs() -> None:
    x = rand(2, 5, 4)
    w = rand(4, 3, seed=1)
    out = steps.project(x, w)
    assert out.shape == (2, 5, 3)
    torch.testing.assert_close(out[1], x[1] @ w)


# ---------------------------------------------------------------- step 4
def test_score_entry_is_dot_product() -> None:
    q, k = rand(3, 4), rand(5, 4, seed=2)
    s = steps.score(q, k)
    assert s.shape == (3, 5)
    torch.testing.assert_close(s[2, 4], torch.dot(q[2], k[4]))


def test_score_document_000_by_hand() -> None:
    q, k, _ = examples.four_inputs.qkv()
    # query 1 [1, 0, 2, 0, 1] · key 1 [0, 1, 1, 2, 2] = 0 + 0 + 2 + 0 + 2
    assert steps.score(q, k)[0, 0].item() == 4.0


def test_score_batch_dims_broadcast() -> None:
    q, k = rand(2, 1, 3, 4), rand(1, 6, 5, 4, seed=3)
    assert steps.score(q, k).shape == (2, 6, 3, 5)


# ---------------------------------------------------------------- step 5
def test_softmax_matches_torch_and_rows_sum_to_one() -> None:
    s = rand(4, 7) * 10
    w = steps.softmax(s)
    torch.testing.assert_close(w, F.softmax(s, dim=-1))
    torch.testing.assert_close(w.sum(-1), torch.ones(4))


def test_softmax_other_dim() -> None:
    s = rand(4, 7)
    torch.testing.assert_close(steps.softmax(s, dim=0), F.softmax(s, dim=0))


def test_softmax_large_scores_do_not_overflow() -> None:
    s = torch.tensor([[1e4, -1e4, 0.0], [1000.0, 1000.0, 999.0]])
    w = steps.softmax(s)
    assert bool(torch.isfinite(w).all())
    assert w[0].tolist() == [1.0, 0.0, 0.0]
    ref = torch.softmax(s.double(), dim=-1)
    torch.testing.assert_close(w.double(), ref, atol=1e-7, rtol=1e-6)


def test_softmax_masked_entries_get_zero_weight() -> None:
    s = torch.tensor([[1.0, float("-inf"), 2.0]])
    w = steps.softmax(s)
    assert w[0, 1].item() == 0.0
    torch.testing.assert_close(w[0, [0, 2]], F.softmax(torch.tensor([1.0, 2.0]), dim=0))


def test_softmax_does_not_modify_its_input() -> None:
    s = rand(3, 3)
    copy = s.clone()
    steps.softmax(s)
    assert torch.equal(s, copy)


# ---------------------------------------------------------------- step 6 and 7
def test_weight_values_entry_is_weight_times_value() -> None:
    w = F.softmax(rand(3, 4), dim=-1)
    v = rand(4, 5, seed=5)
    wv = steps.weight_values(w, v)
    assert wv.shape == (3, 4, 5)
    torch.testing.assert_close(wv[1, 2], w[1, 2] * v[2])


def test_sum_weighted_values_equals_matrix_product() -> None:
    w = F.softmax(rand(2, 3, 4), dim=-1)
    v = rand(2, 4, 5, seed=6)
    context = steps.sum_weighted_values(steps.weight_values(w, v))
    assert context.shape == (2, 3, 5)
    torch.testing.assert_close(context, w @ v)


def test_weighting_and_summing_by_hand_document_001() -> None:
    # 001 with its rounded softmax [0.0, 0.5, 0.5]: weighted values and Output 1 = [2.0, 7.0, 1.5]
    _, _, v = examples.three_inputs.qkv()
    wv = steps.weight_values(torch.tensor([[0.0, 0.5, 0.5]]), v)
    assert wv[0].tolist() == [[0.0, 0.0, 0.0], [1.0, 4.0, 0.0], [1.0, 3.0, 1.5]]
    assert steps.sum_weighted_values(wv)[0].tolist() == [2.0, 7.0, 1.5]


# ---------------------------------------------------------------- step 8
def test_scale_scores_divides_by_sqrt_d_k() -> None:
    s = rand(3, 3)
    torch.testing.assert_close(steps.scale_scores(s, 16), s / 4)


def test_scale_scores_explicit_scale() -> None:
    s = rand(3, 3)
    torch.testing.assert_close(steps.scale_scores(s, scale=0.5), s * 0.5)


def test_scale_scores_needs_d_k_or_scale() -> None:
    with pytest.raises(attnlib.AttentionInputError, match=r"d_k must be a positive integer.*got None"):
        steps.scale_scores(rand(2, 2))


def test_scaling_restores_unit_variance() -> None:
    q, k = rand(64, 256), rand(64, 256, seed=9)
    raw = steps.score(q, k)
    assert 150 < float(raw.var()) < 400  # about d_k = 256
    assert 0.6 < float(steps.scale_scores(raw, 256).var()) < 1.6


# ---------------------------------------------------------------- attention
@pytest.mark.parametrize("batch", [(), (3,), (2, 3)])
def test_attention_agrees_with_torch_sdpa(batch: tuple[int, ...]) -> None:
    q, k, v = rand(*batch, 5, 8, seed=1), rand(*batch, 7, 8, seed=2), rand(*batch, 7, 6, seed=3)
    got = attnlib.attention(q, k, v)
    assert got.shape == (*batch, 5, 6)
    torch.testing.assert_close(got, F.scaled_dot_product_attention(q, k, v), atol=1e-6, rtol=1e-6)


def test_attention_with_mask_agrees_with_torch_sdpa() -> None:
    q, k, v = rand(2, 4, 8, seed=1), rand(2, 6, 8, seed=2), rand(2, 6, 3, seed=3)
    mask = torch.rand(2, 4, 6, generator=torch.Generator().manual_seed(4)) > 0.4
    mask[..., 0] = True  # no query loses every key
    got = attnlib.attention(q, k, v, mask=mask)
    torch.testing.assert_close(got, F.scaled_dot_product_attention(q, k, v, attn_mask=mask), atol=1e-6, rtol=1e-6)


def test_attention_causal_mask_broadcasts_over_batch() -> None:
    q = k = v = rand(3, 5, 4)
    causal = torch.ones(5, 5, dtype=torch.bool).tril()
    got = attnlib.attention(q, k, v, mask=causal)
    torch.testing.assert_close(got, F.scaled_dot_product_attention(q, k, v, is_causal=True), atol=1e-6, rtol=1e-6)
    # the first query only sees the first key: its context is the first value
    torch.testing.assert_close(got[:, 0], v[:, 0])


def test_attention_explicit_scale_agrees_with_torch() -> None:
    q, k, v = rand(4, 8, seed=1), rand(4, 8, seed=2), rand(4, 8, seed=3)
    got = attnlib.attention(q, k, v, scale=0.3)
    torch.testing.assert_close(got, F.scaled_dot_product_attention(q, k, v, scale=0.3), atol=1e-6, rtol=1e-6)


def test_attention_scale_one_is_document_000_unscaled_form() -> None:
    q, k, v = examples.four_inputs.qkv()
    unscaled = attnlib.attention(q, k, v, scale=1.0)
    torch.testing.assert_close(unscaled, F.softmax(q @ k.T, dim=-1) @ v)
    scaled = attnlib.attention(q, k, v)
    torch.testing.assert_close(scaled, F.softmax(q @ k.T / math.sqrt(5), dim=-1) @ v)
    assert not torch.allclose(unscaled, scaled)


def test_attention_is_the_composition_of_the_steps() -> None:
    q, k, v = rand(2, 5, 4, seed=1), rand(2, 6, 4, seed=2), rand(2, 6, 3, seed=3)
    weights = steps.softmax(steps.scale_scores(steps.score(q, k), 4))
    context = steps.sum_weighted_values(steps.weight_values(weights, v))
    torch.testing.assert_close(attnlib.attention(q, k, v), context)


def test_attention_weights_are_the_softmax() -> None:
    q, k, v = rand(2, 5, 4, seed=1), rand(2, 6, 4, seed=2), rand(2, 6, 3, seed=3)
    mask = torch.ones(5, 6, dtype=torch.bool).triu(diagonal=-1)
    w = attnlib.attention_weights(q, k, v, mask=mask)
    expected = F.softmax((q @ k.transpose(-2, -1) / 2).masked_fill(~mask, float("-inf")), dim=-1)
    torch.testing.assert_close(w, expected)
    assert bool((w[..., ~mask] == 0).all())
    torch.testing.assert_close(w @ v, attnlib.attention(q, k, v, mask=mask))


def test_attention_weights_values_optional_and_scale() -> None:
    q, k = rand(3, 4, seed=1), rand(5, 4, seed=2)
    torch.testing.assert_close(attnlib.attention_weights(q, k, scale=1.0), F.softmax(q @ k.T, dim=-1))


def test_attention_float64_and_gradients() -> None:
    q = rand(3, 4, dtype=torch.float64).requires_grad_()
    k, v = rand(3, 4, seed=2, dtype=torch.float64), rand(3, 2, seed=3, dtype=torch.float64)
    out = attnlib.attention(q, k, v)
    assert out.dtype == torch.float64
    out.sum().backward()
    assert q.grad is not None and bool(torch.isfinite(q.grad).all())
    assert torch.autograd.gradcheck(lambda x: attnlib.attention(x, k, v), (q.detach().requires_grad_(),))


def test_attention_does_not_modify_inputs() -> None:
    q, k, v = rand(3, 4, seed=1), rand(3, 4, seed=2), rand(3, 2, seed=3)
    copies = [t.clone() for t in (q, k, v)]
    attnlib.attention(q, k, v, scale=2.0)
    for t, c in zip((q, k, v), copies):
        assert torch.equal(t, c)


def test_attention_document_004_context() -> None:
    # 004's module computation, written with torch directly, equals the composition
    torch.manual_seed(42)
    lin = [torch.nn.Linear(2, 2, bias=False) for _ in range(3)]  # query, value, key in 004's order
    x = examples.encodings.inputs
    with torch.no_grad():
        q, v, k = (m(x) for m in lin)
        expected = F.softmax(q @ k.T / math.sqrt(2), dim=1) @ v
        torch.testing.assert_close(attnlib.attention(q, k, v), expected)


def test_attention_mask_and_values_may_add_batch_dimensions() -> None:
    q, k = rand(3, 5, seed=1), rand(4, 5, seed=2)
    v = rand(2, 4, 2, seed=3)
    mask = torch.rand(2, 3, 4, generator=torch.Generator().manual_seed(4)) > 0.3
    mask[..., 0] = True
    got = attnlib.attention(q, k, v, mask=mask)
    assert got.shape == (2, 3, 2)
    expected = F.scaled_dot_product_attention(q.expand(2, 3, 5), k.expand(2, 4, 5), v, attn_mask=mask)
    torch.testing.assert_close(got, expected, atol=1e-6, rtol=1e-6)


def test_attention_masked_gradients_match_torch() -> None:
    q1 = rand(2, 4, 3, seed=1).requires_grad_()
    q2 = q1.detach().clone().requires_grad_()
    k, v = rand(2, 4, 3, seed=2), rand(2, 4, 2, seed=3)
    causal = torch.ones(4, 4, dtype=torch.bool).tril()
    attnlib.attention(q1, k, v, mask=causal).square().sum().backward()
    F.scaled_dot_product_attention(q2, k, v, attn_mask=causal).square().sum().backward()
    torch.testing.assert_close(q1.grad, q2.grad, atol=1e-6, rtol=1e-5)


# ---------------------------------------------------------------- trace: the steps one at a time
@pytest.mark.parametrize(
    "scale, masked", [(None, False), (None, True), (0.3, False), (0.3, True), (1.0, True)], ids=str
)
def test_trace_context_is_attention(scale: float | None, masked: bool) -> None:
    q, k, v = rand(2, 5, 4, seed=1), rand(2, 6, 4, seed=2), rand(2, 6, 3, seed=3)
    mask = torch.ones(5, 6, dtype=torch.bool).tril(diagonal=1) if masked else None
    t = steps.trace(q, k, v, scale=scale, mask=mask)
    torch.testing.assert_close(t.context, attnlib.attention(q, k, v, scale=scale, mask=mask))
    torch.testing.assert_close(t.weights, attnlib.attention_weights(q, k, v, scale=scale, mask=mask))
    torch.testing.assert_close(t.weighted_values.sum(dim=-2), t.context)  # step 7: the weighted values add up
    assert t.weighted_values.shape == (2, 5, 6, 3)


def test_trace_keeps_every_intermediate_in_order() -> None:
    q, k, v = rand(4, 8, seed=1), rand(4, 8, seed=2), rand(4, 2, seed=3)
    mask = torch.ones(4, 4, dtype=torch.bool).tril()
    t = steps.trace(q, k, v, mask=mask)
    torch.testing.assert_close(t.scores, q @ k.T)
    expected = (q @ k.T / math.sqrt(8)).masked_fill(~mask, float("-inf"))
    torch.testing.assert_close(t.scaled_scores, expected)
    torch.testing.assert_close(t.weights, F.softmax(expected, dim=-1))
    torch.testing.assert_close(t.weighted_values, t.weights[..., None] * v[None])


def test_trace_without_values_stops_at_the_weights() -> None:
    q, k = rand(3, 4, seed=1), rand(5, 4, seed=2)
    t = steps.trace(q, k, scale=1.0)
    assert t.weighted_values is None and t.context is None
    torch.testing.assert_close(t.weights, F.softmax(q @ k.T, dim=-1))
    torch.testing.assert_close(t.scaled_scores, t.scores)


def test_trace_checks_its_arguments_as_attention_does() -> None:
    q, k, v = rand(3, 4, seed=1), rand(5, 3, seed=2), rand(5, 2, seed=3)
    with pytest.raises(attnlib.AttentionInputError, match="queries have d_k=4 but keys have d_k=3"):
        steps.trace(q, k, v)
