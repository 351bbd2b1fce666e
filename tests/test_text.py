"""Sentence → tokens → vocabulary → ids → embeddings (attnlib.text), as document 002 builds them, and
sentence_attention, lesson 10's road from text to attention."""

from __future__ import annotations

import pytest
import torch

from attnlib import AttentionInputError, examples, text
from attnlib.text import MAX_TOKENS, build_vocabulary, embed, encode, sentence_attention

SENTENCE = examples.history.sentence


def test_tokenize_drops_commas_and_splits_on_whitespace() -> None:
    assert text.tokenize("Life is short, eat  dessert first") == ["Life", "is", "short", "eat", "dessert", "first"]


def test_tokenize_rejects_empty_and_non_strings() -> None:
    with pytest.raises(AttentionInputError, match="sentence has no words"):
        text.tokenize(" , ")
    with pytest.raises(TypeError, match=r"sentence must be a str, got int"):
        text.tokenize(3)  # type: ignore[arg-type]


def test_vocabulary_reproduces_document_002_skipped_ids() -> None:
    vocab = text.build_vocabulary(SENTENCE)
    tokens = text.tokenize(SENTENCE)
    # numbered over the sorted tokens with duplicates: a repeated word keeps its last number
    assert vocab == {w: max(i for i, t in enumerate(sorted(tokens)) if t == w) for w in set(tokens)}
    assert len(vocab) == 26 and len(tokens) == 28
    assert (vocab["the"], vocab["to"], vocab["today's"]) == (23, 25, 26)
    assert 22 not in vocab.values() and 24 not in vocab.values()


def test_unique_vocabulary_numbers_each_word_once() -> None:
    vocab = text.build_vocabulary(SENTENCE, unique=True)
    assert sorted(vocab.values()) == list(range(26))
    assert list(vocab) == sorted(vocab)


def test_encode_gives_ids_in_sentence_order() -> None:
    vocab = text.build_vocabulary("b a c a")
    ids = text.encode("b a c a", vocab)
    assert ids.dtype == torch.int64
    assert ids.tolist() == [vocab["b"], vocab["a"], vocab["c"], vocab["a"]]


def test_encode_names_missing_words() -> None:
    with pytest.raises(AttentionInputError, match=r"words not in the vocabulary: \['zebra'\]"):
        text.encode("a zebra", {"a": 0})


def test_embed_is_a_seeded_embedding_lookup() -> None:
    ids = torch.tensor([0, 7, 1])
    got = text.embed(ids, num_embeddings=10, d=16, seed=123)
    torch.manual_seed(123)
    table = torch.nn.Embedding(10, 16)
    assert got.shape == (3, 16) and not got.requires_grad
    assert torch.equal(got, table.weight[ids].detach())


def test_embed_leaves_the_global_random_state_alone() -> None:
    torch.manual_seed(5)
    before = torch.random.get_rng_state()
    text.embed(torch.tensor([1]), num_embeddings=3, d=2, seed=0)
    assert torch.equal(torch.random.get_rng_state(), before)


def test_embed_rejects_bad_ids() -> None:
    with pytest.raises(TypeError, match=r"token_ids must be an integer tensor, got torch.float32"):
        text.embed(torch.tensor([0.0]), num_embeddings=3, d=2, seed=0)
    with pytest.raises(AttentionInputError, match=r"token id 3 does not fit num_embeddings=3"):
        text.embed(torch.tensor([0, 3]), num_embeddings=3, d=2, seed=0)


def test_project_as_columns_is_u_x_for_every_row() -> None:
    from attnlib.text import project_as_columns

    x = torch.randn(5, 3, generator=torch.Generator().manual_seed(0))
    u = torch.randn(4, 3, generator=torch.Generator().manual_seed(1))
    q, k, v = project_as_columns(x, u, 2 * u, u[:2])
    assert torch.allclose(q, torch.stack([u @ row for row in x]), atol=1e-6)
    assert k.shape == (5, 4) and v.shape == (5, 2)


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
