"""Lesson 05 · Softmax: its explorer and its exercise checkers.

Lesson 05 explorer: softmax with a temperature, one row as bars and all rows as a heatmap.

Lesson 05 exercises: from scores to weights with a softmax you write yourself.

- ``softmax.1`` by hand: softmax([0, 0, ln 2]) — exponentiate, add up, divide.
- ``softmax.2`` code: ``my_softmax(scores)`` row by row and stable, run on scores the lesson never
  showed, ±1e4 included.
- ``softmax.3`` transfer: ``coolest(scores)``, the smallest temperature at which no query gives one key over 0.9,
  run on document 000's scores and on scores the lesson never showed.
"""

from __future__ import annotations

import functools
import html
import math
from collections.abc import Mapping, Sequence
from functools import lru_cache, partial
from typing import TypedDict, cast

import torch
from torch import Tensor

from .. import examples
from ..formatting import explain_softmax, format_matrix
from ..show import ui
from ..show.explorer import Explorer, HeatmapView, Shown, parse_matrix
from ..steps import score, softmax
from ._check import ATTNLIB, SOFTMAX_FAMILY, Feedback, Wrong, compare_number, compare_tensor, exercise, run_learner_code

__all__ = [
    "EXAMPLES",
    "SoftmaxExplorer",
    "by_hand",
    "entropy",
    "example_scores",
    "format_matrix",
    "my_softmax",
    "temperature_000",
    "wrong_answers",
]


EXAMPLES = ("001", "000", "004")


@lru_cache(maxsize=8)
def example_scores(key: str) -> tuple[Tensor, tuple[str, ...]]:
    """The unscaled scores ``Q Kᵀ`` ``(n_q, n_k)`` of document ``key`` and its token labels."""
    ex = examples.get(key)
    if not isinstance(ex, examples.MatrixExample):
        raise ValueError(f"example must be one of {EXAMPLES}, got {key!r}")
    if ex.d_model is not None:  # 004 builds its module of this size: its projections are random
        steps = examples.document_004_module(ex.d_model).intermediates(ex.inputs)
        return steps.scores, ex.token_labels
    queries, keys, _ = ex.qkv()
    return score(queries, keys), ex.token_labels


def entropy(weights: Tensor) -> Tensor:
    """Entropy in nats of each row of ``weights`` ``(n_q, n_k)`` → ``(n_q,)``; 0·log 0 counts as 0."""
    w = weights.to(torch.float64)
    return -(torch.where(w > 0, w * w.log(), torch.zeros_like(w))).sum(dim=-1)


class SoftmaxValues(TypedDict):
    """What :meth:`SoftmaxExplorer.compute` reads: the controls' values."""

    example: str
    scores: str
    temperature: float
    query: int


