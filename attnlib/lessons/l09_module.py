"""Lesson 09 · The module: its explorer and its exercise checkers.

Lesson 09 explorer: what ``SelfAttention`` computes, with toggles for scaling and a causal mask.

Lesson 09 exercises: masking, inside the module's formula (scores → scale → mask → softmax).

- ``module.1`` predict: scaled scores [1, 2, 3], the last key masked → the three weights.
- ``module.2`` code: ``masked_softmax(scores, mask)`` (mask True = may attend), run on fresh inputs.
- ``module.3`` what goes wrong if a query may see no key: ``safe_masked_softmax`` gives that row zeros.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypedDict, cast

import torch
from torch import Tensor

from .. import examples
from ..modules import SelfAttention, causal_mask
from ..show import ui
from ..show.explorer import Explorer, HeatmapView, Shown
from ._calls import compare_call
from ._check import (
    ATTENTION_FAMILY,
    ATTNLIB,
    Feedback,
    TorchFamily,
    Wrong,
    compare_tensor,
    exercise,
    run_learner_code,
    to_answer_tensor,
)

__all__ = [
    "SOURCES",
    "ModuleExplorer",
    "masked_softmax",
    "module_inputs",
    "predict",
    "safe_masked_softmax",
    "wrong_answers",
]


SOURCES = {
    "004": "004: three token encodings (d=2)",
    "003": "003: 'can you help me to translate this sentence' (d=16)",
}


def module_inputs(source: str) -> tuple[torch.Tensor, list[str], SelfAttention]:
    """Inputs ``(n_tokens, d)``, token labels and the seeded module (seed 42) for ``source``."""
    if source == "004":
        x, labels = examples.encodings.inputs, list(examples.encodings.token_labels)
    elif source == "003":
        x, labels = examples.translate.run().embedded, examples.translate.tokens
    else:
        raise ValueError(f"source must be one of {sorted(SOURCES)}, got {source!r}")
    return x, labels, examples.document_004_module(x.shape[-1])


class ModuleValues(TypedDict):
    """What :meth:`ModuleExplorer.compute` reads: the controls' values."""

    source: str
    scaled: bool
    causal: bool


class ModuleExplorer(Explorer):
    """Weights ``(n, n)`` and context ``(n, d_out)`` of a seeded ``SelfAttention``.

    Controls: ``source`` (004's encodings or 003's sentence), ``scaled`` (divide by ``sqrt(d_k)``),
    ``causal`` (token ``i`` attends only to tokens ``0 … i``). Started on 004 it shows 004's
    ``attention_percents`` and final output.
    """

    def __init__(self, source: str = "004", *, scaled: bool = True, causal: bool = False):
        super().__init__()
        self.controls = {
            "source": ui.Dropdown(options=[(v, k) for k, v in SOURCES.items()], value=source, description="tokens"),
            "scaled": ui.ToggleButton(value=scaled, description="scale by √d_k"),
            "causal": ui.ToggleButton(value=causal, description="causal mask"),
        }
        self.views = {
            "weights": HeatmapView(None, xlabel="key", ylabel="query", vmin=0.0, vmax=1.0, decimals=4),
            "context": HeatmapView(None, title="context = weights @ V", xlabel="feature", decimals=4),
        }
        self.update()
        self.observe_controls()
        self.widget = ui.VBox(
            [
                ui.HBox([self.controls["source"], self.controls["scaled"], self.controls["causal"]]),
                self.message,
                ui.HBox([self.views["weights"], self.views["context"]]),
            ]
        )

    def compute(self, values: Mapping[str, object]) -> Shown:
        """The seeded module's weights and context on the chosen tokens, scaled and masked as chosen."""
        values = cast(ModuleValues, values)
        x, labels, module = module_inputs(values["source"])
        module.scaled = values["scaled"]
        mask = causal_mask(x.shape[0]) if values["causal"] else None
        result = module.intermediates(x, mask=mask)
        parts = ["scaled" if values["scaled"] else "unscaled"] + (["causal"] if values["causal"] else [])
        return Shown(
            views={
                "weights": self.views["weights"].frame(
                    result.weights, row_labels=labels, col_labels=labels, title=f"weights ({', '.join(parts)})"
                ),
                "context": self.views["context"].frame(result.context, row_labels=labels),
            }
        )

    def summary(self) -> str:
        c = self.controls
        return f"ModuleExplorer(source={c['source'].value!r}, scaled={c['scaled'].value}, causal={c['causal'].value})"


