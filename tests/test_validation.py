"""Bad input gets a clear error naming the argument and the shapes — one test per case."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch

import attnlib
from attnlib import AttentionInputError, steps
from attnlib._validate import check_batch_dims, check_mask, check_scale, check_tensor, shape_str


def qkv(n_q: int = 3, n_k: int = 4, d_k: int = 5, d_v: int = 2) -> tuple[torch.Tensor, ...]:
    gen = torch.Generator().manual_seed(0)
    return (
        torch.randn(n_q, d_k, generator=gen),
        torch.randn(n_k, d_k, generator=gen),
        torch.randn(n_k, d_v, generator=gen),
    )


def test_shape_str() -> None:
    assert shape_str(torch.zeros(3, 4)) == "(3, 4)"
    assert shape_str(torch.zeros(7)) == "(7,)"
    assert shape_str(torch.Size([2, 3, 4])) == "(2, 3, 4)"
    assert shape_str(()) == "()"


def test_mismatched_d_k_between_queries_and_keys() -> None:
    q = torch.randn(2, 5)
    k = torch.randn(4, 3)
    v = torch.randn(4, 2)
    with pytest.raises(AttentionInputError) as info:
        attnlib.attention(q, k, v)
    msg = str(info.value)
    assert "queries have d_k=5 but keys have d_k=3" in msg
    assert "queries (2, 5)" in msg and "keys (4, 3)" in msg


def test_n_k_mismatch_between_keys_and_values() -> None:
    q, k, _ = qkv(n_k=4)
    v = torch.randn(6, 2)
    with pytest.raises(AttentionInputError) as info:
        attnlib.attention(q, k, v)
    msg = str(info.value)
    assert "keys have n_k=4 but values have n_k=6" in msg
    assert "keys (4, 5)" in msg and "values (6, 2)" in msg


def test_wrong_rank() -> None:
    _, k, v = qkv()
    with pytest.raises(AttentionInputError) as info:
        attnlib.attention(torch.randn(5), k, v)
    msg = str(info.value)
    assert msg.startswith("queries must have at least 2 dimensions")
    assert "(..., n_q, d_k)" in msg and "got shape (5,)" in msg


def test_batch_dims_that_do_not_broadcast() -> None:
    q, k, v = torch.randn(2, 3, 5), torch.randn(3, 4, 5), torch.randn(3, 4, 2)
    with pytest.raises(AttentionInputError, match=re.escape("queries (2, 3, 5), keys (3, 4, 5), values (3, 4, 2)")):
        attnlib.attention(q, k, v)


def test_integer_tensors() -> None:
    q, k, v = qkv()
    with pytest.raises(TypeError) as info:
        attnlib.attention(q, k.to(torch.int64), v)
    msg = str(info.value)
    assert "keys must be a floating-point tensor" in msg
    assert "torch.int64" in msg and "(4, 5)" in msg and "keys.float()" in msg


def test_mixed_float_dtypes() -> None:
    q, k, v = qkv()
    with pytest.raises(TypeError, match=r"queries are torch.float32 but keys are torch.float64"):
        attnlib.attention(q, k.double(), v)


def test_not_a_tensor() -> None:
    _, k, v = qkv()
    with pytest.raises(TypeError, match=r"queries must be a torch.Tensor, got list"):
        attnlib.attention([[1.0, 2.0]], k, v)  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), float("-inf")])
def test_nan_or_inf_in_inputs(bad: float) -> None:
    q, k, v = qkv()
    v[1, 0] = bad
    with pytest.raises(AttentionInputError) as info:
        attnlib.attention(q, k, v)
    assert str(info.value) == "values contains 1 NaN or infinite value(s) (shape (4, 2))"


def test_mask_of_wrong_shape() -> None:
    q, k, v = qkv(n_q=3, n_k=4)
    with pytest.raises(AttentionInputError) as info:
        attnlib.attention(q, k, v, mask=torch.ones(4, 3, dtype=torch.bool))
    msg = str(info.value)
    assert "mask of shape (4, 3)" in msg
    assert "(..., n_q, n_k) = (3, 4)" in msg


def test_mask_with_more_batch_dims_than_the_scores() -> None:
    q, k, v = qkv(n_q=3, n_k=4)
    with pytest.raises(AttentionInputError, match=re.escape("mask of shape (2, 3, 4) does not broadcast")):
        attnlib.attention(q, k, v, mask=torch.ones(2, 3, 4, dtype=torch.bool))


def test_mask_of_wrong_dtype() -> None:
    q, k, v = qkv()
    with pytest.raises(TypeError) as info:
        attnlib.attention(q, k, v, mask=torch.ones(3, 4))
    msg = str(info.value)
    assert "mask must have dtype torch.bool" in msg and "True = may attend" in msg
    assert "torch.float32" in msg and "(3, 4)" in msg


def test_mask_that_hides_every_key_of_a_query() -> None:
    q, k, v = qkv(n_q=3, n_k=4)
    mask = torch.ones(3, 4, dtype=torch.bool)
    mask[2] = False
    with pytest.raises(AttentionInputError) as info:
        attnlib.attention(q, k, v, mask=mask)
    msg = str(info.value)
    assert "mask hides every key from at least one query" in msg
    assert "mask index (2,)" in msg and "mask shape (3, 4)" in msg


def test_mask_that_hides_every_key_in_a_batch() -> None:
    q, k, v = torch.randn(2, 3, 5), torch.randn(2, 4, 5), torch.randn(2, 4, 2)
    mask = torch.ones(2, 3, 4, dtype=torch.bool)
    mask[1, 0] = False
    with pytest.raises(AttentionInputError, match=re.escape("mask index (1, 0)")):
        attnlib.attention_weights(q, k, v, mask=mask)


@pytest.mark.parametrize("scale", [0.0, -1.0, float("nan"), float("inf")])
def test_non_positive_or_non_finite_scale(scale: float) -> None:
    q, k, v = qkv()
    with pytest.raises(AttentionInputError, match=r"scale must be a positive finite number, got"):
        attnlib.attention(q, k, v, scale=scale)


def test_scale_of_wrong_type() -> None:
    q, k, v = qkv()
    with pytest.raises(TypeError, match=r"scale must be a number, got str"):
        attnlib.attention(q, k, v, scale="0.5")  # type: ignore[arg-type]
    with pytest.raises(AttentionInputError, match=re.escape("scale must be a single number, got shape (2,)")):
        attnlib.attention(q, k, v, scale=torch.tensor([1.0, 2.0]))  # type: ignore[arg-type]


def test_scale_accepts_numpy_and_tensor_scalars() -> None:
    assert check_scale(np.float32(0.5), 4) == 0.5
    assert check_scale(torch.tensor(0.25), 4) == 0.25
    assert check_scale(None, 16) == 0.25


def test_heads_that_do_not_divide_the_model_dimension() -> None:
    with pytest.raises(AttentionInputError) as info:
        attnlib.MultiHeadAttention(10, 3)
    msg = str(info.value)
    assert "d_model=10 is not divisible by num_heads=3" in msg


def test_split_heads_that_do_not_divide() -> None:
    with pytest.raises(AttentionInputError, match=r"d_model=6 is not divisible by num_heads=4"):
        attnlib.split_heads(torch.zeros(1, 2, 6), 4)


@pytest.mark.parametrize("num_heads", [0, -2, 2.0, True])
def test_num_heads_must_be_a_positive_integer(num_heads: object) -> None:
    with pytest.raises(AttentionInputError, match=r"num_heads must be a positive integer"):
        attnlib.MultiHeadAttention(8, num_heads)  # type: ignore[arg-type]


def test_module_input_of_wrong_feature_size() -> None:
    m = attnlib.SelfAttention(2)
    with pytest.raises(AttentionInputError) as info:
        m(torch.zeros(3, 4))
    assert str(info.value) == "x has d_in=4 but the module expects d_in=2 (x shape (3, 4))"


def test_multihead_input_of_wrong_rank() -> None:
    m = attnlib.MultiHeadAttention(4, 2)
    with pytest.raises(AttentionInputError, match=re.escape("query must be (batch, n, d_model) or (n, d_model)")):
        m(torch.zeros(1, 2, 3, 4))


def test_prepare_inputs_wrong_rank() -> None:
    with pytest.raises(AttentionInputError, match=re.escape("inputs must be a matrix (n_tokens, d_in)")):
        steps.prepare_inputs([1.0, 2.0])


def test_prepare_inputs_empty() -> None:
    with pytest.raises(AttentionInputError, match=re.escape("at least one token and one feature, got (0, 4)")):
        steps.prepare_inputs(torch.zeros(0, 4))


@pytest.mark.parametrize("arg", ["d_in", "d_k", "d_v"])
def test_init_projections_sizes(arg: str) -> None:
    sizes = {"d_in": 4, "d_k": 3, "d_v": 2, arg: 0}
    with pytest.raises(AttentionInputError, match=rf"{arg} must be a positive integer, got 0"):
        steps.init_projections(**sizes)


def test_derive_qkv_d_in_mismatch() -> None:
    x = torch.zeros(3, 4)
    w = steps.init_projections(5, 2)
    with pytest.raises(AttentionInputError) as info:
        steps.derive_qkv(x, *w)
    assert "inputs have d_in=4 but w_query expects d_in=5" in str(info.value)
    assert "inputs (3, 4), w_query (5, 2)" in str(info.value)


def test_derive_qkv_query_key_sizes_differ() -> None:
    x = torch.zeros(3, 4)
    with pytest.raises(AttentionInputError, match=r"w_query gives d_k=2 but w_key gives d_k=3"):
        steps.derive_qkv(x, torch.zeros(4, 2), torch.zeros(4, 3), torch.zeros(4, 3))


def test_project_weight_not_a_matrix() -> None:
    with pytest.raises(
        AttentionInputError, match=re.escape("w_key must be a matrix (d_in, d_out), got shape (2, 4, 3)")
    ):
        steps.project(torch.zeros(3, 4), torch.zeros(2, 4, 3), name="w_key")


def test_weight_values_n_k_mismatch() -> None:
    with pytest.raises(AttentionInputError) as info:
        steps.weight_values(torch.zeros(3, 4), torch.zeros(5, 2))
    assert "weights have n_k=4 but values have n_k=5 (weights (3, 4), values (5, 2))" in str(info.value)


def test_sum_weighted_values_wrong_rank() -> None:
    with pytest.raises(AttentionInputError, match=re.escape("weighted_values must have at least 3 dimensions")):
        steps.sum_weighted_values(torch.zeros(3, 4))


def test_softmax_integer_scores() -> None:
    with pytest.raises(TypeError, match=r"scores must be a floating-point tensor, got torch.int64"):
        steps.softmax(torch.tensor([[1, 2]]))


def test_softmax_nan_scores() -> None:
    with pytest.raises(AttentionInputError, match=re.escape("scores contain NaN or +inf (shape (1, 2))")):
        steps.softmax(torch.tensor([[1.0, float("nan")]]))


def test_softmax_row_all_minus_inf() -> None:
    with pytest.raises(
        AttentionInputError, match=re.escape("every score along dim=-1 is -inf in some row (shape (2, 2))")
    ):
        steps.softmax(torch.tensor([[0.0, 1.0], [float("-inf"), float("-inf")]]))


def test_check_tensor_and_check_mask_directly() -> None:
    with pytest.raises(AttentionInputError, match=re.escape("x must have at least 3 dimensions (a, b, c)")):
        check_tensor("x", torch.zeros(2, 2), min_rank=3, layout="(a, b, c)")
    assert check_mask(None, (2, 2)) is None
    with pytest.raises(TypeError, match=r"mask must be a torch.Tensor of dtype torch.bool, got list"):
        check_mask([[True]], (1, 1))  # type: ignore[arg-type]
    assert check_batch_dims(a=torch.zeros(2, 1, 3, 4), b=torch.zeros(5, 3, 4)) == (2, 5)


def test_errors_are_value_errors() -> None:
    # learners (and callers) can catch the usual ValueError
    assert issubclass(AttentionInputError, ValueError)


def test_finiteness_check_has_no_false_alarm_on_huge_finite_values() -> None:
    # the sum of these overflows to inf, but every entry is finite: not an error
    assert check_tensor("queries", torch.full((4, 4), 3e38)) is not None


def test_finiteness_check_catches_inf_and_minus_inf_that_cancel() -> None:
    t = torch.zeros(3, 3)
    t[0, 0], t[2, 1] = float("inf"), float("-inf")
    with pytest.raises(AttentionInputError, match=re.escape("keys contains 2 NaN or infinite value(s) (shape (3, 3))")):
        check_tensor("keys", t)


def test_mask_scores_alone_names_the_mask_and_the_scores_shape() -> None:
    scores = torch.zeros(3, 4)
    with pytest.raises(AttentionInputError, match=re.escape("mask of shape (4, 3) does not broadcast")):
        steps.mask_scores(scores, torch.ones(4, 3, dtype=torch.bool))
    with pytest.raises(TypeError, match=r"mask must have dtype torch.bool"):
        steps.mask_scores(scores, torch.ones(3, 4, dtype=torch.int64))
    # a mask may add batch dimensions of its own: the masked scores take the broadcast shape
    assert steps.mask_scores(scores, torch.ones(2, 3, 4, dtype=torch.bool)).shape == (2, 3, 4)


def test_attention_checks_the_masks_contents_once_at_its_entry() -> None:
    q, k, v = qkv(n_q=3, n_k=4)
    with pytest.raises(TypeError, match="holding only 0s and 1s"):
        attnlib.attention_weights(q, k, v, mask=torch.ones(3, 4))
    with pytest.raises(TypeError, match="holding only 0s and 1s"):
        steps.trace(q, k, v, mask=torch.ones(3, 4))


def test_broadcast_follows_torch_rules() -> None:
    from attnlib._validate import broadcast

    shapes = [(), (1,), (3,), (2, 1), (1, 3), (2, 3), (4, 1, 3), (3, 2)]
    for a in shapes:
        for b in shapes:
            try:
                want = tuple(torch.broadcast_shapes(a, b))
            except RuntimeError:
                with pytest.raises(ValueError, match="do not broadcast"):
                    broadcast(a, b)
            else:
                assert broadcast(a, b) == want, (a, b)
