"""Lesson 08 explorer: why divide by sqrt(d_k) — score spread and softmax saturation as d_k grows."""

from __future__ import annotations

import ipywidgets as W

from ..examples import random_qk
from ..saturation import ScalingStats, scaling_stats
from ._core import Explorer, HeatmapView

__all__ = ["ScalingExplorer", "ScalingStats", "random_qk", "scaling_stats"]


class ScalingExplorer(Explorer):
    """Random queries and keys of size ``d_k``: the softmax of ``Q Kᵀ`` unscaled and scaled side by side.

    Controls: ``d_k`` (slider) and ``seed``. Views: ``unscaled`` (``softmax(Q Kᵀ)``) and
    ``scaled`` (``softmax(Q Kᵀ / sqrt(d_k))``), both ``(n_tokens, n_tokens)`` with colours fixed to
    [0, 1]. ``stats`` gives the measured standard deviation of the scores and the mean largest
    weight per row for both.
    """

    def __init__(self, d_k: int = 64, seed: int = 0, n_tokens: int = 6):
        super().__init__()
        self.n_tokens = n_tokens
        self.controls["d_k"] = W.IntSlider(value=d_k, min=1, max=512, description="d_k")
        self.controls["seed"] = W.IntSlider(value=seed, min=0, max=20, description="seed")
        stats = scaling_stats(d_k, n_tokens=n_tokens, seed=seed)
        labels = [f"q{i + 1}" for i in range(n_tokens)]
        key_labels = [f"k{j + 1}" for j in range(n_tokens)]
        kw = dict(row_labels=labels, col_labels=key_labels, vmin=0.0, vmax=1.0, decimals=2)
        self.views["unscaled"] = HeatmapView(stats.weights, title="softmax(Q Kᵀ)", **kw)
        self.views["scaled"] = HeatmapView(stats.scaled_weights, title="softmax(Q Kᵀ / √d_k)", **kw)
        self.stats = W.HTML()
        self._show(stats)
        self.observe_controls()
        self.widget = W.VBox(
            [
                W.HBox([self.controls["d_k"], self.controls["seed"]]),
                self.message,
                W.HBox([self.views["unscaled"], self.views["scaled"]]),
                self.stats,
            ]
        )

    def _show(self, stats: ScalingStats) -> None:
        d_k = self.controls["d_k"].value
        self.stats.value = (
            f"<table><tr><th></th><th>std of scores</th><th>mean max weight</th></tr>"
            f"<tr><td>unscaled</td><td>{stats.std:.3f}</td><td>{stats.max_weight:.3f}</td></tr>"
            f"<tr><td>scaled</td><td>{stats.scaled_std:.3f}</td><td>{stats.scaled_max_weight:.3f}</td></tr></table>"
            f"<small>theory: std √d_k = {d_k**0.5:.3f} unscaled, 1 scaled; "
            f"uniform weights would be {1 / self.n_tokens:.3f}, one-hot 1</small>"
        )

    def current(self) -> ScalingStats:
        """The statistics for the current slider values."""
        return scaling_stats(self.controls["d_k"].value, n_tokens=self.n_tokens, seed=self.controls["seed"].value)

    def update(self) -> None:
        stats = self.current()
        self.views["unscaled"].update(stats.weights)
        self.views["scaled"].update(stats.scaled_weights)
        self._show(stats)

    def summary(self) -> str:
        c = self.controls
        return f"ScalingExplorer(d_k={c['d_k'].value}, seed={c['seed'].value}, n_tokens={self.n_tokens})"
