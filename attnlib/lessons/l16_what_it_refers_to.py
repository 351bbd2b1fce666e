"""Lesson 16 · Capstone: what "it" refers to — its live loss curve, its explorer and its exercise checkers.

Lesson 16 explorer: a sentence you edit and the same sentence with another adjective, side by side:
every layer's and head's attention from "it", and the word the model outputs.

Lesson 16 exercises: finding the head by a score, reading its map, patching, and ablating on a new seed.

- ``what_it_refers_to.1`` code: ``referent_scores(model, ids, positions)``: every head's mean weight from "it"
  on the referent, ``(num_layers, num_heads)``; run on the committed model and sentences the lesson never used.
- ``what_it_refers_to.2`` read the map: in :data:`MAP_SENTENCE`, the word the best head weights most from "it", in
  the model the lesson trained on this computer (or the committed one, when the learner skipped the wait).
- ``what_it_refers_to.3`` code: ``patched_logits(model, ids, twin_ids, positions)``: the logits at "it" with
  layer 1's output at ``positions`` taken from the twins; run on twins the lesson never made.
- ``what_it_refers_to.4`` measure: on seed :data:`NEW_SEED` (not in the lesson's table), the best head by score
  and the held-out accuracy with it mean-ablated: ``(layer, head, accuracy)``.
"""

from __future__ import annotations

import copy
import functools
import html
import math
from collections.abc import Callable, Mapping
from typing import TypedDict, cast

import torch
from matplotlib.figure import Figure
from torch import Tensor, nn
from torch.utils.hooks import RemovableHandle

from .. import pronouns
from ..heads import ablated
from ..show import ui
from ..show.explorer import Explorer, HeatmapView, Shown
from ..show.plots import Plot
from ..transformer import Block, TinyTransformer
from ._calls import compare_call
from ._check import Feedback, Wrong, compare_number, exercise

__all__ = [
    "MAP_SENTENCE",
    "NEW_SEED",
    "LossCurve",
    "ReferentExplorer",
    "head_labels",
    "most_weighted_word",
    "new_seed_ablation",
    "patched_logits",
    "referent_scores",
    "swap_adjective",
    "wrong_answers",
]


def head_labels(model: TinyTransformer) -> list[str]:
    """``["layer 1 head 1", …]``: one label per row of :func:`attnlib.pronouns.attention_from_it`, flattened."""
    first = model.blocks[0]
    if not isinstance(first, Block):
        raise ValueError(f"head_labels reads attnlib's Block (block=None), got a {type(first).__name__}")
    heads = first.attention.num_heads
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


class ReferentValues(TypedDict):
    """What :meth:`ReferentExplorer.compute` reads: the controls' values."""

    sentence: str
    other: str


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
        c["sentence"] = ui.Text(
            value=sentence, description="sentence", continuous_update=False, layout=ui.Layout(width="620px")
        )
        c["other"] = ui.Dropdown(options=list(pronouns.ADJECTIVES), value=other, description="swap in")
        for name in ("this", "swapped"):
            self.views[name] = HeatmapView(
                None, xlabel="word (key)", ylabel='head (query: "it")', vmin=0.0, vmax=1.0, decimals=2
            )
        self.caption = self.texts["caption"] = ui.HTML()
        self.update()
        self.observe_controls()
        self.widget = ui.VBox(
            [
                c["sentence"],
                c["other"],
                self.message,
                ui.HBox([self.views["this"], self.views["swapped"]]),
                self.caption,
            ]
        )

    def predictions_of(
        self, values: Mapping[str, object]
    ) -> tuple[list[tuple[str, Tensor, str, float]], tuple[str, str]]:
        """For both sentences: the text, the weights from "it", the word it refers to and its probability."""
        values = cast(ReferentValues, values)
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

    def compute(self, values: Mapping[str, object]) -> Shown:
        """Run the model on both sentences; show each head's row from "it"; say what it outputs."""
        values = cast(ReferentValues, values)
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


