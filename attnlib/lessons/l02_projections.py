"""Lesson 02 · Projections: its explorer and its exercise checkers.

Lesson 02 explorer: ``W_q``, ``W_k`` ``(d_in, d_k)`` and ``W_v`` ``(d_in, d_v)`` side by side.

Lesson 02 exercises: the shapes and the size of the three projections.

- ``projections.1`` by hand: the shapes of W_q, W_k, W_v for d_in = 6, d_k = 2, d_v = 3.
- ``projections.2`` code: ``count_parameters(d_in, d_k, d_v)``, run on sizes the lesson never used.
- ``projections.3`` transfer: the shape of ``nn.Linear(4, 3).weight`` (PyTorch stores W transposed).
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import TypedDict, cast

import torch
from torch import Tensor, nn

from ..examples import four_inputs, three_inputs
from ..formatting import matrix_decimals
from ..show import ui
from ..show.explorer import Explorer, HeatmapView, Shown
from ..steps import Projections, init_projections
from ._check import ATTNLIB, Feedback, Wrong, compare_tensor, exercise, run_learner_code

__all__ = ["SOURCE_CHOICES", "ProjectionsExplorer", "count_parameters", "linear_shape", "shapes", "wrong_answers"]


SOURCE_CHOICES: tuple[tuple[str, str], ...] = (
    ("document 001 (4×3)", "001"),
    ("document 000 (4×5)", "000"),
    ("random: init_projections", "random"),
)
_DOCUMENTS = {"000": four_inputs, "001": three_inputs}
NAMES = ("W_q", "W_k", "W_v")


class ProjectionsValues(TypedDict):
    """What :meth:`ProjectionsExplorer.compute` reads: the controls' values."""

    source: str
    d_in: int
    d_k: int
    d_v: int
    seed: int


class ProjectionsExplorer(Explorer):
    """The three projections as heatmaps: a document's integers or seeded ``init_projections``.

    Args:
        source: ``"001"``, ``"000"`` (the documents' weights) or ``"random"``.
        d_in, d_k, d_v, seed: used when ``source="random"`` (``init_projections(d_in, d_k, d_v, seed=seed)``).

    Controls: ``source``, ``d_in``, ``d_k``, ``d_v``, ``seed``. Views: ``w_query``, ``w_key``, ``w_value``.
    """

    def __init__(self, source: str = "001", *, d_in: int = 4, d_k: int = 3, d_v: int = 3, seed: int = 123) -> None:
        super().__init__()
        if source not in {v for _, v in SOURCE_CHOICES}:
            raise ValueError(f"source must be one of {[v for _, v in SOURCE_CHOICES]}, got {source!r}")
        c = self.controls
        c["source"] = ui.ToggleButtons(options=SOURCE_CHOICES, value=source, description="weights")
        c["d_in"] = ui.IntSlider(value=d_in, min=1, max=8, description="d_in")
        c["d_k"] = ui.IntSlider(value=d_k, min=1, max=8, description="d_k")
        c["d_v"] = ui.IntSlider(value=d_v, min=1, max=8, description="d_v")
        c["seed"] = ui.IntText(value=seed, description="seed", layout=ui.Layout(width="180px"))
        self.shapes = self.texts["shapes"] = ui.HTML()
        for key in ("w_query", "w_key", "w_value"):
            self.views[key] = HeatmapView(None)
        self.update()
        self.observe_controls()
        self.widget = ui.VBox(
            [
                c["source"],
                ui.HBox([c["d_in"], c["d_k"], c["d_v"], c["seed"]]),
                ui.HBox([v for v in self.views.values()]),
                self.shapes,
                self.message,
            ]
        )

    @staticmethod
    def projections_of(values: Mapping[str, object]) -> Projections:
        """The projections for ``values``: the document's, or ``init_projections`` at the sliders' sizes."""
        values = cast(ProjectionsValues, values)
        source = values["source"]
        if source == "random":
            return init_projections(values["d_in"], values["d_k"], values["d_v"], seed=int(values["seed"]))
        return _DOCUMENTS[source].projections

    @property
    def projections(self) -> Projections:
        """The projections shown."""
        return self.projections_of(self.values_now())

    def compute(self, values: Mapping[str, object]) -> Shown:
        """The three projections; sliders are live for random weights, for a document they show its sizes, disabled."""
        values = cast(ProjectionsValues, values)
        weights = self.projections_of(values)
        random = values["source"] == "random"
        sizes = {"d_in": weights.w_query.shape[0], "d_k": weights.w_query.shape[1], "d_v": weights.w_value.shape[1]}
        controls: dict[str, dict[str, object]] = {"seed": {"disabled": not random}}
        for name, size in sizes.items():
            controls[name] = {"disabled": not random} if random else {"disabled": True, "value": int(size)}
        return Shown(
            views={
                key: self.views[key].frame(
                    w, row_labels=_rows(w), col_labels=_cols(w), title=_title(name, w), decimals=matrix_decimals(w)
                )
                for key, name, w in zip(("w_query", "w_key", "w_value"), NAMES, weights)
            },
            texts={
                "shapes": html.escape(
                    " · ".join(f"{n} {tuple(w.shape)}" for n, w in zip(NAMES, weights))
                    + "   (rows: d_in; columns: d_k, d_k, d_v)"
                )
            },
            controls=controls,
        )

    def summary(self) -> str:
        c = self.controls
        if c["source"].value == "random":
            return (
                f"ProjectionsExplorer(source='random', d_in={c['d_in'].value}, d_k={c['d_k'].value}, "
                f"d_v={c['d_v'].value}, seed={c['seed'].value})"
            )
        shapes = ", ".join(str(tuple(w.shape)) for w in self.projections)
        return f"ProjectionsExplorer(source={c['source'].value!r}, shapes=[{shapes}])"


