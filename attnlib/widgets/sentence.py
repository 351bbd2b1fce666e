"""Lesson 10 explorer: type a sentence, see its token-labelled attention map."""

from __future__ import annotations

import ipywidgets as W

from .. import examples
from ..text import MAX_TOKENS, sentence_attention
from ._core import Explorer, HeatmapView

__all__ = ["SentenceExplorer"]

PROJECTIONS = {
    "with projections (Q = X Uᵀ)": True,
    "without (ω = X Xᵀ)": False,
}


class SentenceExplorer(Explorer):
    """Attention weights ``(n_tokens, n_tokens)`` of a typed sentence, labelled with its tokens.

    Controls: ``sentence`` (text; empty or more than 32 tokens → inline message, the map keeps
    its last good state), ``scaled`` (divide by ``sqrt(d)``), ``projections`` (document 003's
    seeded ``U_q, U_k, U_v`` applied as ``X Uᵀ``, or 003's simplified ``ω = X Xᵀ``). Started on
    003's sentence, the row of "you" is 003's ``attention_weights_2``.
    """

    def __init__(self, sentence: str = examples.translate.sentence, *, scaled: bool = True, projections: bool = True):
        super().__init__()
        self.controls = {
            "sentence": W.Text(
                value=sentence,
                description="sentence",
                continuous_update=False,
                layout=W.Layout(width="36em"),
            ),
            "scaled": W.ToggleButton(value=scaled, description="scale by √d"),
            "projections": W.ToggleButtons(options=list(PROJECTIONS.items()), value=projections),
        }
        result = self._compute()
        self.tokens = result.tokens
        self.views = {
            "weights": HeatmapView(
                result.weights,
                row_labels=result.tokens,
                col_labels=result.tokens,
                title=self._title(),
                xlabel="key",
                ylabel="query",
                vmin=0.0,
                vmax=1.0,
            )
        }
        self.observe_controls()
        self.widget = W.VBox(
            [
                self.controls["sentence"],
                W.HBox([self.controls["projections"], self.controls["scaled"]]),
                self.message,
                self.views["weights"],
            ]
        )

    def _title(self) -> str:
        how = "X Uᵀ" if self.controls["projections"].value else "X Xᵀ"
        scaled = "scaled" if self.controls["scaled"].value else "unscaled"
        return f"weights ({how}, {scaled})"

    def _compute(self):
        return sentence_attention(
            self.controls["sentence"].value,
            projections=self.controls["projections"].value,
            scaled=self.controls["scaled"].value,
            max_tokens=MAX_TOKENS,
        )

    def update(self) -> None:
        result = self._compute()  # raises ValueError on bad text before anything changes
        self.tokens = result.tokens
        self.views["weights"].update(
            result.weights, row_labels=result.tokens, col_labels=result.tokens, title=self._title()
        )

    def summary(self) -> str:
        c = self.controls
        return (
            f"SentenceExplorer(n_tokens={len(self.tokens)}, scaled={c['scaled'].value}, "
            f"projections={c['projections'].value})"
        )
