"""attnlib.circuits: QK and OV matrices against the module's own computation, composition scores, patching."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from attnlib import circuits
from attnlib._validate import AttentionInputError
from attnlib.transformer import TinyTransformer


def random_model(seed: int = 0, **changes) -> TinyTransformer:
    torch.manual_seed(seed)
    model = TinyTransformer(
        **{"vocab_size": 11, "d_model": 24, "num_heads": 3, "num_layers": 2, "max_len": 9, "causal": True, **changes}
    ).eval()
    with torch.no_grad():
        for block in model.blocks:
            block.norm_attention.weight.uniform_(0.5, 1.5)  # a gain that matters, folded into W_Q, W_K, W_V
    return model


def normalised(model: TinyTransformer, x: torch.Tensor, layer: int) -> torch.Tensor:
    """The block's layer norm without its gain and bias (what W_QK and W_OV are read against)."""
    return F.layer_norm(x, x.shape[-1:], eps=model.blocks[layer].norm_attention.eps)


@pytest.mark.parametrize("layer, head", [(0, 0), (1, 2)])
def test_qk_matrix_gives_the_heads_scores(layer, head):
    model = random_model(1)
    attention = model.blocks[layer].attention
    norm = model.blocks[layer].norm_attention
    with torch.no_grad():
        for lin in (attention.w_query, attention.w_key):
            lin.bias.zero_()
        norm.bias.zero_()
        x = torch.randn(7, 24)
        q = attention.w_query(norm(x))[:, head * 8 : (head + 1) * 8]
        k = attention.w_key(norm(x))[:, head * 8 : (head + 1) * 8]
        x_hat = normalised(model, x, layer)
        assert torch.allclose(x_hat @ circuits.qk_matrix(model, layer, head) @ x_hat.T, q @ k.T, atol=1e-5)


def test_ov_matrix_gives_what_the_head_writes():
    model = random_model(2)
    attention, norm = model.blocks[1].attention, model.blocks[1].norm_attention
    with torch.no_grad():
        attention.w_value.bias.zero_()
        norm.bias.zero_()
        x = torch.randn(5, 24)
        v = attention.w_value(norm(x))
        only_head_1 = torch.zeros_like(v)
        only_head_1[:, 8:16] = v[:, 8:16]
        written = F.linear(only_head_1, attention.out_proj.weight)  # the head's part of out_proj, no bias
        assert torch.allclose(normalised(model, x, 1) @ circuits.ov_matrix(model, 1, 1), written, atol=1e-5)


def test_composition_score_is_arenas_ratio_and_scale_free():
    g = torch.Generator().manual_seed(3)
    a, b = torch.randn(6, 5, generator=g), torch.randn(5, 4, generator=g)
    want = math.sqrt(float((a @ b).pow(2).sum()) / float(a.pow(2).sum() * b.pow(2).sum()))
    assert circuits.composition_score(a, b) == pytest.approx(want, rel=1e-5)
    assert circuits.composition_score(3 * a, 0.1 * b) == pytest.approx(want, rel=1e-5)
    assert 0 < want <= 1
    writes = torch.zeros(4, 4)
    writes[:, :2] = torch.randn(4, 2, generator=g)  # writes only into directions 0 and 1
    reads = torch.zeros(4, 4)
    reads[2:] = torch.randn(2, 4, generator=g)  # reads only directions 2 and 3
    assert circuits.composition_score(writes, reads) == 0.0


def test_composition_scores_fill_the_table_by_kind():
    model = random_model(4)
    for kind, reader in (("q", circuits.qk_matrix), ("v", circuits.ov_matrix)):
        table = circuits.composition_scores(model, kind)
        assert table.shape == (3, 3)
        assert table[2, 1] == pytest.approx(
            circuits.composition_score(circuits.ov_matrix(model, 0, 2), reader(model, 1, 1)), rel=1e-5
        )
    k = circuits.composition_scores(model, "k")
    assert k[0, 2] == pytest.approx(
        circuits.composition_score(circuits.ov_matrix(model, 0, 0), circuits.qk_matrix(model, 1, 2).T), rel=1e-5
    )
    with pytest.raises(AttentionInputError, match="kind"):
        circuits.composition_scores(model, "x")
    with pytest.raises(AttentionInputError, match="earlier block"):
        circuits.composition_scores(model, "q", writer=1, reader=1)


