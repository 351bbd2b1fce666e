"""Lesson 07 · Summing: its explorer and its exercise checkers.

Lesson 07 explorer: one output row built as the sum of its weighted values, beside the context.

Lesson 07 exercises: summing the weighted values into the output (step 7).

- ``summing.1`` by hand: α = [0.25, 0.75], v₁ = [4, 0], v₂ = [0, 8] → the output z.
- ``summing.2`` code: ``context_of(weights, values)`` as a sum over the keys, run on fresh inputs.
- ``summing.3`` transfer: append document 000's Input 4 to document 001's three inputs: Output 4.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from functools import partial
from typing import TypedDict, cast

import torch
from torch import Tensor

from .. import examples
from ..formatting import explain_weighted_sum
from ..show import ui
from ..show.explorer import Explorer, HeatmapView, Shown
from ..steps import attention, derive_qkv, score, softmax, sum_weighted_values, weight_values
from ._calls import compare_call
from ._check import ATTENTION_FAMILY, ATTNLIB, Feedback, Wrong, compare_tensor, exercise
from .l06_weighting import EXAMPLES, HAND_VALUES, HAND_WEIGHTS, example_attention

__all__ = ["SummingExplorer", "by_hand", "context_of", "new_token", "partial_sum_table", "wrong_answers"]


def partial_sum_table(weights: Tensor, values: Tensor, query: int, terms: int) -> Tensor:
    """The weighted values of ``query`` ``(n_k, d_v)`` with the running sum of the first ``terms`` rows
    appended: shape ``(n_k + 1, d_v)``. With ``terms = n_k`` the last row is the output ``z_query``."""
    grid = weight_values(weights, values)[query]
    return torch.cat([grid, grid[:terms].sum(dim=0, keepdim=True)])


class SummingValues(TypedDict):
    """What :meth:`SummingExplorer.compute` reads: the controls' values."""

    example: str
    query: int
    terms: int
    scaled: bool


class SummingExplorer(Explorer):
    """Step 7: ``z_i = Σ_j α_ij v_j`` built term by term, next to the full context ``W V``.

    Controls: ``example`` (001 or 000), ``query`` (the output row being built), ``terms`` (how
    many weighted values are added so far), ``scaled``. Views: ``sum`` (the ``n_k`` weighted
    values and, in the last row, their running sum; the added rows are outlined) and ``context``
    (all outputs ``(n_q, d_v)``, the row being built outlined).
    """

    def __init__(self, example: str = "001", query: int = 0, terms: int | None = None, scaled: bool = False):
        super().__init__()
        _, values, labels = example_attention(example, scaled=scaled)
        n_k = values.shape[0]
        terms = n_k if terms is None else terms
        c = self.controls
        c["example"] = ui.Dropdown(options=EXAMPLES, value=example, description="example")
        c["query"] = ui.Dropdown(options=_options(labels), value=query, description="query")
        c["terms"] = ui.IntSlider(value=terms, min=1, max=n_k, description="terms added")
        c["scaled"] = ui.Checkbox(value=scaled, description="scale by 1/√d_k")
        self.views["sum"] = HeatmapView(None, decimals=4)
        self.views["context"] = HeatmapView(None, title="context = W V (all outputs)", decimals=4)
        self.update()
        self.observe_controls()
        self.widget = ui.VBox(
            [
                ui.HBox([c["example"], c["query"], c["scaled"]]),
                c["terms"],
                self.message,
                ui.HBox([self.views["sum"], self.views["context"]]),
            ]
        )

    @property
    def labels(self) -> tuple[str, ...]:
        """The tokens of the document shown."""
        return example_attention(self.controls["example"].value)[2]

    def transition(self, values: Mapping[str, object], name: str) -> Mapping[str, object]:
        """A new document starts with every term added (its ``n_k`` terms)."""
        if name != "example":
            return values
        return {**values, "terms": len(example_attention(cast(SummingValues, values)["example"])[2])}

    def adopt(self, values: Mapping[str, object]) -> None:
        """The terms slider's range first, so that its new value fits."""
        state = cast(SummingValues, values)
        n_k = len(example_attention(state["example"])[2])
        self.set_quietly("terms", max=n_k, value=state["terms"])
        super().adopt(values)

    def compute(self, values: Mapping[str, object]) -> Shown:
        """The chosen query's weighted values with the running sum of the first ``terms``, and every output."""
        values = cast(SummingValues, values)
        weights, vals, labels = example_attention(values["example"], scaled=values["scaled"])
        n_k, d_v = vals.shape
        query, terms = min(values["query"], len(labels) - 1), min(values["terms"], n_k)
        dims = [str(k + 1) for k in range(d_v)]
        row_labels = [f"α{query + 1},{j + 1}·v{j + 1}" for j in range(n_k)]
        row_labels.append(f"= z{query + 1}" if terms == n_k else f"sum of {terms}")
        v = self.views
        return Shown(
            views={
                "sum": v["sum"].frame(
                    partial_sum_table(weights, vals, query, terms),
                    row_labels=row_labels,
                    col_labels=dims,
                    title=f"building z{query + 1} ({labels[query]})",
                    rows=[*range(terms), n_k],
                ),
                "context": v["context"].frame(
                    sum_weighted_values(weight_values(weights, vals)),
                    row_labels=list(labels),
                    col_labels=dims,
                    explanations=partial(explain_weighted_sum, weights, vals),
                    rows=[query],
                ),
            },
            controls={
                "query": {"options": _options(labels), "value": query},
                "terms": {"max": n_k, "value": terms},
            },
        )

    def summary(self) -> str:
        c = self.controls
        return (
            f"SummingExplorer(example={c['example'].value!r}, query={self.labels[c['query'].value]!r}, "
            f"terms={c['terms'].value}, scaled={c['scaled'].value})"
        )


