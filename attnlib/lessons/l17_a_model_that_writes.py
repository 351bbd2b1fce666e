"""Lesson 17 · A model that writes: its explorer, its fallbacks, its live loss curve and its four exercise checkers.

Lesson 17 explorer: a trained model's next-character probabilities after a prompt, under a temperature and top-k.

Lesson 17 exercises: the learner prepares the data, measures a baseline, writes the sampler and scores a head.
Each checker runs the learner's function on inputs the lesson never showed (another text, another
vocabulary, other seeds) and compares with :mod:`attnlib.language`.

- ``a_model_that_writes.1`` code: ``next_token_pairs(ids, starts, n_tokens)``: windows and their targets, one later.
- ``a_model_that_writes.2`` code: ``ngram_loss(train, held_out, vocab_size, order, k)``: the add-k n-gram baseline.
- ``a_model_that_writes.3`` code: ``sampling_probabilities(logits, temperature, top_k)``: what a token is drawn from.
- ``a_model_that_writes.4`` code: ``same_character_score(weights, ids)``: weight on earlier copies of a character.
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

import torch
from torch import Tensor

from .. import language, ngrams
from .._validate import AttentionInputError
from ..kv_cache import generate
from ..show import plots, ui
from ..show.explorer import Explorer, HeatmapView, Shown
from ..transformer import TinyTransformer
from ._check import ATTNLIB, Feedback, compare_number, compare_tensor, exercise, run_learner_code

__all__ = [
    "LiveCurve",
    "WriterExplorer",
    "ngram",
    "pairs",
    "pick_yours",
    "probabilities",
    "same_character",
    "stored_curve",
    "wrong_answers",
]

#: A short text none of the page's cells shows, in another alphabet than the play's capitals: the checkers'
#: "another text" (a nursery rhyme, public domain).
_RHYME = "hickory dickory dock, the mouse ran up the clock; the clock struck one, the mouse ran down. " * 3


def _other_ids(seed: int, n: int, vocab_size: int) -> Tensor:
    """Seeded ids with some structure (a random walk over the vocabulary), not the play's."""
    g = torch.Generator().manual_seed(seed)
    steps = torch.randint(-2, 3, (n,), generator=g)
    return steps.cumsum(0).remainder(vocab_size)


# ---------------------------------------------------------------- references (fallbacks)
def _reference_pairs(ids: Tensor, starts: Tensor, n_tokens: int) -> tuple[Tensor, Tensor]:
    windows = torch.stack([ids[s : s + n_tokens + 1] for s in starts.tolist()])
    return windows[:, :-1], windows[:, 1:]


REFERENCES: dict[str, Callable[..., Any]] = {
    "pairs": _reference_pairs,
    "ngram": ngrams.ngram_loss,
    "probabilities": language.sampling_probabilities,
    "same_character": language.same_character_score,
}


def pick_yours(**answers: object) -> tuple[dict[str, Callable[..., Any]], str]:
    """``({name: function}, sentence)``: each of yours that its exercise accepts, the reference otherwise.

    Names: ``pairs`` (17.1), ``ngram`` (17.2), ``probabilities`` (17.3), ``same_character`` (17.4).
    """
    checkers = {"pairs": pairs, "ngram": ngram, "probabilities": probabilities, "same_character": same_character}
    unknown = sorted(set(answers) - set(checkers))
    if unknown:
        raise TypeError(f"pick_yours takes {sorted(checkers)}, got {unknown}")
    chosen: dict[str, Callable[..., Any]] = {}
    said: list[str] = []
    for name, answer in answers.items():
        if checkers[name](answer) and callable(answer):  # an accepted answer is a function
            chosen[name] = answer
            said.append(f"your {name}")
        else:
            chosen[name] = REFERENCES[name]
            said.append(f"the reference {name} (not solved yet)")
    return chosen, "Using " + ", ".join(said) + "."


