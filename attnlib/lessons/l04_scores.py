"""Lesson 04 · Scores: its explorer and its exercise checkers.

Lesson 04 explorer: the scores ``S = Q Kᵀ`` ``(n_q, n_k)``, one query's dot products written out.

Lesson 04 exercises: scores as dot products, S = Q Kᵀ.

- ``scores.1`` by hand: one query against three keys.
- ``scores.2`` code: ``scores_of(queries, keys)`` with n_q ≠ n_k, run on fresh inputs.
- ``scores.3`` transfer: one matrix W for queries and keys, on new inputs: S = (XW)(XW)ᵀ, symmetric always.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from functools import partial
from typing import TypedDict, cast

import torch
from torch import Tensor

from ..examples import MatrixExample, four_inputs, three_inputs
from ..formatting import explain_products, format_number, matrix_decimals
from ..show import ui
from ..show.explorer import Explorer, HeatmapView, Shown
from ..steps import score
from ._calls import compare_call
from ._check import ATTNLIB, Feedback, TorchFamily, Wrong, compare_tensor, exercise

__all__ = ["ScoresExplorer", "by_hand", "dot_product_line", "same_weights", "scores_of", "wrong_answers"]


_DOCUMENTS = {"001": three_inputs, "000": four_inputs}
EXAMPLE_CHOICES = (("001 — three inputs, d_k = 3", "001"), ("000 — four inputs, d_k = 5", "000"))


def dot_product_line(query: Tensor, key: Tensor, i: int, j: int) -> str:
    """``q_1·k_2 = 1×4 + 0×4 + 2×0 = 4``: the dot product of a query ``(d_k,)`` and a key ``(d_k,)``."""
    terms = " + ".join(f"{format_number(a)}×{format_number(b)}" for a, b in zip(query.tolist(), key.tolist()))
    return f"q_{i + 1}·k_{j + 1} = {terms} = {format_number(float(query @ key))}"


class ScoresValues(TypedDict):
    """What :meth:`ScoresExplorer.compute` reads: the controls' values."""

    example: str
    query: int
    key: int


