"""attnlib/seq2seq.py: the encoder–decoder of lesson 11, whose decoder reads the source by cross-attention."""

from __future__ import annotations

import pytest
import torch

from attnlib import AttentionInputError
from attnlib.seq2seq import EncoderDecoder, alignment_score, reverse_batch, train_reverse


def model(seed: int = 0) -> EncoderDecoder:
    torch.manual_seed(seed)
    return EncoderDecoder(vocab_size=11, d_model=16, num_heads=1, num_layers=1, max_len=6)


def test_the_batch_is_the_source_reversed_behind_a_start_token() -> None:
    source, decoder_ids, targets = reverse_batch(4, 6, 11, torch.Generator().manual_seed(0))
    assert source.shape == decoder_ids.shape == targets.shape == (4, 6)
    assert torch.equal(targets, source.flip(-1))
    assert torch.equal(decoder_ids[:, 0], torch.full((4,), 10)) and torch.equal(decoder_ids[:, 1:], targets[:, :-1])
    assert int(source.max()) < 10  # the start token never appears in a source


def test_the_decoder_attends_over_the_source_with_one_row_per_decoder_token() -> None:
    m = model()
    logits = m(torch.randint(0, 10, (3, 5)), torch.randint(0, 11, (3, 4)))
    assert logits.shape == (3, 4, 11)
    (weights,) = m.cross_maps
    assert weights.shape == (3, 1, 4, 5)  # (batch, heads, n_dec, n_enc): the two lengths differ
    assert torch.allclose(weights.sum(-1), torch.ones(3, 1, 4))


def test_the_decoder_cannot_see_later_target_tokens() -> None:
    m = model().eval()
    source, decoder_ids, _ = reverse_batch(2, 6, 11, torch.Generator().manual_seed(1))
    changed = decoder_ids.clone()
    changed[:, -1] = (changed[:, -1] + 1) % 10
    before, after = m(source, decoder_ids), m(source, changed)
    assert torch.allclose(before[:, :-1], after[:, :-1], atol=1e-6)  # only the last position may move
    assert not torch.allclose(before[:, -1], after[:, -1])


def test_bad_ids_name_the_argument_and_the_shape() -> None:
    with pytest.raises(AttentionInputError, match=r"source must be token ids.*torch.float32 \(2, 3\)"):
        model()(torch.zeros(2, 3), torch.zeros(2, 3, dtype=torch.long))
    with pytest.raises(AttentionInputError, match="decoder_ids has 7 tokens, more than max_len=6"):
        model()(torch.zeros(2, 3, dtype=torch.long), torch.zeros(2, 7, dtype=torch.long))


def test_training_learns_the_alignment_and_the_score_reads_it() -> None:
    m = model()
    untrained = alignment_score(m, n_tokens=6)
    losses = train_reverse(m, n_tokens=6, steps=200, batch_size=32, lr=1e-2, seed=0)
    assert len(losses) == 200 and losses[-1] < losses[0] / 10
    assert untrained < 0.5 < 0.9 < alignment_score(m, n_tokens=6) <= 1.0
