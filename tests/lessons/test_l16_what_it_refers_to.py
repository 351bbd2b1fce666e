"""Lesson 16: every checker with right, typical wrong and missing answers; lesson 16's explorer headless."""

from __future__ import annotations

import html

import pytest
import torch

from attnlib import pronouns
from attnlib.heads import ablated
from attnlib.lessons import check, exercises, lesson_module
from attnlib.lessons.l16_what_it_refers_to import MAP_SENTENCE, NEW_SEED, ReferentExplorer, swap_adjective

# the contract every checker keeps (typical wrong answers, missing answers, mistake ids) is in
# test_exercise_contract.py, which covers "pronoun" too; here, what lesson 16 adds to it. Its wrong answers need
# the lesson's trained encoders (cached in the lesson's module): built when a test first asks, not while every
# worker collects.


@pytest.mark.parametrize("name", exercises("what_it_refers_to"))
def test_each_typical_wrong_answer_gets_a_specific_hint(name):
    answers = lesson_module("pronoun").wrong_answers()[name]
    assert answers, f"{name}: no typical wrong answer to check"
    generic = [
        i for i, (answer, _) in enumerate(answers) if check(name, answer).message.endswith("recompute it step by step.")
    ]
    assert not generic, f"{name}: wrong answers {generic} get the generic hint, not a specific one"


def _referent_scores(model, ids, positions):  # the solution of 16.1
    with torch.no_grad():
        model(ids)
    rows = torch.arange(len(ids))
    return torch.stack([maps[rows, :, 8, positions].mean(0) for maps in model.attention_maps])


def _patched_logits(model, ids, twin_ids, positions):  # the solution of 16.3
    with torch.no_grad():
        x = model.positions(model.embedding(ids))
        twin = model.positions(model.embedding(twin_ids))
        x, _ = model.blocks[0](x)
        twin, _ = model.blocks[0](twin)
        x = x.clone()
        x[:, positions] = twin[:, positions]
        for block in model.blocks[1:]:
            x, _ = block(x)
        return model.readout(model.norm(x))[:, 8]


def test_16_1_runs_the_score_on_new_sentences():
    assert check("what_it_refers_to.1", _referent_scores).correct

    def transposed(model, ids, positions):  # the column of "it" instead of its row
        with torch.no_grad():
            model(ids)
        return torch.stack([w[torch.arange(len(ids)), :, positions, 8].mean(0) for w in model.attention_maps])

    assert check("what_it_refers_to.1", transposed).mistake == "transposed"
    assert "hands the work to" in check("what_it_refers_to.1", pronouns.referent_scores).message
    assert (
        "hands the work to" in check("what_it_refers_to.1", lambda m, i, p: pronouns.referent_scores(m, i, p)).message
    )

    def stub(model, ids, positions): ...

    assert "returned None" in check("what_it_refers_to.1", stub).message


@pytest.mark.parametrize(
    "exercise, solution", [("what_it_refers_to.1", _referent_scores), ("what_it_refers_to.3", _patched_logits)]
)
def test_a_learners_function_that_breaks_the_model_breaks_no_later_check(exercise, solution):
    """16.1 and 16.3 hand the learner's function a model: one that zeroes its weights and leaves a hook behind is
    refused, and the committed model the checkers share is unchanged, so a right answer after it still passes."""
    from attnlib.lessons.l16_what_it_refers_to import _model

    ids = pronouns.sentences("held-out")[0][:8]
    with torch.no_grad():
        before = _model()(ids)

    def vandal(model, *args):
        with torch.no_grad():
            for p in model.parameters():
                p.mul_(0.5)
        model.register_forward_hook(lambda module, inputs, output: output * 0)  # left behind
        return solution(model, *args)

    assert not check(exercise, vandal).correct
    with torch.no_grad():
        assert torch.equal(_model()(ids), before)  # neither the weights nor a hook reached the shared model
    assert check(exercise, solution).correct


def _top_word(model) -> str:
    """The word of MAP_SENTENCE that ``model``'s best head by referent score weights most from "it"."""
    mass = pronouns.referent_mass(model)
    layer, head = divmod(int(mass.argmax()), mass.shape[1])
    return MAP_SENTENCE.split()[int(pronouns.attention_from_it(model, MAP_SENTENCE)[layer, head].argmax())]


