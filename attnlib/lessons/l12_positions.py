"""Lesson 12 · Positions: its explorer and its exercise checkers.

Lesson 12 explorer: sinusoidal position encodings and the position-to-position similarity they give.

Lesson 12 exercises: what attention cannot see, and position encodings.

- ``positions.1`` by hand: ``PE_5 · PE_3`` with d_model = 4, from the distance alone: ``cos 2 + cos 0.02``.
- ``positions.2`` code: ``sinusoid(n_tokens, d_model)``, run on sizes the lesson never used.
- ``positions.3`` transfer: predict the outputs for "man bites dog" from those of "dog bites man"
  (no positions): the same rows, reordered.
- ``positions.4`` experiment: write ``train_reverse(model)``, which trains the reverse model with learned
  positions; the checker hands it a fresh model (a seed the page never used) and measures what comes back.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping
from functools import lru_cache
from typing import TypedDict, cast

import torch
from torch import Tensor

from .. import examples
from ..positions import LearnedPositions, SinusoidalPositions, apply_rope, rope_angles, sinusoidal_encoding
from ..pretrained import RECIPES, load
from ..show import ui
from ..show.explorer import Explorer, HeatmapView, Shown
from ..show.table import Part
from ..steps import attention, derive_qkv
from ..training import accuracy, train
from ..transformer import TinyTransformer
from ._calls import compare_call
from ._check import ATTNLIB, Feedback, Wrong, compare_number, compare_tensor, exercise, run_learner_code

__all__ = ["PositionsExplorer", "bites", "by_hand", "retrained", "reverse_model", "sinusoid", "wrong_answers"]


#: the most positions the explorer shows: every ``n_tokens`` shows the first rows of this many
MAX_POSITIONS = 64


@lru_cache(maxsize=64)
def _encodings(d_model: int, base: float) -> tuple[torch.Tensor, torch.Tensor]:
    """``P`` ``(MAX_POSITIONS, d_model)`` and ``P Pᵀ`` ``(MAX_POSITIONS, MAX_POSITIONS)``."""
    full = sinusoidal_encoding(MAX_POSITIONS, d_model, base=base)
    return full, full @ full.T


class PositionsValues(TypedDict):
    """What :meth:`PositionsExplorer.compute` reads: the controls' values."""

    n_tokens: int
    d_model: int
    position: int
    frequency: int
    base: float


