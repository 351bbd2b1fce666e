"""Lesson 03 exercises: queries, keys and values as matrix products.

- ``qkv.1`` by hand: the key of a new input x = [2, 0, 0, 1] with document 001's key weights.
- ``qkv.2`` code: ``project_all(X, w_query, w_key, w_value)`` → (Q, K, V), run on fresh inputs.
- ``qkv.3`` transfer: document 003 writes q = U x for a column x; all queries of a row matrix X.
"""

from __future__ import annotations

import torch
from torch import Tensor

from .. import examples
from ..steps import derive_qkv, init_weights
from ._core import Feedback, compare_tensor, exercise, run_learner_code

__all__ = ["column_convention", "new_key", "project_all", "wrong_answers"]

NEW_INPUT = (2.0, 0.0, 0.0, 1.0)
#: ``qkv.3``: two tokens of size 2 (rows) and 003-style matrix U, applied as q = U x
X_003 = ((1.0, 2.0), (3.0, -1.0))
U_003 = ((0.0, 1.0), (2.0, 1.0))


def _fresh() -> tuple[Tensor, tuple[Tensor, Tensor, Tensor]]:
    gen = torch.Generator().manual_seed(3)
    return torch.randn(4, 5, generator=gen), tuple(init_weights(5, 3, 2, seed=33))


def wrong_answers() -> dict[str, list[tuple[object, str | None]]]:
    """Per exercise, typical wrong answers and the mistake id each must reveal (None: a plain hint)."""
    x = torch.tensor(NEW_INPUT)
    w = examples.three_inputs.weights
    xs, u = torch.tensor(X_003), torch.tensor(U_003)
    return {
        "qkv.1": [(x @ w.w_query, None), (x @ w.w_value, None)],
        "qkv.2": [
            (lambda X, wq, wk, wv: (X @ wk, X @ wq, X @ wv), None),
            (lambda X, wq, wk, wv: (wq.T @ X.T, wk.T @ X.T, wv.T @ X.T), "transposed"),
        ],
        "qkv.3": [(xs @ u, "transposed"), (u @ xs.T, "transposed")],
    }


@exercise("qkv.1")
def new_key(answer: object) -> Feedback:
    """``k = x W_k`` for x = [2, 0, 0, 1] and 001's ``W_k`` ``(4, 3)``: a vector of size 3."""
    x = torch.tensor(NEW_INPUT)
    w = examples.three_inputs.weights
    wrong = [
        (x @ w.w_query, "That is the query: a key uses the key weights W_k."),
        (x @ w.w_value, "That is the value: a key uses the key weights W_k."),
        (w.w_key.sum(dim=0), "You added all rows of W_k; x = [2, 0, 0, 1] takes 2 × row 1 + 1 × row 4."),
    ]
    return compare_tensor(
        answer, x @ w.w_key, name="the key of x = [2, 0, 0, 1]", wrong=wrong,
        success="2 × row 1 of W_k + 1 × row 4: a row vector times a matrix mixes the matrix's rows.",
    )  # fmt: skip


def _as_three(result: object) -> list[object] | Feedback:
    if isinstance(result, Feedback):
        return result
    if result is None:
        return Feedback(False, "your project_all returned None: return queries, keys, values.")
    if isinstance(result, Tensor) or not isinstance(result, tuple | list) or len(result) != 3:
        return Feedback(False, "your project_all should return three tensors: queries, keys, values (in that order).")
    return list(result)


@exercise("qkv.2")
def project_all(answer: object) -> Feedback:
    """A function ``project_all(X, w_query, w_key, w_value)`` → ``(Q, K, V)``, without derive_qkv."""
    x, weights = _fresh()
    result = _as_three(run_learner_code(answer, x.clone(), *(w.clone() for w in weights), name="your project_all"))
    if isinstance(result, Feedback):
        return result
    q, k, v = derive_qkv(x, *weights)
    names = ("queries", "keys", "values")
    for got, want, name in zip(result, (q, k, v), names):
        wrong = [
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


@exercise("qkv.3")
def column_convention(answer: object) -> Feedback:
    """Document 003's ``q = U x`` for every row ``x`` of X ``(2, 2)``: ``X Uᵀ`` ``(2, 2)``."""
    xs, u = torch.tensor(X_003), torch.tensor(U_003)
    wrong = [
        (
            xs @ u,
            "X @ U treats U like this series' W. 003 applies U to a column, q = U x, so for rows it is "
            "q = x Uᵀ: X @ U.T.",
            "transposed",
        ),
        (
            u @ xs.T,
            "Right numbers, column layout: U @ X.T has one query per COLUMN. Transpose it back (X @ U.T).",
            "transposed",
        ),
    ]
    return compare_tensor(answer, xs @ u.T, name="the queries q_i = U x_i as rows (2×2)", wrong=wrong)
