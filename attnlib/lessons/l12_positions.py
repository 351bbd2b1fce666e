"""Lesson 12 · Positions: its explorer and its exercise checkers.

Lesson 12 explorer: sinusoidal position encodings and the position-to-position similarity they give.

Lesson 12 exercises: what attention cannot see, and position encodings.

- ``positions.1`` by hand: ``E_5 · E_3`` with d_model = 4, from the distance alone: ``cos 2 + cos 0.02``.
- ``positions.2`` code: ``sinusoid(n_tokens, d_model)``, run on sizes the lesson never used.
- ``positions.3`` transfer: predict the outputs for "man bites dog" from those of "dog bites man"
  (no positions): the same rows, reordered.
- ``positions.4`` experiment: retrain the reverse model with learned positions and hand in the model;
  the checker measures what it does.
"""

from __future__ import annotations

import html
import math
from functools import lru_cache

import torch
from torch import Tensor

from .. import examples
from ..positions import LearnedPositions, SinusoidalPositions, apply_rope, rope_angles, sinusoidal_encoding
from ..pretrained import RECIPES, load
from ..show import ui
from ..show.explorer import Explorer, HeatmapView, Shown
from ..steps import attention, derive_qkv
from ..training import accuracy, train
from ..transformer import TinyTransformer
from ._calls import compare_call
from ._check import ATTNLIB, Feedback, compare_number, compare_tensor, exercise

__all__ = ["PositionsExplorer", "bites", "by_hand", "retrained", "reverse_model", "sinusoid", "wrong_answers"]


#: the most positions the explorer shows: every ``n_tokens`` shows the first rows of this many
MAX_POSITIONS = 64


@lru_cache(maxsize=64)
def _encodings(d_model: int, base: float) -> tuple[torch.Tensor, torch.Tensor]:
    """``P`` ``(MAX_POSITIONS, d_model)`` and ``P Pᵀ`` ``(MAX_POSITIONS, MAX_POSITIONS)``."""
    full = sinusoidal_encoding(MAX_POSITIONS, d_model, base=base)
    return full, full @ full.T


class PositionsExplorer(Explorer):
    """Slide a position or a frequency: the encoding ``P (n_tokens, d_model)`` and the similarity ``P Pᵀ``.

    Args:
        n_tokens: positions shown (2 … 64).
        d_model: size of each encoding (even, 2 … 64).
        position: the position outlined in both views.
        frequency: the column pair ``(2c, 2c + 1)`` outlined in the encoding; its speed is ``θ_c``.
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

    @property
    def encoding(self) -> torch.Tensor:
        """The encodings shown, ``(n_tokens, d_model)``."""
        return torch.from_numpy(self.views["encoding"].data)

    def compute(self, values) -> Shown:
        """``P`` with :func:`attnlib.positions.sinusoidal_encoding` and ``P Pᵀ``, the choices outlined.

        Both are the top-left blocks of the :data:`MAX_POSITIONS`-position ones (``P`` row by row is
        the same; ``P Pᵀ`` is computed once per ``(d_model, base)``), so every ``n_tokens`` shows slices
        of one result.
        """
        n, d, base = values["n_tokens"], values["d_model"], values["base"]
        full, similarity = _encodings(d, float(base))  # raises a clear error for a bad base
        pos, freq = min(values["position"], n - 1), min(values["frequency"], d // 2 - 1)
        theta = base ** (-2 * freq / d)
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
                    f"pair c = {freq}: θ_c = base^(−2c/d) = {theta:.4g} rad per position, wavelength 2π/θ_c = "
                    f"{2 * math.pi / theta:.4g} positions; P[{pos}] · P[j] depends only on {pos} − j"
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


def _bites() -> tuple[Tensor, Tensor]:
    """Outputs ``Z (3, 3)`` of "dog bites man" and of "man bites dog" (rows in each sentence's order)."""
    x = examples.three_inputs.inputs  # rows: dog, bites, man
    w = examples.three_inputs.projections
    z = attention(*derive_qkv(x, *w), scale=1.0)
    reordered = x[[2, 1, 0]]  # man bites dog
    return z, attention(*derive_qkv(reordered, *w), scale=1.0)


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


#: positions.1: E_5 · E_3 with d_model = 4 (two pairs, θ_0 = 1 and θ_1 = 10000^(−2/4) = 1/100)
DOT_I, DOT_J, DOT_D = 5, 3, 4


def _dot(theta_1: float = 0.01, distance: int = DOT_I - DOT_J) -> float:
    return math.cos(distance) + math.cos(distance * theta_1)


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
        "positions.1": [(_dot(theta_1=1.0), None), (_dot(distance=DOT_I + DOT_J), None), (math.cos(2), None)],
        "positions.2": [
            (lambda n, d: _wrong_sinusoid(n, d, swap=True), None),
            (lambda n, d: _wrong_sinusoid(n, d, half=True), None),
            (lambda n, d: _wrong_sinusoid(n, d, concat=True), None),
            (lambda n, d: _wrong_sinusoid(n, d, sign=1), None),
            (lambda n, d: _wrong_sinusoid(n, d, first=1), None),
        ],
        "positions.3": [(z, None), (z.flip(1), None)],
        "positions.4": [(reverse_model, None), ("learned", None), (load("reverse"), None)],
    }


