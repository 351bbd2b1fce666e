"""KVCache and generate: cached generation gives exactly the tokens of recomputation, with far fewer dot products."""

from __future__ import annotations

import pytest
import torch

from attnlib import AttentionInputError, pretrained
from attnlib.kv_cache import KVCache, count_dot_products, generate, next_token, score_dot_products
from attnlib.transformer import TinyTransformer


def test_cache_appends_per_layer():
    cache = KVCache(2)
    assert len(cache) == 0
    k, v = cache.update(0, torch.zeros(1, 2, 3, 4), torch.ones(1, 2, 3, 4))
    assert k.shape == (1, 2, 3, 4) and len(cache) == 3
    k, v = cache.update(0, torch.zeros(1, 2, 1, 4), torch.ones(1, 2, 1, 4))
    assert k.shape == (1, 2, 4, 4) and torch.equal(v, torch.ones(1, 2, 4, 4))
    with pytest.raises(AttentionInputError, match="layer must be from 0 to 1, got 2"):
        cache.update(2, k, v)


def test_generation_with_and_without_cache_is_identical():
    torch.manual_seed(0)
    model = TinyTransformer(20, 32, 4, 2, max_len=40, causal=True).eval()
    prompt = torch.randint(20, (3, 5), generator=torch.Generator().manual_seed(1))
    with_cache = generate(model, prompt, 30)
    assert with_cache.shape == (3, 35) and torch.equal(with_cache[:, :5], prompt)
    assert torch.equal(with_cache, generate(model, prompt, 30, use_cache=False))


def test_the_trained_copy_model_copies_when_generating():
    model = pretrained.load("copy")
    task = pretrained.RECIPES["copy"].task
    first = torch.randint(32, (4, task.half), generator=torch.Generator().manual_seed(2))
    out = generate(model, first, task.half - 1)
    assert torch.equal(out[:, task.half :], first[:, : task.half - 1])  # the second half repeats the first


def test_dot_products_counted():
    assert score_dot_products(4, 3, use_cache=False) == 16 + 25 + 36
    assert score_dot_products(4, 3, use_cache=True) == 16 + 5 + 6
    assert score_dot_products(1, 256, use_cache=False) > 100 * score_dot_products(1, 256, use_cache=True)


def test_generate_checks_its_arguments():
    model = TinyTransformer(10, 8, 2, 1, max_len=6, causal=True)
    with pytest.raises(AttentionInputError, match="exceed the model's max_len=6"):
        generate(model, torch.zeros(1, 4, dtype=torch.int64), 3)
    with pytest.raises(AttentionInputError, match="max_new_tokens must be a non-negative integer"):
        generate(model, torch.zeros(1, 4, dtype=torch.int64), -1)


@pytest.mark.parametrize(("n_prompt", "new_tokens"), [(1, 1), (3, 0), (5, 12), (2, 30)])
def test_dot_products_counted_from_the_attention_maps_equal_the_formula(n_prompt, new_tokens):
    torch.manual_seed(0)
    model = TinyTransformer(16, 16, 2, 2, max_len=40, causal=True).eval()
    prompt = torch.randint(16, (2, n_prompt), generator=torch.Generator().manual_seed(5))
    for use_cache in (True, False):
        measured = count_dot_products(model, prompt, new_tokens, use_cache=use_cache)
        assert measured == score_dot_products(n_prompt, new_tokens, use_cache=use_cache), use_cache
    assert model._forward_hooks == {}  # the counting hook is removed again


def test_sampling_follows_temperature_and_top_k():
    logits = torch.tensor([[2.0, 1.0, 0.0, -1.0]])
    assert next_token(logits).tolist() == [[0]]
    wide = logits.expand(4000, 4)
    cold = next_token(wide, temperature=0.25, generator=torch.Generator().manual_seed(0))
    hot = next_token(wide, temperature=4.0, generator=torch.Generator().manual_seed(0))
    assert (cold == 0).float().mean() > 0.95 > (hot == 0).float().mean()
    expected = torch.softmax(logits[0] / 4.0, dim=-1)
    share = torch.bincount(hot.flatten(), minlength=4).float() / 4000
    assert torch.allclose(share, expected, atol=0.03)
    top2 = next_token(wide, temperature=4.0, top_k=2, generator=torch.Generator().manual_seed(0))
    assert set(top2.flatten().tolist()) == {0, 1}
    assert torch.equal(next_token(wide, temperature=3.0, top_k=1), torch.zeros(4000, 1, dtype=torch.int64))


def test_sampled_generation_is_seeded_and_checked():
    torch.manual_seed(0)
    model = TinyTransformer(16, 16, 2, 1, max_len=12, causal=True).eval()
    prompt = torch.randint(16, (2, 4), generator=torch.Generator().manual_seed(1))
    first = generate(model, prompt, 6, temperature=1.0, generator=torch.Generator().manual_seed(5))
    again = generate(model, prompt, 6, temperature=1.0, generator=torch.Generator().manual_seed(5), use_cache=False)
    assert torch.equal(first, again)
    with pytest.raises(AttentionInputError, match="temperature must be a number >= 0"):
        generate(model, prompt, 2, temperature=-1.0)
    with pytest.raises(AttentionInputError, match="top_k=20 is larger than the vocabulary"):
        generate(model, prompt, 2, temperature=1.0, top_k=20)
    with pytest.raises(AttentionInputError, match=r"prompt must be token ids \(batch, n_prompt\)"):
        generate(model, prompt[0], 2)
