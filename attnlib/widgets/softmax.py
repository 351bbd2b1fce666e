"""Lesson 05 explorer: softmax with a temperature, one row as bars and all rows as a heatmap."""

from __future__ import annotations

import html
import math
from functools import partial

import ipywidgets as W
import torch
from torch import Tensor

from .. import examples
from ..formatting import explain_softmax, format_matrix
from ..steps import score, softmax
from ._core import Explorer, HeatmapView, parse_matrix

__all__ = ["EXAMPLES", "SoftmaxExplorer", "entropy", "example_scores", "format_matrix"]

EXAMPLES = ("001", "000", "004")


def example_scores(key: str) -> tuple[Tensor, tuple[str, ...]]:
    """The unscaled scores ``Q Kᵀ`` ``(n_q, n_k)`` of document ``key`` and its token labels."""
    ex = examples.get(key)
    if key == "004":
        steps = examples.document_004_module(int(ex.notes["d_model"])).intermediates(ex.inputs)
        return steps.scores, ex.token_labels
    queries, keys, _ = ex.qkv()
    return score(queries, keys), ex.token_labels


def entropy(weights: Tensor) -> Tensor:
    """Entropy in nats of each row of ``weights`` ``(n_q, n_k)`` → ``(n_q,)``; 0·log 0 counts as 0."""
    w = weights.to(torch.float64)
    return -(torch.where(w > 0, w * w.log(), torch.zeros_like(w))).sum(dim=-1)


class SoftmaxExplorer(Explorer):
    """Scores → weights with a temperature ``T``: ``softmax(scores / T)`` row by row.

    Controls: ``example`` (a document's scores), ``scores`` (editable text, one row per query),
    ``temperature`` (divides the scores; ``T = 1`` is the plain softmax), ``query`` (the row shown
    as bars). Views: ``bars`` (that row's weights) and ``heatmap`` (all weights). ``stats`` shows
    each row's sum and entropy (in nats; ``log n_k`` is the uniform maximum).
    """

    def __init__(self, example: str = "001", temperature: float = 1.0, query: int = 0):
        super().__init__()
        if example not in EXAMPLES:
            raise ValueError(f"example must be one of {EXAMPLES}, got {example!r}")
        scores, labels = example_scores(example)
        self.scores, self.labels = scores, labels
        self.controls["example"] = W.Dropdown(options=EXAMPLES, value=example, description="example")
        self.controls["scores"] = W.Textarea(
            value=format_matrix(scores, 6), description="scores", layout=W.Layout(width="320px", height="90px")
        )
        self.controls["temperature"] = W.FloatLogSlider(
            value=temperature, base=10, min=-1, max=1.5, step=0.05, description="temperature T", readout_format=".2f"
        )
        self.controls["query"] = W.Dropdown(options=self._query_options(), value=query, description="query")
        self.stats = W.HTML()
        weights = self.weights()
        # the heatmap comes first: it is the PNG a reader without a kernel sees
        self.views["heatmap"] = HeatmapView(
            weights,
            row_labels=labels,
            col_labels=labels,
            title="weights = softmax(scores / T)",
            vmin=0.0,
            vmax=1.0,
            decimals=3,
            explanations=partial(explain_softmax, scores, temperature=temperature),
        )
        self.views["bars"] = HeatmapView(
            weights[query : query + 1],
            row_labels=[labels[query]],
            col_labels=labels,
            title="one query's weights",
            vmin=0.0,
            vmax=1.0,
            decimals=2,
        )
        self.bar_caption = W.HTML(value=self._bar_title())
        self.views["heatmap"].highlight(rows=[query])
        self._show_stats(weights)
        self.controls["example"].observe(self._on_example, names="value")
        for name in ("scores", "temperature", "query"):
            self.controls[name].observe(self._on_change, names="value")
        self.widget = W.VBox(
            [
                W.HBox([self.controls["example"], self.controls["temperature"], self.controls["query"]]),
                self.controls["scores"],
                self.message,
                W.HBox([W.VBox([self.bar_caption, self.views["bars"]]), self.views["heatmap"]]),
                self.stats,
            ]
        )

    # ------------------------------------------------------------------ computation
    def _query_options(self) -> list[tuple[str, int]]:
        return [(label, i) for i, label in enumerate(self.labels)]

    def _bar_title(self) -> str:
        return f"<b>bars: weights of {html.escape(self.labels[self.controls['query'].value])}</b>"

    def weights(self) -> Tensor:
        """``softmax(scores / T)`` over the keys, ``(n_q, n_k)``."""
        return softmax(self.scores / self.controls["temperature"].value, dim=-1)

    def _show_stats(self, weights: Tensor) -> None:
        sums = weights.sum(dim=-1)
        ent = entropy(weights)
        rows = "".join(
            f"<tr><td>{label}</td><td>{float(s):.4f}</td><td>{float(e):.4f}</td></tr>"
            for label, s, e in zip(self.labels, sums, ent)
        )
        self.stats.value = (
            f"<table><tr><th>query</th><th>row sum</th><th>entropy (nats)</th></tr>{rows}</table>"
            f"<small>uniform over {weights.shape[-1]} keys: entropy log {weights.shape[-1]} = "
            f"{math.log(weights.shape[-1]):.4f}; one-hot: 0</small>"
        )

    # ------------------------------------------------------------------ events
    def _on_example(self, change) -> None:
        scores, _labels = example_scores(change["new"])
        self.controls["scores"].value = format_matrix(scores, 6)  # triggers update()

    def update(self) -> None:
        matrix = parse_matrix(self.controls["scores"].value)
        scores = torch.tensor(matrix, dtype=torch.float32)
        if scores.shape != self.scores.shape:
            example_scores_, example_labels = example_scores(self.controls["example"].value)
            if scores.shape == example_scores_.shape:
                labels = example_labels
            elif scores.shape[0] == scores.shape[1]:
                labels = tuple(f"token {i + 1}" for i in range(scores.shape[0]))
            else:
                raise ValueError(
                    f"scores must be square (n_tokens, n_tokens) for self-attention, got shape {tuple(scores.shape)}"
                )
        else:
            labels = self.labels
        old_scores, old_labels = self.scores, self.labels
        self.scores, self.labels = scores, labels
        query = self.controls["query"]
        if query.options != tuple(self._query_options()):
            keep = min(query.value, len(labels) - 1)
            self.set_quietly("query", options=self._query_options(), value=keep)
        try:
            weights = self.weights()
        except ValueError:
            self.scores, self.labels = old_scores, old_labels
            raise
        self.views["bars"].update(
            weights[query.value : query.value + 1], row_labels=[labels[query.value]], col_labels=labels
        )
        self.bar_caption.value = self._bar_title()
        explanations = partial(explain_softmax, self.scores, temperature=self.controls["temperature"].value)
        heat = self.views["heatmap"]
        heat.update(weights, row_labels=labels, col_labels=labels, explanations=explanations)
        heat.highlight(rows=[query.value])
        self._show_stats(weights)

    def summary(self) -> str:
        c = self.controls
        return (
            f"SoftmaxExplorer(example={c['example'].value!r}, temperature={c['temperature'].value:g}, "
            f"query={self.labels[c['query'].value]!r})"
        )