class ScoresExplorer(Explorer):
    """Pick a query: its row of ``Q Kᵀ`` is outlined and each score ``q_i·k_j = Σ_d q_id k_jd`` is written out.

    Args:
        example: ``"001"`` or ``"000"``.
        query: index of the query (0-based).
        key: index of the key whose cell is outlined and whose sum is in bold (0-based).

    Controls: ``example``, ``query``, ``key``. Views: ``queries``, ``keys``, ``scores``.
    """

    def __init__(self, example: str = "001", *, query: int = 0, key: int = 0) -> None:
        super().__init__()
        if example not in _DOCUMENTS:
            raise ValueError(f"example must be one of {sorted(_DOCUMENTS)}, got {example!r}")
        ex = _DOCUMENTS[example]
        c = self.controls
        c["example"] = ui.Dropdown(options=EXAMPLE_CHOICES, value=example, description="document")
        c["query"] = ui.Dropdown(options=_options(ex, "query"), value=query, description="query")
        c["key"] = ui.Dropdown(options=_options(ex, "key"), value=key, description="key")
        self.terms = self.texts["terms"] = ui.HTML()
        self.views["scores"] = HeatmapView(None, decimals=0, title="scores Q Kᵀ", xlabel="key", ylabel="query")
        self.views["queries"] = HeatmapView(None, decimals=0, title="queries Q")
        self.views["keys"] = HeatmapView(None, decimals=0, title="keys K")
        self.update()
        self.observe_controls()
        self.views["scores"].on_select(self._choose)
        self.widget = ui.VBox(
            [
                ui.HBox([c["example"], c["query"], c["key"]]),
                ui.HBox([self.views[name] for name in ("queries", "keys", "scores")]),
                self.terms,
                self.message,
            ]
        )

    def compute(self, values: Mapping[str, object]) -> Shown:
        """``Q Kᵀ`` with :func:`attnlib.score`, the chosen query's row outlined and its dot products written out."""
        values = cast(ScoresValues, values)
        ex = _DOCUMENTS[values["example"]]
        n = len(ex.rows)
        i, j = min(values["query"], n - 1), min(values["key"], n - 1)
        queries, keys, _ = ex.qkv()
        scores = score(queries, keys)
        labels = list(ex.token_labels)
        dims = [f"d{d + 1}" for d in range(queries.shape[1])]
        v = self.views
        lines = _term_texts(queries, keys, i)
        shown = [f"<b>{html.escape(t)}</b>" if k == j else html.escape(t) for k, t in enumerate(lines)]
        row = "[" + ", ".join(format_number(x) for x in scores[i].tolist()) + "]"
        head = html.escape(f"scores of {labels[i]} (row {i + 1} of Q Kᵀ) = {row}")
        return Shown(
            views={
                "scores": v["scores"].frame(
                    scores,
                    row_labels=[f"q{r + 1}" for r in range(n)],
                    col_labels=[f"k{r + 1}" for r in range(n)],
                    decimals=matrix_decimals(scores),
                    explanations=partial(explain_products, queries, keys),
                    rows=[i],
                    cells=[(i, j)],
                ),
                "queries": v["queries"].frame(queries, row_labels=labels, col_labels=dims, rows=[i]),
                "keys": v["keys"].frame(keys, row_labels=labels, col_labels=dims, rows=[j]),
            },
            texts={"terms": f"<code>{head}<br>" + "<br>".join(shown) + "</code>"},
            controls={
                "query": {"options": _options(ex, "query"), "value": i},
                "key": {"options": _options(ex, "key"), "value": j},
            },
        )

    def _choose(self, i: int, j: int) -> None:
        """A cell of the scores clicked: its query and key become the chosen ones."""
        self.set_quietly("query", value=i)
        self.set_quietly("key", value=j)
        self.changed()

    @property
    def example(self) -> str:
        """The document shown."""
        example: str = self.controls["example"].value
        return example

    @property
    def term_texts(self) -> list[str]:
        """The chosen query's dot products with every key, written out (plain text)."""
        queries, keys, _ = _DOCUMENTS[self.example].qkv()
        return _term_texts(queries, keys, self.controls["query"].value)

    def summary(self) -> str:
        label = _DOCUMENTS[self.example].token_labels[self.controls["query"].value]
        return f"ScoresExplorer(example={self.example!r}, query={label!r})"


def _term_texts(queries: Tensor, keys: Tensor, i: int) -> list[str]:
    return [dot_product_line(queries[i], keys[j], i, j) for j in range(keys.shape[0])]


def _options(example: MatrixExample, kind: str) -> list[tuple[str, int]]:
    letter = "q" if kind == "query" else "k"
    return [(f"{letter}{i + 1} ({label})", i) for i, label in enumerate(example.token_labels)]


#: ``scores.3``: four inputs of size 3 and one matrix W used for both queries and keys.
SHARED_X = ((1.0, 0.0, 1.0), (0.0, 2.0, 1.0), (1.0, 1.0, 0.0), (2.0, 0.0, 0.0))
SHARED_W = ((1.0, 0.0), (0.0, 1.0), (1.0, 1.0))
HAND_QUERY = (1.0, 2.0, 0.0)
HAND_KEYS = ((1.0, 0.0, 1.0), (0.0, 1.0, 3.0), (2.0, 1.0, 0.0))


def _fresh() -> tuple[Tensor, Tensor]:
    gen = torch.Generator().manual_seed(4)
    return torch.randn(2, 3, generator=gen), torch.randn(5, 3, generator=gen)


def wrong_answers() -> dict[str, list[tuple[object, str | None]]]:
    """Per exercise, typical wrong answers and the mistake id each must reveal (None: a plain hint)."""
    q, k = torch.tensor(HAND_QUERY), torch.tensor(HAND_KEYS)
    xs, ws = torch.tensor(SHARED_X), torch.tensor(SHARED_W)
    ks = xs @ ws
    return {
        "scores.1": [(q @ k, "k-q-transposed"), (k.sum(dim=1) * q.sum(), None)],
        "scores.2": [(lambda a, b: b @ a.T, "k-q-transposed"), (lambda a, b: a @ b, None)],
        "scores.3": [(xs @ xs.T, None), (ks.T @ ks, None)],
    }


