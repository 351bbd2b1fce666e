"""Lesson 12 · Positions: its explorer and its exercise checkers.

Lesson 12 explorer: sinusoidal position encodings and the position-to-position similarity they give.

Lesson 12 exercises: what attention cannot see, and position encodings.

- ``positions.1`` by hand: the encoding of position 1 with d_model = 2: ``[sin 1, cos 1]``.
- ``positions.2`` code: ``sinusoid(n_tokens, d_model)``, run on sizes the lesson never used.
- ``positions.3`` transfer: predict the outputs for "man bites dog" from those of "dog bites man"
  (no positions): the same rows, reordered.
"""

from __future__ import annotations

import html
import math

import ipywidgets as widgets
import torch
from torch import Tensor

from .. import examples
from ..positions import sinusoidal_encoding
from ..show.explorer import Explorer, HeatmapView
from ..steps import attention, derive_qkv
from ._calls import compare_call
from ._check import Feedback, compare_tensor, exercise

__all__ = ["PositionsExplorer", "bites", "by_hand", "sinusoid", "wrong_answers"]


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
        c["n_tokens"] = widgets.IntSlider(value=n_tokens, min=2, max=64, description="n_tokens")
        c["d_model"] = widgets.IntSlider(value=d_model, min=2, max=64, step=2, description="d_model")
        c["position"] = widgets.IntSlider(value=position, min=0, max=n_tokens - 1, description="position")
        c["frequency"] = widgets.IntSlider(value=frequency, min=0, max=d_model // 2 - 1, description="frequency c")
        c["base"] = widgets.FloatText(value=base, description="base")
        self.caption = widgets.HTML()
        self.views["encoding"] = HeatmapView(
            [[0.0]], title="position encodings P", xlabel="feature", ylabel="position", vmin=-1.0, vmax=1.0
        )
        self.views["similarity"] = HeatmapView([[0.0]], title="P Pᵀ", xlabel="position j", ylabel="position i")
        self.update()
        self.observe_controls()
        self.widget = widgets.VBox(
            [
                widgets.HBox([c["n_tokens"], c["d_model"], c["base"]]),
                widgets.HBox([c["position"], c["frequency"]]),
                self.message,
                widgets.HBox([self.views["encoding"], self.views["similarity"]]),
                self.caption,
            ]
        )

    def update(self) -> None:
        """Recompute ``P`` with :func:`attnlib.positions.sinusoidal_encoding` and outline the choices."""
        c = self.controls
        n, d = c["n_tokens"].value, c["d_model"].value
        encoding = sinusoidal_encoding(n, d, base=c["base"].value)  # raises a clear error for a bad base
        self.set_quietly("position", max=n - 1, value=min(c["position"].value, n - 1))
        self.set_quietly("frequency", max=d // 2 - 1, value=min(c["frequency"].value, d // 2 - 1))
        pos, freq = c["position"].value, c["frequency"].value
        self.encoding = encoding
        similarity = encoding @ encoding.T
        self.views["encoding"].update(encoding, row_labels=range(n), col_labels=range(d)).highlight(
            rows=[pos], cols=[2 * freq, 2 * freq + 1][: d - 2 * freq]
        )
        self.views["similarity"].update(similarity, row_labels=range(n), col_labels=range(n)).highlight(rows=[pos])
        theta = c["base"].value ** (-2 * freq / d)
        self.caption.value = html.escape(
            f"pair c = {freq}: θ_c = base^(−2c/d) = {theta:.4g} rad per position, wavelength 2π/θ_c = "
            f"{2 * math.pi / theta:.4g} positions; P[{pos}] · P[j] depends only on {pos} − j"
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


def _wrong_sinusoid(n: int, d: int, *, swap: bool = False, half: bool = False) -> Tensor:
    pos = torch.arange(n, dtype=torch.float64)[:, None]
    rate = 10000 ** (-(torch.arange(0, d, 2, dtype=torch.float64) / (2 if half else 1)) / d)
    out = torch.empty(n, d, dtype=torch.float64)
    first, second = (torch.cos, torch.sin) if swap else (torch.sin, torch.cos)
    out[:, 0::2], out[:, 1::2] = first(pos * rate), second(pos * rate)
    return out


def wrong_answers() -> dict[str, list[tuple[object, str | None]]]:
    """Per exercise, typical wrong answers and the mistake id each must reveal (None: a plain hint)."""
    z, _ = _bites()
    return {
        "positions.1": [([math.cos(1), math.sin(1)], None), ([0.0, 1.0], None)],
        "positions.2": [
            (lambda n, d: _wrong_sinusoid(n, d, swap=True), None),
            (lambda n, d: _wrong_sinusoid(n, d, half=True), None),
        ],
        "positions.3": [(z, None), (z.flip(1), None)],
    }


@exercise("positions.1")
def by_hand(answer: object) -> Feedback:
    """Position 1, d_model = 2: one pair with θ_0 = 1, so ``[sin 1, cos 1]``."""
    wrong = [
        (torch.tensor([math.cos(1), math.sin(1)]), "Sine first: column 2c is sin(pos · θ_c), column 2c + 1 is cos."),
        (torch.tensor([0.0, 1.0]), "That is position 0 (sin 0, cos 0). Position 1 turns by θ_0 = 1 radian."),
    ]
    return compare_tensor(
        answer,
        sinusoidal_encoding(2, 2)[1],
        name="the encoding of position 1 (d_model = 2)",
        wrong=wrong,
        success="With d_model = 2 there is one pair, θ_0 = base⁰ = 1: the point (sin 1, cos 1) on a circle.",
    )


@exercise("positions.2")
def sinusoid(answer: object) -> Feedback:
    """A function ``sinusoid(n_tokens, d_model)`` → ``P (n_tokens, d_model)``, without sinusoidal_encoding."""
    n, d = 7, 6
    wrong = [
        (_wrong_sinusoid(n, d, swap=True), "sin and cos are swapped: even columns 2c hold sin(pos · θ_c)."),
        (
            _wrong_sinusoid(n, d, half=True),
            "The frequencies are off: θ_c = base^(−2c / d_model) for the pair (2c, 2c + 1); with the column "
            "index k = 2c that is base^(−k / d_model).",
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