def softmax(scores: Tensor) -> Tensor:
    """PyTorch's softmax over the keys: unlike attnlib's, it lets an all -inf row through (as NaN)."""
    return torch.softmax(scores, dim=-1)


PREDICT_SCORES = torch.tensor([1.0, 2.0, 3.0])
PREDICT_MASK = torch.tensor([True, True, False])


def _reference(scores: Tensor, mask: Tensor) -> Tensor:
    """Softmax over the keys of ``scores`` with ``-inf`` where ``mask`` is False; all-masked rows → 0."""
    weights = softmax(scores.masked_fill(~mask, float("-inf")))
    return torch.nan_to_num(weights, nan=0.0)


def _fresh_inputs(*, hidden_row: bool) -> tuple[Tensor, Tensor]:
    """Scores ``(4, 5)`` and a boolean mask never shown in a lesson; ``hidden_row``: row 2 sees no key."""
    gen = torch.Generator().manual_seed(9)
    scores = 2 * torch.randn(4, 5, generator=gen)
    # every row hides some keys and shows others (so that an inverted mask hides no row entirely)
    mask = torch.tensor([[1, 1, 0, 0, 0], [1, 0, 1, 0, 1], [0, 1, 1, 1, 0], [1, 1, 1, 1, 0]], dtype=torch.bool)
    if hidden_row:
        mask[2] = False
    return scores, mask


#: What module.2 and module.3 ask for: the masking. torch's softmax is a tool here; attnlib's masked
#: attention, torch's fused attention and torch's internal masked softmax do the whole exercise.
WRITE_IT = (ATTNLIB, ATTENTION_FAMILY, TorchFamily("torch's masked softmax", ("masked_softmax", "safe_softmax")))


def _mask_with_zero(s: Tensor, m: Tensor) -> Tensor:
    return softmax(s.masked_fill(~m, 0.0))


def _mask_after_softmax(s: Tensor, m: Tensor) -> Tensor:
    return softmax(s) * m


def _mask_with_large_negative(s: Tensor, m: Tensor) -> Tensor:
    return softmax(s.masked_fill(~m, -1e9))


def _mask_with_inf(s: Tensor, m: Tensor) -> Tensor:
    return softmax(s.masked_fill(~m, float("-inf")))


def wrong_answers() -> dict[str, list[tuple[object, str | None]]]:
    """Per exercise, typical wrong answers and the mistake id each must reveal (None: a plain hint)."""
    s, m = PREDICT_SCORES, PREDICT_MASK
    return {
        "module.1": [
            (_mask_with_zero(s, m), "mask-with-zero"),
            (_mask_after_softmax(s, m), "mask-after-softmax"),
            (softmax(s), None),
        ],
        "module.2": [
            (_mask_with_zero, "mask-with-zero"),
            (_mask_after_softmax, "mask-after-softmax"),
            (lambda s, m: _mask_with_inf(s, ~m), None),
            (lambda s, m: torch.softmax(s.masked_fill(~m, float("-inf")), dim=0), "softmax-axis"),
        ],
        "module.3": [(_mask_with_inf, "fully-masked-row"), (_mask_with_large_negative, "fully-masked-row")],
    }


_HINT_ZERO = (
    "A masked score of 0 is still a score: e⁰ = 1 gives the hidden key weight. Replace hidden scores by "
    "-inf (scores.masked_fill(~mask, float('-inf'))) so that e^-inf = 0."
)
_HINT_AFTER = (
    "You zeroed the weights after the softmax: the visible weights no longer sum to 1. Mask the scores with "
    "-inf before the softmax, and the softmax shares all the weight among the visible keys."
)