class LiveCurve:
    """The loss curve redrawn while a model trains, against the baselines (one display, updated in place).

    ``update(step, train_loss, held_out_loss=None)`` records a point; ``show()`` (every so many steps) redraws.
    ``figure()`` is the final curve, a :class:`attnlib.show.plots.Plot`.
    """

    def __init__(self, baselines: dict[str, float], *, every: int = 50) -> None:
        self.baselines = dict(baselines)
        self.every = every
        self.steps: list[int] = []
        self.train: list[float] = []
        self.held_out: dict[int, float] = {}
        self._handle = None

    def update(self, step: int, train_loss: float, held_out_loss: float | None = None) -> None:
        self.steps.append(step)
        self.train.append(float(train_loss))
        if held_out_loss is not None:
            self.held_out[step] = float(held_out_loss)
        if self.every and step % self.every == 0:
            self.show()

    def figure(self) -> plots.Plot:
        window = 20
        smooth = [
            sum(self.train[max(0, i - window + 1) : i + 1]) / len(self.train[max(0, i - window + 1) : i + 1])
            for i in range(len(self.train))
        ]
        fig = plots.training_curves(
            {"training loss (mean of 20 steps)": smooth}, title="loss per character", ylabel="cross-entropy (nats)"
        )
        ax = fig.fig.axes[0]
        if self.held_out:
            steps = sorted(self.held_out)
            ax.plot([s - 1 for s in steps], [self.held_out[s] for s in steps], "o-", label="held-out loss")
        for (name, value), style in zip(self.baselines.items(), (":", "--", "-.")):
            ax.axhline(value, linestyle=style, color="grey", linewidth=1)
            ax.annotate(f"{name} {value:.2f}", (0, value), textcoords="offset points", xytext=(4, 3), fontsize=8)
        ax.legend()
        return fig

    def show(self) -> None:
        from IPython.display import display

        fig = self.figure()
        if self._handle is None:
            self._handle = display(fig, display_id=True)
        else:
            self._handle.update(fig)


def stored_curve(
    points: Sequence[Mapping[str, float]], baselines: Mapping[str, float], *, title: str | None = None
) -> plots.Plot:
    """A training run's stored curve against counted baselines, by training step.

    ``points``: the run's checks in order, each ``{"step", "train_loss", "held_out_loss"}`` (as
    ``attnlib/checkpoints/writer_plays.json`` keeps them: the training loss is the mean since the previous check);
    ``baselines``: ``{name: held-out loss}``, each a grey horizontal line.
    """
    keys = ("step", "train_loss", "held_out_loss")
    if isinstance(points, str | bytes) or not isinstance(points, Sequence) or not points:
        raise AttentionInputError(f"points must be a non-empty list of checks with {keys}, got {points!r:.60}")
    for i, point in enumerate(points):
        if not isinstance(point, Mapping) or any(key not in point for key in keys):
            raise AttentionInputError(f"points[{i}] must be a mapping with the keys {keys}, got {point!r:.80}")
    steps = [int(point["step"]) for point in points]
    if steps != sorted(set(steps)):
        raise AttentionInputError(f"points must be in order of their steps, each once; got steps {steps}")
    if len(baselines) > 4:
        raise AttentionInputError(f"baselines: at most 4 lines, got {len(baselines)}: {sorted(baselines)}")
    from matplotlib.figure import Figure

    fig = Figure(figsize=(5.5, 3.4), layout="constrained")
    ax = fig.add_subplot()
    names = ("training loss (mean since the previous check)", "held-out loss")
    ax.plot(steps, [float(point["train_loss"]) for point in points], label=names[0])
    ax.plot(steps, [float(point["held_out_loss"]) for point in points], "o-", markersize=3, label=names[1])
    for (name, value), style in zip(baselines.items(), (":", "--", "-.", (0, (1, 4))), strict=False):
        ax.axhline(float(value), linestyle=style, color="grey", linewidth=1)
        ax.annotate(
            f"{name} {value:.2f}",
            (steps[-1], float(value)),
            textcoords="offset points",
            xytext=(-4, 3),
            ha="right",
            fontsize=8,
        )
    ax.set_xlabel("training step")
    ax.set_ylabel("cross-entropy (nats per character)")
    ax.set_title(title or "")
    ax.legend(fontsize=8)
    return plots.Plot(fig, f"<training curves: {', '.join(names)}>")


