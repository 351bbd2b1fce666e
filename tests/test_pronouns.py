"""Lesson 16's language, splits and encoder (attnlib.pronouns) (lesson 17's BPE: tests/test_bpe.py).

The committed encoder is tested by what it does — held-out accuracy, where its heads look, what an
ablation breaks — never by its bytes.
"""

from __future__ import annotations

import itertools

import pytest
import torch

from attnlib import AttentionInputError, pronouns
from attnlib.heads import ablated

# ---------------------------------------------------------------- the language


def test_vocabulary_has_no_duplicates_and_disjoint_kinds():
    assert len(set(pronouns.VOCAB)) == len(pronouns.VOCAB)
    assert not set(pronouns.ANIMALS) & set(pronouns.PLACES)
    assert not set(pronouns.ANIMAL_ADJECTIVES) & set(pronouns.PLACE_ADJECTIVES)
    assert len(pronouns.NOUNS) == 32 and len(pronouns.ADJECTIVES) == 20


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("the animal did not cross the street because it was too tired", "animal"),
        ("the animal did not cross the street because it was too wide", "street"),
        ("the street did not suit the animal because it was too tired", "animal"),
        ("the river did not please the goat because it was too muddy", "river"),
    ],
)
def test_referent_follows_the_adjective_not_the_position(sentence, expected):
    assert pronouns.referent(sentence) == expected


def test_encode_round_trips_and_refuses_bad_sentences_with_a_message():
    words = pronouns.example("dog", "river", "icy", animal_first=False)
    ids = pronouns.encode(" ".join(words))
    assert ids.shape == (1, 12) and pronouns.decode(ids[0]) == words
    with pytest.raises(
        AttentionInputError, match=r'sentence: the model does not know the word "didn\'t"; .* write did not'
    ):
        pronouns.encode("the animal didn't cross")
    with pytest.raises(AttentionInputError, match="did you mean street"):
        pronouns.encode("the animal did not cross the stret")
    with pytest.raises(AttentionInputError, match="sentence is empty"):
        pronouns.encode("   ")
    with pytest.raises(AttentionInputError, match="13 words but the model reads at most max_len=12"):
        pronouns.encode(" ".join([*words, "too"]))
    with pytest.raises(AttentionInputError, match="must be text or a list of words, got int"):
        pronouns.encode(3)


def test_referent_needs_one_noun_of_each_kind():
    with pytest.raises(AttentionInputError, match="exactly one animal, found 2"):
        pronouns.referent("the dog did not cross the cat because it was too tired")


def _pairs(ids: torch.Tensor) -> set[tuple[str, str]]:
    found = set()
    for row in ids.tolist():
        words = pronouns.decode(row)
        found |= {(words[1], words[11]), (words[6], words[11])}
    return found


def test_splits_hold_out_noun_adjective_pairs():
    held = pronouns.held_out_pairs()
    assert len(held) == 32 * 20 // 4
    train_ids, train_answers, train_positions = pronouns.sentences("train")
    held_ids, held_answers, held_positions = pronouns.sentences("held-out")
    assert not _pairs(train_ids) & held  # no training sentence contains a held-out pair
    assert _pairs(held_ids) <= held  # every held-out sentence pairs both nouns with a held-out adjective
    assert len(held_ids) >= 1000 and len(train_ids) >= 8 * len(held_ids)
    for ids, answers, positions in (
        (train_ids, train_answers, train_positions),
        (held_ids, held_answers, held_positions),
    ):
        assert bool((ids[:, pronouns.IT] == pronouns.WORD_ID["it"]).all())
        assert bool((ids[torch.arange(len(ids)), positions] == answers).all())
        assert set(positions.tolist()) == {1, 6}  # the referent is at either noun's place
    # every noun is a training answer, so its output word is learnable
    assert {pronouns.VOCAB[i] for i in train_answers.tolist()} == set(pronouns.NOUNS)


