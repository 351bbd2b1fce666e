"""Lesson 06 explorer: the weighted values ``α_ij · v_j`` of one query, next to its weights and V."""

from __future__ import annotations

import ipywidgets as W
from torch import Tensor

from .. import examples
from ..steps import scale_scores, score, softmax, weight_values
from ._core import Explorer, HeatmapView

__all__ = ["EXAMPLES", "WeightingExplorer", "example_attention"]

EXAMPLES = ("001", "000")


def example_attention(key: str, *, scaled: bool = False) -> tuple[Tensor, Tensor, tuple[str, ...]]:
    """Weights ``(n_q, n_k)``, values ``(n_k, d_v)`` and token labels of document ``key``.

    ``scaled=False`` follows documents 000 and 001 (no ``1/sqrt(d_k)``).
    """
    if key not in EXAMPLES:
        raise ValueError(f"example must be one of {EXAMPLES}, got {key!r}")
    ex = examples.get(key)
    queries, keys, values = ex.qkv()
    scores = score(queries, keys)
    if scaled:
        scores = scale_scores(scores, queries.shape[-1])
    return softmax(scores), values, ex.token_labels


class WeightingExplorer(Explorer):
    """Step 6 for one query ``i``: row ``j`` of the grid is ``weights[i, j] * values[j]``.

    Controls: ``example`` (document 001 or 000), ``query``, ``scaled`` (divide the scores by
    ``sqrt(d_k)`` first). Views: ``weights`` (the query's row, ``1 × n_k``), ``values`` (V,
    ``n_k × d_v``) and ``weighted`` (``n_k × d_v``, i.e. ``weight_values(W, V)[i]``).
    """

    def __init__(self, example: str = "001", query: int = 0, scaled: bool = False):
        super().__init__()
        weights, values, labels = example_attention(example, scaled=scaled)
        self.labels = labels
        self.controls["example"] = W.Dropdown(options=EXAMPLES, value=example, description="example")
        self.controls["query"] = W.Dropdown(
            options=[(label, i) for i, label in enumerate(labels)], value=query, description="query"
        )
        self.controls["scaled"] = W.Checkbox(value=scaled, description="scale by 1/√d_k")
        grid = weight_values(weights, values)[query]
        value_labels = [f"v{j + 1}" for j in range(values.shape[0])]
        dims = [str(c + 1) for c in range(values.shape[1])]
        self.views["weighted"] = HeatmapView(
            grid,
            row_labels=self._term_labels(query),
            col_labels=dims,
            title=f"weighted values of {labels[query]}",
            decimals=4,
        )
        self.views["weights"] = HeatmapView(
            weights[query : query + 1],
            row_labels=[labels[query]],
            col_labels=value_labels,
            title="weights α",
            vmin=0.0,
            vmax=1.0,
            decimals=4,
        )
        self.views["values"] = HeatmapView(values, row_labels=value_labels, col_labels=dims, title="values V")
        self.observe_controls()
        self.widget = W.VBox(
            [
                W.HBox([self.controls["example"], self.controls["query"], self.controls["scaled"]]),
                self.message,
                W.HBox([self.views["weights"], self.views["values"], self.views["weighted"]]),
            ]
        )

    def _term_labels(self, query: int) -> list[str]:
        n_k = len(self.labels)
        return [f"α{query + 1},{j + 1}·v{j + 1}" for j in range(n_k)]

    def update(self) -> None:
        c = self.controls
        weights, values, labels = example_attention(c["example"].value, scaled=c["scaled"].value)
        if labels != self.labels:
            self.labels = labels
            keep = min(c["query"].value, len(labels) - 1)
            self.set_quietly("query", options=[(label, i) for i, label in enumerate(labels)], value=keep)
        query = c["query"].value
        value_labels = [f"v{j + 1}" for j in range(values.shape[0])]
        dims = [str(k + 1) for k in range(values.shape[1])]
        self.views["weights"].update(weights[query : query + 1], row_labels=[labels[query]], col_labels=value_labels)
        self.views["values"].update(values, row_labels=value_labels, col_labels=dims)
        self.views["weighted"].update(
            weight_values(weights, values)[query],
            row_labels=self._term_labels(query),
            col_labels=dims,
            title=f"weighted values of {labels[query]}",
        )

    def summary(self) -> str:
        c = self.controls
        return (
            f"WeightingExplorer(example={c['example'].value!r}, query={self.labels[c['query'].value]!r}, "
            f"scaled={c['scaled'].value})"
        )