class SoftmaxExplorer(Explorer):
    """Scores → weights with a temperature ``T``: ``softmax(scores / T)`` row by row.

    Controls: ``example`` (a document's scores), ``scores`` (editable text, one row per query),
    ``temperature`` (divides the scores; ``T = 1`` is the plain softmax), ``query`` (the row shown
    as bars). Views: ``bars`` (that row's weights) and ``heatmap`` (all weights). ``stats`` shows
    each row's sum and entropy (in nats; ``log n_k`` is the uniform maximum).
    """

    def __init__(self, example: str = "001", temperature: float = 1.0, query: int = 0):
        super().__init__()
        if example not in EXAMPLES:
            raise ValueError(f"example must be one of {EXAMPLES}, got {example!r}")
        scores, labels = example_scores(example)
        self.controls["example"] = ui.Dropdown(options=EXAMPLES, value=example, description="example")
        self.controls["scores"] = ui.Textarea(
            value=format_matrix(scores, 6), description="scores", layout=ui.Layout(width="320px", height="90px")
        )
        self.controls["temperature"] = ui.FloatLogSlider(
            value=temperature, base=10, min=-1, max=1.5, step=0.05, description="temperature T", readout_format=".2f"
        )
        self.controls["query"] = ui.Dropdown(options=_query_options(labels), value=query, description="query")
        self.stats = self.texts["stats"] = ui.HTML()
        # the heatmap comes first: it is the PNG a reader without a kernel sees
        self.views["heatmap"] = HeatmapView(None, title="weights = softmax(scores / T)", vmin=0.0, vmax=1.0, decimals=3)
        self.views["bars"] = HeatmapView(None, title="one query's weights", vmin=0.0, vmax=1.0, decimals=2)
        self.bar_caption = self.texts["bar_caption"] = ui.HTML()
        self.update()
        self.observe_controls()
        self.widget = ui.VBox(
            [
                ui.HBox([self.controls["example"], self.controls["temperature"], self.controls["query"]]),
                self.controls["scores"],
                self.message,
                ui.HBox([ui.VBox([self.bar_caption, self.views["bars"]]), self.views["heatmap"]]),
                self.stats,
            ]
        )

    # ------------------------------------------------------------------ computation
    @staticmethod
    def scores_and_labels(values: Mapping[str, object]) -> tuple[Tensor, tuple[str, ...]]:
        """The scores typed in the text (``(n, n)``) and their token labels: the example's when the shape is
        the example's, else ``token 1 … n``."""
        values = cast(SoftmaxValues, values)
        scores = torch.tensor(parse_matrix(values["scores"]), dtype=torch.float32)
        example, labels = example_scores(values["example"])
        if scores.shape == example.shape:
            return scores, labels
        if scores.shape[0] != scores.shape[1]:
            raise ValueError(
                f"scores must be square (n_tokens, n_tokens) for self-attention, got shape {tuple(scores.shape)}"
            )
        return scores, tuple(f"token {i + 1}" for i in range(scores.shape[0]))

    def weights(self) -> Tensor:
        """``softmax(scores / T)`` over the keys, ``(n_q, n_k)``, for the scores typed now."""
        scores, _ = self.scores_and_labels(self.values_now())
        return softmax(scores / self.controls["temperature"].value, dim=-1)

    def compute(self, values: Mapping[str, object]) -> Shown:
        """``softmax(scores / T)`` of the typed scores, one query's row as bars, each row's sum and entropy."""
        values = cast(SoftmaxValues, values)
        scores, labels = self.scores_and_labels(values)
        temperature = values["temperature"]
        weights = softmax(scores / temperature, dim=-1)
        q = min(values["query"], len(labels) - 1)
        v = self.views
        return Shown(
            views={
                "heatmap": v["heatmap"].frame(
                    weights,
                    row_labels=labels,
                    col_labels=labels,
                    rows=[q],
                    explanations=partial(explain_softmax, scores, temperature=temperature),
                ),
                "bars": v["bars"].frame(weights[q : q + 1], row_labels=[labels[q]], col_labels=labels),
            },
            texts={
                "bar_caption": f"<b>bars: weights of {html.escape(labels[q])}</b>",
                "stats": _stats(labels, weights),
            },
            controls={"query": {"options": _query_options(labels), "value": q}},
        )

    # ------------------------------------------------------------------ events
    def transition(self, values: Mapping[str, object], name: str) -> Mapping[str, object]:
        """A new example: its scores replace the text."""
        if name != "example":
            return values
        return {**values, "scores": format_matrix(example_scores(cast(SoftmaxValues, values)["example"])[0], 6)}

    def summary(self) -> str:
        c = self.controls
        labels = self.views["heatmap"].row_labels  # what is shown (the last good scores)
        return (
            f"SoftmaxExplorer(example={c['example'].value!r}, temperature={c['temperature'].value:g}, "
            f"query={labels[c['query'].value]!r})"
        )


def _query_options(labels: Sequence[str]) -> list[tuple[str, int]]:
    return [(label, i) for i, label in enumerate(labels)]


def _stats(labels: Sequence[str], weights: Tensor) -> str:
    sums = weights.sum(dim=-1)
    ent = entropy(weights)
    rows = "".join(
        f"<tr><td>{label}</td><td>{float(s):.4f}</td><td>{float(e):.4f}</td></tr>"
        for label, s, e in zip(labels, sums, ent)
    )
    return (
        f"<table><tr><th>query</th><th>row sum</th><th>entropy (nats)</th></tr>{rows}</table>"
        f"<small>uniform over {weights.shape[-1]} keys: entropy log {weights.shape[-1]} = "
        f"{math.log(weights.shape[-1]):.4f}; one-hot: 0</small>"
    )


HAND_SCORES = (0.0, 0.0, math.log(2.0))


