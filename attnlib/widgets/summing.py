"""Lesson 07 explorer: one output row built as the sum of its weighted values, beside the context."""

from __future__ import annotations

from functools import partial

import ipywidgets as W
import torch
from torch import Tensor

from ..formatting import explain_weighted_sum
from ..steps import sum_weighted_values, weight_values
from ._core import Explorer, HeatmapView
from .weighting import EXAMPLES, example_attention

__all__ = ["SummingExplorer", "partial_sum_table"]


def partial_sum_table(weights: Tensor, values: Tensor, query: int, terms: int) -> Tensor:
    """The weighted values of ``query`` ``(n_k, d_v)`` with the running sum of the first ``terms`` rows
    appended: shape ``(n_k + 1, d_v)``. With ``terms = n_k`` the last row is the output ``z_query``."""
    grid = weight_values(weights, values)[query]
    return torch.cat([grid, grid[:terms].sum(dim=0, keepdim=True)])


class SummingExplorer(Explorer):
    """Step 7: ``z_i = Σ_j α_ij v_j`` built term by term, next to the full context ``W V``.

    Controls: ``example`` (001 or 000), ``query`` (the output row being built), ``terms`` (how
    many weighted values are added so far), ``scaled``. Views: ``sum`` (the ``n_k`` weighted
    values and, in the last row, their running sum; the added rows are outlined) and ``context``
    (all outputs ``(n_q, d_v)``, the row being built outlined).
    """

    def __init__(self, example: str = "001", query: int = 0, terms: int | None = None, scaled: bool = False):
        super().__init__()
        weights, values, labels = example_attention(example, scaled=scaled)
        n_k = values.shape[0]
        terms = n_k if terms is None else terms
        self.labels = labels
        c = self.controls
        c["example"] = W.Dropdown(options=EXAMPLES, value=example, description="example")
        c["query"] = W.Dropdown(
            options=[(label, i) for i, label in enumerate(labels)], value=query, description="query"
        )
        c["terms"] = W.IntSlider(value=terms, min=1, max=n_k, description="terms added")
        c["scaled"] = W.Checkbox(value=scaled, description="scale by 1/√d_k")
        self.views["sum"] = HeatmapView(partial_sum_table(weights, values, query, terms), decimals=4)
        self.views["context"] = HeatmapView(sum_weighted_values(weight_values(weights, values)), decimals=4)
        self._redraw(weights, values)
        self.observe_controls()
        self.widget = W.VBox(
            [
                W.HBox([c["example"], c["query"], c["scaled"]]),
                c["terms"],
                self.message,
                W.HBox([self.views["sum"], self.views["context"]]),
            ]
        )

    def _redraw(self, weights: Tensor, values: Tensor) -> None:
        c = self.controls
        query, terms = c["query"].value, c["terms"].value
        n_k, d_v = values.shape
        dims = [str(k + 1) for k in range(d_v)]
        row_labels = [f"α{query + 1},{j + 1}·v{j + 1}" for j in range(n_k)]
        row_labels.append(f"= z{query + 1}" if terms == n_k else f"sum of {terms}")
        table = partial_sum_table(weights, values, query, terms)
        s = self.views["sum"]
        s.update(table, row_labels=row_labels, col_labels=dims, title=f"building z{query + 1} ({self.labels[query]})")
        s.highlight(rows=[*range(terms), n_k])
        ctx = self.views["context"]
        ctx.update(
            sum_weighted_values(weight_values(weights, values)),
            row_labels=list(self.labels),
            col_labels=dims,
            title="context = W V (all outputs)",
            explanations=partial(explain_weighted_sum, weights, values),
        )
        ctx.highlight(rows=[query])

    def update(self) -> None:
        c = self.controls
        weights, values, labels = example_attention(c["example"].value, scaled=c["scaled"].value)
        if labels != self.labels:
            self.labels = labels
            n_k = values.shape[0]
            keep = min(c["query"].value, len(labels) - 1)
            self.set_quietly("query", options=[(label, i) for i, label in enumerate(labels)], value=keep)
            self.set_quietly("terms", max=n_k, value=n_k)
        self._redraw(weights, values)

    def summary(self) -> str:
        c = self.controls
        return (
            f"SummingExplorer(example={c['example'].value!r}, query={self.labels[c['query'].value]!r}, "
            f"terms={c['terms'].value}, scaled={c['scaled'].value})"
        )