def _options(labels: Sequence[str]) -> list[tuple[str, int]]:
    return [(label, i) for i, label in enumerate(labels)]


def _fresh_inputs() -> tuple[Tensor, Tensor]:
    """Weights ``(n_q, n_k) = (2, 3)`` and values ``(n_k, d_v) = (3, 4)`` never shown in a lesson."""
    gen = torch.Generator().manual_seed(7)
    return softmax(torch.randn(2, 3, generator=gen)), torch.randn(3, 4, generator=gen)


def _four_tokens() -> tuple[Tensor, Tensor, Tensor]:
    """001's weights on 001's three inputs plus 000's Input 4 ``[3, 1, 1, 1]``: Q, K, V ``(4, 3)``."""
    x = torch.cat([examples.three_inputs.inputs, examples.four_inputs.inputs[3:]])
    return derive_qkv(x, *examples.three_inputs.projections)


def wrong_answers() -> dict[str, list[tuple[object, str | None]]]:
    """Per exercise, typical wrong answers and the mistake id each must reveal (None: a plain hint)."""
    w, v = HAND_WEIGHTS, HAND_VALUES
    q, k, vals = _four_tokens()
    return {
        "summing.1": [(v.sum(dim=0), "weights-not-values"), (v.mean(dim=0), None), (w[:, None] * v, None)],
        "summing.2": [
            (lambda a, b: (a[:, :, None] * b[None]).sum(dim=-1), None),
            (lambda a, b: a.sum(dim=-1), "weights-not-values"),
            (lambda a, b: a.T @ b, None),  # raises: (3, 2) @ (3, 4)
        ],
        "summing.3": [(answer, mistake) for answer, _hint, mistake in _wrong_new_token(q, k, vals)],
    }


@exercise("summing.1")
def by_hand(answer: object) -> Feedback:
    """z = α₁ v₁ + α₂ v₂ with α = [0.25, 0.75], v₁ = [4, 2], v₂ = [0, 8]."""
    w, v = HAND_WEIGHTS, HAND_VALUES
    wrong: list[Wrong] = [
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
def context_of(answer: object) -> Feedback:
    """A function ``context_of(weights (n_q, n_k), values (n_k, d_v)) -> (n_q, d_v)``."""
    weights, values = _fresh_inputs()
    wrong: list[Wrong] = [
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
        call="your context_of(weights, values)",
        expected=sum_weighted_values(weight_values(weights, values)),
        name="context_of(weights, values) on new weights (2×3) and values (3×4)",
        wrong=wrong,
        success="Each row is a weighted average of the rows of V.",
        write_it=(ATTNLIB, ATTENTION_FAMILY, sum_weighted_values, attention),
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
    own = softmax(score(q, k))[3, 3]
    return [
        (
            v[3],
            f"That is (within 0.001) value 4 itself, {[round(x) for x in v[3].tolist()]}: a good prediction, since "
            f"the new token puts {own:.3f} of its weight on its own key. But not all of it: Output 4 = "
            "softmax(q₄ Kᵀ) V mixes in a little of the other values, so compute it. (Scoring the new token's key "
            "against the queries, K Qᵀ, gives almost the same numbers: use its query against every key.)",
            None,
        ),
        (
            softmax(score(q[3:], k[:3]))[0] @ v[:3],
            "You let the new token look only at the three old keys: it has a key and a value too, so its "
            "query meets all four keys (itself included).",
            None,
        ),
        (
            softmax(score(q, k) / math.sqrt(q.shape[-1]))[3] @ v,
            "001 does not scale: scale=1.0. You divided the scores by √d_k (attention()'s default since lesson 08); "
            "document 001 and this exercise use the unscaled weights softmax(Q Kᵀ): attention(q, k, v, scale=1.0).",
            None,
        ),
        (
            softmax(score(q, k), dim=0)[3] @ v,
            "Your weights were normalised over the queries (softmax with dim=0): normalise each query's "
            "row over the keys, dim=-1.",
            "softmax-axis",
        ),
    ]