# ---------------------------------------------------------------- the live loss curve
class LossCurve:
    """The training loss, redrawn as it falls: ``LossCurve(steps)`` displays it; hand it to
    :func:`attnlib.pronouns.train_encoder` as ``on_loss``. A dashed line marks ln 2, the loss of a model
    that only knows "one of the two nouns" and tosses a coin between them."""

    def __init__(self, steps: int, *, title: str = 'training loss at "it"') -> None:
        from IPython.display import display

        self.steps = steps
        self.fig = Figure(figsize=(6.4, 2.6), layout="constrained")
        self.ax = self.fig.add_subplot()
        self.ax.set(xlim=(0, steps), ylim=(1e-3, 6), yscale="log", xlabel="step", ylabel="cross-entropy", title=title)
        self.ax.axhline(math.log(2), color="grey", linestyle="--", linewidth=1)
        self.ax.text(steps, math.log(2), " ln 2: a coin toss between the nouns", va="bottom", ha="right", fontsize=8)
        (self.line,) = self.ax.plot([], [], linewidth=1.2)
        self.losses: list[float] = []
        self.handle = display(Plot(self.fig, self._text()), display_id=True)

    def _text(self) -> str:
        last = f", last loss {self.losses[-1]:.3f}" if self.losses else ""
        return f"LossCurve({len(self.losses)} steps{last})"

    def __call__(self, losses: list[float]) -> None:
        """Redraw with ``losses`` so far — about ten times in a run (each PNG costs about 0.2 s of CPU)."""
        self.losses = list(losses)
        if len(losses) < self.steps and len(losses) % max(1, self.steps // 10):
            return
        self.line.set_data(range(1, len(losses) + 1), losses)
        if self.handle is not None:
            self.handle.update(Plot(self.fig, self._text()))


# ---------------------------------------------------------------- exercises
#: exercise 16.2's sentence (held out): the best head looks hardest at a word that is not the referent
MAP_SENTENCE = "the goat did not enter the creek because it was too nervous"
#: exercise 16.4's seed: not one of the lesson's (:data:`attnlib.pronouns.SEEDS`)
NEW_SEED = 5


def _word(answer: object, name: str) -> str | Feedback:
    if answer is None or answer is Ellipsis:
        return Feedback(False, f"Replace the ... with {name}, then run the cell again.", tried=False)
    if isinstance(answer, bool) or isinstance(answer, int | float):
        return Feedback(False, f"Answer with the word itself in quotes, like 'dog', not its position ({answer!r}).")
    if not isinstance(answer, str):
        return Feedback(False, f"{name} should be a word in quotes, like 'dog', not {type(answer).__name__}.")
    return answer.strip().lower()


def _undecorated(*functions: Callable[..., object]) -> tuple[Callable[..., object], ...]:
    """The functions under their ``@torch.no_grad()``: every decorated function shares the decorator's code
    object, so watching that would refuse any learner function that is decorated (or calls one that is)."""
    return tuple(getattr(f, "__wrapped__", f) for f in functions)


@functools.cache
def _model() -> TinyTransformer:
    """The committed encoder (seed 0, the lesson's recipe): what the checkers run the learner's code on."""
    return pronouns.load()


def _learners_model() -> TinyTransformer:
    """A copy of :func:`_model` for the learner's function: whatever it changes in the model (its weights, hooks
    left behind) stays out of the checks that follow."""
    return copy.deepcopy(_model())


def _unseen(n: int = 48, seed: int = 1616) -> tuple[Tensor, Tensor, Tensor]:
    """``n`` training sentences the lesson never shows (seeded), their referent positions, and twins made
    with a random adjective of the other kind (not :data:`attnlib.pronouns.TWIN`'s)."""
    ids, _, positions = pronouns.sentences("train")
    generator = torch.Generator().manual_seed(seed)
    pick = torch.randperm(len(ids), generator=generator)[:n]
    ids, positions = ids[pick], positions[pick]
    animal = {pronouns.WORD_ID[a] for a in pronouns.ANIMAL_ADJECTIVES}
    other_kind = [pronouns.PLACE_ADJECTIVES if int(a) in animal else pronouns.ANIMAL_ADJECTIVES for a in ids[:, -1]]
    choice = torch.randint(10, (n,), generator=generator).tolist()
    twin_ids = ids.clone()
    twin_ids[:, -1] = torch.tensor([pronouns.WORD_ID[kind[c]] for kind, c in zip(other_kind, choice, strict=True)])
    return ids, positions, twin_ids


@torch.no_grad()
def _scores_variants(model: TinyTransformer, ids: Tensor, positions: Tensor) -> dict[str, Tensor]:
    model(ids)
    rows = torch.arange(len(ids))
    maps = model.attention_maps
    return {
        "right": torch.stack([m[rows, :, pronouns.IT, positions].mean(0) for m in maps]),
        "transposed": torch.stack([m[rows, :, positions, pronouns.IT].mean(0) for m in maps]),
        "sum": torch.stack([m[rows, :, pronouns.IT, positions].sum(0) for m in maps]),
        "every pair": torch.stack([m[:, :, pronouns.IT][:, :, positions].mean((0, 2)) for m in maps]),
    }


def _scores_wrong(variants: dict[str, Tensor]) -> list[Wrong]:
    return [
        (
            variants["transposed"],
            'That is the weight FROM the referent ON "it": a column of the map. "it" is the query, so its row '
            "maps[b, head, 8, :] is what it attends to.",
            "transposed",
        ),
        (variants["sum"], "That is the sum over the sentences; the score is their mean."),
        (
            variants["every pair"],
            "maps[:, head, 8][:, positions] pairs every sentence with every referent position; pick each "
            "sentence's own: maps[torch.arange(batch), head, 8, positions].",
        ),
        (variants["right"].T, "Rows are layers and columns heads: shape (num_layers, num_heads), in that order."),
    ]


@functools.cache  # the same sentences every call: computed once, not per answer checked
def _referent_variants() -> dict[str, Tensor]:
    """:func:`_scores_variants` of the committed model on 16.1's 48 unseen sentences."""
    ids, positions, _ = _unseen()
    return _scores_variants(_model(), ids, positions)


@exercise("what_it_refers_to.1", alias="pronoun.1")
def referent_scores(answer: object) -> Feedback:
    """``referent_scores(model, ids, positions)`` → ``(num_layers, num_heads)``: each head's mean weight from "it"
    (row 8) on each sentence's referent, run on the committed model and 48 sentences the lesson never used."""
    model = _learners_model()
    ids, positions, _ = _unseen()
    variants = _referent_variants()
    return compare_call(
        answer,
        (model, ids, positions),
        call="your referent_scores(model, ids, positions)",
        expected=variants["right"],
        name="every head's referent score on 48 sentences the lesson never used",
        wrong=_scores_wrong(variants),
        write_it=_undecorated(pronouns.referent_scores, pronouns.referent_mass),
        success="Checked on the committed model, all four heads.",
    )


@functools.cache
def _trained_here() -> TinyTransformer:
    """Seed 0 trained with the lesson's recipe on this computer: the model the lesson trains and its explorer shows.
    Another kind of CPU trains a slightly different model from the same seed than the one committed."""
    return pronouns.train_encoder(seed=pronouns.SEED)[0]


@torch.no_grad()
def _map_row(model: TinyTransformer) -> tuple[tuple[int, int], list[str], Tensor]:
    """``model``'s best head (from 0) by referent score, the words of :data:`MAP_SENTENCE` and the head's weights
    from "it" over them."""
    mass = pronouns.referent_mass(model)
    layer, head = divmod(int(mass.argmax()), mass.shape[1])
    return (layer, head), MAP_SENTENCE.split(), pronouns.attention_from_it(model, MAP_SENTENCE)[layer, head]


def _map_rows() -> list[tuple[TinyTransformer, tuple[tuple[int, int], list[str], Tensor]]]:
    """The models a learner may have read in exercise 16.2, with :func:`_map_row` of each: the one the lesson
    trained on this computer, then the committed checkpoint (the lesson's "skip the wait")."""
    return [(model, _map_row(model)) for model in (_trained_here(), _model())]


@exercise("what_it_refers_to.2", alias="pronoun.2")
def most_weighted_word(answer: object) -> Feedback:
    """The word of :data:`MAP_SENTENCE` that the best head (by referent score) weights most from "it"."""
    got = _word(answer, "the word")
    if isinstance(got, Feedback):
        return got
    readings = _map_rows()
    referent = pronouns.referent(MAP_SENTENCE)
    for model, ((layer, head), words, row) in readings:
        top = int(row.argmax())
        if got == words[top]:
            said = pronouns.predict(model, MAP_SENTENCE)[0]
            return Feedback(
                True,
                f"Yes: layer {layer + 1} head {head + 1} gives {words[top]!r} {float(row[top]):.2f} of its weight and "
                f"the referent {referent!r} only {float(row[words.index(referent)]):.2f}, yet the model says "
                f"{said!r}. The map of one head is a clue, not the computation.",
            )
    _, ((layer, head), words, row) = readings[0]  # the model the lesson trained here: the one its explorer shows
    if got in words:
        i = words.index(got)
        also = "the referent by the rule, and the model's answer, but " if got == referent else ""
        return Feedback(
            False,
            f"{got!r} is word {i} of the sentence — {also}layer {layer + 1} head {head + 1} gives it only "
            f"{float(row[i]):.2f}. Find that head's row in the explorer and read the darkest cell.",
        )
    return Feedback(False, f"{got!r} is not in the sentence; its words are: {' '.join(words)}.")


def _patched_at(model: TinyTransformer, ids: Tensor, donor: Tensor, positions: list[int], where: str) -> Tensor:
    """Logits at "it" with the vectors at ``positions`` from ``donor`` at ``where``: ``"before layer 1"``
    (the embeddings) or ``"after layer 2"`` — the learner's typical wrong places."""
    saved: list[Tensor] = []
    if where == "before layer 1":

        def record(_module: nn.Module, args: tuple[Tensor, ...]) -> None:
            saved.append(args[0].clone())

        def replace(_module: nn.Module, args: tuple[Tensor, ...]) -> tuple[Tensor, ...]:
            x = args[0].clone()
            x[:, positions] = saved[0][:, positions]
            return (x, *args[1:])

        return _run_hooked(model, model.blocks[0].register_forward_pre_hook, (record, replace), (donor, ids))

    def record_output(_module: nn.Module, _args: tuple[Tensor, ...], out: tuple[Tensor, ...]) -> None:
        saved.append(out[0].clone())

    def replace_output(_module: nn.Module, _args: tuple[Tensor, ...], out: tuple[Tensor, ...]) -> tuple[Tensor, ...]:
        x = out[0].clone()
        x[:, positions] = saved[0][:, positions]
        return (x, *out[1:])

    return _run_hooked(model, model.blocks[-1].register_forward_hook, (record_output, replace_output), (donor, ids))


def _run_hooked(
    model: TinyTransformer,
    register: Callable[[Callable[..., object]], RemovableHandle],
    hooks: tuple[Callable[..., object], ...],
    batches: tuple[Tensor, ...],
) -> Tensor:
    """The logits at "it" of the last of ``batches``, each run with its hook of ``hooks`` registered by ``register``."""
    with torch.no_grad():
        for hook, batch in zip(hooks, batches, strict=True):
            handle = register(hook)
            try:
                logits: Tensor = model(batch)
            finally:
                handle.remove()
    return logits[:, pronouns.IT]


@functools.cache  # the same twins every call: computed once, not per answer checked
def _patching_case(positions: tuple[int, ...]) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor]:
    """16.3's logits at "it" on twins the lesson never made, with layer 1's output at ``positions`` from the twins:
    the sentences' own, the twins' own, patched before layer 1, patched after layer 2, and the right answer."""
    model = _model()
    ids, _, twin_ids = _unseen(seed=1603)
    with torch.no_grad():
        own, twin = model(ids)[:, pronouns.IT], model(twin_ids)[:, pronouns.IT]
    before = _patched_at(model, ids, twin_ids, list(positions), "before layer 1")
    after = _patched_at(model, ids, twin_ids, list(positions), "after layer 2")
    expected = pronouns.patched(model, ids, twin_ids, "layer-1 output", list(positions))[0]
    return own, twin, before, after, expected