class WriterExplorer(Explorer):
    """What a trained character model would write next after a prompt, under a temperature and top-k.

    Args:
        model: a causal model (``TinyTransformer``) trained on ``characters``' ids.
        characters: the vocabulary, id ``i`` = ``characters[i]``.
        prompt, temperature, top_k: the initial state of the controls.
        shown: how many of the most likely characters the view shows.

    Controls: ``prompt`` (Enter to apply), ``temperature``, ``top_k`` (over :data:`TOP_K`, the initial k and
    the whole vocabulary). View: ``next`` ``(1, shown)``: the
    probabilities (:func:`attnlib.language.sampling_probabilities`) of the characters the model ranks highest.
    The caption draws one seeded continuation of 60 characters.
    """

    #: the k the top-k slider offers (besides the initial one and the whole vocabulary)
    TOP_K = (1, 2, 3, 5, 10, 20, 40)
    #: a state is 61 forward passes of the model: one the page drew is computed when the kernel is next idle
    lazy = True

    def __init__(
        self,
        model: TinyTransformer,
        characters: Sequence[str],
        *,
        prompt: str = "MACBETH.\n",
        temperature: float = 1.0,
        top_k: int = 10,
        shown: int = 12,
    ) -> None:
        super().__init__()
        self.model, self.characters = model.eval(), list(characters)
        self.ids = {c: i for i, c in enumerate(self.characters)}
        self.shown = min(shown, len(self.characters))
        c = self.controls
        c["prompt"] = ui.Text(value=prompt, description="prompt", continuous_update=False)
        c["temperature"] = ui.FloatSlider(value=temperature, min=0.1, max=2.0, step=0.1, description="T")
        n_chars = len(self.characters)
        if not 1 <= top_k <= n_chars:
            raise ValueError(f"top_k must be from 1 to the {n_chars} characters of the vocabulary, got {top_k}")
        # a slider over a few k (the page answers each of them without a kernel): 1 is greedy, all is plain sampling
        ks = sorted({k for k in self.TOP_K if k <= n_chars} | {top_k, n_chars})
        c["top_k"] = ui.SelectionSlider(options=ks, value=top_k, description="top-k")
        self.views["next"] = HeatmapView([[0.0]], xlabel="next character", ylabel="", decimals=2)
        self.texts["caption"] = ui.HTML()
        self.update()
        self.observe_controls()
        self.widget = ui.VBox(
            [c["prompt"], c["temperature"], c["top_k"], self.message, self.views["next"], self.texts["caption"]]
        )

    def _encode(self, text: str) -> Tensor:
        unknown = sorted(set(text) - set(self.ids))
        if not text or unknown:
            raise ValueError(f"prompt must be non-empty text of the play's characters; not in it: {unknown[:5]}")
        return torch.tensor([[self.ids[ch] for ch in text]])

    @torch.no_grad()
    def compute(self, values: Mapping[str, object]) -> Shown:
        """The likeliest next characters and one seeded continuation of 60 characters, for the prompt."""
        prompt = str(values["prompt"])
        ids = self._encode(prompt)
        temperature, top_k = float(cast(float, values["temperature"])), int(cast(int, values["top_k"]))
        n = self.model.max_len
        logits = self.model(ids[:, -n:])[0, -1]
        p = language.sampling_probabilities(logits, temperature, top_k)
        top = torch.topk(logits, self.shown).indices.tolist()  # by the model's own ranking: top-k's cut shows as 0
        labels = [{"\n": "⏎", " ": "␣"}.get(self.characters[i], self.characters[i]) for i in top]
        frame = self.views["next"].frame(
            [[float(p[i]) for i in top]],
            row_labels=["p"],
            col_labels=labels,
            title=f"the {self.shown} likeliest next characters (T = {temperature:.1f}, top-{top_k})",
        )
        generator = torch.Generator().manual_seed(0)
        out = generate(self.model, ids, 60, use_cache=False, temperature=temperature, top_k=top_k, generator=generator)
        written = "".join(self.characters[i] for i in out[0, ids.shape[1] :].tolist())
        return Shown(views={"next": frame}, texts={"caption": "<pre>" + html.escape(prompt + written) + "</pre>"})

    def summary(self) -> str:
        c = self.controls
        return (
            f"WriterExplorer(prompt={c['prompt'].value!r}, temperature={c['temperature'].value:.1f}, "
            f"top_k={c['top_k'].value})"
        )


