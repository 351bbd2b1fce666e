"""Lesson 08 · Scaling: its explorer and its exercise checkers.

Lesson 08 explorer: why divide by sqrt(d_k) — score spread and softmax saturation as d_k grows.

Lesson 08 exercises: dividing the scores by √d_k (step 8, applied between scores and softmax).

- ``scaling.1`` by hand: the scores [8, 4, 0] of a query with d_k = 16, scaled.
- ``scaling.2`` code: ``scaled_weights(queries, keys)`` = softmax(Q Kᵀ / √d_k), run on fresh inputs.
- ``scaling.3`` transfer: the divisor in one head of a model with d_model = 512 and h = 16 heads.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from functools import partial
from typing import TypedDict, cast

import torch
import torch.nn.functional as F
from torch import Tensor

from ..examples import random_qk
from ..saturation import ScalingStats, scaling_stats
from ..show import ui
from ..show.explorer import Explorer, HeatmapView, Shown
from ..show.table import Part
from ..steps import attention_weights, scale_scores, score, softmax
from ._calls import compare_call
from ._check import ATTENTION_FAMILY, ATTNLIB, Feedback, Wrong, compare_number, compare_tensor, exercise

__all__ = [
    "ScalingExplorer",
    "ScalingStats",
    "by_hand",
    "per_head_divisor",
    "random_qk",
    "scaled_weights",
    "scaling_stats",
    "wrong_answers",
]


class ScalingValues(TypedDict):
    """What :meth:`ScalingExplorer.compute` reads: the controls' values."""

    d_k: int
    seed: int


class ScalingExplorer(Explorer):
    """Random queries and keys of size ``d_k``: the softmax of ``Q Kᵀ`` unscaled and scaled side by side.

    Controls: ``d_k`` (a slider over the powers of two :data:`D_K`) and ``seed``. Views: ``unscaled``
    (``softmax(Q Kᵀ)``) and ``scaled`` (``softmax(Q Kᵀ / sqrt(d_k))``), both ``(n_tokens, n_tokens)`` with
    colours fixed to [0, 1]. ``stats`` gives the measured standard deviation of the scores and the mean largest
    weight per row for both.
    """

    def __init__(self, d_k: int = 64, seed: int = 0, n_tokens: int = 6):
        super().__init__()
        self.n_tokens = n_tokens
        if d_k not in self.D_K:
            raise ValueError(f"d_k must be a power of two from 1 to 512, one of {self.D_K}; got {d_k!r}")
        self.controls["d_k"] = ui.SelectionSlider(options=self.D_K, value=d_k, description="d_k")
        self.controls["seed"] = ui.IntSlider(value=seed, min=0, max=20, description="seed")
        labels = [f"q{i + 1}" for i in range(n_tokens)]
        key_labels = [f"k{j + 1}" for j in range(n_tokens)]
        weights_view = partial(
            HeatmapView, None, row_labels=labels, col_labels=key_labels, vmin=0.0, vmax=1.0, decimals=2
        )
        self.views["unscaled"] = weights_view(title="softmax(Q Kᵀ)")
        self.views["scaled"] = weights_view(title="softmax(Q Kᵀ / √d_k)")
        self.labels = (labels, key_labels)
        self.stats = self.texts["stats"] = ui.HTML()
        self.update()
        self.observe_controls()
        self.widget = ui.VBox(
            [
                ui.HBox([self.controls["d_k"], self.controls["seed"]]),
                self.message,
                ui.HBox([self.views["unscaled"], self.views["scaled"]]),
                self.stats,
            ]
        )

    #: the d_k the slider offers, each in the table of states (the page answers them without a kernel): powers
    #: of two, as the lesson compares d_k = 1, 2, 4 … 512
    D_K = tuple(2**k for k in range(10))

    def table_parts(self) -> list[Part]:
        """One table of every output, in a chunk per seed (the page loads a seed's chunk when it is chosen)."""
        return [Part(("d_k", "seed"), ("views/unscaled", "views/scaled", "texts/stats"), chunk="seed")]

    def current(self) -> ScalingStats:
        """The statistics for the current slider values."""
        return scaling_stats(self.controls["d_k"].value, n_tokens=self.n_tokens, seed=self.controls["seed"].value)

    def compute(self, values: Mapping[str, object]) -> Shown:
        """Both softmaxes of fresh random scores at ``d_k``, and their measured spread."""
        values = cast(ScalingValues, values)
        d_k = values["d_k"]
        stats = scaling_stats(d_k, n_tokens=self.n_tokens, seed=values["seed"])
        rows, cols = self.labels
        return Shown(
            views={
                "unscaled": self.views["unscaled"].frame(stats.weights, row_labels=rows, col_labels=cols),
                "scaled": self.views["scaled"].frame(stats.scaled_weights, row_labels=rows, col_labels=cols),
            },
            texts={
                "stats": (
                    f"<table><tr><th></th><th>std of scores</th><th>mean max weight</th></tr>"
                    f"<tr><td>unscaled</td><td>{stats.std:.3f}</td><td>{stats.max_weight:.3f}</td></tr>"
                    f"<tr><td>scaled</td><td>{stats.scaled_std:.3f}</td><td>{stats.scaled_max_weight:.3f}</td></tr>"
                    f"</table><small>theory: std √d_k = {d_k**0.5:.3f} unscaled, 1 scaled; "
                    f"uniform weights would be {1 / self.n_tokens:.3f}, one-hot 1</small>"
                )
            },
        )

    def summary(self) -> str:
        c = self.controls
        return f"ScalingExplorer(d_k={c['d_k'].value}, seed={c['seed'].value}, n_tokens={self.n_tokens})"