def test_random_baseline_is_seeded_and_shrinks_with_width():
    narrow = circuits.random_composition_score(16, 4, samples=100)
    assert narrow == circuits.random_composition_score(16, 4, samples=100)
    assert 0 < circuits.random_composition_score(128, 4, samples=100) < narrow < 1


def test_head_outputs_are_what_out_proj_mixes():
    model = random_model(5)
    ids = torch.randint(0, 11, (2, 9), generator=torch.Generator().manual_seed(5))
    heads = circuits.head_outputs(model, ids, 1)
    assert heads.shape == (2, 3, 9, 8)
    with torch.no_grad():
        model(ids)
        weights = model.attention_maps[1]
    # each head's output is its weights times its values
    block = model.blocks[1]
    x = model.positions(model.embedding(ids))
    with torch.no_grad():
        x = model.blocks[0](x, mask=torch.ones(9, 9, dtype=torch.bool).tril())[0]
        v = block.attention.w_value(block.norm_attention(x)).unflatten(-1, (3, 8)).transpose(1, 2)
    assert torch.allclose(heads, weights @ v, atol=1e-5)


def test_patching_from_the_same_input_changes_nothing_and_respects_causality():
    model = random_model(6)
    g = torch.Generator().manual_seed(6)
    ids, donor = torch.randint(0, 11, (3, 9), generator=g), torch.randint(0, 11, (3, 9), generator=g)
    with torch.no_grad():
        own = model(ids)
    assert torch.allclose(circuits.patched_heads(model, ids, ids, 0, [0, 1, 2]), own, atol=1e-6)
    patched = circuits.patched_heads(model, ids, donor, 0, 1, [6])
    assert torch.equal(patched[:, :6], own[:, :6])  # positions before the patch cannot see it
    assert not torch.allclose(patched[:, 6:], own[:, 6:])
    assert not model.blocks[0].attention.out_proj._forward_pre_hooks  # the hook is removed


def test_patching_every_head_of_the_last_layer_everywhere_gives_the_donors_heads():
    model = random_model(7)
    g = torch.Generator().manual_seed(7)
    ids, donor = torch.randint(0, 11, (2, 9), generator=g), torch.randint(0, 11, (2, 9), generator=g)
    got = circuits.patched_heads(model, ids, donor, 1, [0, 1, 2])
    donor_heads = circuits.head_outputs(model, donor, 1).transpose(1, 2).flatten(2)  # (2, 9, d_model)
    last = model.blocks[1]
    with torch.no_grad():
        x = model.blocks[0](model.positions(model.embedding(ids)), mask=torch.ones(9, 9, dtype=torch.bool).tril())[0]
        x = x + last.attention.out_proj(donor_heads)  # layer 2's heads: the donor's
        x = x + last.mlp(last.norm_mlp(x))
        assert torch.allclose(got, model.readout(model.norm(x)), atol=1e-5)


def test_bad_input_names_the_argument():
    model = random_model()
    with pytest.raises(AttentionInputError, match="layer"):
        circuits.qk_matrix(model, 2, 0)
    with pytest.raises(AttentionInputError, match="head"):
        circuits.ov_matrix(model, 0, 3)
    with pytest.raises(AttentionInputError, match="w_a"):
        circuits.composition_score(torch.zeros(3), torch.zeros(3, 3))
    with pytest.raises(AttentionInputError, match="rows"):
        circuits.composition_score(torch.zeros(3, 4), torch.zeros(3, 3))
    ids = torch.zeros(1, 9, dtype=torch.int64)
    with pytest.raises(AttentionInputError, match="one shape"):
        circuits.patched_heads(model, ids, ids[:, :5], 0, 0)
    with pytest.raises(AttentionInputError, match="positions"):
        circuits.patched_heads(model, ids, ids, 0, 0, [9])
