"""The documents' worked examples (attnlib.examples): names, shapes and the documents' own data."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from attnlib import examples


def test_every_document_has_an_example_by_number_and_by_name() -> None:
    by_name = {
        "four_inputs": "000",
        "three_inputs": "001",
        "history": "002",
        "translate": "003",
        "encodings": "004",
    }
    assert sorted(examples.ALL) == ["000", "001", "002", "003", "004"]
    for name, number in by_name.items():
        assert examples.get(name) is examples.get(number) is getattr(examples, name)
        assert examples.get(name).key == number
        assert examples.get(name).document.startswith(number)


def test_get_unknown_names_the_choices() -> None:
    with pytest.raises(KeyError, match=r"no example 'nope'.*'000'.*'three_inputs'"):
        examples.get("nope")


@pytest.mark.parametrize(
    ("example", "n_tokens", "d_in", "d_k", "d_v"),
    [(examples.four_inputs, 4, 4, 5, 5), (examples.three_inputs, 3, 4, 3, 3)],
)
def test_matrix_examples_shapes(example: examples.MatrixExample, n_tokens: int, d_in: int, d_k: int, d_v: int) -> None:
    x = example.inputs
    assert x.dtype == torch.float32 and x.shape == (n_tokens, d_in)
    w = example.projections
    assert (w.w_query.shape, w.w_key.shape, w.w_value.shape) == ((d_in, d_k), (d_in, d_k), (d_in, d_v))
    q, k, v = example.qkv()
    assert (q.shape, k.shape, v.shape) == ((n_tokens, d_k), (n_tokens, d_k), (n_tokens, d_v))
    assert len(example.token_labels) == n_tokens
    assert example.scale == 1.0  # both documents skip the scaling


def test_example_data_are_the_documents_numbers() -> None:
    # 000 and 001 share their first three inputs; 001's weights are the first 3 columns of 000's
    assert torch.equal(examples.four_inputs.inputs[:3], examples.three_inputs.inputs)
    for big, small in zip(examples.four_inputs.projections, examples.three_inputs.projections):
        assert torch.equal(big[:, :3], small)
    assert examples.four_inputs.inputs[3].tolist() == [3.0, 1.0, 1.0, 1.0]


def test_examples_are_immutable_and_return_fresh_tensors() -> None:
    x = examples.three_inputs.inputs
    x[0, 0] = 99.0
    assert examples.three_inputs.inputs[0, 0].item() == 1.0
    with pytest.raises(AttributeError):
        examples.three_inputs.rows = ()  # type: ignore[misc]


def test_encodings_has_no_explicit_weights() -> None:
    assert examples.encodings.inputs.shape == (3, 2)
    with pytest.raises(AttributeError, match=r"example '004' has no explicit weights"):
        examples.encodings.projections  # noqa: B018


def test_history_run_replays_document_002_draws() -> None:
    ex = examples.history
    assert len(ex.tokens) == 28 and ex.ids.shape == (28,)
    run = ex.run()
    torch.manual_seed(123)
    embedded = torch.nn.Embedding(50000, 16)(ex.ids).detach()
    wq, wk, wv = torch.rand(16, 24), torch.rand(16, 24), torch.rand(16, 28)
    assert torch.equal(run.embedded, embedded)
    assert torch.equal(run.w_query, wq) and torch.equal(run.w_key, wk) and torch.equal(run.w_value, wv)


def test_translate_run_reseeds_before_weights_like_document_003() -> None:
    ex = examples.translate
    assert ex.ids.tolist() == [0, 7, 1, 2, 5, 6, 4, 3]
    run = ex.run()
    torch.manual_seed(123)
    embedded = torch.nn.Embedding(10, 16)(ex.ids).detach()
    torch.manual_seed(123)
    u_query = torch.rand(16, 16)
    assert torch.equal(run.embedded, embedded)
    assert torch.equal(run.u_query, u_query)


def test_the_documents_differences_are_typed_fields_that_take_effect() -> None:
    ex = examples.translate
    assert (ex.reseed_before_weights, ex.column_vectors, ex.query_index) == (True, True, 1)
    rows = dataclasses.replace(ex, column_vectors=False)  # X W instead of X Uᵀ
    run = ex.run()
    assert torch.equal(rows.qkv().queries, run.embedded @ run.u_query)  # the same draws, read as W
    no_reseed = dataclasses.replace(ex, reseed_before_weights=False).run()
    assert torch.equal(no_reseed.embedded, run.embedded) and not torch.equal(no_reseed.u_query, run.u_query)
    assert (examples.encodings.seed, examples.encodings.d_model) == (42, 2)
    assert examples.history.column_vectors is False and examples.four_inputs.printed_output_1 is None


def test_run_leaves_the_global_random_state_alone() -> None:
    torch.manual_seed(7)
    before = torch.random.get_rng_state()
    examples.history.run()
    examples.translate.run()
    assert torch.equal(torch.random.get_rng_state(), before)


def test_sentence_examples_project_as_their_documents_do() -> None:
    run = examples.translate.run()
    q, k, v = examples.translate.qkv()  # 003: q = U x, i.e. X Uᵀ
    assert torch.allclose(q, run.u_query.matmul(run.embedded.T).T, atol=1e-5)
    assert torch.equal(v, run.embedded @ run.u_value.T)
    assert not hasattr(run, "w_query")  # 003's matrices are U (column vectors), never named as W
    run = examples.history.run()
    q, k, v = examples.history.qkv()  # 002: X W
    assert torch.equal(k, run.embedded @ run.w_key) and v.shape == (28, 28)


def test_document_004_module_is_seed_42_in_order_q_v_k_and_leaves_the_rng_alone() -> None:
    torch.manual_seed(7)
    before = torch.random.get_rng_state()
    module = examples.document_004_module()
    assert torch.equal(torch.random.get_rng_state(), before)
    torch.manual_seed(42)
    q, v, k = (torch.nn.Linear(2, 2, bias=False) for _ in range(3))
    assert torch.equal(module.w_query.weight, q.weight)
    assert torch.equal(module.w_value.weight, v.weight)
    assert torch.equal(module.w_key.weight, k.weight)
    assert examples.document_004_module(16).d_in == 16


def test_document_004_weights_rounded_once_or_twice() -> None:
    once, twice = examples.document_004_projections(roundings=1), examples.document_004_projections(roundings=2)
    for a, b in zip(once, twice):
        assert a.shape == (2, 2) and a.dtype == torch.float32
        assert torch.allclose(a, b, atol=1e-7, rtol=0) and not torch.equal(a, b)
    with pytest.raises(ValueError, match="roundings must be 1 or 2"):
        examples.document_004_projections(roundings=3)


def test_random_qk_is_seeded_unit_variance_and_checks_its_sizes() -> None:
    q, k = examples.random_qk(64, n_tokens=4000, seed=0)
    assert q.shape == k.shape == (4000, 64)
    assert abs(float(q.var()) - 1) < 0.05
    assert torch.equal(q, examples.random_qk(64, n_tokens=4000, seed=0)[0])
    with pytest.raises(ValueError, match="n_tokens must be a positive integer, got 0"):
        examples.random_qk(4, n_tokens=0)