HAND_SCORES = torch.tensor([8.0, 4.0, 0.0])
HAND_D_K = 16
D_MODEL, NUM_HEADS = 512, 16  # scaling.3: √(512 / 16) = √32 ≈ 5.66 (no number the page prints)


def _fresh_inputs() -> tuple[Tensor, Tensor]:
    """Queries ``(n_q, d_k) = (3, 7)`` and keys ``(n_k, d_k) = (5, 7)`` never shown in a lesson."""
    gen = torch.Generator().manual_seed(8)
    return torch.randn(3, 7, generator=gen), torch.randn(5, 7, generator=gen)


def wrong_answers() -> dict[str, list[tuple[object, str | None]]]:
    """Per exercise, typical wrong answers and the mistake id each must reveal (None: a plain hint)."""
    d_head = D_MODEL // NUM_HEADS
    return {
        "scaling.1": [(HAND_SCORES / HAND_D_K, "scale-by-d"), (HAND_SCORES, "scale-forgotten")],
        "scaling.2": [
            (lambda q, k: torch.softmax(q @ k.T / q.shape[-1], dim=-1), "scale-by-d"),
            (lambda q, k: torch.softmax(q @ k.T, dim=-1), "scale-forgotten"),
            (lambda q, k: torch.softmax(k @ q.T / math.sqrt(q.shape[-1]), dim=-1), "k-q-transposed"),
            (lambda q, k: torch.softmax(q @ k.T / math.sqrt(q.shape[-1]), dim=0), "softmax-axis"),
            (lambda q, k: torch.softmax(q @ k.T / math.sqrt(k.shape[0]), dim=-1), None),
            (attention_weights, "library-function"),
            (lambda q, k: softmax(scale_scores(score(q, k), q.shape[-1])), "library-function"),
        ],
        "scaling.3": [
            (math.sqrt(D_MODEL), "scale-by-d-model"),
            (float(d_head), "scale-by-d"),
            (float(D_MODEL), "scale-by-d-model"),
        ],
    }


@exercise("scaling.1")
def by_hand(answer: object) -> Feedback:
    """The scaled scores of s = [8, 4, 0] with d_k = 16."""
    wrong: list[Wrong] = [
        (HAND_SCORES / HAND_D_K, "You divided by d_k = 16; the scale is √d_k = 4.", "scale-by-d"),
        (HAND_SCORES, "These are the scores unchanged: divide them by √d_k.", "scale-forgotten"),
        (softmax(HAND_SCORES / 4), "Those are already the weights; give the scaled scores, before the softmax."),
    ]
    return compare_tensor(answer, HAND_SCORES / math.sqrt(HAND_D_K), name="the scaled scores (3 numbers)", wrong=wrong)


@exercise("scaling.2")
def scaled_weights(answer: object) -> Feedback:
    """A function ``scaled_weights(queries (n_q, d_k), keys (n_k, d_k)) -> (n_q, n_k)``."""
    queries, keys = _fresh_inputs()
    d_k = queries.shape[-1]
    raw = score(queries, keys)
    wrong: list[Wrong] = [
        (softmax(raw / d_k), "You divided by d_k = 7; divide by √d_k (math.sqrt(d_k)).", "scale-by-d"),
        (softmax(raw), "No scaling: divide the scores by √d_k before the softmax.", "scale-forgotten"),
        (
            softmax(keys @ queries.T / math.sqrt(d_k)),
            "You computed K Qᵀ: one row per key. The scores are Q Kᵀ, one row per query (n_q, n_k).",
            "k-q-transposed",
        ),
        (
            softmax(raw / math.sqrt(d_k), dim=0),
            "Your softmax runs over the queries (dim=0): each query's weights over the keys must sum to 1, dim=-1.",
            "softmax-axis",
        ),
        (
            softmax(raw / math.sqrt(keys.shape[0])),
            f"You divided by √n_k = √{keys.shape[0]}, the number of keys. The scale comes from the length of each "
            f"dot product, d_k = {d_k}: divide by √d_k.",
        ),
    ]
    return compare_call(
        answer,
        (queries, keys),
        call="your scaled_weights(queries, keys)",
        expected=softmax(scale_scores(raw, d_k)),
        name="scaled_weights(queries, keys) on new queries (3×7) and keys (5×7)",
        wrong=wrong,
        success="softmax(Q Kᵀ / √d_k): scaling sits between the scores and the softmax.",
        write_it=(ATTNLIB, ATTENTION_FAMILY, attention_weights, F.scaled_dot_product_attention),
    )


@exercise("scaling.3")
def per_head_divisor(answer: object) -> Feedback:
    """d_model = 512, h = 16 heads: the number each head divides its scores by, √(512 / 16) = √32."""
    d_head = D_MODEL // NUM_HEADS
    wrong: list[tuple[float, str] | tuple[float, str, str]] = [
        (
            math.sqrt(D_MODEL),
            f"√{D_MODEL} scales by the model width; each head's queries and keys have d_head = {D_MODEL} / "
            f"{NUM_HEADS} = {d_head} entries, so the head divides by √{d_head}.",
            "scale-by-d-model",
        ),
        (float(d_head), f"{d_head} is d_head itself; the divisor is its square root.", "scale-by-d"),
        (
            float(D_MODEL),
            f"{D_MODEL} is the model width, and not even its square root: use √d_head.",
            "scale-by-d-model",
        ),
        (
            math.sqrt(D_MODEL / 8),
            f"√64 is the divisor for 8 heads (the original Transformer's); this model splits {D_MODEL} into "
            f"{NUM_HEADS} heads.",
        ),
    ]
    return compare_number(answer, math.sqrt(d_head), name="the divisor of one head", wrong=wrong)
