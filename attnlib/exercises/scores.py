"""Lesson 04 exercises: scores as dot products, S = Q Kᵀ.

- ``scores.1`` by hand: one query against three keys.
- ``scores.2`` code: ``scores_of(queries, keys)`` with n_q ≠ n_k, run on fresh inputs.
- ``scores.3`` transfer: with W_q = W_k the score matrix K Kᵀ of document 001 (symmetric, always).
"""

from __future__ import annotations

import torch
from torch import Tensor

from .. import examples
from ..steps import score
from ._calls import compare_call
from ._core import Feedback, compare_tensor, exercise

__all__ = ["by_hand", "same_weights", "scores_of", "wrong_answers"]

HAND_QUERY = (1.0, 2.0, 0.0)
HAND_KEYS = ((1.0, 0.0, 1.0), (0.0, 1.0, 3.0), (2.0, 1.0, 0.0))


def _fresh() -> tuple[Tensor, Tensor]:
    gen = torch.Generator().manual_seed(4)
    return torch.randn(2, 3, generator=gen), torch.randn(5, 3, generator=gen)


def wrong_answers() -> dict[str, list[tuple[object, str | None]]]:
    """Per exercise, typical wrong answers and the mistake id each must reveal (None: a plain hint)."""
    q, k = torch.tensor(HAND_QUERY), torch.tensor(HAND_KEYS)
    _, keys, _ = examples.three_inputs.qkv()
    queries, _, _ = examples.three_inputs.qkv()
    return {
        "scores.1": [(q @ k, "k-q-transposed"), (k.sum(dim=1) * q.sum(), None)],
        "scores.2": [(lambda a, b: b @ a.T, "k-q-transposed"), (lambda a, b: a @ b, None)],
        "scores.3": [(score(queries, keys), None), (keys.T @ keys, None)],
    }


@exercise("scores.1")
def by_hand(answer: object) -> Feedback:
    """The scores of q = [1, 2, 0] against k_1 = [1, 0, 1], k_2 = [0, 1, 3], k_3 = [2, 1, 0]."""
    q, k = torch.tensor(HAND_QUERY), torch.tensor(HAND_KEYS)
    wrong = [
        (
            q @ k,
            "You multiplied q by the matrix whose ROWS are the keys, pairing q with columns. Each score pairs q "
            "with one key: s_j = q · k_j, i.e. K q (or q Kᵀ).",
            "k-q-transposed",
        ),
        (k.sum(dim=1) * q.sum(), "A dot product multiplies entry by entry, then adds: q·k = Σ_c q_c k_c."),
    ]
    return compare_tensor(answer, k @ q, name="the three scores of q", wrong=wrong)


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
    return compare_call(
        answer, (queries, keys), call="your scores_of(queries, keys)", expected=queries @ keys.T,
        name="scores_of on 2 new queries and 5 new keys (2×5)", wrong=wrong,
        success="With n_q ≠ n_k you can see it: rows are queries, columns keys.",
    )  # fmt: skip


@exercise("scores.3")
def same_weights(answer: object) -> Feedback:
    """001's scores if the queries used the key weights (W_q = W_k): ``K Kᵀ`` ``(3, 3)``."""
    queries, keys, _ = examples.three_inputs.qkv()
    wrong = [
        (
            score(queries, keys),
            "Those are the lesson's scores Q Kᵀ with 001's own W_q. Here W_q = W_k, so every query equals its "
            "key: Q = K.",
        ),
        (keys.T @ keys, "Kᵀ K is (d_k, d_k): it pairs features, not tokens. The scores are K Kᵀ, (n, n)."),
    ]
    return compare_tensor(
        answer, keys @ keys.T, name="001's scores with W_q = W_k", wrong=wrong,
        success="K Kᵀ is symmetric for ANY inputs: s_ij = k_i·k_j = s_ji. Q Kᵀ is symmetric only by coincidence.",
    )  # fmt: skip
