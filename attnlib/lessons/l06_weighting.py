"""Lesson 06 · Weighting: its explorer and its exercise checkers.

Lesson 06 explorer: the weighted values ``α_ij · v_j`` of one query, next to its weights and V.

Lesson 06 exercises: weighting each value by its weight (step 6).

- ``weighting.1`` by hand: two values, one query's two weights → the ``(n_k, d_v)`` weighted values.
- ``weighting.2`` code: ``weigh(weights, values)`` → the grid ``(n_q, n_k, d_v)``, run on fresh inputs.
- ``weighting.3`` transfer: document 001's Input 1 with *scaled* weights (÷√3), as document 004 does.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TypedDict, cast

import torch
from torch import Tensor

from .. import examples
from ..show import ui
from ..show.explorer import Explorer, HeatmapView, Shown
from ..steps import scale_scores, score, softmax, weight_values
from ._calls import compare_call
from ._check import ATTNLIB, Feedback, Wrong, compare_tensor, exercise

__all__ = ["EXAMPLES", "WeightingExplorer", "by_hand", "example_attention", "scaled_input_1", "weigh", "wrong_answers"]


EXAMPLES = ("001", "000")


def example_attention(key: str, *, scaled: bool = False) -> tuple[Tensor, Tensor, tuple[str, ...]]:
    """Weights ``(n_q, n_k)``, values ``(n_k, d_v)`` and token labels of document ``key``.

    ``scaled=False`` follows documents 000 and 001 (no ``1/sqrt(d_k)``).
    """
    if key not in EXAMPLES:
        raise ValueError(f"example must be one of {EXAMPLES}, got {key!r}")
    ex = examples.get(key)
    if not isinstance(ex, examples.MatrixExample):
        raise ValueError(f"example must be one of {EXAMPLES}, got {key!r}")
    queries, keys, values = ex.qkv()
    scores = score(queries, keys)
    if scaled:
        scores = scale_scores(scores, queries.shape[-1])
    return softmax(scores), values, ex.token_labels


class WeightingValues(TypedDict):
    """What :meth:`WeightingExplorer.compute` reads: the controls' values."""

    example: str
    query: int
    scaled: bool


class WeightingExplorer(Explorer):
    """Step 6 for one query ``i``: row ``j`` of the grid is ``weights[i, j] * values[j]``.

    Controls: ``example`` (document 001 or 000), ``query``, ``scaled`` (divide the scores by
    ``sqrt(d_k)`` first). Views: ``weights`` (the query's row, ``1 × n_k``), ``values`` (V,
    ``n_k × d_v``) and ``weighted`` (``n_k × d_v``, i.e. ``weight_values(W, V)[i]``).
    """

    def __init__(self, example: str = "001", query: int = 0, scaled: bool = False):
        super().__init__()
        _, _, labels = example_attention(example, scaled=scaled)
        self.controls["example"] = ui.Dropdown(options=EXAMPLES, value=example, description="example")
        self.controls["query"] = ui.Dropdown(options=_options(labels), value=query, description="query")
        self.controls["scaled"] = ui.Checkbox(value=scaled, description="scale by 1/√d_k")
        self.views["weighted"] = HeatmapView(None, decimals=4)
        self.views["weights"] = HeatmapView(None, title="weights α", vmin=0.0, vmax=1.0, decimals=4)
        self.views["values"] = HeatmapView(None, title="values V")
        self.update()
        self.observe_controls()
        self.widget = ui.VBox(
            [
                ui.HBox([self.controls["example"], self.controls["query"], self.controls["scaled"]]),
                self.message,
                ui.HBox([self.views["weights"], self.views["values"], self.views["weighted"]]),
            ]
        )

    @property
    def labels(self) -> tuple[str, ...]:
        """The tokens of the document shown."""
        return example_attention(self.controls["example"].value)[2]

    def compute(self, values: Mapping[str, object]) -> Shown:
        """The chosen query's weights, the values, and each value times its weight."""
        values = cast(WeightingValues, values)
        weights, vals, labels = example_attention(values["example"], scaled=values["scaled"])
        query = min(values["query"], len(labels) - 1)
        value_labels = [f"v{j + 1}" for j in range(vals.shape[0])]
        dims = [str(k + 1) for k in range(vals.shape[1])]
        v = self.views
        return Shown(
            views={
                "weighted": v["weighted"].frame(
                    weight_values(weights, vals)[query],
                    row_labels=[f"α{query + 1},{j + 1}·v{j + 1}" for j in range(len(labels))],
                    col_labels=dims,
                    title=f"weighted values of {labels[query]}",
                ),
                "weights": v["weights"].frame(
                    weights[query : query + 1], row_labels=[labels[query]], col_labels=value_labels
                ),
                "values": v["values"].frame(vals, row_labels=value_labels, col_labels=dims),
            },
            controls={"query": {"options": _options(labels), "value": query}},
        )

    def summary(self) -> str:
        c = self.controls
        return (
            f"WeightingExplorer(example={c['example'].value!r}, query={self.labels[c['query'].value]!r}, "
            f"scaled={c['scaled'].value})"
        )


def _options(labels: Sequence[str]) -> list[tuple[str, int]]:
    return [(label, i) for i, label in enumerate(labels)]