@exercise("what_it_refers_to.3", alias="pronoun.3")
def patched_logits(answer: object) -> Feedback:
    """``patched_logits(model, ids, twin_ids, positions)`` → the logits at "it" ``(batch, vocab)`` when layer 1's
    output at ``positions`` comes from the twins; run on twins the lesson never made, at two sets of positions."""
    ids, _, twin_ids = _unseen(seed=1603)
    feedback = Feedback(False, "")
    for positions in ([pronouns.IT], [1, 6, 11]):
        own, twin, before, after, expected = _patching_case(tuple(positions))
        wrong = [
            (
                own,
                "Nothing from the twin arrived: these are the sentences' own logits. (Copied before layer 1? "
                "There the vector at 'it' is the same in both: only layer 1 spreads the adjective beyond word 11.)",
            ),
            (
                twin,
                "These are the twins' own logits: copy only the vectors at `positions`, and only after layer 1.",
            ),
            (
                before,
                "You swapped the vectors going INTO layer 1 (the embeddings). Patch what layer 1 gives out: "
                "x, _ = model.blocks[0](x), then copy the twins' x at `positions`.",
            ),
            (
                after,
                "You swapped the vectors after layer 2. Patch between the layers: after blocks[0], before blocks[1].",
            ),
        ]
        feedback = compare_call(
            answer,
            (_learners_model(), ids, twin_ids, positions),
            call="your patched_logits(model, ids, twin_ids, positions)",
            expected=expected,
            name=f"the patched logits at 'it' (layer 1's output at words {positions} from 48 new twins)",
            wrong=wrong,
            write_it=_undecorated(pronouns.patched),
        )
        if not feedback.correct:
            return feedback
    return Feedback(
        True,
        "Your patched logits match on 48 twins the lesson never made, with layer 1's output swapped at 'it', "
        "and at the nouns and the adjective together.",
    )