def _title(name: str, w: Tensor) -> str:
    return f"{name}  ({w.shape[0]}×{w.shape[1]})"


def _rows(w: Tensor) -> list[str]:
    return [f"in {i + 1}" for i in range(w.shape[0])]


def _cols(w: Tensor) -> list[str]:
    return [f"out {j + 1}" for j in range(w.shape[1])]


D_IN, D_K, D_V = 6, 2, 3
#: ``projections.2`` is run on these ``(d_in, d_k, d_v)``
FRESH_SIZES = ((5, 4, 7), (16, 8, 8), (3, 1, 2))


def _shapes() -> Tensor:
    return torch.tensor([list(w.shape) for w in init_projections(D_IN, D_K, D_V)], dtype=torch.float64)


def _count(d_in: int, d_k: int, d_v: int) -> int:
    return sum(w.numel() for w in init_projections(d_in, d_k, d_v))


def wrong_answers() -> dict[str, list[tuple[object, str | None]]]:
    """Per exercise, typical wrong answers and the mistake id each must reveal (None: a plain hint)."""
    s = _shapes()
    return {
        "projections.1": [
            (s.flip(1), "transposed"),
            ([[D_IN, D_K]] * 3, None),
            ([[D_IN, D_V]] * 3, None),
            ([[D_IN, D_K], [D_IN, D_V], [D_IN, D_K]], None),
        ],
        "projections.2": [
            (lambda d_in, d_k, d_v: 3 * d_in * d_k, None),
            (lambda d_in, d_k, d_v: d_in * d_k * d_v, None),
        ],
        "projections.3": [([4, 3], "transposed"), ([3, 3], None)],
    }


@exercise("projections.1")
def shapes(answer: object) -> Feedback:
    """``[shape of W_q, shape of W_k, shape of W_v]`` for d_in = 6, d_k = 2, d_v = 3."""
    s = _shapes()
    wrong: list[Wrong] = [
        (
            s.flip(1),
            "Rows and columns are swapped: X (n_tokens, d_in) multiplies W from the LEFT, so every W has d_in "
            "rows: (d_in, d_out).",
            "transposed",
        ),
        (
            torch.tensor([[D_IN, D_K]] * 3, dtype=torch.float64),
            f"W_v makes the values, which have their own size d_v = {D_V}; only queries and keys share d_k.",
        ),
        (
            torch.tensor([[D_IN, D_V]] * 3, dtype=torch.float64),
            f"Queries and keys have size d_k = {D_K}; only W_v has d_v = {D_V} columns.",
        ),
        (
            torch.tensor([[D_IN, D_V], [D_IN, D_K], [D_IN, D_K]], dtype=torch.float64),
            "The order is W_q, W_k, W_v: the one with d_v columns comes last.",
        ),
        (
            torch.tensor([[D_IN, D_K], [D_IN, D_V], [D_IN, D_K]], dtype=torch.float64),
            f"W_k and W_v are swapped: keys meet queries in a dot product, so W_k has d_k = {D_K} columns like "
            f"W_q; W_v (the last one) has d_v = {D_V}.",
        ),
    ]
    return compare_tensor(answer, s, name="the shapes of W_q, W_k and W_v", wrong=wrong, atol=0.5)


@exercise("projections.2")
def count_parameters(answer: object) -> Feedback:
    """A function ``count_parameters(d_in, d_k, d_v)``: how many numbers the three matrices hold."""
    got = []
    for sizes in FRESH_SIZES:
        result = run_learner_code(
            answer, *sizes, name="your count_parameters(d_in, d_k, d_v)", write_it=(ATTNLIB, init_projections)
        )
        if isinstance(result, Feedback):
            return result
        got.append(result)
    want = [_count(*sizes) for sizes in FRESH_SIZES]
    wrong = [
        (
            torch.tensor([3 * a * b for a, b, _ in FRESH_SIZES], dtype=torch.float64),
            "You counted three d_in × d_k matrices: W_v is d_in × d_v.",
        ),
        (
            torch.tensor([a * b * c for a, b, c in FRESH_SIZES], dtype=torch.float64),
            "The sizes are not multiplied together: each matrix holds rows × columns numbers; add the three.",
        ),
    ]
    return compare_tensor(
        got,
        torch.tensor(want, dtype=torch.float64),
        name=f"count_parameters on {', '.join(map(str, FRESH_SIZES))}",
        wrong=wrong,
        atol=0.5,
        success="d_in·d_k + d_in·d_k + d_in·d_v = d_in (2 d_k + d_v).",
    )


@exercise("projections.3")
def linear_shape(answer: object) -> Feedback:
    """The shape of ``nn.Linear(4, 3, bias=False).weight``: PyTorch stores ``(d_out, d_in)``."""
    want = torch.tensor(list(nn.Linear(4, 3, bias=False).weight.shape), dtype=torch.float64)
    wrong: list[Wrong] = [
        (
            torch.tensor([4.0, 3.0]),
            "That is the shape of W in this series' X W. nn.Linear stores its weight the other way round, "
            "(d_out, d_in), and computes X Wᵀ — run nn.Linear(4, 3).weight.shape to see it.",
            "transposed",
        ),
        (torch.tensor([3.0, 3.0]), "d_in = 4 goes in, d_out = 3 comes out: one side of the weight is 4."),
    ]
    return compare_tensor(answer, want, name="the shape of nn.Linear(4, 3).weight", wrong=wrong, atol=0.5)