#: ``weighting.1``: one query's weights on two keys, and the two values (rows).
HAND_WEIGHTS = torch.tensor([0.25, 0.75])
HAND_VALUES = torch.tensor([[4.0, 2.0], [0.0, 8.0]])


def _fresh_inputs() -> tuple[Tensor, Tensor]:
    """Weights ``(n_q, n_k) = (2, 3)`` (rows sum to 1) and values ``(n_k, d_v) = (3, 4)`` never shown in a lesson."""
    gen = torch.Generator().manual_seed(6)
    return softmax(torch.randn(2, 3, generator=gen)), torch.randn(3, 4, generator=gen)


def _scaled_parts() -> tuple[Tensor, Tensor, Tensor]:
    queries, keys, values = examples.three_inputs.qkv()
    return score(queries, keys), values, torch.tensor(float(queries.shape[-1]))


def wrong_answers() -> dict[str, list[tuple[object, str | None]]]:
    """Per exercise, typical wrong answers and the mistake id each must reveal (None: a plain hint)."""
    w, v = HAND_WEIGHTS, HAND_VALUES
    scores, v001, d_k = _scaled_parts()
    return {
        "weighting.1": [
            ((w[:, None] * v).sum(dim=0), "weights-not-values"),
            (w.flip(0)[:, None] * v, None),
            (w[:, None] * v.T, None),
        ],
        "weighting.2": [
            (lambda a, b: b[:, None] * a.T[:, :, None], "transposed"),
            (lambda a, b: a @ b, "weights-not-values"),
            (lambda a, b: a * b, None),  # raises: (2, 3) * (3, 4) do not broadcast
        ],
        "weighting.3": [
            (softmax(scores)[0][:, None] * v001, "scale-forgotten"),
            (softmax(scores / d_k)[0][:, None] * v001, "scale-by-d"),
            (softmax(scores / math.sqrt(d_k))[:, 0:1] * v001, None),
        ],
    }


@exercise("weighting.1")
def by_hand(answer: object) -> Feedback:
    """α = [0.25, 0.75], v₁ = [4, 2], v₂ = [0, 8]: the weighted values α_j v_j, one row per key."""
    w, v = HAND_WEIGHTS, HAND_VALUES
    total = (w[:, None] * v).sum(dim=0)
    wrong: list[Wrong] = [
        (
            total,
            f"That is the sum of the weighted values, [{', '.join(f'{x:g}' for x in total.tolist())}]: step 7's "
            "output. Step 6 keeps them apart: one row per key, α_j · v_j.",
            "weights-not-values",
        ),
        (w.flip(0)[:, None] * v, "You gave v₁ the weight of key 2: row j is α_j (the weight of key j) times v_j."),
        (w[:, None] * v.T, "You weighted the columns of V: value j is row j of V."),
    ]
    return compare_tensor(answer, w[:, None] * v, name="the two weighted values (2×2, row j = α_j v_j)", wrong=wrong)


@exercise("weighting.2")
def weigh(answer: object) -> Feedback:
    """A function ``weigh(weights (n_q, n_k), values (n_k, d_v)) -> (n_q, n_k, d_v)`` without ``weight_values``."""
    weights, values = _fresh_inputs()
    wrong = [
        (
            values[:, None] * weights.T[:, :, None],
            "That is document 000's layout (n_k, n_q, d_v): put the query first, weights[:, :, None] * values[None].",
            "transposed",
        ),
        (
            weights @ values,
            "weights @ values already sums over the keys (that is step 7, lesson 07); step 6 keeps every "
            "weighted value: shape (n_q, n_k, d_v).",
            "weights-not-values",
        ),
    ]
    return compare_call(
        answer,
        (weights, values),
        call="your weigh(weights, values)",
        expected=weight_values(weights, values),
        name="weigh(weights, values) on new weights (2×3) and values (3×4)",
        wrong=wrong,
        success="It works on inputs it has never seen: broadcasting (n_q, n_k, 1) · (1, n_k, d_v).",
        write_it=(ATTNLIB, weight_values),
    )


@exercise("weighting.3")
def scaled_input_1(answer: object) -> Feedback:
    """001's Input 1 with weights softmax(scores / √3): its three weighted values ``(3, 3)``."""
    scores, values, d_k = _scaled_parts()
    weights = softmax(scores / math.sqrt(d_k))
    wrong: list[Wrong] = [
        (
            softmax(scores)[0][:, None] * values,
            "These use the unscaled weights of the lesson: divide the scores by √d_k = √3 before the softmax.",
            "scale-forgotten",
        ),
        (
            softmax(scores / d_k)[0][:, None] * values,
            "You divided the scores by d_k = 3; the scale is √d_k = √3 ≈ 1.73.",
            "scale-by-d",
        ),
        (
            weights[:, 0:1] * values,
            "You used column 1 of the weights (every query's weight on key 1) instead of row 1 (Input 1's "
            "weight on every key): take weights[0, j] * values[j].",
        ),
    ]
    return compare_tensor(
        answer,
        weights[0][:, None] * values,
        name="Input 1's weighted values with scaled weights (3×3)",
        wrong=wrong,
        success="Value 1 now keeps 14 % instead of 6 %: scaling spreads the weights.",
    )
