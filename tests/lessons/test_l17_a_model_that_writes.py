"""Lesson 17: its four checkers with right, typical wrong and missing answers; the fallbacks; the live curve."""

from __future__ import annotations

import math

import pytest
import torch

from attnlib import language, ngrams
from attnlib.lessons import MISTAKES, check, exercises, lesson_module
from attnlib.lessons._check import CHECKER_FAILED

LESSON = "a_model_that_writes"
NAMES = [f"{LESSON}.{i}" for i in range(1, 5)]
WRONG = lesson_module(LESSON).wrong_answers()
CASES = [(name, i) for name, answers in WRONG.items() for i in range(len(answers))]


# what a learner writes: plain loops and counts, none of attnlib.language
def my_pairs(ids, starts, n_tokens):
    windows = torch.stack([ids[start : start + n_tokens] for start in starts.tolist()])
    targets = torch.stack([ids[start + 1 : start + n_tokens + 1] for start in starts.tolist()])
    return windows, targets


def my_ngram(train, held_out, vocab_size, order, k):
    text, held = train.tolist(), held_out.tolist()
    pair, context = {}, {}
    for t in range(order - 1, len(text)):
        pair[tuple(text[t - order + 1 : t + 1])] = pair.get(tuple(text[t - order + 1 : t + 1]), 0) + 1
        context[tuple(text[t - order + 1 : t])] = context.get(tuple(text[t - order + 1 : t]), 0) + 1
    total = 0.0
    for t in range(order - 1, len(held)):
        ctx_count = context.get(tuple(held[t - order + 1 : t]), 0)
        p = (pair.get(tuple(held[t - order + 1 : t + 1]), 0) + k) / (ctx_count + k * vocab_size)
        total -= math.log(p)
    return total / (len(held) - order + 1)


def my_probabilities(logits, temperature, top_k):
    scaled = logits / temperature
    if top_k is not None:
        kth = scaled.sort(dim=-1, descending=True).values[..., top_k - 1 : top_k]
        scaled = torch.where(scaled < kth, torch.full_like(scaled, -math.inf), scaled)
    e = (scaled - scaled.max(dim=-1, keepdim=True).values).exp()
    return e / e.sum(dim=-1, keepdim=True)


def my_same_character(weights, ids):
    scores = []
    for b in range(ids.shape[0]):
        for i in range(ids.shape[1]):
            earlier = [j for j in range(i) if ids[b, j] == ids[b, i]]
            if earlier:
                scores.append(sum(float(weights[b, i, j]) for j in earlier))
    return sum(scores) / len(scores)


RIGHT = dict(zip(NAMES, (my_pairs, my_ngram, my_probabilities, my_same_character)))


def test_four_exercises_each_with_typical_wrong_answers():
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
    assert not feedback.message.endswith("recompute it step by step.")
    assert feedback.mistake == mistake and (mistake is None or mistake in MISTAKES)


@pytest.mark.parametrize("name", NAMES)
def test_missing_and_broken_answers_get_a_sentence(name):
    for missing in (..., None):
        assert check(name, missing).message.startswith("Replace the ...")

    def stub(*args): ...

    assert not check(name, stub).correct and not check(name, stub).message.startswith(CHECKER_FAILED)
    raised = check(name, lambda *args: args[99])
    assert not raised.correct and "raised IndexError" in raised.message
    assert not check(name, 0.5).correct and not check(name, "text").correct


def test_the_library_is_refused_and_printed_numbers_do_not_pass():
    assert check(f"{LESSON}.2", ngrams.ngram_loss).mistake == "library-function"
    assert check(f"{LESSON}.2", lambda *a: ngrams.ngram_loss(*a)).mistake == "library-function"
    assert check(f"{LESSON}.2", lambda t, held, v, o, k: language.bigram_loss(t, held, v)).mistake == "library-function"
    assert check(f"{LESSON}.3", language.sampling_probabilities).mistake == "library-function"
    assert check(f"{LESSON}.4", lambda w, i: language.same_character_score(w, i)).mistake == "library-function"
    # the lesson's own figures, handed back as constants, are not functions of the checker's inputs
    for number in (2.471, 1.934, 3.349):
        assert not check(f"{LESSON}.2", lambda *a, n=number: n).correct
    assert not check(f"{LESSON}.4", lambda w, i: 0.3).correct


def test_specific_hints():
    unsmoothed = check(f"{LESSON}.2", lambda t, held, v, order, k: float("inf"))
    assert "Add k to every count" in unsmoothed.message
    uniform = check(f"{LESSON}.2", lambda t, held, v, order, k: math.log(v))
    assert "uniform guessing" in uniform.message
    add_one = check(f"{LESSON}.2", lambda t, held, v, order, k: my_ngram(t, held, v, order, 1.0))
    assert "add-one smoothing" in add_one.message
    swapped = check(f"{LESSON}.1", lambda ids, s, n: my_pairs(ids, s, n)[::-1])
    assert swapped.mistake == "next-token-misaligned" and "swapped" in swapped.message


