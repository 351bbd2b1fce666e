"""Lesson 02 explorer: ``W_q``, ``W_k`` ``(d_in, d_k)`` and ``W_v`` ``(d_in, d_v)`` side by side."""

from __future__ import annotations

import html

import ipywidgets as W
from torch import Tensor

from ..examples import four_inputs, three_inputs
from ..formatting import matrix_decimals
from ..steps import Weights, init_weights
from ._core import Explorer, HeatmapView

__all__ = ["SOURCE_CHOICES", "WeightsExplorer"]

SOURCE_CHOICES: tuple[tuple[str, str], ...] = (
    ("document 001 (4×3)", "001"),
    ("document 000 (4×5)", "000"),
    ("random: init_weights", "random"),
)
_DOCUMENTS = {"000": four_inputs, "001": three_inputs}
NAMES = ("W_q", "W_k", "W_v")


class WeightsExplorer(Explorer):
    """The three weight matrices as heatmaps: a document's integers or seeded ``init_weights``.

    Args:
        source: ``"001"``, ``"000"`` (the documents' weights) or ``"random"``.
        d_in, d_k, d_v, seed: used when ``source="random"`` (``init_weights(d_in, d_k, d_v, seed=seed)``).

    Controls: ``source``, ``d_in``, ``d_k``, ``d_v``, ``seed``. Views: ``w_query``, ``w_key``, ``w_value``.
    """

    def __init__(self, source: str = "001", *, d_in: int = 4, d_k: int = 3, d_v: int = 3, seed: int = 123) -> None:
        super().__init__()
        if source not in {v for _, v in SOURCE_CHOICES}:
            raise ValueError(f"source must be one of {[v for _, v in SOURCE_CHOICES]}, got {source!r}")
        c = self.controls
        c["source"] = W.ToggleButtons(options=SOURCE_CHOICES, value=source, description="weights")
        c["d_in"] = W.IntSlider(value=d_in, min=1, max=8, description="d_in")
        c["d_k"] = W.IntSlider(value=d_k, min=1, max=8, description="d_k")
        c["d_v"] = W.IntSlider(value=d_v, min=1, max=8, description="d_v")
        c["seed"] = W.IntText(value=seed, description="seed", layout=W.Layout(width="180px"))
        self.shapes = W.HTML()
        self.weights = self._compute()
        for key, name, w in zip(("w_query", "w_key", "w_value"), NAMES, self.weights):
            self.views[key] = HeatmapView(
                w, decimals=matrix_decimals(w), title=_title(name, w), row_labels=_rows(w), col_labels=_cols(w)
            )
        self._sync_controls()
        self.observe_controls()
        self.widget = W.VBox(
            [
                c["source"],
                W.HBox([c["d_in"], c["d_k"], c["d_v"], c["seed"]]),
                W.HBox([v for v in self.views.values()]),
                self.shapes,
                self.message,
            ]
        )

    def _compute(self) -> Weights:
        c = self.controls
        source = c["source"].value
        if source == "random":
            return init_weights(c["d_in"].value, c["d_k"].value, c["d_v"].value, seed=int(c["seed"].value))
        return _DOCUMENTS[source].weights

    def _sync_controls(self) -> None:
        """Sliders are live for random weights; for a document they show its sizes, disabled."""
        random = self.controls["source"].value == "random"
        for name in ("d_in", "d_k", "d_v", "seed"):
            self.controls[name].disabled = not random
        if not random:
            w = self.weights
            sizes = {"d_in": w.w_query.shape[0], "d_k": w.w_query.shape[1], "d_v": w.w_value.shape[1]}
            for name, size in sizes.items():
                self.set_quietly(name, value=int(size))
        self.shapes.value = html.escape(
            " · ".join(f"{n} {tuple(w.shape)}" for n, w in zip(NAMES, self.weights))
            + "   (rows: d_in; columns: d_k, d_k, d_v)"
        )

    def update(self) -> None:
        """Recompute the weights for the current controls and redraw the three heatmaps."""
        weights = self._compute()
        self.weights = weights
        for view, name, w in zip(self.views.values(), NAMES, weights):
            view.update(w, row_labels=_rows(w), col_labels=_cols(w), title=_title(name, w), decimals=matrix_decimals(w))
        self._sync_controls()

    def summary(self) -> str:
        c = self.controls
        if c["source"].value == "random":
            return (
                f"WeightsExplorer(source='random', d_in={c['d_in'].value}, d_k={c['d_k'].value}, "
                f"d_v={c['d_v'].value}, seed={c['seed'].value})"
            )
        shapes = ", ".join(str(tuple(w.shape)) for w in self.weights)
        return f"WeightsExplorer(source={c['source'].value!r}, shapes=[{shapes}])"


def _title(name: str, w: Tensor) -> str:
    return f"{name}  ({w.shape[0]}×{w.shape[1]})"


def _rows(w: Tensor) -> list[str]:
    return [f"in {i + 1}" for i in range(w.shape[0])]


def _cols(w: Tensor) -> list[str]:
    return [f"out {j + 1}" for j in range(w.shape[1])]