def _fresh() -> tuple[Tensor, Tensor]:
    """Ordinary scores ``(3, 4)`` and extreme ones ``(2, 3)`` (±1e4, a row of equal scores)."""
    gen = torch.Generator().manual_seed(5)
    ordinary = 2 * torch.randn(3, 4, generator=gen)
    extreme = torch.tensor([[1e4, 1e4 - 1.0, -1e4], [7.0, 7.0, 7.0]])
    return ordinary, extreme


def _scores_000() -> Tensor:
    queries, keys, _ = examples.four_inputs.qkv()
    return score(queries, keys)


def _naive(s: Tensor) -> Tensor:
    return s.exp() / s.exp().sum(dim=-1, keepdim=True)


def _naive_over_queries(s: Tensor) -> Tensor:
    shifted = (s - s.max(dim=0, keepdim=True).values).exp()
    return shifted / shifted.sum(dim=0, keepdim=True)


#: What ``softmax.2`` asks the learner to write: no softmax of attnlib's or torch's is an accepted answer, nor
#: torch's log-softmax, logsumexp (which hands over the very stabilisation asked for) or fused attention.
WRITE_IT = (ATTNLIB, SOFTMAX_FAMILY, softmax, torch.softmax, torch.nn.functional.softmax, torch.Tensor.softmax)

_HINT_KEEPDIM = (
    "Your row maxima or row sums have shape (n_q,), one number per row, and (n_q, n_k) − (n_q,) lines them up "
    "with the COLUMNS, not the rows (here 3 rows and 4 columns do not even fit). Keep the reduced axis: "
    "scores.max(dim=-1, keepdim=True).values and exps.sum(dim=-1, keepdim=True) have shape (n_q, 1)."
)
_HINT_WHOLE_MATRIX = (
    "You divided by the sum of the whole matrix, so all the weights together sum to 1 but no row does. Each "
    "query normalises its own row: divide by exps.sum(dim=-1, keepdim=True)."
)


def _keepdim_hint(exc: Exception) -> Feedback | None:
    if isinstance(exc, RuntimeError) and "must match the size of tensor" in str(exc):
        return Feedback(False, _HINT_KEEPDIM, "keepdim-forgotten")
    return None


def _sums_to_one_overall(got: object) -> bool:
    """Whether ``got`` is a (3, 4) tensor whose entries together sum to 1 while its rows do not."""
    if not isinstance(got, Tensor) or got.shape != (3, 4) or not got.is_floating_point():
        return False
    total, rows = got.detach().double().sum(), got.detach().double().sum(dim=-1)
    return abs(float(total) - 1) < 1e-3 and not bool(torch.allclose(rows, torch.ones_like(rows), atol=1e-3))


def _whole_matrix(s: Tensor) -> Tensor:
    exps = (s - s.max()).exp()
    return exps / exps.sum()


def _no_keepdim(s: Tensor) -> Tensor:
    exps = (s - s.max(dim=-1, keepdim=True).values).exp()
    return exps / exps.sum(dim=-1)


def wrong_answers() -> dict[str, list[tuple[object, str | None]]]:
    """Per exercise, typical wrong answers and the mistake id each must reveal (None: a plain hint)."""
    s = torch.tensor(HAND_SCORES)
    return {
        "softmax.1": [(s / s.sum(), None), (s.exp(), None)],
        "softmax.2": [
            (_naive_over_queries, "softmax-axis"),
            (_naive, None),
            (lambda t: t.exp(), None),
            (lambda t: _naive(t - t.max()), None),
            (_whole_matrix, "whole-matrix-sum"),
            (_no_keepdim, "keepdim-forgotten"),
        ],
        "softmax.3": [
            (lambda scores: math.sqrt(5), None),
            (lambda scores: 5.0, None),
            (_first_row_only, None),
            (lambda scores: round(coolest_temperatures()[0], 2), None),  # 000's T as a constant: wrong on new scores
        ],
    }


