"""Lesson 07 exercises: summing the weighted values into the output (step 7).

- ``summing.1`` by hand: α = [0.25, 0.75], v₁ = [4, 0], v₂ = [0, 8] → the output z.
- ``summing.2`` code: ``outputs(weights, values)`` as a sum over the keys, run on fresh inputs.
- ``summing.3`` transfer: append document 000's Input 4 to document 001's three inputs: Output 4.
"""

from __future__ import annotations

import torch
from torch import Tensor

from .. import examples
from ..steps import derive_qkv, score, softmax, sum_weighted_values, weight_values
from ._calls import compare_call
from ._core import Feedback, compare_tensor, exercise
from .weighting import HAND_VALUES, HAND_WEIGHTS

__all__ = ["by_hand", "new_token", "outputs", "wrong_answers"]


def _fresh_inputs() -> tuple[Tensor, Tensor]:
    """Weights ``(n_q, n_k) = (2, 3)`` and values ``(n_k, d_v) = (3, 4)`` never shown in a lesson."""
    gen = torch.Generator().manual_seed(7)
    return softmax(torch.randn(2, 3, generator=gen)), torch.randn(3, 4, generator=gen)


def _four_tokens() -> tuple[Tensor, Tensor, Tensor]:
    """001's weights on 001's three inputs plus 000's Input 4 ``[3, 1, 1, 1]``: Q, K, V ``(4, 3)``."""
    x = torch.cat([examples.three_inputs.inputs, examples.four_inputs.inputs[3:]])
    return derive_qkv(x, *examples.three_inputs.weights)


def wrong_answers() -> dict[str, list[tuple[object, str | None]]]:
    """Per exercise, typical wrong answers and the mistake id each must reveal (None: a plain hint)."""
    w, v = HAND_WEIGHTS, HAND_VALUES
    q, k, vals = _four_tokens()
    return {
        "summing.1": [(v.sum(dim=0), "weights-not-values"), (v.mean(dim=0), None), (w[:, None] * v, None)],
        "summing.2": [
            (lambda a, b: weight_values(a, b).sum(dim=-1), None),
            (lambda a, b: a.sum(dim=-1), "weights-not-values"),
            (lambda a, b: a.T @ b, None),  # raises: (3, 2) @ (3, 4)
        ],
        "summing.3": [(answer, mistake) for answer, _hint, mistake in _wrong_new_token(q, k, vals)],
    }


@exercise("summing.1")
def by_hand(answer: object) -> Feedback:
    """z = α₁ v₁ + α₂ v₂ with α = [0.25, 0.75], v₁ = [4, 0], v₂ = [0, 8]."""
    w, v = HAND_WEIGHTS, HAND_VALUES
    wrong = [
        (
            v.sum(dim=0),
            "You added the values without their weights: multiply each by its α first.",
            "weights-not-values",
        ),
        (v.mean(dim=0), "That is the plain average of the values (equal weights ½, ½); use α = [0.25, 0.75]."),
        (w[:, None] * v, "Those are the weighted values (step 6); step 7 adds them up into one vector."),
    ]
    return compare_tensor(answer, w @ v, name="the output z (2 numbers)", wrong=wrong)


@exercise("summing.2")
def outputs(answer: object) -> Feedback:
    """A function ``outputs(weights (n_q, n_k), values (n_k, d_v)) -> (n_q, d_v)``."""
    weights, values = _fresh_inputs()
    wrong = [
        (
            weight_values(weights, values).sum(dim=-1),
            "You summed over the features (the last axis of the (n_q, n_k, d_v) grid); each output adds its "
            "query's weighted values over the keys: dim=-2 (or simply weights @ values).",
        ),
        (
            weights.sum(dim=-1),
            "You added up the weights (each row sums to 1): add up the weighted *values*, Σ_j α_ij v_j.",
            "weights-not-values",
        ),
    ]
    return compare_call(
        answer,
        (weights, values),
        call="your outputs(weights, values)",
        expected=sum_weighted_values(weight_values(weights, values)),
        name="outputs(weights, values) on new weights (2×3) and values (3×4)",
        wrong=wrong,
        success="Each row is a weighted average of the rows of V.",
    )


@exercise("summing.3")
def new_token(answer: object) -> Feedback:
    """001's weights on four inputs (001's three and ``[3, 1, 1, 1]``): Output 4, shape ``(3,)``."""
    q, k, v = _four_tokens()
    return compare_tensor(
        answer,
        (softmax(score(q, k)) @ v)[3],
        name="Output 4 of the four-token input (3 numbers)",
        wrong=_wrong_new_token(q, k, v),
        success="A new token changes the others' outputs too: it is a new key for every query.",
    )


def _wrong_new_token(q: Tensor, k: Tensor, v: Tensor) -> list[tuple[Tensor, str, str | None]]:
    return [
        (
            softmax(score(q[3:], k[:3]))[0] @ v[:3],
            "You let the new token look only at the three old keys: it has a key and a value too, so its "
            "query meets all four keys (itself included).",
            None,
        ),
        (
            (softmax(score(k[3:], q)) @ v)[0],
            "You scored the new token's *key* against every query (K Qᵀ): its output needs its query against "
            "every key, q₄ Kᵀ.",
            "k-q-transposed",
        ),
        (
            softmax(score(q, k), dim=0)[3] @ v,
            "Your weights were normalised over the queries (softmax with dim=0): normalise each query's "
            "row over the keys, dim=-1.",
            "softmax-axis",
        ),
    ]
