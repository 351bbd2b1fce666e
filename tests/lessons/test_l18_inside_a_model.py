"""Lesson 18: its three checkers with right, typical wrong and missing answers; its explorer; its passages."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from attnlib.heads import induction_score, previous_token_score
from attnlib.lessons import MISTAKES, check, exercises, lesson_module
from attnlib.lessons._check import CHECKER_FAILED
from attnlib.lessons.l18_inside_a_model import (
    PASSAGES,
    ModelHeadsExplorer,
    _case_copies,
    _cases,
    _permuted,
    load_writer,
    repeated,
)

LESSON = "inside_a_model"
NAMES = [f"{LESSON}.{i}" for i in range(1, 4)]
WRONG = lesson_module(LESSON).wrong_answers()
CASES = [(name, i) for name, answers in WRONG.items() for i in range(len(answers))]


# what a learner writes: loops and torch, none of attnlib's score functions
def my_previous_token_scores(maps):
    rows = []
    for m in maps:
        n = m.shape[-1]
        rows.append(torch.stack([m[:, :, i, i - 1] for i in range(1, n)], dim=-1).mean(dim=(0, 2)))
    return torch.stack(rows)


def my_induction_scores(maps, ids):
    pairs = []  # (b, query, target)
    for b in range(ids.shape[0]):
        latest = {}
        for i, token in enumerate(ids[b].tolist()):
            if token in latest:
                pairs.append((b, i, latest[token] + 1))
            latest[token] = i
    rows = []
    for m in maps:
        rows.append(torch.stack([m[b, :, i, t] for b, i, t in pairs]).mean(0))
    return torch.stack(rows)


def my_find_heads(model, ids):
    logits = model(ids)
    prev = my_previous_token_scores(model.attention_maps)
    ind = my_induction_scores(model.attention_maps, ids)
    half = ids.shape[1] // 2
    first = F.cross_entropy(logits[:, : half - 1].flatten(0, 1), ids[:, 1:half].flatten())
    again = F.cross_entropy(logits[:, half:-1].flatten(0, 1), ids[:, half + 1 :].flatten())
    flat = lambda s: divmod(int(s.argmax()), s.shape[1])  # noqa: E731
    return {"previous_token": flat(prev), "induction": flat(ind), "copies": bool(again < first)}


RIGHT = dict(zip(NAMES, (my_previous_token_scores, my_induction_scores, my_find_heads)))


def test_three_exercises_each_with_typical_wrong_answers():
    assert exercises(LESSON) == NAMES
    assert set(WRONG) == set(NAMES) and all(len(a) >= 2 for a in WRONG.values())


@pytest.mark.parametrize("name", NAMES)
def test_a_learners_own_code_passes(name):
    feedback = check(name, RIGHT[name])
    assert feedback.correct, feedback.message


@pytest.mark.parametrize(("name", "index"), CASES)
def test_each_typical_wrong_answer_gets_its_hint(name, index):
    answer, mistake = WRONG[name][index]
    feedback = check(name, answer)
    assert not feedback.correct and not feedback.message.startswith(CHECKER_FAILED)
    assert "check that entry by hand" not in feedback.message  # a targeted hint, not the generic one
    assert feedback.mistake == mistake and (mistake is None or mistake in MISTAKES)


@pytest.mark.parametrize("name", NAMES)
def test_missing_and_broken_answers_get_a_sentence(name):
    for missing in (..., None):
        assert check(name, missing).message.startswith("Replace the ...")
    for junk in (0.4, "layer 1", (0, 3)):
        feedback = check(name, junk)
        assert not feedback.correct and not feedback.message.startswith(CHECKER_FAILED)


def test_attnlibs_score_functions_are_refused():
    def via_library(maps, ids):
        return torch.tensor([[induction_score(m[:, h], ids) for h in range(m.shape[1])] for m in maps])

    feedback = check(f"{LESSON}.2", via_library)
    assert not feedback.correct and feedback.mistake == "library-function"

    def finds_via_library(model, ids):
        model(ids)
        prev = torch.tensor([[previous_token_score(m[:, h]) for h in range(m.shape[1])] for m in model.attention_maps])
        return {"previous_token": divmod(int(prev.argmax()), prev.shape[1]), "induction": (1, 0), "copies": False}

    assert check(f"{LESSON}.3", finds_via_library).mistake == "library-function"


def test_a_conclusion_learned_from_the_page_does_not_carry_over():
    """The heads of the page's model, hard-coded, fail: the checker's models have their heads reordered."""
    model, _ = load_writer()
    on_page = my_find_heads(model, torch.cat([torch.arange(1, 17)[None]] * 2, 1))

    def from_the_page(model, ids):
        return dict(on_page)

    assert not check(f"{LESSON}.3", from_the_page).correct


def test_reordering_heads_changes_their_names_not_the_model():
    model, vocabulary = load_writer()
    ids = vocabulary.encode("Fair is foul, and foul is fair:\n")[None]
    heads = model.blocks[0].attention.num_heads
    order = torch.arange(heads).flip(0).tolist()
    reordered = _permuted(model, {0: order})
    with torch.no_grad():
        # the heads summed in another order: equal up to rounding, logits of up to about 7 (portable kernels too)
        assert torch.allclose(reordered(ids), model(ids), atol=1e-4)
    assert torch.allclose(reordered.attention_maps[0][:, 0], model.attention_maps[0][:, heads - 1])
    rotated = _permuted(model)  # what the checkers run: every head of every block under another index
    with torch.no_grad():
        assert torch.allclose(rotated(ids), model(ids), atol=1e-4)  # the heads summed in another order
    for layer, (ours, theirs) in enumerate(zip(model.attention_maps, rotated.attention_maps, strict=True)):
        for head in range(heads):
            same = [h for h in range(heads) if torch.allclose(theirs[:, h], ours[:, head], atol=1e-5)]
            assert same and head not in same, (layer, head, same)


def test_the_checkers_models_disagree_on_copying():
    """A conclusion "it copies" (or "it does not") learned on one model fails on another of the checker's."""
    copies = [second < first for first, second in map(_case_copies, range(len(_cases())))]
    assert True in copies and False in copies