@exercise("softmax.1")
def by_hand(answer: object) -> Feedback:
    """softmax([0, 0, ln 2]) = [1, 1, 2] / 4."""
    s = torch.tensor(HAND_SCORES, dtype=torch.float64)
    wrong = [
        (s / s.sum(), "You divided the scores by their sum without exponentiating: softmax takes e^s first."),
        (s.exp(), "These are the exponentials e^s = [1, 1, 2]; divide by their sum so the weights add up to 1."),
    ]
    return compare_tensor(answer, softmax(s), name="softmax([0, 0, ln 2])", wrong=wrong, success="[1, 1, 2] / 4.")


@exercise("softmax.2")
def my_softmax(answer: object) -> Feedback:
    """A function ``my_softmax(scores (n_q, n_k))`` → weights, rows summing to 1, finite for ±1e4."""
    ordinary, extreme = _fresh()
    call = "your my_softmax(scores)"
    got = run_learner_code(answer, ordinary.clone(), name=call, write_it=WRITE_IT, on_error=_keepdim_hint)
    if isinstance(got, Feedback):
        return got
    wrong: list[Wrong] = [
        (
            softmax(ordinary, dim=0),
            "Each COLUMN sums to 1: you normalised over the queries (dim=0). Each query spreads its attention "
            "over the keys: normalise along dim=-1.",
            "softmax-axis",
        ),
        (ordinary.exp(), "These are e^s; divide each row by its sum."),
        (_whole_matrix(ordinary), _HINT_WHOLE_MATRIX, "whole-matrix-sum"),
    ]
    feedback = compare_tensor(got, softmax(ordinary), name="my_softmax on new 3×4 scores", wrong=wrong)
    if not feedback.correct:
        if feedback.mistake is None and _sums_to_one_overall(got):
            return Feedback(False, _HINT_WHOLE_MATRIX, "whole-matrix-sum")
        return feedback
    got = run_learner_code(answer, extreme.clone(), name=call, write_it=WRITE_IT, on_error=_keepdim_hint)
    if isinstance(got, Feedback):
        return got
    try:
        finite = torch.isfinite(torch.as_tensor(got, dtype=torch.float64))
    except (TypeError, ValueError, RuntimeError):
        finite = None
    if finite is not None and finite.shape == extreme.shape and not bool(finite.all()):
        if bool(finite[0].all()):  # the 1e4 row survived, the row of 7s did not: one maximum for the matrix
            return Feedback(
                False,
                "Right on ordinary scores, but you subtracted one maximum for the whole matrix. The row of 7s "
                "then becomes 7 − 10000: e^−9993 underflows to 0 in every entry, and 0/0 is NaN. Subtract each "
                "row's own maximum (keepdim=True).",
            )
        return Feedback(
            False,
            "Right on ordinary scores, but e^10000 overflows to inf and inf/inf is NaN: subtract each row's "
            "maximum before exp (it changes nothing mathematically).",
        )
    feedback = compare_tensor(got, softmax(extreme), name="my_softmax on scores of ±1e4 and a row of equal scores")
    if not feedback.correct:
        return feedback
    return Feedback(True, "Row by row, summing to 1, and stable: scores of ±1e4 give finite weights.")


#: ``softmax.3``: the largest weight any query may give one key.
CAP = 0.9
#: ``softmax.3``: how close the learner's temperature must be to the smallest one.
TOL = 0.01


def _cooling(scores: Tensor, cap: float = CAP) -> float:
    """The smallest temperature T with every weight of ``softmax(scores / T)`` at most ``cap`` (bisection)."""
    s = scores.to(torch.float64)
    low, high = 1e-3, 1e3
    for _ in range(80):
        mid = (low + high) / 2
        low, high = (mid, high) if float(softmax(s / mid).max()) > cap else (low, mid)
    return high


@functools.cache
def coolest_temperatures() -> tuple[float, tuple[float, ...]]:
    """``softmax.3``'s answer for document 000's scores, and the temperature each row alone would need."""
    s = _scores_000()
    return _cooling(s), tuple(_cooling(row[None]) for row in s)


def _first_row_only(scores: Tensor) -> float:
    """A learner's slip: the smallest T for the first query alone (a scan in steps of 0.001)."""
    t = 0.001
    while float((scores[0] / t).softmax(-1).max()) > CAP:
        t += 0.001
    return t


def _unseen_scores() -> tuple[Tensor, ...]:
    """Two score matrices no lesson shows, ``(3, 5)`` and ``(4, 4)``, whose smallest T lies between 1 and 100."""
    gen = torch.Generator().manual_seed(53)
    return 12 * torch.randn(3, 5, generator=gen), 20 * torch.randn(4, 4, generator=gen)


