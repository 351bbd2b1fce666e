"""Lesson 03 · Queries, keys and values: its explorer and its exercise checkers.

Lesson 03 explorer: how one token's row of ``X`` times ``W`` makes its query, key or value.

Lesson 03 exercises: queries, keys and values as matrix products.

- ``queries_keys_values.1`` by hand: the key of a new input x = [2, 0, 0, 1] with document 001's key projection.
- ``queries_keys_values.2`` code: ``project_all(X, w_query, w_key, w_value)`` → (Q, K, V), run on fresh inputs.
- ``queries_keys_values.3`` transfer: document 003 writes q = U x for a column x; all queries of a row matrix X.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from functools import partial
from typing import TypedDict, cast

import torch
from torch import Tensor

from .. import examples
from ..examples import MatrixExample, four_inputs, three_inputs
from ..formatting import explain_products, format_number, matrix_decimals
from ..show import ui
from ..show.explorer import Explorer, HeatmapView, Shown
from ..show.plots import heatmap_png
from ..steps import derive_qkv, init_projections, project
from ._check import ATTNLIB, Feedback, Wrong, compare_tensor, exercise, run_learner_code

__all__ = [
    "QKVExplorer",
    "column_convention",
    "new_key",
    "product_lines",
    "project_all",
    "vector_text",
    "wrong_answers",
]


_DOCUMENTS = {"001": three_inputs, "000": four_inputs}
EXAMPLE_CHOICES = (("001 — three inputs, W 4×3", "001"), ("000 — four inputs, W 4×5", "000"))
KINDS = {  # kind -> (index in Projections/QKV, weight name, result name)
    "key": (1, "W_k", "K"),
    "query": (0, "W_q", "Q"),
    "value": (2, "W_v", "V"),
}


def vector_text(v: Tensor) -> str:
    """``[1,0,1,0]``: a vector written as the lessons write it."""
    return "[" + ",".join(format_number(x) for x in v.tolist()) + "]"


def product_lines(x_row: Tensor, weight: Tensor) -> list[str]:
    """One line per output column ``d``: ``[x]·[W[:, d]] = (x W)[d]``.

    Args:
        x_row: one input ``(d_in,)``.
        weight: ``(d_in, d_out)``.

    Returns:
        ``d_out`` strings, e.g. ``"[1,0,1,0]·[0,1,0,1] = 1"``.
    """
    result = x_row @ weight
    return [
        f"{vector_text(x_row)}·{vector_text(weight[:, d])} = {format_number(float(result[d]))}"
        for d in range(weight.shape[1])
    ]


class QKVValues(TypedDict):
    """What :meth:`QKVExplorer.compute` reads: the controls' values."""

    example: str
    kind: str
    token: int
    column: int


