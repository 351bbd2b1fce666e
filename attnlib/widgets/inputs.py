"""Lesson 01 explorer: the inputs ``X`` ``(n_tokens, d_in)`` of any document, editable as text."""

from __future__ import annotations

import html

import ipywidgets as W
import torch
from torch import Tensor

from ..examples import ALL, MatrixExample, SentenceExample
from ..formatting import format_matrix, format_number, matrix_decimals
from ..steps import prepare_inputs
from ._core import Explorer, HeatmapView, parse_matrix

__all__ = ["EXAMPLE_CHOICES", "InputsExplorer", "example_inputs", "format_matrix", "format_number", "matrix_decimals"]

EXAMPLE_CHOICES: tuple[tuple[str, str], ...] = (
    ("000 — four inputs (4×4)", "000"),
    ("001 — three inputs (3×4)", "001"),
    ("004 — three encodings (3×2)", "004"),
    ("003 — 8-word sentence, embedded (8×16)", "003"),
    ("002 — 28-word sentence, embedded (28×16)", "002"),
)


def example_inputs(key: str) -> tuple[Tensor, list[str]]:
    """``X`` ``(n_tokens, d_in)`` and the token labels of document ``key`` (002/003: embedded sentence)."""
    example = ALL[key]
    if isinstance(example, MatrixExample):
        return example.inputs, list(example.token_labels)
    assert isinstance(example, SentenceExample)
    return example.run().embedded, list(example.tokens)


class InputsExplorer(Explorer):
    """Show a document's inputs as a token-labelled heatmap; edit the numbers in a text box.

    Args:
        example: ``"000"``, ``"001"``, ``"004"`` (matrices) or ``"002"``, ``"003"`` (embedded sentences).

    Controls: ``example`` (Dropdown), ``values`` (Textarea, one row per token). Views: ``inputs``.
    """

    def __init__(self, example: str = "001") -> None:
        super().__init__()
        if example not in dict((v, k) for k, v in EXAMPLE_CHOICES):
            raise ValueError(f"example must be one of {[v for _, v in EXAMPLE_CHOICES]}, got {example!r}")
        inputs, labels = example_inputs(example)
        self.example = example
        self.inputs = inputs
        self.token_labels = labels
        self._doc_labels = labels
        self.controls["example"] = W.Dropdown(options=EXAMPLE_CHOICES, value=example, description="document")
        self.controls["values"] = W.Textarea(
            value=format_matrix(inputs),
            description="X",
            continuous_update=False,
            rows=6,
            layout=W.Layout(width="360px"),
        )
        self.views["inputs"] = HeatmapView(
            inputs,
            decimals=matrix_decimals(inputs),
            row_labels=labels,
            col_labels=_features(inputs),
            title=_title(inputs),
            xlabel="feature (d_in)",
            ylabel="token",
            editable=True,
        )
        self.on_edit("inputs", self._edit_cell)
        self.shape = W.HTML()
        self.observe_controls()
        self._show_shape()
        self.widget = W.VBox(
            [
                W.HBox([self.controls["example"]]),
                W.HBox([self.views["inputs"], W.VBox([self.controls["values"], self.shape])]),
                self.message,
            ]
        )

    def _edit_cell(self, i: int, j: int, value: float) -> None:
        """A number typed into cell ``(i, j)`` of the heatmap: written into the text box (one source of truth)."""
        inputs = self.inputs.clone().to(torch.float64)
        inputs[i, j] = value
        self._set_text(format_matrix(inputs))

    def _set_text(self, text: str) -> None:
        """Set the text box without triggering another update."""
        self.set_quietly("values", value=text)

    def _show_shape(self) -> None:
        n, d = self.inputs.shape
        self.shape.value = html.escape(f"X has shape (n_tokens, d_in) = ({n}, {d})")

    def update(self) -> None:
        """Show the chosen document's inputs, or the numbers typed in the text box."""
        key = self.controls["example"].value
        if key != self.example:
            inputs, labels = example_inputs(key)
            self._set_text(format_matrix(inputs))
            self.example = key
            self._doc_labels = labels
        else:
            inputs = prepare_inputs(torch.from_numpy(parse_matrix(self.controls["values"].value)))
            labels = self._doc_labels
            if len(labels) != inputs.shape[0]:
                labels = [f"token {i + 1}" for i in range(inputs.shape[0])]
        self.inputs, self.token_labels = inputs, labels
        self.views["inputs"].update(
            inputs,
            row_labels=labels,
            col_labels=_features(inputs),
            title=_title(inputs),
            decimals=matrix_decimals(inputs),
        )
        self._show_shape()

    def summary(self) -> str:
        return f"InputsExplorer(example={self.example!r}, shape={tuple(self.inputs.shape)})"


def _features(inputs: Tensor) -> list[str]:
    return [f"d{j + 1}" for j in range(inputs.shape[1])]


def _title(inputs: Tensor) -> str:
    return f"inputs X  ({inputs.shape[0]}×{inputs.shape[1]})"