# ---------------------------------------------------------------- the exercises
def wrong_answers() -> dict[str, list[tuple[object, str | None]]]:
    """Per exercise, typical wrong answers and the mistake id each must reveal (None: a plain hint)."""

    def unshifted(ids: Tensor, starts: Tensor, n_tokens: int) -> tuple[Tensor, Tensor]:
        windows = torch.stack([ids[s : s + n_tokens] for s in starts.tolist()])
        return windows, windows

    def shifted_back(ids: Tensor, starts: Tensor, n_tokens: int) -> tuple[Tensor, Tensor]:
        windows = torch.stack([ids[s : s + n_tokens + 1] for s in starts.tolist()])
        return windows[:, 1:], windows[:, :-1]

    def counted(
        train: Tensor, held_out: Tensor, vocab_size: int, order: int, k: float, *, total_k: float | None = None
    ) -> float:  # plain counts, as a learner writes them
        text, held = train.tolist(), held_out.tolist()
        pair: dict[tuple[int, ...], int] = {}
        context: dict[tuple[int, ...], int] = {}
        for t in range(order - 1, len(text)):
            pair[tuple(text[t - order + 1 : t + 1])] = pair.get(tuple(text[t - order + 1 : t + 1]), 0) + 1
            context[tuple(text[t - order + 1 : t])] = context.get(tuple(text[t - order + 1 : t]), 0) + 1
        total_k = k * vocab_size if total_k is None else total_k
        logs = [
            math.log(
                (pair.get(tuple(held[t - order + 1 : t + 1]), 0) + k)
                / (context.get(tuple(held[t - order + 1 : t]), 0) + total_k)
            )
            for t in range(order - 1, len(held))
        ]
        return -sum(logs) / len(logs)

    def add_one(train: Tensor, held_out: Tensor, vocab_size: int, order: int, k: float) -> float:
        return counted(train, held_out, vocab_size, order, 1.0)

    def context_of_n(train: Tensor, held_out: Tensor, vocab_size: int, order: int, k: float) -> float:
        return counted(train, held_out, vocab_size, order + 1, k)

    def k_not_times_vocabulary(train: Tensor, held_out: Tensor, vocab_size: int, order: int, k: float) -> float:
        return counted(train, held_out, vocab_size, order, k, total_k=k)

    def times_t(logits: Tensor, temperature: float = 1.0, top_k: int | None = None) -> Tensor:
        scaled = logits * temperature
        if top_k is not None:
            kth = torch.topk(scaled, top_k, dim=-1).values[..., -1:]
            scaled = scaled.masked_fill(scaled < kth, -math.inf)
        return torch.softmax(scaled, dim=-1)

    def no_top_k(logits: Tensor, temperature: float = 1.0, top_k: int | None = None) -> Tensor:
        return torch.softmax(logits / temperature, dim=-1)

    def not_renormalised(logits: Tensor, temperature: float = 1.0, top_k: int | None = None) -> Tensor:
        p = torch.softmax(logits / temperature, dim=-1)
        if top_k is not None:
            kth = torch.topk(p, top_k, dim=-1).values[..., -1:]
            p = torch.where(p < kth, torch.zeros_like(p), p)
        return p

    def with_self(weights: Tensor, ids: Tensor) -> float:
        same = (ids[:, :, None] == ids[:, None, :]) & torch.ones(ids.shape[1], ids.shape[1], dtype=torch.bool).tril()
        return float((weights * same).sum(-1).mean())

    def every_query(weights: Tensor, ids: Tensor) -> float:
        same = (ids[:, :, None] == ids[:, None, :]) & torch.ones(ids.shape[1], ids.shape[1], dtype=torch.bool).tril(-1)
        return float((weights * same).sum(-1).mean())

    return {
        "a_model_that_writes.1": [(unshifted, "next-token-misaligned"), (shifted_back, "next-token-misaligned")],
        "a_model_that_writes.2": [
            (add_one, None),
            (context_of_n, None),
            (k_not_times_vocabulary, None),
            (ngrams.ngram_loss, "library-function"),
        ],
        "a_model_that_writes.3": [(times_t, None), (no_top_k, None), (not_renormalised, None)],
        "a_model_that_writes.4": [
            (with_self, None),
            (every_query, None),
            (language.same_character_score, "library-function"),
        ],
    }


