"""Lesson 11 explorer: the attention map of each head, one at a time or all side by side."""

from __future__ import annotations

import ipywidgets as W
import torch

from .. import examples
from ..modules import MultiHeadAttention, causal_mask
from ..viz import heatmap_png
from ._core import Explorer, HeatmapView

__all__ = ["MultiHeadExplorer", "multihead_inputs"]

ALL = "all"


def multihead_inputs(num_heads: int, *, seed: int = 0) -> tuple[torch.Tensor, list[str], MultiHeadAttention]:
    """003's embedded sentence ``(8, 16)``, its tokens and a seeded ``MultiHeadAttention(16, num_heads)``."""
    x = examples.translate.run().embedded
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        module = MultiHeadAttention(x.shape[-1], num_heads)
    return x, examples.translate.tokens, module


class MultiHeadExplorer(Explorer):
    """Per-head weights ``(num_heads, n, n)`` of a seeded ``MultiHeadAttention`` on 003's sentence.

    Controls: ``head`` (one head, or ``"all"`` for a grid of every head), ``scaled``
    (``1/sqrt(d_head)``), ``causal`` (token ``i`` attends only to ``0 … i``). Colours run from 0 to
    each map's largest weight, so that the nearly uniform untrained heads still show a pattern.
    """

    def __init__(self, num_heads: int = 4, *, head: int | str = 0, scaled: bool = True, causal: bool = False):
        super().__init__()
        self.x, self.tokens, self.module = multihead_inputs(num_heads)
        self.num_heads = num_heads
        options = [(f"head {h + 1}", h) for h in range(num_heads)] + [("all heads", ALL)]
        self.controls = {
            "head": W.Dropdown(options=options, value=head, description="head"),
            "scaled": W.ToggleButton(value=scaled, description="scale by √d_head"),
            "causal": W.ToggleButton(value=causal, description="causal mask"),
        }
        weights = self.weights()
        labels = self.tokens
        first = 0 if head == ALL else head
        self.views = {
            "head": HeatmapView(
                weights[first],
                row_labels=labels,
                col_labels=labels,
                title=self._title(first),
                xlabel="key",
                ylabel="query",
                vmin=0.0,
                vmax=1.0,  # weights: one scale for every head, so near-uniform heads look near-uniform
            )
        }
        for h in range(num_heads):  # the grid of every head: one small view each
            self.views[f"head {h + 1}"] = HeatmapView(
                weights[h],
                row_labels=labels,
                col_labels=labels,
                title=f"head {h + 1}",
                vmin=0.0,
                vmax=1.0,
                cell_size=22,
            )
        self.grid = W.GridBox(
            [self.views[f"head {h + 1}"] for h in range(num_heads)],
            layout=W.Layout(grid_template_columns=f"repeat({2 if num_heads <= 4 else 4}, max-content)"),
        )
        self.observe_controls()
        self._show_selected()
        self.widget = W.VBox(
            [
                W.HBox([self.controls["head"], self.controls["scaled"], self.controls["causal"]]),
                self.message,
                self.views["head"],
                self.grid,
            ]
        )

    def weights(self) -> torch.Tensor:
        """The current per-head weights, shape ``(num_heads, n_tokens, n_tokens)``."""
        mask = causal_mask(len(self.tokens)) if self.controls["causal"].value else None
        return self.module.intermediates(self.x, mask=mask, scaled=self.controls["scaled"].value).weights

    def _title(self, head: int) -> str:
        parts = ["scaled" if self.controls["scaled"].value else "unscaled"]
        if self.controls["causal"].value:
            parts.append("causal")
        return f"head {head + 1} of {self.num_heads} ({', '.join(parts)})"

    def _show_selected(self) -> None:
        all_heads = self.controls["head"].value == ALL
        self.views["head"].layout.display = "none" if all_heads else None
        self.grid.layout.display = None if all_heads else "none"

    def snapshot_png(self) -> bytes:
        """Static fallback: the chosen head, or (``"all"``) every head side by side."""
        if self.controls["head"].value == ALL:
            return heatmap_png([self.views[f"head {h + 1}"].spec() for h in range(self.num_heads)])
        return heatmap_png([self.views["head"].spec()])

    def update(self) -> None:
        weights = self.weights()
        head = self.controls["head"].value
        if head != ALL:
            self.views["head"].update(weights[head], title=self._title(head))
        else:
            for h in range(self.num_heads):
                self.views[f"head {h + 1}"].update(weights[h])
        self._show_selected()

    def summary(self) -> str:
        c = self.controls
        return (
            f"MultiHeadExplorer(num_heads={self.num_heads}, head={c['head'].value!r}, "
            f"scaled={c['scaled'].value}, causal={c['causal'].value})"
        )
