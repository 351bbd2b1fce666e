"""Lesson 16 · Capstone: what "it" refers to — its explorer and its exercise checkers.

Lesson 16 explorer: a sentence you edit and the same sentence with another adjective, side by side:
every layer's and head's attention from "it", and the word the model outputs.

Lesson 16 exercises: resolving the pronoun, and testing the head that does it.

- ``what_it_refers_to.1`` predict: in a sentence the model never saw, which noun does "it" attend to?
- ``what_it_refers_to.2`` code: ``referent_score(weights, positions)``: one head's mean weight from "it" on
  the referent.
- ``what_it_refers_to.3`` find: the (layer, head) whose score is highest — the head that resolves the pronoun.
- ``what_it_refers_to.4`` test: the held-out accuracy with that head ablated.
"""

from __future__ import annotations

import functools
import html
import math

import ipywidgets as widgets
import torch
from torch import Tensor

from .. import pronouns
from ..heads import ablated
from ..show.explorer import Explorer, HeatmapView, Shown
from ..transformer import TinyTransformer
from ._calls import compare_call
from ._check import Feedback, compare_number, exercise

__all__ = [
    "PREDICT_SENTENCE",
    "ReferentExplorer",
    "ablated_accuracy",
    "head_labels",
    "predict_referent",
    "referent_head",
    "referent_score",
    "resolving_head",
    "swap_adjective",
    "wrong_answers",
]

#: exercise 16.1's sentence: held out (neither noun was ever seen with "nervous" in training)
PREDICT_SENTENCE = "the creek did not tempt the wolf because it was too nervous"


def head_labels(model: TinyTransformer) -> list[str]:
    """``["layer 1 head 1", …]``: one label per row of :func:`attnlib.pronouns.attention_from_it`, flattened."""
    heads = model.blocks[0].attention.num_heads
    return [f"layer {layer + 1} head {h + 1}" for layer in range(len(model.blocks)) for h in range(heads)]


def swap_adjective(sentence: str, adjective: str) -> str:
    """``sentence`` with its one adjective replaced by ``adjective`` (both from the model's vocabulary)."""
    words = sentence.lower().replace(".", " ").replace(",", " ").split()
    if adjective not in pronouns.ADJECTIVES:
        raise ValueError(
            f"adjective must be one of the model's adjectives ({', '.join(pronouns.ADJECTIVES)}), got {adjective!r}"
        )
    found = [i for i, w in enumerate(words) if w in pronouns.ADJECTIVES]
    if len(found) != 1:
        raise ValueError(f"sentence needs exactly one adjective to swap (such as tired or wide), found {len(found)}")
    words[found[0]] = adjective
    return " ".join(words)


class ReferentExplorer(Explorer):
    """Edit the sentence; see every head's attention from "it", next to the same sentence with another adjective.

    Args:
        model: the trained encoder (:func:`attnlib.pronouns.load`).
        sentence: words of the model's vocabulary, "it" once, one adjective, at most ``model.max_len`` words.
        other: the adjective of the right-hand sentence.

    Controls: ``sentence`` (Enter to apply), ``other`` (a menu of adjectives).
    Views: ``this`` and ``swapped``: ``(num_layers · num_heads, n)`` — one row per head, one column per word.
    """

    def __init__(self, model: TinyTransformer, sentence: str, *, other: str = "wide") -> None:
        super().__init__()
        self.model = model
        c = self.controls
        c["sentence"] = widgets.Text(
            value=sentence, description="sentence", continuous_update=False, layout=widgets.Layout(width="620px")
        )
        c["other"] = widgets.Dropdown(options=list(pronouns.ADJECTIVES), value=other, description="swap in")
        for name in ("this", "swapped"):
            self.views[name] = HeatmapView(
                None, xlabel="word (key)", ylabel='head (query: "it")', vmin=0.0, vmax=1.0, decimals=2
            )
        self.caption = self.texts["caption"] = widgets.HTML()
        self.update()
        self.observe_controls()
        self.widget = widgets.VBox(
            [
                c["sentence"],
                c["other"],
                self.message,
                widgets.HBox([self.views["this"], self.views["swapped"]]),
                self.caption,
            ]
        )

    def predictions_of(self, values) -> tuple[list[tuple[str, Tensor, str, float]], tuple[str, str]]:
        """For both sentences: the text, the weights from "it", the word it refers to and its probability."""
        left = values["sentence"]
        pronouns.attention_from_it(self.model, left)  # the learner's sentence is checked first
        right = swap_adjective(left, values["other"])
        results = [
            (text, pronouns.attention_from_it(self.model, text), *pronouns.predict(self.model, text))
            for text in (left, right)
        ]
        return results, (results[0][2], results[1][2])

    @property
    def predictions(self) -> tuple[str, str]:
        """What the views show the model says "it" is, in the typed sentence and in the swapped one."""
        said = [self.views[name].title.split("→ ", 1)[1].rsplit(" (", 1)[0] for name in ("this", "swapped")]
        return said[0], said[1]

    def compute(self, values) -> Shown:
        """Run the model on both sentences; show each head's row from "it"; say what it outputs."""
        results, said = self.predictions_of(values)
        labels = head_labels(self.model)
        views = {}
        for name, (text, weights, word, p) in zip(("this", "swapped"), results):
            words = text.lower().replace(".", " ").replace(",", " ").split()
            adjective = next(w for w in words if w in pronouns.ADJECTIVES)
            views[name] = self.views[name].frame(
                weights.reshape(len(labels), -1),
                row_labels=labels,
                col_labels=words,
                title=f'…{adjective}: "it" → {word} ({p:.0%})',
            )
        return Shown(
            views=views,
            texts={
                "caption": html.escape(
                    f'left: the model says "it" is the {said[0]} · right ({values["other"]}): the {said[1]}'
                )
            },
        )

    def summary(self) -> str:
        c = self.controls
        return (
            f"ReferentExplorer(sentence={c['sentence'].value!r}, other={c['other'].value!r}: "
            f'"it" → {self.predictions[0]} | {self.predictions[1]})'
        )