@exercise("a_model_that_writes.1")
def pairs(answer: object) -> Feedback:
    """17.1: ``next_token_pairs(ids, starts, n_tokens)`` on another text, other starts and another window."""
    vocabulary = language.Vocabulary(_RHYME)
    ids = vocabulary.encode(_RHYME)
    starts = torch.tensor([5, 0, 101, 47, len(ids) - 10])
    n_tokens = 9
    want_windows, want_targets = _reference_pairs(ids, starts, n_tokens)
    call = "your next_token_pairs(ids, starts, n_tokens)"
    got = run_learner_code(answer, ids.clone(), starts.clone(), n_tokens, name=call, write_it=[ATTNLIB])
    if isinstance(got, Feedback):
        return got
    if got is None:
        return Feedback(False, f"{call} returned None: return (windows, targets).", tried=False)
    if not isinstance(got, tuple | list) or len(got) != 2:
        return Feedback(False, f"{call} should return two tensors, (windows, targets), got {type(got).__name__}.")
    windows, targets = got
    if (
        isinstance(windows, Tensor)
        and isinstance(targets, Tensor)
        and windows.shape == targets.shape == want_windows.shape
    ):
        if torch.equal(windows.long(), want_targets) and torch.equal(targets.long(), want_windows):
            return Feedback(
                False,
                "windows and targets are swapped: each target is the character *after* the window's character there.",
                "next-token-misaligned",
            )
        if torch.equal(windows.long(), targets.long()):
            return Feedback(
                False,
                "the targets equal the windows: a model would learn to copy the character it "
                "already sees. Shift the targets one character later.",
                "next-token-misaligned",
            )
    checked = compare_tensor(windows, want_windows, name="the windows (one per start)")
    if not checked:
        return checked
    return compare_tensor(
        targets,
        want_targets,
        name="the targets",
        wrong=[
            (want_windows, "the targets equal the windows: shift them one character later.", "next-token-misaligned")
        ],
        success="Each row of targets is its window, one character later.",
    )


#: 17.2's cases: (train, held_out, vocab_size, order, k) on texts the page never shows.
def _ngram_cases() -> list[tuple[Tensor, Tensor, int, int, float]]:
    vocabulary = language.Vocabulary(_RHYME)
    rhyme = vocabulary.encode(_RHYME)
    walk = _other_ids(seed=2718, n=900, vocab_size=11)
    return [
        (rhyme[:200], rhyme[200:], len(vocabulary), 2, 1.0),
        (walk[:600], walk[600:], 13, 3, 0.1),  # two ids never occur: smoothing must still count them
        (rhyme[:150], rhyme[150:], len(vocabulary), 4, 0.05),  # contexts the training part never showed
        (walk[:500], walk[500:], 11, 1, 0.5),
    ]


@exercise("a_model_that_writes.2")
def ngram(answer: object) -> Feedback:
    """17.2: ``ngram_loss(train, held_out, vocab_size, order, k)`` on texts, orders and k the lesson never showed."""
    call = "your ngram_loss(train, held_out, vocab_size, order, k)"
    for train, held_out, vocab_size, order, k in _ngram_cases():
        want = ngrams.ngram_loss(train, held_out, vocab_size, order, k)
        got = run_learner_code(
            answer,
            train.clone(),
            held_out.clone(),
            vocab_size,
            order,
            k,
            name=call,
            write_it=[ATTNLIB, ngrams.ngram_loss, language.bigram_loss, language.unigram_loss],
        )
        if isinstance(got, Feedback):
            return got
        if isinstance(got, Tensor) and got.numel() == 1:
            got = float(got)
        if isinstance(got, float) and not math.isfinite(got):
            return Feedback(
                False,
                f"{call} is {got} for order={order}, k={k}: a token never counted after its context has probability 0. "
                "Add k to every count, and k·vocab_size to the context's total.",
            )
        wrong: list[tuple[float, str]] = [
            (math.log(vocab_size), "that is ln(vocab_size), the loss of uniform guessing: count what follows what."),
        ]
        if k != 1:
            wrong.append(
                (
                    ngrams.ngram_loss(train, held_out, vocab_size, order, 1.0),
                    f"that is add-one smoothing: add k={k} (the argument), not 1, to every count.",
                )
            )
        if order > 1:
            wrong.append(
                (
                    ngrams.ngram_loss(train, held_out, vocab_size, order - 1, k),
                    f"that is the ({order - 1})-gram loss: the context of an n-gram of order {order} is the "
                    f"order - 1 = {order - 1} tokens before the one predicted.",
                )
            )
        if len(held_out) > order + 1:
            wrong.append(
                (
                    ngrams.ngram_loss(train, held_out, vocab_size, order + 1, k),
                    f"that is the ({order + 1})-gram loss: the context is order - 1 = {order - 1} tokens, not order.",
                )
            )
        feedback = compare_number(
            got, want, name=f"the {order}-gram loss with k={k} ({want:.4f} nats here)", tol=1e-4, wrong=wrong
        )
        if not feedback:
            if feedback.mistake is None and not any(abs(float(got) - w) < 1e-4 for w, _ in wrong):  # type: ignore[arg-type]
                return Feedback(
                    False,
                    feedback.message + " The usual slip: the denominator."
                    " p(a' | ctx) = (count(ctx a') + k) / (count(ctx ·) + k·vocab_size),"
                    " where count(ctx ·) counts ctx only where a token follows it; score held_out[order - 1:].",
                )
            return feedback
    return Feedback(
        True,
        "That is the add-k n-gram baseline: counts of each context and what follows it, scored on the held-out "
        "tokens from order - 1 on.",
    )