class QKVExplorer(Explorer):
    """Pick a token and a kind (query, key, value): its row of ``X``, the columns of ``W``, its row of the result.

    Entry ``(i, d)`` of ``K = X W_k`` is the dot product of row ``i`` of ``X`` with column ``d`` of
    ``W_k``; the explorer outlines both and writes every product of the row out.

    Args:
        example: ``"001"`` or ``"000"``.
        token: index of the token (0-based).
        kind: ``"key"``, ``"query"`` or ``"value"``.
        column: the output column ``d`` whose product is outlined (0-based).

    Controls: ``example``, ``kind``, ``token``, ``column``. Views: ``inputs``, ``weight``, ``result``.
    """

    def __init__(self, example: str = "001", *, token: int = 0, kind: str = "key", column: int = 0) -> None:
        super().__init__()
        if example not in _DOCUMENTS:
            raise ValueError(f"example must be one of {sorted(_DOCUMENTS)}, got {example!r}")
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {list(KINDS)}, got {kind!r}")
        ex = _DOCUMENTS[example]
        c = self.controls
        c["example"] = ui.Dropdown(options=EXAMPLE_CHOICES, value=example, description="document")
        c["kind"] = ui.ToggleButtons(options=list(KINDS), value=kind, description="make the")
        c["token"] = ui.Dropdown(options=_token_options(ex), value=token, description="token")
        c["column"] = ui.IntSlider(value=column, min=0, max=ex.projections.w_key.shape[1] - 1, description="column d")
        self.products = self.texts["products"] = ui.HTML()
        self.views["inputs"] = HeatmapView(None, decimals=0, title="inputs X", ylabel="token")
        self.views["weight"] = HeatmapView(None, decimals=0, title="W")
        self.views["result"] = HeatmapView(None, decimals=0, title="result")
        self.update()
        self.observe_controls()
        self.widget = ui.VBox(
            [
                ui.HBox([c["example"], c["token"]]),
                ui.HBox([c["kind"], c["column"]]),
                ui.HBox(list(self.views.values())),
                self.products,
                self.message,
            ]
        )

    @property
    def example(self) -> str:
        """The document chosen."""
        example: str = self.controls["example"].value
        return example

    @staticmethod
    def matrices(values: Mapping[str, object]) -> tuple[Tensor, Tensor, Tensor]:
        """``X``, the chosen projection ``W`` and the result ``X W`` for ``values``."""
        values = cast(QKVValues, values)
        ex = _DOCUMENTS[values["example"]]
        index = KINDS[values["kind"]][0]
        return ex.inputs, ex.projections[index], derive_qkv(ex.inputs, *ex.projections)[index]

    @property
    def inputs(self) -> Tensor:
        return self.matrices(self.values_now())[0]

    @property
    def weight(self) -> Tensor:
        return self.matrices(self.values_now())[1]

    @property
    def result(self) -> Tensor:
        return self.matrices(self.values_now())[2]

    def compute(self, values: Mapping[str, object]) -> Shown:
        """:func:`attnlib.derive_qkv`, the token's row and the chosen column outlined, the products written out."""
        values = cast(QKVValues, values)
        ex = _DOCUMENTS[values["example"]]
        inputs, weight, result = self.matrices(values)
        _, w_name, r_name = KINDS[values["kind"]]
        d_out = weight.shape[1]
        i, d = min(values["token"], len(ex.rows) - 1), min(values["column"], d_out - 1)
        labels = list(ex.token_labels)
        outs = [str(j + 1) for j in range(d_out)]
        lines = product_lines(inputs[i], weight)
        lines = [f"<b>{html.escape(t)}</b>" if j == d else html.escape(t) for j, t in enumerate(lines)]
        head = html.escape(f"{r_name.lower()} of {labels[i]} = x_{i + 1} {w_name} = {vector_text(result[i])}")
        v = self.views
        return Shown(
            views={
                "inputs": v["inputs"].frame(inputs, row_labels=labels, rows=[i]),
                "weight": v["weight"].frame(
                    weight, col_labels=outs, title=f"{w_name}  ({weight.shape[0]}×{d_out})", cols=[d]
                ),
                "result": v["result"].frame(
                    result,
                    row_labels=labels,
                    col_labels=outs,
                    title=f"{r_name} = X {w_name}",
                    decimals=matrix_decimals(result),
                    explanations=partial(
                        explain_products, inputs, weight.T, left_name="x_{i}", right_name=w_name + "[:,{j}]"
                    ),
                    rows=[i],
                    cells=[(i, d)],
                ),
            },
            texts={"products": f"<code>{head}<br>" + "<br>".join(lines) + "</code>"},
            controls={
                "token": {"options": _token_options(ex), "value": i},
                "column": {"max": d_out - 1, "value": d},
            },
        )

    def snapshot_png(self) -> bytes:
        """Static fallback: the result (``Q``, ``K`` or ``V``) with the token's row and the chosen cell outlined."""
        return heatmap_png([self.views["result"].spec()])

    @property
    def product_texts(self) -> list[str]:
        """The products currently written out, as plain text (one per output column)."""
        return product_lines(self.inputs[self.controls["token"].value], self.weight)

    def summary(self) -> str:
        c = self.controls
        label = _DOCUMENTS[self.example].token_labels[c["token"].value]
        return f"QKVExplorer(example={self.example!r}, token={label!r}, kind={c['kind'].value!r})"


def _token_options(example: MatrixExample) -> list[tuple[str, int]]:
    return [(label, i) for i, label in enumerate(example.token_labels)]


NEW_INPUT = (2.0, 0.0, 0.0, 1.0)
#: ``queries_keys_values.3``: two tokens of size 2 (rows) and 003-style matrix U, applied as q = U x
X_003 = ((1.0, 2.0), (3.0, -1.0))
U_003 = ((0.0, 1.0), (2.0, 1.0))


def _fresh() -> tuple[Tensor, tuple[Tensor, Tensor, Tensor]]:
    gen = torch.Generator().manual_seed(3)
    x = torch.randn(4, 5, generator=gen)
    w_query, w_key, w_value = init_projections(5, 3, 2, seed=33)
    return x, (w_query, w_key, w_value)


