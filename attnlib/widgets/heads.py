"""Lesson 14 explorer: every head of a trained model on a sequence you type, with its two scores."""

from __future__ import annotations

import html

import ipywidgets as W
import torch

from ..heads import induction_score, induction_targets, previous_token_score
from ..transformer import TinyTransformer
from ._core import Explorer, HeatmapView
from .training import parse_tokens

__all__ = ["HeadsExplorer"]


class HeadsExplorer(Explorer):
    """Pick a layer and a head: its attention on your sequence, its previous-token and induction scores.

    Args:
        model: a trained causal ``TinyTransformer``.
        sequence: token ids (``1 … vocab_size − 1``) — repeat a few to see induction.
        layer, head: shown first.

    Controls: ``layer``, ``head``, ``sequence`` (Enter to apply). View: ``weights`` ``(n, n)``.
    """

    def __init__(self, model: TinyTransformer, sequence: list[int], *, layer: int = 0, head: int = 0) -> None:
        super().__init__()
        self.model = model
        n_layers, n_heads = len(model.blocks), model.blocks[0].attention.num_heads
        c = self.controls
        c["layer"] = W.Dropdown(
            options=[(f"layer {i + 1}", i) for i in range(n_layers)], value=layer, description="layer"
        )
        c["head"] = W.Dropdown(options=[(f"head {h + 1}", h) for h in range(n_heads)], value=head, description="head")
        c["sequence"] = W.Text(value=" ".join(map(str, sequence)), description="sequence", continuous_update=False,
                               layout=W.Layout(width="520px"))  # fmt: skip
        self.views["weights"] = HeatmapView([[0.0]], xlabel="key (earlier token)", ylabel="query", vmin=0.0, vmax=1.0,
                                            annotate=False)  # fmt: skip
        self.caption = W.HTML()
        self.update()
        self.observe_controls()
        self.widget = W.VBox([W.HBox([c["layer"], c["head"]]), c["sequence"], self.message, self.views["weights"],
                              self.caption])  # fmt: skip

    def update(self) -> None:
        """Run the model on the typed sequence; show the chosen head; score it."""
        c = self.controls
        text = c["sequence"].value
        n = len(text.replace(",", " ").split())
        if not 2 <= n <= self.model.max_len:
            raise ValueError(f"type from 2 to {self.model.max_len} token ids, got {n}")
        ids = parse_tokens(text, vocab_size=self.model.vocab_size, n_tokens=n)
        with torch.no_grad():
            predicted = self.model(ids).argmax(-1)[0].tolist()
        weights = self.model.attention_maps[c["layer"].value][0, c["head"].value]
        labels = [f"{i}:{t}" for i, t in enumerate(ids[0].tolist())]
        self.views["weights"].update(weights, row_labels=labels, col_labels=labels,
                                     title=f"layer {c['layer'].value + 1}, head {c['head'].value + 1}")  # fmt: skip
        repeats = bool((induction_targets(ids) >= 0).any())
        induction = f"{induction_score(weights[None], ids):.2f}" if repeats else "— (no token repeats)"
        self.caption.value = html.escape(
            f"previous-token score {previous_token_score(weights):.2f} · induction score {induction} · "
            f"the model predicts next tokens {predicted}"
        )

    def summary(self) -> str:
        c = self.controls
        return f"HeadsExplorer(layer={c['layer'].value + 1}, head={c['head'].value + 1})"
