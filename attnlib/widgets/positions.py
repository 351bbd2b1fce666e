"""Lesson 12 explorer: sinusoidal position encodings and the position-to-position similarity they give."""

from __future__ import annotations

import html
import math

import ipywidgets as W

from ..positions import sinusoidal_encoding
from ._core import Explorer, HeatmapView

__all__ = ["PositionsExplorer"]


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

    def __init__(self, n_tokens: int = 32, d_model: int = 16, *, position: int = 5, frequency: int = 0,
                 base: float = 10000.0) -> None:  # fmt: skip
        super().__init__()
        c = self.controls
        c["n_tokens"] = W.IntSlider(value=n_tokens, min=2, max=64, description="n_tokens")
        c["d_model"] = W.IntSlider(value=d_model, min=2, max=64, step=2, description="d_model")
        c["position"] = W.IntSlider(value=position, min=0, max=n_tokens - 1, description="position")
        c["frequency"] = W.IntSlider(value=frequency, min=0, max=d_model // 2 - 1, description="frequency c")
        c["base"] = W.FloatText(value=base, description="base")
        self.caption = W.HTML()
        self.views["encoding"] = HeatmapView(
            [[0.0]], title="position encodings P", xlabel="feature", ylabel="position", vmin=-1.0, vmax=1.0
        )
        self.views["similarity"] = HeatmapView([[0.0]], title="P Pᵀ", xlabel="position j", ylabel="position i")
        self.update()
        self.observe_controls()
        self.widget = W.VBox(
            [
                W.HBox([c["n_tokens"], c["d_model"], c["base"]]),
                W.HBox([c["position"], c["frequency"]]),
                self.message,
                W.HBox([self.views["encoding"], self.views["similarity"]]),
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