class PositionsExplorer(Explorer):
    """Slide a position or a frequency: the encoding ``P (n_tokens, d_model)`` and the similarity ``P Pᵀ``.

    Args:
        n_tokens: positions shown (2 … 64).
        d_model: size of each encoding (even, 2 … 64).
        position: the position outlined in both views.
        frequency: the column pair ``(2c, 2c + 1)`` outlined in the encoding; its speed is ``ω_c``.
        base: the wavelength scale (> 1; the paper's 10 000).

    Controls: ``n_tokens``, ``d_model``, ``position``, ``frequency``, ``base``. Views: ``encoding``
    (rows are positions, columns the features) and ``similarity`` (``P_i · P_j``: constant along each
    diagonal, since it depends only on ``i − j``).
    """

    def __init__(
        self, n_tokens: int = 32, d_model: int = 16, *, position: int = 5, frequency: int = 0, base: float = 10000.0
    ) -> None:
        super().__init__()
        c = self.controls
        c["n_tokens"] = ui.IntSlider(value=n_tokens, min=2, max=MAX_POSITIONS, description="n_tokens")
        c["d_model"] = ui.IntSlider(value=d_model, min=2, max=64, step=2, description="d_model")
        c["position"] = ui.IntSlider(value=position, min=0, max=n_tokens - 1, description="position")
        c["frequency"] = ui.IntSlider(value=frequency, min=0, max=d_model // 2 - 1, description="frequency c")
        c["base"] = ui.FloatText(value=base, description="base")
        self.caption = self.texts["caption"] = ui.HTML()
        self.views["encoding"] = HeatmapView(
            None, title="position encodings P", xlabel="feature", ylabel="position", vmin=-1.0, vmax=1.0
        )
        self.views["similarity"] = HeatmapView(None, title="P Pᵀ", xlabel="position j", ylabel="position i")
        self.update()
        self.observe_controls()
        self.widget = ui.VBox(
            [
                ui.HBox([c["n_tokens"], c["d_model"], c["base"]]),
                ui.HBox([c["position"], c["frequency"]]),
                self.message,
                ui.HBox([self.views["encoding"], self.views["similarity"]]),
                self.caption,
            ]
        )

    def control_grid(self) -> dict[str, list[object]]:
        """Every size, and every position and frequency any size allows (the table looks clamps up in these)."""
        return {
            "n_tokens": list(range(2, MAX_POSITIONS + 1)),
            "d_model": list(range(2, 65, 2)),
            "position": list(range(MAX_POSITIONS)),
            "frequency": list(range(32)),
        }

    def table_parts(self) -> list[Part]:
        """Each output keyed by the controls it reads: 1.1 M states as six tables of at most 4 032 rows.

        The matrices depend on ``(n_tokens, d_model)`` only and are blocks of the 64-position result (stored
        once per ``d_model``); the outlines on the position and the frequency; the caption on ``d_model`` and
        the frequency (it states i − j for every position: the outline shows which); the clamped position and
        frequency on the size they are clamped to. The matrices come in a chunk per ``d_model``.
        """
        largest = {"n_tokens": MAX_POSITIONS, "d_model": 64}
        views = ("views/encoding:look", "views/encoding:matrix", "views/similarity:look", "views/similarity:matrix")
        return [
            Part(("n_tokens", "d_model"), views, {"position": 0, "frequency": 0}, chunk="d_model"),
            Part(("position", "frequency"), ("views/encoding:marks",), largest),
            Part(("position",), ("views/similarity:marks",), largest),
            Part(("d_model", "frequency"), ("texts/caption",), largest),
            Part(("n_tokens", "position"), ("controls/position",), largest),
            Part(("d_model", "frequency"), ("controls/frequency",), largest),
        ]

    @property
    def encoding(self) -> torch.Tensor:
        """The encodings shown, ``(n_tokens, d_model)``."""
        return torch.from_numpy(self.views["encoding"].data)

    def compute(self, values: Mapping[str, object]) -> Shown:
        """``P`` with :func:`attnlib.positions.sinusoidal_encoding` and ``P Pᵀ``, the choices outlined.

        Both are the top-left blocks of the :data:`MAX_POSITIONS`-position ones (``P`` row by row is
        the same; ``P Pᵀ`` is computed once per ``(d_model, base)``), so every ``n_tokens`` shows slices
        of one result.
        """
        values = cast(PositionsValues, values)
        n, d, base = values["n_tokens"], values["d_model"], values["base"]
        full, similarity = _encodings(d, float(base))  # raises a clear error for a bad base
        pos, freq = min(values["position"], n - 1), min(values["frequency"], d // 2 - 1)
        omega = base ** (-2 * freq / d)
        return Shown(
            views={
                "encoding": self.views["encoding"].frame(
                    full[:n], row_labels=range(n), col_labels=range(d), rows=[pos], cols=[2 * freq, 2 * freq + 1]
                ),
                "similarity": self.views["similarity"].frame(
                    similarity[:n, :n], row_labels=range(n), col_labels=range(n), rows=[pos]
                ),
            },
            texts={
                "caption": html.escape(
                    f"pair c = {freq}: ω_c = base^(−2c/d) = {omega:.4g} rad per position, wavelength 2π/ω_c = "
                    f"{2 * math.pi / omega:.4g} positions; PE_i · PE_j depends only on i − j"
                )
            },
            controls={"position": {"max": n - 1, "value": pos}, "frequency": {"max": d // 2 - 1, "value": freq}},
        )

    def summary(self) -> str:
        c = self.controls
        return (
            f"PositionsExplorer(n_tokens={c['n_tokens'].value}, d_model={c['d_model'].value}, "
            f"position={c['position'].value}, frequency={c['frequency'].value})"
        )


#: ``positions.3``: "dog bites man" as three of document 001's inputs, with 001's weights
DOG_BITES_MAN = ("dog", "bites", "man")


def _bites(*, scaled: bool = False) -> tuple[Tensor, Tensor]:
    """Outputs ``Z (3, 3)`` of "dog bites man" and of "man bites dog" (rows in each sentence's order), unscaled as
    document 001 computes them (``scaled``: divided by √d_k, the mistake the hint names)."""
    x = examples.three_inputs.inputs  # rows: dog, bites, man
    w = examples.three_inputs.projections
    scale = None if scaled else 1.0
    z = attention(*derive_qkv(x, *w), scale=scale)
    reordered = x[[2, 1, 0]]  # man bites dog
    return z, attention(*derive_qkv(reordered, *w), scale=scale)


def _wrong_sinusoid(
    n: int, d: int, *, swap: bool = False, half: bool = False, concat: bool = False, sign: int = -1, first: int = 0
) -> Tensor:
    pos = torch.arange(first, first + n, dtype=torch.float64)[:, None]
    rate = 10000 ** (sign * (torch.arange(0, d, 2, dtype=torch.float64) / (2 if half else 1)) / d)
    out = torch.empty(n, d, dtype=torch.float64)
    one, other = (torch.cos, torch.sin) if swap else (torch.sin, torch.cos)
    if concat:
        return torch.cat([one(pos * rate), other(pos * rate)], dim=-1)
    out[:, 0::2], out[:, 1::2] = one(pos * rate), other(pos * rate)
    return out


#: positions.1: PE_5 · PE_3 with d_model = 4 (two pairs, ω_0 = 1 and ω_1 = 10000^(−2/4) = 1/100)
DOT_I, DOT_J, DOT_D = 5, 3, 4


def _dot(omega_1: float = 0.01, distance: int = DOT_I - DOT_J) -> float:
    return math.cos(distance) + math.cos(distance * omega_1)


#: what positions.2 asks the learner to write: the library's encodings
WRITE_IT = (ATTNLIB, sinusoidal_encoding, SinusoidalPositions.forward, rope_angles, apply_rope)
REVERSE_STEPS = 100


def reverse_model(positions: str, *, steps: int = REVERSE_STEPS, progress: bool = True) -> TinyTransformer:
    """Lesson 13's reverse model (1 layer, 1 head, d_model 32) with ``positions``, trained ``steps`` steps."""
    recipe = RECIPES["reverse"]
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(recipe.seed)
        model = TinyTransformer(**{**recipe.config, "positions": positions})
    train(model, recipe.task, steps=steps, lr=recipe.lr, seed=recipe.seed, progress=progress)
    return model.eval()


def wrong_answers() -> dict[str, list[tuple[object, str | None]]]:
    """Per exercise, typical wrong answers and the mistake id each must reveal (None: a plain hint)."""
    z, _ = _bites()
    return {
        "positions.1": [(_dot(omega_1=1.0), None), (_dot(distance=DOT_I + DOT_J), None), (math.cos(2), None)],
        "positions.2": [
            (lambda n, d: _wrong_sinusoid(n, d, swap=True), None),
            (lambda n, d: _wrong_sinusoid(n, d, half=True), None),
            (lambda n, d: _wrong_sinusoid(n, d, concat=True), None),
            (lambda n, d: _wrong_sinusoid(n, d, sign=1), None),
            (lambda n, d: _wrong_sinusoid(n, d, first=1), None),
        ],
        "positions.3": [(z, None), (z.flip(1), None)],
        "positions.4": [
            (lambda model: load("reverse"), None),
            (load("reverse"), None),
            (lambda model: model, None),
            ("learned", None),
        ],
    }


@exercise("positions.1")
def by_hand(answer: object) -> Feedback:
    """PE_5 · PE_3 with d_model = 4: cos(2 ω_0) + cos(2 ω_1), from the distance 2 alone."""
    wrong = [
        (_dot(omega_1=1.0), "Both pairs do not turn at the same speed: ω_1 = 10000^(−2/4) = 1/100."),
        (_dot(distance=DOT_I + DOT_J), "The dot product depends on the distance i − j = 2, not on i + j."),
        (math.cos(2), "That is one pair; d_model = 4 has two, and each adds its cos((i − j) ω_c)."),
        (_dot(omega_1=0.1), "ω_c = 10000^(−2c/d_model): for c = 1 and d_model = 4 the exponent is −2/4, so 1/100."),
    ]
    return compare_number(answer, _dot(), name="PE_5 · PE_3 (d_model = 4)", wrong=wrong, tol=1e-3)


@exercise("positions.2")
def sinusoid(answer: object) -> Feedback:
    """A function ``sinusoid(n_tokens, d_model)`` → ``PE (n_tokens, d_model)``, without sinusoidal_encoding."""
    n, d = 7, 6
    wrong = [
        (_wrong_sinusoid(n, d, swap=True), "sin and cos are swapped: even columns 2c hold sin(pos · ω_c)."),
        (
            _wrong_sinusoid(n, d, half=True),
            "The frequencies are off: ω_c = base^(−2c / d_model) for the pair (2c, 2c + 1); with the column "
            "index k = 2c that is base^(−k / d_model).",
        ),
        (
            _wrong_sinusoid(n, d, concat=True),
            "You put all the sines first and all the cosines after, [sin | cos] (tensor2tensor's layout). That "
            "works as well in a model, but this lesson interleaves them: column 2c is sin, column 2c + 1 cos.",
        ),
        (
            _wrong_sinusoid(n, d, sign=1),
            "Your exponent is positive: ω_c = base^(+2c/d) grows, so the last pairs spin fastest. The speeds "
            "shrink: ω_c = base^(−2c / d_model).",
        ),
        (
            _wrong_sinusoid(n, d, first=1),
            "Your positions start at 1; the first token is position 0, whose encoding is (0, 1, 0, 1, …).",
        ),
    ]
    return compare_call(
        answer,
        (n, d),
        call="your sinusoid(n_tokens, d_model)",
        expected=sinusoidal_encoding(n, d),
        name="sinusoid(7, 6)",
        wrong=wrong,
        success="It matches attnlib's sinusoidal_encoding on new sizes.",
        write_it=WRITE_IT,
    )


@exercise("positions.3")
def bites(answer: object) -> Feedback:
    """The outputs of "man bites dog" (rows in its order), predicted from those of "dog bites man"."""
    z, z_reordered = _bites()
    wrong: list[Wrong] = [
        (
            z,
            "Those are the outputs of 'dog bites man' in their own order. Without positions attention does not "
            "change them — it only reorders the rows with the tokens: row 1 of 'man bites dog' is 'man'.",
        ),
        (z.flip(1), "Reorder the rows (tokens), not the columns (features)."),
        (
            _bites(scaled=True)[1],
            "Those are scaled outputs (scores divided by √d_k, the default of attention()): the exercise takes "
            "001's weights unscaled, as document 001 computes them. Use scale=1.0.",
            "scale-forgotten",
        ),
        (
            _bites(scaled=True)[0],
            "Those are the scaled outputs of 'dog bites man' in their own order: use scale=1.0 (001 does not scale) "
            "and reorder the rows with the tokens.",
        ),
    ]
    return compare_tensor(
        answer,
        z_reordered,
        name="the outputs of 'man bites dog'",
        wrong=wrong,
        success="Z[[2, 1, 0]]: the same three vectors, reordered. 'dog' gets the same output in both sentences.",
    )


#: a model this close to a committed checkpoint (relative distance of all parameters) is that checkpoint, perhaps
#: trained a few steps more: 5 extra steps move the reverse checkpoint 0.067, a fresh model is 0.57 away.
COPY_DISTANCE = 0.05
#: the seed of the fresh model the checker hands to the learner's function: one this page never uses
FRESH_SEED = 2718
#: a trained model keeps a trace of its start: the correlation of its matrices with their initial values is about
#: 0.83 after the lesson's 100 steps (seeds 1234, 98765, 31337: 0.834, 0.832, 0.845); a model that did not start
#: there (the checkpoint trained 10 steps more, the lesson's own reverse_model) shows -0.03
DESCENT = 0.5


def _parameters(model: torch.nn.Module) -> dict[str, Tensor]:
    return {k: v.detach().double().clone() for k, v in model.state_dict().items() if v.is_floating_point()}


def _committed_checkpoint(model: TinyTransformer) -> str | None:
    """The name of the committed checkpoint ``model`` is a near-copy of, if any."""
    mine = _parameters(model)
    for name, recipe in RECIPES.items():
        if not recipe.path.exists():
            continue
        theirs = _parameters(load(name))
        if theirs.keys() != mine.keys() or any(theirs[k].shape != mine[k].shape for k in mine):
            continue
        gap = torch.cat([(mine[k] - theirs[k]).flatten() for k in mine]).norm()
        size = torch.cat([theirs[k].flatten() for k in mine]).norm()
        if float(gap) <= COPY_DISTANCE * float(size):
            return name
    return None


def _correlation(trained: dict[str, Tensor], start: dict[str, Tensor]) -> float:
    """The correlation of the matrices of ``trained`` with those of ``start`` (the random part of the start)."""
    keys = [k for k in start if start[k].dim() >= 2 and k in trained and trained[k].shape == start[k].shape]
    if not keys:
        return 0.0
    x = torch.cat([trained[k].flatten() for k in keys])
    y = torch.cat([start[k].flatten() for k in keys])
    x, y = x - x.mean(), y - y.mean()
    return float(x @ y / (x.norm() * y.norm()).clamp_min(1e-12))


def _fresh_model() -> TinyTransformer:
    """Lesson 13's reverse model with learned positions, freshly initialised on :data:`FRESH_SEED`."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(FRESH_SEED)
        return TinyTransformer(**{**RECIPES["reverse"].config, "positions": "learned"})


@exercise("positions.4")
def retrained(answer: object) -> Feedback:
    """A function ``train_reverse(model)`` that trains the fresh model it is given on the reverse task and returns
    it: the checker hands it a model made on a seed the page never used, and measures what comes back."""
    task = RECIPES["reverse"].task
    if isinstance(answer, torch.nn.Module):
        return Feedback(
            False,
            "Hand in your training function, not a model: the checker gives it a fresh model of its own (on a seed "
            "this page never used) and measures the model your function trained from that start.",
        )
    model = _fresh_model()
    start = _parameters(model)
    name = "your train_reverse(model)"
    with torch.random.fork_rng(devices=[]):
        result = run_learner_code(answer, model, name=name)
    changed = any(not torch.equal(v, start[k]) for k, v in _parameters(model).items())
    if isinstance(result, Feedback):
        if not (result.tried is False and callable(answer) and changed):
            return result
        result = model  # trained in place, returned nothing: fine
    if not isinstance(result, TinyTransformer):
        return Feedback(False, f"{name} returned {type(result).__name__}; return the model it trained.")
    if result.vocab_size != task.vocab_size or result.max_len < task.n_tokens or result.causal:
        return Feedback(
            False,
            f"{name} returned a model (vocab_size={result.vocab_size}, max_len={result.max_len}, causal="
            f"{result.causal}) that does not fit the reverse task (vocab_size={task.vocab_size}, {task.n_tokens} "
            "tokens, not causal): train and return the model it is given.",
        )
    copied = _committed_checkpoint(result)
    if copied is not None:
        return Feedback(
            False,
            f"{name} returned the course's trained checkpoint pretrained.load({copied!r}) (its parameters are within "
            "5 % of it), so nothing was trained. Train the model your function is given, from its fresh start.",
        )
    descent = _correlation(_parameters(result), start)
    if descent < DESCENT:
        return Feedback(
            False,
            f"{name} returned a model that did not start from the one it was given: its matrices keep nothing of "
            f"that model's start (correlation {descent:.2f}; 100 steps of training keep about 0.8). Loading a "
            "checkpoint or building a model of your own is not the experiment: train the model passed in.",
        )
    was_training = result.training
    with torch.no_grad():
        measured = accuracy(result.eval(), task)
    result.train(was_training)
    if not isinstance(result.positions, LearnedPositions):
        kind = "no positions" if result.positions is None else "sinusoidal positions"
        return Feedback(
            False,
            f"The model now has {kind} (accuracy {measured:.2f}); the experiment trains the one it is given, with "
            'positions="learned".',
        )
    if not changed and result is model:
        return Feedback(False, f"{name} returned the model untrained (it reverses {measured:.0%} of new sequences).")
    if measured < 0.9:
        return Feedback(
            False,
            f"It reverses {measured:.0%} of new sequences: train it longer or at the recipe's learning rate "
            f"(the lesson used {REVERSE_STEPS} steps at lr={RECIPES['reverse'].lr:g}).",
        )
    return Feedback(
        True,
        f"Learned positions, trained from a fresh start your function had never seen: it reverses {measured:.0%} "
        "of new sequences, like the sinusoids. Trained, the table's rows moved far from their N(0, 0.02²) start: "
        "that is what broke the symmetry.",
    )