@exercise("positions.1")
def by_hand(answer: object) -> Feedback:
    """E_5 · E_3 with d_model = 4: cos(2 θ_0) + cos(2 θ_1), from the distance 2 alone."""
    wrong = [
        (_dot(theta_1=1.0), "Both pairs do not turn at the same speed: θ_1 = 10000^(−2/4) = 1/100."),
        (_dot(distance=DOT_I + DOT_J), "The dot product depends on the distance i − j = 2, not on i + j."),
        (math.cos(2), "That is one pair; d_model = 4 has two, and each adds its cos((i − j) θ_c)."),
        (_dot(theta_1=0.1), "θ_c = 10000^(−2c/d_model): for c = 1 and d_model = 4 the exponent is −2/4, so 1/100."),
    ]
    return compare_number(answer, _dot(), name="E_5 · E_3 (d_model = 4)", wrong=wrong, tol=1e-3)


@exercise("positions.2")
def sinusoid(answer: object) -> Feedback:
    """A function ``sinusoid(n_tokens, d_model)`` → ``E (n_tokens, d_model)``, without sinusoidal_encoding."""
    n, d = 7, 6
    wrong = [
        (_wrong_sinusoid(n, d, swap=True), "sin and cos are swapped: even columns 2c hold sin(pos · θ_c)."),
        (
            _wrong_sinusoid(n, d, half=True),
            "The frequencies are off: θ_c = base^(−2c / d_model) for the pair (2c, 2c + 1); with the column "
            "index k = 2c that is base^(−k / d_model).",
        ),
        (
            _wrong_sinusoid(n, d, concat=True),
            "You put all the sines first and all the cosines after, [sin | cos] (tensor2tensor's layout). That "
            "works as well in a model, but this lesson interleaves them: column 2c is sin, column 2c + 1 cos.",
        ),
        (
            _wrong_sinusoid(n, d, sign=1),
            "Your exponent is positive: θ_c = base^(+2c/d) grows, so the last pairs spin fastest. The speeds "
            "shrink: θ_c = base^(−2c / d_model).",
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
    wrong = [
        (
            z,
            "Those are the outputs of 'dog bites man' in their own order. Without positions attention does not "
            "change them — it only reorders the rows with the tokens: row 1 of 'man bites dog' is 'man'.",
        ),
        (z.flip(1), "Reorder the rows (tokens), not the columns (features)."),
    ]
    return compare_tensor(
        answer,
        z_reordered,
        name="the outputs of 'man bites dog'",
        wrong=wrong,
        success="Z[[2, 1, 0]]: the same three vectors, reordered. 'dog' gets the same output in both sentences.",
    )


#: a handed-in model this close to a committed checkpoint (relative distance of all parameters) is that checkpoint,
#: perhaps trained a few steps more: 5 extra steps move the reverse checkpoint 0.067; the lesson's own 100-step
#: model is 0.10 away from it (the same seed starts the same trajectory), a fresh model 0.57.
COPY_DISTANCE = 0.05


def _parameters(model: torch.nn.Module) -> dict[str, Tensor]:
    return {k: v.detach().double() for k, v in model.state_dict().items() if v.is_floating_point()}


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


@exercise("positions.4")
def retrained(answer: object) -> Feedback:
    """A ``TinyTransformer`` with learned positions, trained on the reverse task: the checker measures it."""
    task = RECIPES["reverse"].task
    if answer is None or answer is Ellipsis:
        return Feedback(False, "Replace the ... with your trained model, then run the cell again.", tried=False)
    if not isinstance(answer, TinyTransformer):
        what = "a function: call it and hand in the model it returns" if callable(answer) else type(answer).__name__
        return Feedback(False, f"hand in the trained model (a TinyTransformer), not {what}.")
    if answer.vocab_size != task.vocab_size or answer.max_len < task.n_tokens or answer.causal:
        return Feedback(
            False,
            f"this model (vocab_size={answer.vocab_size}, max_len={answer.max_len}, causal={answer.causal}) does "
            f"not fit the reverse task (vocab_size={task.vocab_size}, {task.n_tokens} tokens, not causal).",
        )
    copied = _committed_checkpoint(answer)
    if copied is not None:
        return Feedback(
            False,
            f"This model is (or starts from) the course's trained checkpoint pretrained.load({copied!r}): its "
            "parameters are within 5 % of it, so the experiment was not run. Train your own from a fresh model "
            '(copy the training cell of "A model without positions" with positions="learned") and hand that in.',
        )
    was_training = answer.training
    with torch.no_grad():
        measured = accuracy(answer.eval(), task)
    answer.train(was_training)
    if not isinstance(answer.positions, LearnedPositions):
        kind = "no positions" if answer.positions is None else "sinusoidal positions"
        return Feedback(
            False,
            f'This model has {kind} (accuracy {measured:.2f}); the experiment asks for positions="learned".',
        )
    if measured < 0.9:
        return Feedback(
            False,
            f"It reverses {measured:.0%} of new sequences: train it longer (the lesson used {REVERSE_STEPS} steps).",
        )
    return Feedback(
        True,
        f"Learned positions: it reverses {measured:.0%} of new sequences, like the sinusoids. Trained, the table's "
        "rows moved far from their N(0, 0.02²) start: that is what broke the symmetry.",
    )
