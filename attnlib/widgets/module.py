"""Lesson 09 explorer: what ``SelfAttention`` computes, with toggles for scaling and a causal mask."""

from __future__ import annotations

import ipywidgets as W
import torch

from .. import examples
from ..modules import SelfAttention, causal_mask
from ._core import Explorer, HeatmapView

__all__ = ["SOURCES", "ModuleExplorer", "module_inputs"]

SOURCES = {
    "004": "004: three token encodings (d=2)",
    "003": "003: 'can you help me to translate this sentence' (d=16)",
}


def module_inputs(source: str) -> tuple[torch.Tensor, list[str], SelfAttention]:
    """Inputs ``(n_tokens, d)``, token labels and the seeded module (seed 42) for ``source``."""
    if source == "004":
        x, labels = examples.encodings.inputs, list(examples.encodings.token_labels)
    elif source == "003":
        x, labels = examples.translate.run().embedded, examples.translate.tokens
    else:
        raise ValueError(f"source must be one of {sorted(SOURCES)}, got {source!r}")
    return x, labels, examples.document_004_module(x.shape[-1])


class ModuleExplorer(Explorer):
    """Weights ``(n, n)`` and context ``(n, d_out)`` of a seeded ``SelfAttention``.

    Controls: ``source`` (004's encodings or 003's sentence), ``scaled`` (divide by ``sqrt(d_k)``),
    ``causal`` (token ``i`` attends only to tokens ``0 … i``). Started on 004 it shows 004's
    ``attention_percents`` and final output.
    """

    def __init__(self, source: str = "004", *, scaled: bool = True, causal: bool = False):
        super().__init__()
        self.controls = {
            "source": W.Dropdown(options=[(v, k) for k, v in SOURCES.items()], value=source, description="tokens"),
            "scaled": W.ToggleButton(value=scaled, description="scale by √d_k"),
            "causal": W.ToggleButton(value=causal, description="causal mask"),
        }
        result, labels = self._compute()
        self.views = {
            "weights": HeatmapView(
                result.weights,
                row_labels=labels,
                col_labels=labels,
                title=self._title(),
                xlabel="key",
                ylabel="query",
                vmin=0.0,
                vmax=1.0,
                decimals=4,
            ),
            "context": HeatmapView(
                result.context, row_labels=labels, title="context = weights @ V", xlabel="feature", decimals=4
            ),
        }
        self.observe_controls()
        self.widget = W.VBox(
            [
                W.HBox([self.controls["source"], self.controls["scaled"], self.controls["causal"]]),
                self.message,
                W.HBox([self.views["weights"], self.views["context"]]),
            ]
        )

    def _title(self) -> str:
        parts = ["scaled" if self.controls["scaled"].value else "unscaled"]
        if self.controls["causal"].value:
            parts.append("causal")
        return f"weights ({', '.join(parts)})"

    def _compute(self):
        x, labels, module = module_inputs(self.controls["source"].value)
        module.scaled = self.controls["scaled"].value
        mask = causal_mask(x.shape[0]) if self.controls["causal"].value else None
        return module.intermediates(x, mask=mask), labels

    def update(self) -> None:
        result, labels = self._compute()
        self.views["weights"].update(result.weights, row_labels=labels, col_labels=labels, title=self._title())
        self.views["context"].update(result.context, row_labels=labels)

    def summary(self) -> str:
        c = self.controls
        return f"ModuleExplorer(source={c['source'].value!r}, scaled={c['scaled'].value}, causal={c['causal'].value})"
