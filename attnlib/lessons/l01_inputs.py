"""Lesson 01 · Inputs: its explorer and its exercise checkers.

Lesson 01 explorer: the inputs ``X`` ``(n_tokens, d_in)`` of any document, editable as text.

Lesson 01 exercises: inputs as the matrix ``X`` ``(n_tokens, d_in)``, one row per token.

- ``inputs.1`` by hand: three token vectors, written as columns in the lesson, stacked as the rows of X.
- ``inputs.2`` code: ``stack(vectors)`` → X, run on vectors the lesson never showed.
- ``inputs.3`` transfer: the shape of document 002's X (28 tokens, 26 distinct words, a table of 50 000).
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import TypedDict, cast

import torch
from torch import Tensor

from .. import examples
from ..examples import ALL, MatrixExample, SentenceExample
from ..formatting import format_matrix, format_number, matrix_decimals
from ..show import ui
from ..show.explorer import Explorer, HeatmapView, Shown, parse_matrix
from ..steps import prepare_inputs
from ._calls import compare_call
from ._check import ATTNLIB, Feedback, Wrong, compare_tensor, exercise

__all__ = [
    "EXAMPLE_CHOICES",
    "InputsExplorer",
    "by_hand",
    "example_inputs",
    "format_matrix",
    "format_number",
    "matrix_decimals",
    "sentence_shape",
    "stack",
    "wrong_answers",
]


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


class InputsValues(TypedDict):
    """What :meth:`InputsExplorer.compute` reads: the controls' values."""

    example: str
    values: str


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
        inputs, _labels = example_inputs(example)
        self.controls["example"] = ui.Dropdown(options=EXAMPLE_CHOICES, value=example, description="document")
        self.controls["values"] = ui.Textarea(
            value=format_matrix(inputs),
            description="X",
            continuous_update=False,
            rows=6,
            layout=ui.Layout(width="360px"),
        )
        self.views["inputs"] = HeatmapView(None, xlabel="feature (d_in)", ylabel="token", editable=True)
        self.on_edit("inputs", self._edit_cell)
        self.shape = self.texts["shape"] = ui.HTML()
        self.update()
        self.observe_controls()
        self.widget = ui.VBox(
            [
                ui.HBox([self.controls["example"]]),
                ui.HBox([self.views["inputs"], ui.VBox([self.controls["values"], self.shape])]),
                self.message,
            ]
        )

    @property
    def example(self) -> str:
        """The document chosen."""
        example: str = self.controls["example"].value
        return example

    @property
    def inputs(self) -> Tensor:
        """The inputs shown (the last good ones)."""
        return torch.from_numpy(self.views["inputs"].data)

    @property
    def token_labels(self) -> list[str]:
        """The tokens shown."""
        return list(self.views["inputs"].row_labels)

    def transition(self, values: Mapping[str, object], name: str) -> Mapping[str, object]:
        """A new document: its numbers replace the text."""
        if name != "example":
            return values
        return {**values, "values": format_matrix(example_inputs(cast(InputsValues, values)["example"])[0])}

    def _edit_cell(self, i: int, j: int, value: float) -> None:
        """A number typed into cell ``(i, j)`` of the heatmap: written into the text box (one source of truth)."""
        inputs = self.inputs.clone().to(torch.float64)
        inputs[i, j] = value
        self._set_text(format_matrix(inputs))

    def _set_text(self, text: str) -> None:
        """Set the text box without triggering another update."""
        self.set_quietly("values", value=text)

    def compute(self, values: Mapping[str, object]) -> Shown:
        """The numbers typed in the text box (the document's own, unrounded, while the text is its text)."""
        values = cast(InputsValues, values)
        doc, doc_labels = example_inputs(values["example"])
        if values["values"] == format_matrix(doc):
            inputs = doc
        else:
            inputs = prepare_inputs(torch.from_numpy(parse_matrix(values["values"])))
        n, d = inputs.shape
        labels = doc_labels if len(doc_labels) == n else [f"token {i + 1}" for i in range(n)]
        return Shown(
            views={
                "inputs": self.views["inputs"].frame(
                    inputs,
                    row_labels=labels,
                    col_labels=_features(inputs),
                    title=_title(inputs),
                    decimals=matrix_decimals(inputs),
                )
            },
            texts={"shape": html.escape(f"X has shape (n_tokens, d_in) = ({n}, {d})")},
        )

    def summary(self) -> str:
        return f"InputsExplorer(example={self.example!r}, shape={tuple(self.inputs.shape)})"