def test_16_2_needs_the_map_not_the_rule():
    model = pronouns.load()
    words = MAP_SENTENCE.split()
    top = _top_word(model)
    referent = pronouns.referent(MAP_SENTENCE)
    assert top != referent  # the rule gives the wrong answer …
    assert pronouns.predict(model, MAP_SENTENCE)[0] == referent  # … although the model is right
    assert check("what_it_refers_to.2", top).correct and check("what_it_refers_to.2", f" {top.upper()} ").correct
    assert "only" in check("what_it_refers_to.2", referent).message
    assert "not in the sentence" in check("what_it_refers_to.2", "dog").message
    here = _top_word(pronouns.train_encoder(seed=pronouns.SEED, progress=False)[0])
    for word in [w for w in ("not", "too", "the") if w not in (top, here)]:  # words of the sentence, named as such
        assert f"is word {words.index(word)} of the sentence" in check("what_it_refers_to.2", word).message
    assert "word itself" in check("what_it_refers_to.2", 6).message


def test_16_2_takes_the_map_of_the_model_trained_here():
    """The lesson trains seed 0 live and its explorer shows that model: on another kind of CPU it is not the
    committed one (on an AVX-512 CPU its best head weights "was" most, the committed one's another word), and
    the word read from it is right too."""
    here = pronouns.train_encoder(seed=pronouns.SEED, progress=False)[0]
    word = _top_word(here)
    feedback = check("what_it_refers_to.2", word)
    assert feedback.correct, feedback.message
    mass = pronouns.referent_mass(here)
    layer, head = divmod(int(mass.argmax()), mass.shape[1])
    assert f"layer {layer + 1} head {head + 1} gives {word!r}" in feedback.message


def test_16_3_patches_new_twins():
    assert check("what_it_refers_to.3", _patched_logits).correct
    own = lambda m, ids, t, p: m(ids)[:, pronouns.IT]  # noqa: E731
    assert "Nothing from the twin" in check("what_it_refers_to.3", own).message

    def before_layer_1(model, ids, twin_ids, positions):
        with torch.no_grad():
            x = model.positions(model.embedding(ids)).clone()
            x[:, positions] = model.positions(model.embedding(twin_ids))[:, positions]
            for block in model.blocks:
                x, _ = block(x)
            return model.readout(model.norm(x))[:, 8]

    assert "before layer 1" in check("what_it_refers_to.3", before_layer_1).message  # at "it": nothing differs there
    library = lambda m, ids, t, p: pronouns.patched(m, ids, t, "layer-1 output", p)[0]  # noqa: E731
    assert "hands the work to" in check("what_it_refers_to.3", library).message


def test_16_4_measures_a_seed_the_lesson_did_not_print():
    assert NEW_SEED not in pronouns.SEEDS
    model, _ = pronouns.train_encoder(seed=NEW_SEED, progress=False)
    ids, _, positions = pronouns.sentences("held-out")
    scores = _referent_scores(model, ids, positions)
    layer, head = divmod(int(scores.argmax()), scores.shape[1])
    with ablated(model, layer, head, how="mean"):
        mean = pronouns.accuracy(model)
    with ablated(model, layer, head, how="zero"):
        zero = pronouns.accuracy(model)
    assert check("what_it_refers_to.4", (layer + 1, head + 1, mean)).correct
    assert "Count the layer and head from 1" in check("what_it_refers_to.4", (layer, head, mean)).message
    assert "every head working" in check("what_it_refers_to.4", (layer + 1, head + 1, pronouns.accuracy(model))).message
    if abs(zero - mean) > 0.01:
        assert "zero-ablation" in check("what_it_refers_to.4", (layer + 1, head + 1, zero)).message
    other = (layer + 1, 2 - head)
    assert "another head puts more" in check("what_it_refers_to.4", (*other, mean)).message
    assert "three values" in check("what_it_refers_to.4", mean).message


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


def test_loss_curve_redraws_about_ten_times_and_ends_on_the_last_loss():
    from attnlib.lessons.l16_what_it_refers_to import LossCurve

    curve = LossCurve(50)
    drawn = []
    for n in range(1, 51):
        curve([1.0 / k for k in range(1, n + 1)])
        drawn.append(len(curve.line.get_xdata()))
    assert len(set(drawn) - {0}) == 10 and drawn[-1] == 50
    assert curve.losses[-1] == 1 / 50