def test_repeated_passages():
    twice = repeated(torch.arange(100), 7, 3, torch.Generator().manual_seed(0))
    assert twice.shape == (3, 14) and torch.equal(twice[:, :7], twice[:, 7:])


def test_explorer_shows_the_chosen_head_and_its_scores():
    model, vocabulary = load_writer()
    explorer = ModelHeadsExplorer(model, vocabulary.characters)
    layer, head = len(model.blocks) - 1, model.blocks[0].attention.num_heads - 1
    explorer.controls["layer"].value, explorer.controls["head"].value = layer, head
    explorer.controls["passage"].value = "a passage repeated"
    shown = explorer.compute(explorer.values_now())
    ids = vocabulary.encode(PASSAGES["a passage repeated"])[None]
    with torch.no_grad():
        model(ids)
    frame = shown.views["weights"]
    weights = model.attention_maps[layer][0, head]
    assert torch.allclose(torch.tensor(frame.matrix, dtype=torch.float32), weights, atol=1e-6)
    caption = shown.texts["caption"]
    assert f"{previous_token_score(weights):.2f}" in caption and "induction score" in caption
    assert f"ModelHeadsExplorer(layer={layer + 1}, head={head + 1}" in explorer.summary()


def test_explorer_refuses_a_passage_the_model_cannot_read():
    model, vocabulary = load_writer()
    with pytest.raises(ValueError, match="passage"):
        ModelHeadsExplorer(model, vocabulary.characters, {"too long": "x" * (model.max_len + 1)})
    with pytest.raises(ValueError, match="passage"):
        ModelHeadsExplorer(model, vocabulary.characters, {"unknown": "€uro"})


def test_every_state_of_the_explorer_shows_compute_whatever_the_path():
    """What tests/show/test_explorer.py asks of every explorer, over every state: shown = compute(values),
    and the same as an explorer built fresh in that state."""
    model, vocabulary = load_writer()
    walked = ModelHeadsExplorer(model, vocabulary.characters)
    heads = model.blocks[0].attention.num_heads
    for passage in PASSAGES:
        for layer in range(len(model.blocks)):
            for head in reversed(range(heads)):
                walked.controls["passage"].value = passage
                walked.controls["layer"].value, walked.controls["head"].value = layer, head
                assert walked.message.value == ""
                assert walked.displayed() == walked.state(walked.compute(walked.values_now()))
                fresh = ModelHeadsExplorer(model, vocabulary.characters, layer=layer, head=head)
                fresh.controls["passage"].value = passage
                assert fresh.displayed() == walked.displayed()