def _features(inputs: Tensor) -> list[str]:
    return [f"d{j + 1}" for j in range(inputs.shape[1])]


def _title(inputs: Tensor) -> str:
    return f"inputs X  ({inputs.shape[0]}×{inputs.shape[1]})"


#: ``inputs.1``: the vectors of "cats", "chase", "mice" (the lesson shows them as columns).
HAND_VECTORS = ((1.0, 2.0), (0.0, -1.0), (3.0, 0.5))


def _hand() -> Tensor:
    return torch.tensor(HAND_VECTORS)


def _fresh_vectors() -> list[Tensor]:
    gen = torch.Generator().manual_seed(1)
    return [torch.randn(5, generator=gen) for _ in range(4)]


def _sentence_shape() -> Tensor:
    ex = examples.history
    return torch.tensor([len(ex.tokens), ex.d], dtype=torch.float64)


def wrong_answers() -> dict[str, list[tuple[object, str | None]]]:
    """Per exercise, typical wrong answers and the mistake id each must reveal (None: a plain hint)."""
    x = _hand()
    ex = examples.history
    return {
        "inputs.1": [(x.T, "transposed"), (x.reshape(-1), None), (x.flip(0), None)],
        "inputs.2": [
            (lambda vectors: torch.stack(vectors, dim=1), "transposed"),
            (lambda vectors: torch.cat(vectors), None),
        ],
        "inputs.3": [
            ([ex.d, len(ex.tokens)], "transposed"),
            ([len(set(ex.tokens)), ex.d], None),
            ([ex.num_embeddings, ex.d], None),
        ],
    }


@exercise("inputs.1")
def by_hand(answer: object) -> Feedback:
    """X for the three vectors of :data:`HAND_VECTORS`: shape ``(3, 2)``."""
    x = _hand()
    wrong: list[Wrong] = [
        (
            x.T,
            "Each token is a column here. In this series X has one ROW per token: shape (n_tokens, d_in) = (3, 2).",
            "transposed",
        ),
        (x.reshape(-1), "That is one long vector of 6 numbers: stack the tokens instead, one row each."),
        (x.flip(0), "The rows are in reverse order: row 1 is the first token, 'cats'."),
    ]
    return compare_tensor(
        answer, x, name="X for 'cats chase mice' (3×2)", wrong=wrong, success="n_tokens = 3, d_in = 2."
    )


@exercise("inputs.2")
def stack(answer: object) -> Feedback:
    """A function ``stack(vectors)``: a list of ``n`` vectors ``(d_in,)`` → X ``(n, d_in)``, without prepare_inputs."""
    vectors = _fresh_vectors()
    wrong: list[Wrong] = [
        (
            torch.stack(vectors, dim=1),
            "Your vectors became columns: torch.stack(vectors, dim=1) is (d_in, n). Stack along dim=0.",
            "transposed",
        ),
        (torch.cat(vectors), "torch.cat glues the vectors into one long vector; torch.stack makes a new axis."),
    ]
    return compare_call(
        answer,
        (vectors,),
        call="your stack(vectors)",
        expected=torch.stack(vectors),
        name="stack(vectors) on four new vectors of size 5",
        wrong=wrong,
        success="Four tokens of size 5: (4, 5).",
        write_it=(ATTNLIB, prepare_inputs),
    )


@exercise("inputs.3")
def sentence_shape(answer: object) -> Feedback:
    """Document 002's X for its 28-word sentence with embeddings of size 16: ``[n_tokens, d_in]``."""
    ex = examples.history
    n, distinct, table = len(ex.tokens), len(set(ex.tokens)), ex.num_embeddings
    wrong: list[Wrong] = [
        (torch.tensor([ex.d, n]), "Rows and columns swapped: X is (n_tokens, d_in).", "transposed"),
        (
            torch.tensor([distinct, ex.d]),
            f"{distinct} is the number of distinct words. X has one row per token *occurrence*: a word that "
            "appears twice ('the', 'to') gets two rows.",
        ),
        (
            torch.tensor([table, ex.d]),
            f"{table:,} × {ex.d} is the embedding table (one row per possible id); X only holds the rows of "
            "the sentence's tokens.",
        ),
    ]
    return compare_tensor(
        answer, _sentence_shape(), name="the shape [n_tokens, d_in] of 002's X", wrong=wrong, atol=0.5
    )
