"""Lesson 16: every checker with right, typical wrong and missing answers; lesson 16's explorer headless."""

from __future__ import annotations

import html

import pytest
import torch

from attnlib import pronouns
from attnlib.heads import ablated
from attnlib.lessons import check, lesson_module
from attnlib.lessons.l16_what_it_refers_to import PREDICT_SENTENCE, ReferentExplorer, resolving_head, swap_adjective

# the contract every checker keeps (typical wrong answers, missing answers, mistake ids) is in
# test_exercise_contract.py, which covers "pronoun" too; here, what lesson 16 adds to it
CASES = [(name, i) for name, answers in lesson_module("pronoun").wrong_answers().items() for i in range(len(answers))]


@pytest.mark.parametrize(("name", "index"), CASES, ids=[f"{n}-{i}" for n, i in CASES])
def test_each_typical_wrong_answer_gets_a_specific_hint(name, index):
    answer, _ = lesson_module("pronoun").wrong_answers()[name][index]
    assert not check(name, answer).message.endswith("recompute it step by step.")  # a hint, not the generic one


def test_pronoun_1_is_the_referent_by_the_rule_and_by_the_model():
    assert check("what_it_refers_to.1", "wolf").correct and check("what_it_refers_to.1", " Wolf ").correct
    assert "place" in check("what_it_refers_to.1", "creek").message
    assert "not in the sentence" in check("what_it_refers_to.1", "dog").message
    assert "in quotes" in check("what_it_refers_to.1", 6).message
    model = pronouns.load()
    layer, head = resolving_head()
    weights = pronouns.attention_from_it(model, PREDICT_SENTENCE)
    assert int(weights[layer - 1, head - 1].argmax()) == PREDICT_SENTENCE.split().index("wolf")
    assert pronouns.predict(model, PREDICT_SENTENCE)[0] == "wolf"


def test_pronoun_2_runs_the_function_on_new_maps():
    assert check("what_it_refers_to.2", lambda w, p: w[torch.arange(len(p)), 8, p].mean()).correct
    assert check("what_it_refers_to.2", lambda w, p: w[range(len(p)), 8, p].mean()).correct
    assert check("what_it_refers_to.2", lambda w, p: w[:, 8, p].mean()).message.startswith("weights[:, 8, positions]")

    def stub(weights, positions): ...

    assert "returned None" in check("what_it_refers_to.2", stub).message
    assert "raised" in check("what_it_refers_to.2", lambda w, p: w[99]).message


def test_pronoun_3_and_4_measure_the_committed_model():
    model = pronouns.load()
    mass = pronouns.referent_mass(model)
    layer, head = resolving_head()
    assert float(mass[layer - 1, head - 1]) == float(mass.max())
    assert check("what_it_refers_to.3", (layer, head)).correct and check("what_it_refers_to.3", [layer, head]).correct
    assert "Count from 1" in check("what_it_refers_to.3", (layer - 1, head - 1)).message
    assert "is not one of its heads" in check("what_it_refers_to.3", (9, 9)).message
    assert "two whole numbers" in check("what_it_refers_to.3", (1.5, 2)).message
    with ablated(model, layer - 1, head - 1):
        measured = pronouns.accuracy(model)
    assert check("what_it_refers_to.4", measured).correct
    assert "fraction" in check("what_it_refers_to.4", 100 * measured).message
    assert "every head working" in check("what_it_refers_to.4", pronouns.accuracy(model)).message


# ---------------------------------------------------------------- the explorer


@pytest.fixture(scope="module")
def model():
    return pronouns.load()


def test_explorer_shows_both_sentences_and_the_map_moves(model):
    e = ReferentExplorer(model, "the animal did not cross the street because it was too tired", other="wide")
    layers, heads = len(model.blocks), model.blocks[0].attention.num_heads
    assert e.views["this"].data.shape == e.views["swapped"].data.shape == (layers * heads, 12)
    assert e.predictions == ("animal", "street")
    assert e.summary().endswith('"it" → animal | street)')
    expected = pronouns.attention_from_it(model, "the animal did not cross the street because it was too wide")
    assert torch.allclose(torch.as_tensor(e.views["swapped"].data, dtype=torch.float32), expected.reshape(-1, 12))
    row = layers * heads - heads + resolving_head()[1] - 1 if resolving_head()[0] == layers else None
    if row is not None:
        assert e.views["this"].data[row, 1] > e.views["this"].data[row, 6]
        assert e.views["swapped"].data[row, 6] > e.views["swapped"].data[row, 1]


@pytest.mark.parametrize(
    ("sentence", "message"),
    [
        ("", "sentence is empty"),
        ("the zebra did not cross the street because it was too tired", "does not know the word 'zebra'"),
        ("the animal did not cross the street because he was too tired", "does not know the word 'he'"),
        ("the animal did not cross the street because it was too tired too", "max_len=12"),
        ("the animal did not cross the street because it was tired tired", "exactly one adjective"),
        ("the animal did not cross the street because was too tired", '"it" exactly once'),
    ],
)
def test_explorer_bad_sentence_is_a_message_and_keeps_the_last_maps(model, sentence, message):
    e = ReferentExplorer(model, "the animal did not cross the street because it was too tired")
    before = e.views["this"].data.copy()
    e.controls["sentence"].value = sentence
    assert message in html.unescape(e.message.value), e.message.value
    assert (e.views["this"].data == before).all()
    e.controls["sentence"].value = "the street did not suit the goat because it was too muddy"
    assert e.message.value == "" and e.predictions[0] == "street"


def test_swap_adjective_needs_a_known_adjective():
    assert swap_adjective("the dog did not cross the road because it was too tired", "icy").endswith("too icy")
    with pytest.raises(ValueError, match="adjective must be one of the model's adjectives"):
        swap_adjective("the dog did not cross the road because it was too tired", "purple")