@functools.cache
def _new_seed() -> tuple[Tensor, dict[str, dict[tuple[int, int], float]], float]:
    """Seed :data:`NEW_SEED` trained with the lesson's recipe: referent scores, held-out accuracy without each
    head (zero and mean), and with every head."""
    model, _ = pronouns.train_encoder(seed=NEW_SEED)
    mass = pronouns.referent_mass(model)
    without: dict[str, dict[tuple[int, int], float]] = {"zero": {}, "mean": {}}
    for how in without:
        for layer in range(mass.shape[0]):
            for head in range(mass.shape[1]):
                with ablated(model, layer, head, how=how):
                    without[how][layer, head] = pronouns.accuracy(model)
    return mass, without, pronouns.accuracy(model)


def _triple(answer: object) -> tuple[int, int, float] | Feedback:
    name = "(layer, head, accuracy)"
    if answer is None or answer is Ellipsis:
        return Feedback(False, f"Replace the ... with {name}, then run the cell again.", tried=False)
    if not isinstance(answer, tuple | list) or len(answer) != 3:
        return Feedback(False, f"Answer with three values {name}, like (1, 2, 0.5); got {type(answer).__name__}.")
    layer, head, acc = answer
    whole = []
    for v in (layer, head):
        if isinstance(v, Tensor) and v.numel() == 1 and not v.is_floating_point() and not v.is_complex():
            v = int(v)
        if isinstance(v, bool) or not isinstance(v, int):
            return Feedback(False, f"The layer and head should be whole numbers counted from 1; {v!r} is not one.")
        whole.append(v)
    if isinstance(acc, Tensor) and acc.numel() == 1 and not acc.is_complex():
        acc = float(acc)
    if isinstance(acc, bool) or not isinstance(acc, int | float) or not math.isfinite(acc):
        return Feedback(False, f"The accuracy should be a number (a fraction from 0 to 1); got {acc!r}.")
    return whole[0], whole[1], float(acc)