@exercise("a_model_that_writes.3")
def probabilities(answer: object) -> Feedback:
    """17.3: ``sampling_probabilities(logits, temperature, top_k)`` on new logits, temperatures and k."""
    g = torch.Generator().manual_seed(1618)
    call = "your sampling_probabilities(logits, temperature, top_k)"
    for shape, temperature, top_k in (((3, 7), 0.7, 3), ((2, 5), 2.5, None), ((4, 11), 1.3, 1), ((6,), 0.4, 4)):
        logits = torch.randn(shape, generator=g) * 2
        want = language.sampling_probabilities(logits, temperature, top_k)
        got = run_learner_code(
            answer, logits.clone(), temperature, top_k, name=call, write_it=[language.sampling_probabilities]
        )
        if isinstance(got, Feedback):
            return got
        if got is None:
            return Feedback(False, f"{call} returned None: return the probabilities.", tried=False)
        wrong = []
        scaled = logits * temperature
        wrong.append(
            (
                torch.softmax(scaled, -1) if top_k is None else language.sampling_probabilities(scaled, 1.0, top_k),
                "you multiplied the logits by the temperature: divide them (T < 1 sharpens, T > 1 flattens).",
            )
        )
        if top_k is not None:
            wrong.append(
                (
                    torch.softmax(logits / temperature, -1),
                    f"every token still has a chance: keep only the top_k={top_k} highest logits (the others "
                    "get probability 0).",
                )
            )
            p = torch.softmax(logits / temperature, -1)
            kth = torch.topk(p, top_k, dim=-1).values[..., -1:]
            wrong.append(
                (
                    torch.where(p < kth, torch.zeros_like(p), p),
                    "the probabilities that are left do not sum to 1: set the other logits to -inf before the "
                    "softmax (or renormalise).",
                )
            )
        feedback = compare_tensor(
            got,
            want,
            name=f"the probabilities for logits of shape {shape}, T={temperature}, top_k={top_k}",
            wrong=wrong,
            atol=1e-5,
        )
        if not feedback:
            return feedback
    return Feedback(True, "That is what a token is drawn from: softmax(logits / T) over the top k.")


def _head_maps(seed: int) -> tuple[Tensor, Tensor]:
    """Causal maps ``(3, 32, 32)`` on the rhyme (not the play): seeded random scores, masked, softmaxed."""
    vocabulary = language.Vocabulary(_RHYME)
    ids = vocabulary.encode(_RHYME)[:96].view(3, 32)
    scores = torch.randn(3, 32, 32, generator=torch.Generator().manual_seed(seed)) * 3
    scores = scores.masked_fill(~torch.ones(32, 32, dtype=torch.bool).tril(), -math.inf)
    return torch.softmax(scores, dim=-1), ids


@exercise("a_model_that_writes.4")
def same_character(answer: object) -> Feedback:
    """17.4: ``same_character_score(weights, ids)`` on maps of a model and a text the lesson never showed."""
    call = "your same_character_score(weights, ids)"
    for seed in (31, 77):
        weights, ids = _head_maps(seed)
        want = language.same_character_score(weights, ids)
        got = run_learner_code(
            answer, weights.clone(), ids.clone(), name=call, write_it=[language.same_character_score]
        )
        if isinstance(got, Feedback):
            return got
        if got is None:
            return Feedback(False, f"{call} returned None: return the score (one number).", tried=False)
        same = ids[:, :, None] == ids[:, None, :]
        with_self = float((weights * (same & torch.ones(32, 32, dtype=torch.bool).tril())).sum(-1).mean())
        every = float((weights * (same & torch.ones(32, 32, dtype=torch.bool).tril(-1))).sum(-1).mean())
        feedback = compare_number(
            got,
            want,
            name="the same-character score",
            tol=1e-4,
            wrong=[
                (
                    with_self,
                    "you counted the query's own key: only *earlier* keys (j < i) holding its character count.",
                ),
                (
                    every,
                    "you averaged over every query: average only over the queries that have an earlier copy of "
                    "their character (the others cannot score).",
                ),
            ],
        )
        if not feedback:
            return feedback
    return Feedback(True, "That is the same-character score, over the queries that have an earlier copy.")