@exercise("module.1")
def predict(answer: object) -> Feedback:
    """Scaled scores [1, 2, 3], mask [True, True, False]: the weights."""
    s, m = PREDICT_SCORES, PREDICT_MASK
    wrong: list[Wrong] = [
        (_mask_with_zero(s, m), _HINT_ZERO, "mask-with-zero"),
        (_mask_after_softmax(s, m), _HINT_AFTER, "mask-after-softmax"),
        (softmax(s), "These are the weights without the mask: key 3 is hidden, its weight must be 0."),
    ]
    return compare_tensor(
        answer,
        _reference(s, m),
        name="the masked weights (3 numbers)",
        wrong=wrong,
        success="softmax([1, 2]) = [0.2689, 0.7311], and 0 for the hidden key.",
    )


@exercise("module.2")
def masked_softmax(answer: object) -> Feedback:
    """A function ``masked_softmax(scores (n_q, n_k), mask (n_q, n_k) bool, True = may attend)``."""
    scores, mask = _fresh_inputs(hidden_row=False)
    wrong: list[Wrong] = [
        (_mask_with_zero(scores, mask), _HINT_ZERO, "mask-with-zero"),
        (_mask_after_softmax(scores, mask), _HINT_AFTER, "mask-after-softmax"),
        (
            _mask_with_inf(scores, ~mask),
            "Your mask is inverted: True means *may attend*, so hide the keys where mask is False (~mask).",
        ),
        (
            torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=0),
            "Each COLUMN sums to 1: your softmax normalised over the queries (dim=0), as in lesson 05's slip. "
            "Each query spreads its attention over the keys it may see: softmax(..., dim=-1).",
            "softmax-axis",
        ),
    ]
    return compare_call(
        answer,
        (scores, mask),
        call="your masked_softmax(scores, mask)",
        expected=_reference(scores, mask),
        name="masked_softmax(scores, mask) on new scores (4×5)",
        wrong=wrong,
        success="Hidden keys get exactly 0 and every row still sums to 1.",
        write_it=WRITE_IT,
    )


@exercise("module.3")
def safe_masked_softmax(answer: object) -> Feedback:
    """``safe_masked_softmax(scores, mask)``: like ``masked_softmax``, but a row that sees no key gives zeros."""
    scores, mask = _fresh_inputs(hidden_row=True)
    got = run_learner_code(
        answer, scores.clone(), mask.clone(), name="your safe_masked_softmax(scores, mask)", write_it=WRITE_IT
    )
    if isinstance(got, Feedback):
        if "-inf" in got.message:  # attnlib's softmax refuses a row with nothing to normalise
            return Feedback(
                False, got.message + " — that is row 2, which may see no key: give it zeros.", "fully-masked-row"
            )
        return got
    name = "safe_masked_softmax(scores, mask) with a row (row 2) that may see no key"
    as_tensor = to_answer_tensor(got, name)
    if isinstance(as_tensor, Feedback):
        if "NaN" in as_tensor.message:
            return Feedback(
                False,
                "Row 2 came out as NaN: every score of that row is -inf, so the softmax computes 0 / 0. "
                "Detect such rows (mask.any(dim=-1) is False) and give them zeros, e.g. with torch.where "
                "or nan_to_num after the softmax.",
                "fully-masked-row",
            )
        return as_tensor
    wrong = [
        (
            _mask_with_large_negative(scores, mask),
            "Row 2 is uniform (1/5 each): with -1e9 instead of -inf a fully hidden row spreads its weight over "
            "keys it may not see. It should be all zeros: the query sees nothing.",
            "fully-masked-row",
        ),
    ]
    return compare_tensor(
        as_tensor,
        _reference(scores, mask),
        name=name,
        wrong=wrong,
        success="A query that may see nothing gets nothing, instead of NaN poisoning everything after it.",
    )