def test_task_scores_only_the_position_of_it():
    task = pronouns.PronounTask()
    inputs, targets, counted = task.batch(8, torch.Generator().manual_seed(0))
    assert inputs.shape == targets.shape == (8, 12)
    assert counted.tolist() == [i == pronouns.IT for i in range(12)]
    for row, target in zip(inputs.tolist(), targets[:, pronouns.IT].tolist()):
        assert pronouns.VOCAB[target] == pronouns.referent(pronouns.decode(row))
    with pytest.raises(AttentionInputError, match="split must be 'train' or 'held-out'"):
        pronouns.sentences("test")


# ---------------------------------------------------------------- the committed encoder


@pytest.fixture(scope="module")
def model():
    return pronouns.load()


def test_checkpoint_is_small_and_bidirectional(model):
    assert pronouns.PATH.stat().st_size <= 2 * 1024 * 1024
    assert not model.causal and model.max_len == 12


def test_held_out_accuracy(model):
    assert pronouns.accuracy(model) >= 0.95


def _best_head(model) -> tuple[int, int]:
    mass = pronouns.referent_mass(model)
    return divmod(int(mass.argmax()), mass.shape[1])


def test_one_head_puts_half_its_weight_on_the_referent(model):
    mass = pronouns.referent_mass(model)
    assert float(mass.max()) >= 0.5, mass
    profile = pronouns.attention_profile(model)
    total = sum(profile.values())
    assert torch.allclose(total, torch.ones_like(total), atol=1e-5)
    assert torch.allclose(profile["referent"], mass, atol=1e-6)


def test_the_map_moves_with_the_adjective_in_the_best_head(model):
    layer, head = _best_head(model)
    for animal, place in itertools.product(("animal", "goat"), ("street", "creek")):
        for animal_first in (True, False):
            tired = pronouns.attention_from_it(
                model, pronouns.example(animal, place, "tired", animal_first=animal_first)
            )
            wide = pronouns.attention_from_it(model, pronouns.example(animal, place, "wide", animal_first=animal_first))
            a, p = (1, 6) if animal_first else (6, 1)
            assert tired[layer, head, a] > tired[layer, head, p]
            assert wide[layer, head, p] > wide[layer, head, a]


def test_in_layer_one_only_the_adjective_column_can_change(model):
    tired = pronouns.attention_from_it(model, pronouns.example("animal", "street", "tired"))
    wide = pronouns.attention_from_it(model, pronouns.example("animal", "street", "wide"))
    ratio_tired = tired[0, :, :11] / tired[0, :, :11].sum(-1, keepdim=True)
    ratio_wide = wide[0, :, :11] / wide[0, :, :11].sum(-1, keepdim=True)
    assert torch.allclose(ratio_tired, ratio_wide, rtol=1e-4, atol=1e-7)


def test_ablating_the_best_head_drops_accuracy(model):
    layer, head = _best_head(model)
    with ablated(model, layer, head):
        assert pronouns.accuracy(model) <= 0.6
    assert pronouns.accuracy(model) >= 0.95  # restored


def test_predict_and_attention_refuse_bad_sentences(model):
    assert pronouns.predict(model, "the animal did not cross the street because it was too wide")[0] == "street"
    with pytest.raises(AttentionInputError, match='contain the word "it" exactly once, found 0'):
        pronouns.predict(model, "the animal did not cross the street")
    with pytest.raises(AttentionInputError, match="max_len=12"):
        pronouns.attention_from_it(model, "it " * 13)
    with pytest.raises(AttentionInputError, match="does not know the word 'zebra'"):
        pronouns.attention_from_it(model, "the zebra did not cross the street because it was too tired")


def test_short_live_run_lowers_the_loss():
    model, history = pronouns.train_encoder(steps=100, progress=False)
    assert history.losses[-1] < history.losses[0] / 2
    assert not model.training


# ---------------------------------------------------------------- BPE (lesson 17)