# ---------------------------------------------------------------- exercises
def _word(answer: object, name: str) -> str | Feedback:
    if answer is None or answer is Ellipsis:
        return Feedback(False, f"Replace the ... with {name}, then run the cell again.")
    if not isinstance(answer, str):
        return Feedback(False, f"{name} should be a word in quotes, like 'dog', not {type(answer).__name__}.")
    return answer.strip().lower()


def _mass_of(weights: Tensor, positions: Tensor) -> Tensor:
    return weights[torch.arange(len(positions)), pronouns.IT, positions].mean()


@functools.lru_cache(maxsize=1)
def _measured() -> tuple[Tensor, dict[tuple[int, int], float]]:
    """The committed model's referent mass per head and the held-out accuracy without each head."""
    model = pronouns.load()
    mass = pronouns.referent_mass(model)
    without = {}
    for layer in range(mass.shape[0]):
        for head in range(mass.shape[1]):
            with ablated(model, layer, head):
                without[layer, head] = pronouns.accuracy(model)
    return mass, without


def resolving_head() -> tuple[int, int]:
    """(layer, head), counting from 1, of the committed model's head with the most weight on the referent."""
    mass, _ = _measured()
    layer, head = divmod(int(mass.argmax()), mass.shape[1])
    return layer + 1, head + 1


def _another_head() -> tuple[int, int]:
    """(layer, head), from 1, of the head with the lowest referent score (a wrong answer to 16.3)."""
    mass, _ = _measured()
    layer, head = divmod(int(mass.argmin()), mass.shape[1])
    return layer + 1, head + 1


def wrong_answers() -> dict[str, list[tuple[object, str | None]]]:
    """Per exercise, typical wrong answers and the mistake id each must reveal (None: a plain hint)."""
    layer, head = resolving_head()
    _, without = _measured()
    return {
        "what_it_refers_to.1": [("creek", None), ("hungry", None)],
        "what_it_refers_to.2": [
            (lambda w, p: w[torch.arange(len(p)), p, pronouns.IT].mean(), "transposed"),
            (lambda w, p: w[torch.arange(len(p)), pronouns.IT, p].sum(), None),
        ],
        "what_it_refers_to.3": [((layer - 1, head - 1), None), (_another_head(), None)],
        "what_it_refers_to.4": [(pronouns.accuracy(pronouns.load()), None), (100 * without[layer - 1, head - 1], None)],
    }


@exercise("what_it_refers_to.1", alias="pronoun.1")
def predict_referent(answer: object) -> Feedback:
    """ "the creek did not tempt the wolf because it was too nervous": "it" is (and the head looks at) the wolf."""
    got = _word(answer, "the noun")
    if isinstance(got, Feedback):
        return got
    words = PREDICT_SENTENCE.split()
    right = pronouns.referent(PREDICT_SENTENCE)
    other = next(w for w in words if w in pronouns.NOUNS and w != right)
    if got == right:
        return Feedback(
            True,
            f"That is the noun: {words[-1]} describes animals, so the head looks at the {right} — at word "
            f"{words.index(right)}, although the animal stood at word 1 in the first template.",
        )
    if got == other:
        return Feedback(False, f"The {other} is the place. Which of the two can be {words[-1]}?")
    if got in pronouns.ADJECTIVES or got == "it":
        return Feedback(False, f"{got!r} is not a noun: the head looks at one of the two nouns, {other} or {right}.")
    return Feedback(False, f"{got!r} is not in the sentence: the candidates are its two nouns, {other} and {right}.")