def wrong_answers() -> dict[str, list[tuple[object, str | None]]]:
    """Per exercise, typical wrong answers and the mistake id each must reveal (None: a plain hint)."""
    x = torch.tensor(NEW_INPUT)
    w = examples.three_inputs.projections
    xs, u = torch.tensor(X_003), torch.tensor(U_003)
    return {
        "queries_keys_values.1": [(x @ w.w_query, None), (x @ w.w_value, None)],
        "queries_keys_values.2": [
            (lambda X, wq, wk, wv: (X @ wk, X @ wq, X @ wv), None),
            (lambda X, wq, wk, wv: (wq.T @ X.T, wk.T @ X.T, wv.T @ X.T), "transposed"),
        ],
        "queries_keys_values.3": [(xs @ u, "transposed"), (u @ xs.T, "transposed")],
    }


@exercise("queries_keys_values.1", alias="qkv.1")
def new_key(answer: object) -> Feedback:
    """``k = x W_k`` for x = [2, 0, 0, 1] and 001's ``W_k`` ``(4, 3)``: a vector of size 3."""
    x = torch.tensor(NEW_INPUT)
    w = examples.three_inputs.projections
    wrong = [
        (x @ w.w_query, "That is the query: a key uses the key projection W_k."),
        (x @ w.w_value, "That is the value: a key uses the key projection W_k."),
        (w.w_key.sum(dim=0), "You added all rows of W_k; x = [2, 0, 0, 1] takes 2 × row 1 + 1 × row 4."),
    ]
    return compare_tensor(
        answer,
        x @ w.w_key,
        name="the key of x = [2, 0, 0, 1]",
        wrong=wrong,
        success="2 × row 1 of W_k + 1 × row 4: a row vector times a matrix mixes the matrix's rows.",
    )


_HINT_PRODUCT = (
    "X has one row per token, shape (n_tokens, d_in) = (4, 5), and each W is stored (d_in, d_out), e.g. w_query "
    "(5, 3): X @ w_query pairs X's 5 columns with W's 5 rows. X @ W.T is nn.Linear's layout (d_out, d_in), "
    "and W @ X is document 003's column layout (exercise 3.3): here the sizes do not meet. "
    "Return (X @ w_query, X @ w_key, X @ w_value)."
)


def _product_hint(exc: Exception) -> Feedback | None:
    if isinstance(exc, RuntimeError) and "cannot be multiplied" in str(exc):
        return Feedback(False, _HINT_PRODUCT, "transposed")
    return None


def _as_three(result: object) -> list[object] | Feedback:
    if isinstance(result, Feedback):
        return result
    if isinstance(result, Tensor) or not isinstance(result, tuple | list) or len(result) != 3:
        return Feedback(False, "your project_all should return three tensors: queries, keys, values (in that order).")
    return list(result)


@exercise("queries_keys_values.2", alias="qkv.2")
def project_all(answer: object) -> Feedback:
    """A function ``project_all(X, w_query, w_key, w_value)`` → ``(Q, K, V)``, without derive_qkv."""
    x, weights = _fresh()
    result = _as_three(
        run_learner_code(
            answer,
            x.clone(),
            *(w.clone() for w in weights),
            name="your project_all",
            write_it=(ATTNLIB, derive_qkv, project),
            on_error=_product_hint,
        )
    )
    if isinstance(result, Feedback):
        return result
    q, k, v = derive_qkv(x, *weights)
    names = ("queries", "keys", "values")
    for got, want, name in zip(result, (q, k, v), names):
        wrong: list[Wrong] = [
            (want.T, f"Your {name} are transposed: X @ W gives one row per token.", "transposed"),
            (
                k if name == "queries" else q,
                "Queries and keys are swapped: return (X @ w_query, X @ w_key, X @ w_value).",
            ),
        ]
        feedback = compare_tensor(got, want, name=f"the {name} on new inputs X (4×5)", wrong=wrong)
        if not feedback.correct:
            return feedback
    return Feedback(True, "That is Q, K and V on inputs your function had never seen: (4, 3), (4, 3), (4, 2).")


@exercise("queries_keys_values.3", alias="qkv.3")
def column_convention(answer: object) -> Feedback:
    """Document 003's ``qᵀ = U xᵀ`` for every row ``x`` of X ``(2, 2)``: ``X Uᵀ`` ``(2, 2)``."""
    xs, u = torch.tensor(X_003), torch.tensor(U_003)
    wrong = [
        (
            xs @ u,
            "X @ U treats U like this series' W. 003 applies U to a column, qᵀ = U xᵀ, so for rows it is "
            "q = x Uᵀ: X @ U.T.",
            "transposed",
        ),
        (
            u @ xs.T,
            "Right numbers, column layout: U @ X.T has one query per COLUMN. Transpose it back (X @ U.T).",
            "transposed",
        ),
    ]
    return compare_tensor(answer, xs @ u.T, name="the queries q_i as rows, from q_iᵀ = U_q x_iᵀ (2×2)", wrong=wrong)