@exercise("what_it_refers_to.4", alias="pronoun.4")
def new_seed_ablation(answer: object) -> Feedback:
    """Seed :data:`NEW_SEED`'s best head by referent score (counted from 1) and the held-out accuracy with it
    mean-ablated: ``(layer, head, accuracy)``."""
    got = _triple(answer)
    if isinstance(got, Feedback):
        return got
    layer, head, acc = got
    mass, without, full = _new_seed()
    layers, heads = mass.shape
    best = divmod(int(mass.argmax()), heads)
    if (layer - 1, head - 1) != best:
        if (layer, head) == best:
            return Feedback(False, "Count the layer and head from 1, as the lesson's tables do.")
        if not (1 <= layer <= layers and 1 <= head <= heads):
            return Feedback(
                False, f"The model has layers 1–{layers} and heads 1–{heads}; ({layer}, {head}) is not one."
            )
        return Feedback(
            False,
            f"On seed {NEW_SEED}, layer {layer} head {head} puts {float(mass[layer - 1, head - 1]):.2f} of its weight "
            "on the referent; another head puts more. Score every head of the new model with your referent_scores.",
        )
    mean, zero = without["mean"][best], without["zero"][best]
    wrong = [
        (
            full,
            "That is the accuracy with every head working: measure inside "
            "`with ablated(model, layer - 1, head - 1, how='mean'):`.",
        ),
        (100 * mean, "Give the accuracy as a fraction from 0 to 1, not as a percentage."),
    ]
    if not math.isclose(zero, mean, abs_tol=0.01):
        wrong.insert(
            0, (zero, "That is zero-ablation (the head's output set to 0). Lesson 14's safer test is how='mean'.")
        )
    wrong += [
        (value, f"That is the accuracy without layer {lay + 1} head {h + 1}; ablate the head you found.")
        for (lay, h), value in without["mean"].items()
        if (lay, h) != best and not math.isclose(value, mean, abs_tol=0.01)
    ]
    feedback = compare_number(
        acc, mean, name=f"seed {NEW_SEED}'s held-out accuracy without that head", wrong=wrong, tol=0.01
    )
    if feedback.correct:
        return Feedback(
            True,
            f"{feedback.message} You found the head by score on a model the lesson never showed and measured it: "
            f"held-out accuracy {full:.2f} with every head, {mean:.2f} with it mean-ablated "
            f"({zero:.2f} zero-ablated).",
        )
    return feedback