@exercise("scores.1")
def by_hand(answer: object) -> Feedback:
    """The scores of q = [1, 2, 0] against k_1 = [1, 0, 1], k_2 = [0, 1, 3], k_3 = [2, 1, 0]."""
    q, k = torch.tensor(HAND_QUERY), torch.tensor(HAND_KEYS)
    wrong: list[Wrong] = [
        (
            q @ k,
            "You multiplied q by the matrix whose ROWS are the keys, pairing q with columns. Each score pairs q "
            "with one key: s_j = q · k_j, i.e. K q (or q Kᵀ).",
            "k-q-transposed",
        ),
        (k.sum(dim=1) * q.sum(), "A dot product multiplies entry by entry, then adds: q·k = Σ_c q_c k_c."),
    ]
    return compare_tensor(answer, k @ q, name="the three scores of q", wrong=wrong)


#: scores.2 asks for the product Q Kᵀ written with @ (or einsum): torch's one-call products that transpose the second
#: argument for you (F.linear(q, k) = q kᵀ, torch.inner(q, k) = q kᵀ) compute it right but skip the step.
HIDDEN_TRANSPOSE = TorchFamily("torch's product with a built-in transpose", ("linear", "inner"))
_HINT_HIDDEN_TRANSPOSE = (
    "torch.inner(queries, keys) and F.linear(queries, keys) do compute Q Kᵀ, but in one call that transposes the "
    "keys for you, which is the step this exercise is about. Write the product with @ and the transpose yourself: "
    "queries @ keys.T (einsum or a broadcast-and-sum pass too)."
)


@exercise("scores.2")
def scores_of(answer: object) -> Feedback:
    """A function ``scores_of(queries (n_q, d_k), keys (n_k, d_k))`` → ``(n_q, n_k)``, without score()."""
    queries, keys = _fresh()
    wrong = [
        (
            keys @ queries.T,
            "That is K Qᵀ, shape (n_k, n_q): the transpose of the scores. Rows must be queries: Q Kᵀ.",
            "k-q-transposed",
        ),
    ]
    feedback = compare_call(
        answer,
        (queries, keys),
        call="your scores_of(queries, keys)",
        expected=queries @ keys.T,
        name="scores_of on 2 new queries and 5 new keys (2×5)",
        wrong=wrong,
        success="With n_q ≠ n_k you can see it: rows are queries, columns keys.",
        write_it=(ATTNLIB, score, HIDDEN_TRANSPOSE),
    )
    if feedback.mistake == "library-function" and any(f"'s {n}" in feedback.message for n in ("linear", "inner")):
        return Feedback(False, _HINT_HIDDEN_TRANSPOSE, "library-function")
    return feedback


@exercise("scores.3")
def same_weights(answer: object) -> Feedback:
    """Scores of four new inputs X ``(4, 3)`` when one matrix W ``(3, 2)`` serves as W_q and W_k: ``(XW)(XW)ᵀ``."""
    x, w = torch.tensor(SHARED_X), torch.tensor(SHARED_W)
    keys = x @ w
    wrong = [
        (x @ x.T, "X Xᵀ compares the raw inputs: project them first, Q = K = X W, then S = Q Kᵀ."),
        (keys.T @ keys, "Kᵀ K is (d_k, d_k): it pairs features, not tokens. The scores are K Kᵀ, (n, n)."),
    ]
    return compare_tensor(
        answer,
        keys @ keys.T,
        name="the scores with W_q = W_k = W (4×4)",
        wrong=wrong,
        success="K Kᵀ is symmetric for ANY inputs: s_ij = k_i·k_j = s_ji. Q Kᵀ is symmetric only by coincidence.",
    )