@exercise("what_it_refers_to.2", alias="pronoun.2")
def referent_score(answer: object) -> Feedback:
    """``referent_score(weights (batch, n, n), positions (batch,))`` → the mean weight from row 8 on each referent."""
    generator = torch.Generator().manual_seed(16)
    weights = torch.softmax(3 * torch.randn(5, pronouns.N_WORDS, pronouns.N_WORDS, generator=generator), -1)
    positions = torch.tensor([1, 6, 6, 1, 6])
    wrong = [
        (
            weights[torch.arange(5), positions, pronouns.IT].mean(),
            'That is the weight FROM the referent ON "it" (a column of the map). "it" is the query: its row, '
            "weights[b, 8, :], is what it attends to.",
            "transposed",
        ),
        (
            weights[torch.arange(5), pronouns.IT, positions].sum(),
            "That is the sum over the sentences; the score is their mean.",
        ),
        (
            weights[:, pronouns.IT, positions].mean(),
            "weights[:, 8, positions] pairs every sentence with every position; pick each sentence's own "
            "referent: weights[torch.arange(batch), 8, positions].",
        ),
    ]
    return compare_call(
        answer,
        (weights, positions),
        call="your referent_score(weights, positions)",
        expected=_mass_of(weights, positions),
        name="the mean weight from 'it' on the referent of five new maps",
        wrong=wrong,
    )


def _pair(answer: object) -> tuple[int, int] | Feedback:
    name = "the (layer, head) pair"
    if answer is None or answer is Ellipsis:
        return Feedback(False, f"Replace the ... with {name}, then run the cell again.")
    if not isinstance(answer, tuple | list) or len(answer) != 2:
        return Feedback(False, f"{name} should be two whole numbers like (1, 2), not {type(answer).__name__}.")
    values = []
    for v in answer:
        if isinstance(v, Tensor) and v.numel() == 1 and not v.is_floating_point() and not v.is_complex():
            v = int(v)
        if isinstance(v, bool) or not isinstance(v, int):
            return Feedback(False, f"{name} should be two whole numbers like (1, 2); {v!r} is not one.")
        values.append(v)
    return values[0], values[1]


@exercise("what_it_refers_to.3", alias="pronoun.3")
def referent_head(answer: object) -> Feedback:
    """The (layer, head), counting from 1 as the explorer does, with the highest referent score."""
    got = _pair(answer)
    if isinstance(got, Feedback):
        return got
    mass, _ = _measured()
    layers, heads = mass.shape
    right = resolving_head()
    if got == right:
        return Feedback(
            True,
            f"That is the head: {float(mass[right[0] - 1, right[1] - 1]):.2f} of its weight from "
            '"it" lands on the referent, on average over the held-out sentences.',
        )
    if got == (right[0] - 1, right[1] - 1):
        return Feedback(False, "Count from 1, as the explorer's labels do (layer 1 head 1 is (1, 1)).")
    if not (1 <= got[0] <= layers and 1 <= got[1] <= heads):
        return Feedback(False, f"The model has layers 1–{layers} and heads 1–{heads}; {got} is not one of its heads.")
    score = float(mass[got[0] - 1, got[1] - 1])
    return Feedback(
        False,
        f"Layer {got[0]} head {got[1]} puts only {score:.2f} of its weight on the referent; "
        "compute the score for every head and take the largest.",
    )


@exercise("what_it_refers_to.4", alias="pronoun.4")
def ablated_accuracy(answer: object) -> Feedback:
    """The held-out accuracy of the committed model with the resolving head ablated (a fraction)."""
    layer, head = resolving_head()
    _, without = _measured()
    right = without[layer - 1, head - 1]
    full = pronouns.accuracy(pronouns.load())
    wrong = [
        (full, "That is the accuracy with every head working: run it inside `with ablated(model, layer, head):`."),
        (100 * right, "Give it as a fraction from 0 to 1, not as a percentage."),
    ]
    wrong += [
        (
            acc,
            f"That is the accuracy without layer {lay + 1} head {h + 1}; ablate the head of exercise 16.3. "
            "(ablated takes the layer and head counting from 0.)",
        )
        for (lay, h), acc in without.items()
        if (lay, h) != (layer - 1, head - 1) and not math.isclose(acc, right, abs_tol=0.01)
    ]
    feedback = compare_number(answer, right, name="the held-out accuracy without that head", wrong=wrong, tol=0.01)
    if feedback.correct:
        return Feedback(True, f"{feedback.message} From {full:.2f} to {right:.2f}: this head does the job.")
    return feedback