def test_pick_yours_uses_the_reference_until_an_exercise_passes():
    lesson = lesson_module(LESSON)
    chosen, said = lesson.pick_yours(pairs=..., ngram=my_ngram)
    assert chosen["pairs"] is lesson.REFERENCES["pairs"] and chosen["ngram"] is my_ngram
    assert said == "Using the reference pairs (not solved yet), your ngram."
    with pytest.raises(TypeError, match="pick_yours takes"):
        lesson.pick_yours(sampler=my_probabilities)


def test_live_curve_records_and_draws_against_the_baselines():
    curve = lesson_module(LESSON).LiveCurve({"bigram": 2.47, "unigram": 3.35}, every=0)
    for step in range(1, 31):
        curve.update(step, 4.0 - step / 10, held_out_loss=3.0 if step % 10 == 0 else None)
    assert curve.steps == list(range(1, 31)) and curve.held_out == {10: 3.0, 20: 3.0, 30: 3.0}
    figure = curve.figure()
    assert repr(figure) == "<training curves: training loss (mean of 20 steps)>"
    assert len(figure.fig.axes[0].lines) == 4  # the curve, the held-out points, two baselines


def test_stored_curve_draws_a_run_by_its_steps_against_the_baselines_and_names_bad_points():
    from attnlib import AttentionInputError

    stored_curve = lesson_module(LESSON).stored_curve
    points = [{"step": s, "train_loss": 3 - s / 1000, "held_out_loss": 3.1 - s / 1100} for s in (250, 500, 750)]
    figure = stored_curve(points, {"trigram": 2.07, "5-gram": 1.70}, title="a run")
    ax = figure.fig.axes[0]
    assert repr(figure) == "<training curves: training loss (mean since the previous check), held-out loss>"
    assert len(ax.lines) == 4 and list(ax.lines[1].get_xdata()) == [250, 500, 750]  # by step, not by index
    assert list(ax.lines[1].get_ydata()) == [p["held_out_loss"] for p in points]
    assert [line.get_ydata()[0] for line in ax.lines[2:]] == [2.07, 1.70]
    with pytest.raises(AttentionInputError, match=r"points\[1\] must be a mapping"):
        stored_curve([points[0], {"step": 500}], {})
    with pytest.raises(AttentionInputError, match="in order of their steps"):
        stored_curve(points[::-1], {})
    with pytest.raises(AttentionInputError, match="non-empty list"):
        stored_curve([], {})


def test_writer_explorer_shows_the_next_character_probabilities_and_refuses_unknown_characters():
    from attnlib.transformer import TinyTransformer

    characters = sorted(set("the mouse ran up the clock\n"))
    torch.manual_seed(0)
    model = TinyTransformer(len(characters), 16, 2, 1, 8, causal=True)
    e = lesson_module(LESSON).WriterExplorer(
        model, characters, prompt="the ", temperature=1.0, top_k=len(characters), shown=len(characters)
    )
    shown = e.views["next"].data[0]
    assert len(shown) == len(characters) and list(shown) == sorted(shown, reverse=True)
    assert float(sum(shown)) == pytest.approx(1.0, abs=1e-4)  # every character shown, top-k = |V|
    e.controls["top_k"].value = 1
    assert e.views["next"].data[0][0] == pytest.approx(1.0) and float(sum(e.views["next"].data[0][1:])) == 0
    assert (
        e.texts["caption"].value.startswith("<pre>the ") and len(e.texts["caption"].value) > len("<pre>the </pre>") + 50
    )
    assert e.summary() == "WriterExplorer(prompt='the ', temperature=1.0, top_k=1)"
    before = list(e.views["next"].data[0])
    e.controls["prompt"].value = "THE"
    assert "prompt must be" in e.message.value and list(e.views["next"].data[0]) == before


def test_writer_explorer_offers_a_few_k_and_refuses_one_outside_the_vocabulary() -> None:
    from attnlib.transformer import TinyTransformer

    module = lesson_module(LESSON)
    model = TinyTransformer(5, 8, 2, 1, 8, causal=True)
    e = module.WriterExplorer(model, list("ab c\n"), prompt="ab ", temperature=1.0, top_k=4)
    assert e.controls["top_k"].options == (1, 2, 3, 4, 5)  # the slider's k, the initial 4 and all 5 included
    with pytest.raises(ValueError, match="top_k must be from 1 to the 5 characters"):
        module.WriterExplorer(model, list("ab c\n"), prompt="ab ", top_k=6)