def wrong_answers() -> dict[str, list[tuple[object, str | None]]]:
    """Per exercise, typical wrong answers and the mistake id each must reveal (None: a plain hint)."""
    words = MAP_SENTENCE.split()
    tops = {words[int(row.argmax())] for _, (_, _, row) in _map_rows()}
    referent = pronouns.referent(MAP_SENTENCE)
    mass, without, full = _new_seed()
    best = divmod(int(mass.argmax()), mass.shape[1])
    second = [w for w in words if w not in tops]
    return {
        "what_it_refers_to.1": [
            (lambda m, ids, p: _scores_variants(m, ids, p)["transposed"], "transposed"),
            (lambda m, ids, p: _scores_variants(m, ids, p)["sum"], None),
        ],
        "what_it_refers_to.2": [
            (referent if referent not in tops else second[0], None),
            ("dog", None),
            (3, None),
        ],
        "what_it_refers_to.3": [
            (lambda m, ids, t, p: m(ids)[:, pronouns.IT], None),
            (lambda m, ids, t, p: m(t)[:, pronouns.IT], None),
        ],
        "what_it_refers_to.4": [
            ((best[0], best[1], without["mean"][best]), None),
            ((best[0] + 1, best[1] + 1, full), None),
            ((best[0] + 1, best[1] + 1, 100 * without["mean"][best]), None),
        ],
    }
