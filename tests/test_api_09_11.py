"""The additions lessons 09–11 made to attnlib's API: causal_mask, masked steps, MultiHeadAttention.steps,
text.sentence_attention."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from attnlib import AttentionInputError, MultiHeadAttention, SelfAttention, examples
from attnlib.modules import causal_mask, combine_heads, split_heads
from attnlib.text import MAX_TOKENS, build_vocabulary, embed, encode, sentence_attention


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


@pytest.mark.parametrize("projections", [True, False])
@pytest.mark.parametrize("scaled", [True, False])
def test_sentence_attention_follows_the_lesson_road(projections, scaled):
    sentence = "the cat sat on the mat"
    result = sentence_attention(sentence, projections=projections, scaled=scaled)
    vocabulary = build_vocabulary(sentence, unique=True)
    x = embed(encode(sentence, vocabulary), num_embeddings=len(vocabulary), d=16, seed=123)
    assert result.tokens == sentence.split()
    assert torch.equal(result.embedded, x)
    assert torch.equal(result.embedded[0], result.embedded[4])  # 'the' twice: same id, same vector
    q, k = (result.queries, result.keys) if projections else (x, x)
    want = torch.softmax(q @ k.T / (4.0 if scaled else 1.0), dim=-1)
    assert torch.allclose(result.weights, want, atol=1e-6)
    assert torch.allclose(result.context, want @ result.values, atol=1e-6)


def test_sentence_attention_on_003_without_projections_is_003s_simplified_form():
    result = sentence_attention(examples.translate.sentence, projections=False, scaled=False)
    x = examples.translate.run().embedded
    assert torch.equal(result.ids, examples.translate.ids)
    assert torch.allclose(result.weights, torch.softmax(x @ x.T, dim=1), atol=1e-6)


def test_sentence_attention_rejects_empty_and_long_text():
    with pytest.raises(AttentionInputError, match="no words"):
        sentence_attention("  ")
    with pytest.raises(AttentionInputError, match=f"at most {MAX_TOKENS}"):
        sentence_attention(" ".join(["w"] * (MAX_TOKENS + 1)))
    assert sentence_attention(" ".join(["w"] * MAX_TOKENS)).weights.shape == (MAX_TOKENS, MAX_TOKENS)