def _one_number(got: object) -> float | None:
    """``got`` as a float if it is one finite real number (a one-element tensor counts), else None."""
    if isinstance(got, Tensor):
        if got.numel() != 1 or got.is_complex():
            return None
        got = got.detach().item()
    if isinstance(got, bool) or isinstance(got, str) or not hasattr(got, "__float__"):
        return None
    try:
        value = float(got)
    except (TypeError, ValueError, OverflowError):
        return None
    return value if math.isfinite(value) else None


@exercise("softmax.3")
def temperature_000(answer: object) -> Feedback:
    """A function ``coolest(scores (n_q, n_k))`` → the smallest T (±0.01) at which no weight exceeds 0.9.

    Run on document 000's scores first (the named hints are about them), then on two unseen matrices.
    """
    want, per_row = coolest_temperatures()
    call = "your coolest(scores)"
    got = run_learner_code(
        answer, _scores_000(), name=call, write_it=(_cooling, coolest_temperatures), allowed=(softmax,)
    )
    if isinstance(got, Feedback):
        return got
    value = _one_number(got)
    if value is None:
        return Feedback(False, f"{call} should return one number, the temperature T; it returned {_describe(got)}.")
    wrong: list[tuple[float, str] | tuple[float, str, str]] = [
        (
            math.sqrt(5),
            "√5 is lesson 08's scale, √d_k: at T = √5 rows 2–4 still give key 4 more than 0.997. Raise T until "
            "the largest weight of every row is at most 0.9.",
        ),
        (5.0, "At T = d_k = 5 rows 2–4 still give key 4 more than 0.9: keep raising T."),
    ]
    for i, t in enumerate(per_row):
        if not math.isclose(t, want, abs_tol=TOL):
            wrong.append(
                (
                    t,
                    f"That T is enough for row {i + 1} alone; the rule must hold for every row, and another row "
                    "needs a higher temperature.",
                )
            )
    name = "the smallest temperature T for document 000's scores"
    feedback = compare_number(value, want, name=name, wrong=wrong, tol=TOL)
    if not feedback.correct:
        if feedback.message.endswith("recompute it step by step."):
            return Feedback(
                False,
                f"On document 000's scores your coolest returned {value:g}; the smallest T must be within {TOL} "
                "of the true one. Check that the largest weight of softmax(scores / T) is at most 0.9 there and "
                "above 0.9 just below it (a bisection or a scan finer than 0.01).",
            )
        return feedback
    for scores in _unseen_scores():
        expected = _cooling(scores)
        got = run_learner_code(
            answer, scores.clone(), name=call, write_it=(_cooling, coolest_temperatures), allowed=(softmax,)
        )
        if isinstance(got, Feedback):
            return got
        value_new = _one_number(got)
        if value_new is None:
            return Feedback(False, f"{call} should return one number, the temperature T; it returned {_describe(got)}.")
        if not math.isclose(value_new, expected, abs_tol=TOL):
            if math.isclose(value_new, want, abs_tol=TOL):
                return Feedback(
                    False,
                    f"Right for document 000, but on new {tuple(scores.shape)} scores your coolest returned 000's "
                    f"T again ({value_new:.2f}): compute T from the scores it is given, not a number you found once.",
                )
            return Feedback(
                False,
                f"Right for document 000, but on new {tuple(scores.shape)} scores your coolest returned "
                f"{value_new:g}, not within {TOL} of the smallest T. Does your search range reach it? Search "
                "until the largest weight of every row is at most 0.9.",
            )
    row = max(range(len(per_row)), key=per_row.__getitem__) + 1
    return Feedback(
        True,
        f"T ≈ {want:.2f} for 000, and right on two score matrices you had not seen: row {row} of 000 decides it, "
        f"the query whose best key leads the others by the widest gaps. That is {want / math.sqrt(5):.1f} × √5: "
        "scaling by √d_k alone cannot undo 000's large scores, which come from its large inputs and projections.",
    )


def _describe(got: object) -> str:
    if isinstance(got, Tensor):
        return f"a tensor of shape {tuple(got.shape)}"
    return type(got).__name__
