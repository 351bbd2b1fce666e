"""Lesson 16's language, splits and encoder (attnlib.pronouns) (lesson 17's BPE: tests/test_bpe.py).

The committed encoders (one per seed) are tested by what they do — held-out accuracy, where their heads look,
what an ablation or a patch changes — never by their bytes; training is tested for determinism.
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


# ---------------------------------------------------------------- training


def test_learning_rate_warms_up_then_decays_to_zero():
    lrs = [pronouns.learning_rate(step) for step in range(1, pronouns.STEPS + 1)]
    assert lrs[pronouns.WARMUP - 1] == pytest.approx(pronouns.LR)
    rising, falling = lrs[: pronouns.WARMUP], lrs[pronouns.WARMUP - 1 :]
    assert all(a < b for a, b in itertools.pairwise(rising))
    assert all(a >= b for a, b in itertools.pairwise(falling))
    assert lrs[-1] == pytest.approx(0.0, abs=1e-12)


def test_training_is_deterministic_and_lowers_the_loss():
    a, history = pronouns.train_encoder(steps=60, progress=False)
    b, again = pronouns.train_encoder(steps=60, progress=False)
    assert history.losses == again.losses
    assert all(torch.equal(x, y) for x, y in zip(a.state_dict().values(), b.state_dict().values()))
    assert history.losses[-1] < history.losses[0] / 2
    assert not a.training


def test_training_calls_back_with_the_losses_so_far():
    seen = []
    pronouns.train_encoder(steps=25, every=10, progress=False, on_loss=lambda losses: seen.append(len(losses)))
    assert seen == [10, 20, 25]
    with pytest.raises(AttentionInputError, match="batch_size must be a whole number >= 1"):
        pronouns.train_encoder(steps=5, batch_size=0, progress=False)


# ---------------------------------------------------------------- the committed encoders


@pytest.fixture(scope="module")
def model():
    return pronouns.load()


def test_checkpoint_is_small_bidirectional_and_has_two_heads_per_layer(model):
    assert pronouns.PATH.stat().st_size <= 256 * 1024
    assert not model.causal and model.max_len == 12
    assert [block.attention.num_heads for block in model.blocks] == [2, 2]


def test_held_out_accuracy(model):
    assert pronouns.accuracy(model) >= 0.95


def test_the_best_head_puts_half_its_weight_on_the_referent(model):
    mass = pronouns.referent_mass(model)
    assert float(mass.max()) >= 0.5, mass
    profile = pronouns.attention_profile(model)
    total = sum(profile.values())
    assert torch.allclose(total, torch.ones_like(total), atol=1e-5)
    assert torch.allclose(profile["referent"], mass, atol=1e-6)
    ids, _, positions = pronouns.sentences("held-out")
    assert torch.allclose(pronouns.referent_scores(model, ids, positions), mass)


def test_in_layer_one_only_the_adjective_column_can_change(model):
    tired = pronouns.attention_from_it(model, pronouns.example("animal", "street", "tired"))
    wide = pronouns.attention_from_it(model, pronouns.example("animal", "street", "wide"))
    ratio_tired = tired[0, :, :11] / tired[0, :, :11].sum(-1, keepdim=True)
    ratio_wide = wide[0, :, :11] / wide[0, :, :11].sum(-1, keepdim=True)
    assert torch.allclose(ratio_tired, ratio_wide, rtol=1e-4, atol=1e-7)


def test_twin_margins_balance_each_sentence_with_its_twin(model):
    margins = pronouns.twin_margins(model)
    assert margins.shape == (2, 2)
    ids, _, positions = pronouns.sentences("held-out")
    profile = pronouns.attention_profile(model)
    rows = torch.arange(len(ids))
    with torch.no_grad():
        model(pronouns.twins(ids))
    twin = [m[rows, :, pronouns.IT] for m in model.attention_maps]  # per layer (N, heads, 12)
    twin_margin = torch.stack([w[rows, :, 7 - positions] - w[rows, :, positions] for w in twin]).mean(1)
    assert torch.allclose(margins, (profile["referent"] - profile["other noun"] + twin_margin) / 2, atol=1e-6)
    # layer 1: a twin scales the weights on words 0-10 by one factor (the ratio argument of lesson 16), so a
    # sentence-twin pair's margin is at most how much the adjective's own weight changes, relative to the rest
    with torch.no_grad():
        model(ids)
    own = model.attention_maps[0][rows, :, pronouns.IT]
    bound = ((twin[0][..., 11] - own[..., 11]).abs() / (1 - own[..., 11])).mean(0) / 2
    assert bool((margins[0].abs() <= bound + 1e-6).all()), (margins[0], bound)


def test_outcomes_say_what_an_ablated_model_outputs(model):
    full = pronouns.outcomes(model)
    assert sum(full.values()) == pytest.approx(1.0)
    assert full["referent"] == pytest.approx(pronouns.accuracy(model))
    with ablated(model, 1, (0, 1), how="mean"):
        said = pronouns.outcomes(model)
    assert sum(said.values()) == pytest.approx(1.0)
    assert said["referent"] <= 0.6 and said["other noun"] >= 0.25  # the adjective's kind no longer arrives
    assert pronouns.outcomes(model) == full  # restored


def test_predict_and_attention_refuse_bad_sentences(model):
    assert pronouns.predict(model, "the animal did not cross the street because it was too wide")[0] == "street"
    with pytest.raises(AttentionInputError, match='contain the word "it" exactly once, found 0'):
        pronouns.predict(model, "the animal did not cross the street")
    with pytest.raises(AttentionInputError, match="max_len=12"):
        pronouns.attention_from_it(model, "it " * 13)
    with pytest.raises(AttentionInputError, match="does not know the word 'zebra'"):
        pronouns.attention_from_it(model, "the zebra did not cross the street because it was too tired")


# ---------------------------------------------------------------- twins and patching


def test_a_twin_swaps_only_the_adjective_and_so_the_referent():
    ids, answers, _ = pronouns.sentences("held-out")
    twin_ids = pronouns.twins(ids)
    assert torch.equal(twin_ids[:, :11], ids[:, :11]) and bool((twin_ids[:, 11] != ids[:, 11]).all())
    assert torch.equal(pronouns.twins(twin_ids), ids)
    for row, twin, answer in zip(ids[::97].tolist(), twin_ids[::97].tolist(), answers[::97].tolist()):
        first, second = pronouns.referent(pronouns.decode(row)), pronouns.referent(pronouns.decode(twin))
        assert first == pronouns.VOCAB[answer] and second != first and second in pronouns.decode(row)
    with pytest.raises(AttentionInputError, match="word 11 must be an adjective"):
        pronouns.twins(ids[:, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 10]])


def test_patching_nothing_or_everything(model):
    ids, _, _ = pronouns.sentences("held-out")
    ids = ids[:64]
    twin_ids = pronouns.twins(ids)
    with torch.no_grad():
        own, twin = model(ids)[:, pronouns.IT], model(twin_ids)[:, pronouns.IT]
    for piece in pronouns.PIECES:  # from itself: the run as it is
        logits, _ = pronouns.patched(model, ids, ids, piece)
        assert torch.allclose(logits, own, atol=1e-5)
    everything, _ = pronouns.patched(model, ids, twin_ids, "layer-1 output", list(range(12)))
    assert torch.allclose(everything, twin, atol=1e-5)  # every vector after layer 1 from the twin: the twin's run
    keys_and_query = (
        pronouns.patched(model, ids, twin_ids, "keys")[0],
        pronouns.patched(model, ids, twin_ids, "query")[0],
    )
    assert not torch.allclose(keys_and_query[0], own) or not torch.allclose(keys_and_query[1], own)
    split = {
        piece: pronouns.patched(model, ids, twin_ids, piece, pronouns.ROUTE_POSITIONS)
        for piece in ("keys", "values", "keys and values")
    }
    # keys alone leave the values, values alone leave the map: only a swap of the keys moves layer 2's weights
    assert torch.allclose(split["values"][1], pronouns.patched(model, ids, ids, "values")[1], atol=1e-6)
    assert torch.allclose(split["keys"][1], split["keys and values"][1], atol=1e-6)
    assert not torch.allclose(split["keys and values"][0], split["keys"][0])
    # "it" reads the other words only through layer 2's keys and values: swapping both there is swapping the words
    words, _ = pronouns.patched(model, ids, twin_ids, "layer-1 output", list(pronouns.ROUTE_POSITIONS))
    assert torch.allclose(split["keys and values"][0], words, atol=1e-5)
    with torch.no_grad():  # the hooks are gone
        assert torch.allclose(model(ids)[:, pronouns.IT], own)


def test_patching_refuses_bad_arguments(model):
    ids, _, _ = pronouns.sentences("held-out")
    with pytest.raises(AttentionInputError, match="piece must be one of"):
        pronouns.patched(model, ids[:4], ids[:4], "value")
    with pytest.raises(AttentionInputError, match="must have the same shape"):
        pronouns.patched(model, ids[:4], ids[:3], "query")
    with pytest.raises(AttentionInputError, match="positions must be word positions 0…11"):
        pronouns.patched(model, ids[:4], ids[:4], "layer-1 output", [12])


def test_patching_refuses_a_block_of_ones_own():
    class Mine(torch.nn.Module):
        def __init__(self, d_model, num_heads):
            super().__init__()

        def forward(self, x, mask=None):
            return x

    ids, _, _ = pronouns.sentences("held-out")
    with pytest.raises(AttentionInputError, match="patching needs attnlib's Block"):
        pronouns.patched(pronouns.build(0, block=Mine), ids[:4], ids[:4], "query")


def test_evidence_of_the_committed_encoder(model):
    figures = pronouns.evidence(model)
    assert figures["accuracy"] == pytest.approx(pronouns.accuracy(model))
    assert figures["score"] == pytest.approx(float(pronouns.referent_mass(model)[1].max()))
    for name in (
        "query swap",
        "keys swap",
        "flip at it",
        "flip at nouns",
        "flip at adjective",
        "flip at all four",
        "flip by keys",
        "flip by values",
        "flip by keys and values",
    ):
        assert 0.0 <= figures[name] <= 1.0
    off = [figures[f"layer 2 off: {name}"] for name in ("referent", "other noun", "noun not in the sentence")]
    assert sum(off) == pytest.approx(1.0, abs=1e-6)  # the model always names a noun
    with ablated(model, 1, (0, 1), how="mean"):
        assert off[0] == pytest.approx(pronouns.outcomes(model)["referent"])
    # the four places together carry at least what each carries alone
    assert figures["flip at all four"] >= max(figures["flip at it"], figures["flip at nouns"]) - 0.05
    # some place after layer 1 carries the adjective's kind: patching it flips most predictions
    assert max(figures["flip at it"], figures["flip at nouns"], figures["flip at adjective"]) >= 0.5


# ---------------------------------------------------------------- BPE (lesson 17)
