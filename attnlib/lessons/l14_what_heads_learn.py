"""Lesson 14 · What heads learn: its explorer and its exercise checkers.

Lesson 14 explorer: every head of a trained model on a sequence you type, with its two scores.

Lesson 14 exercises: previous-token and induction heads.

- ``what_heads_learn.1`` predict: in ``5 8 2 6 5 8 2``, where does an induction head look from position 4?
- ``what_heads_learn.2`` code: ``my_previous_token_score(weights, real)``, the score over the real tokens only, run
  on a padded map the lesson never showed.
- ``what_heads_learn.3`` code: ``my_accuracy_by_position(model, ids, targets, counted)``, the per-token accuracy at
  each position, run on the fallback control and sequences the lesson never showed (it explains the control).
- ``what_heads_learn.4`` change an experiment: ``accuracy_without(model, layer, heads)``, the held-out accuracy
  with heads switched off, run on the fallback checkpoint with its layer-1 heads swapped (a model the lesson
  never shows) for three switches.
"""

from __future__ import annotations

import functools
import html
from collections.abc import Mapping
from typing import TypedDict, cast

import torch
from torch import Tensor

from .. import pretrained
from ..heads import (
    ablated,
    accuracy_by_position,
    induction_score,
    induction_targets,
    previous_token_score,
    real_tokens,
)
from ..modules import causal_mask
from ..show import ui
from ..show.explorer import Explorer, HeatmapView, Shown
from ..steps import mask_scores, softmax
from ..training import History
from ..transformer import Block, TinyTransformer
from ._calls import compare_call
from ._check import Feedback, compare_number, compare_tensor, exercise, run_learner_code
from .l13_attention_learns import parse_tokens

__all__ = [
    "HeadsExplorer",
    "by_position",
    "induction_position",
    "pick_yours",
    "previous_token",
    "scores_along",
    "without_heads",
    "wrong_answers",
]


class HeadsValues(TypedDict):
    """What :meth:`HeadsExplorer.compute` reads: the controls' values."""

    layer: int
    head: int
    sequence: str


class HeadsExplorer(Explorer):
    """Pick a layer and a head: its attention on your sequence, its previous-token and induction scores.

    Args:
        model: a trained causal ``TinyTransformer``.
        sequence: token ids (``1 … vocab_size − 1``) — repeat a few to see induction.
        layer, head: shown first.

    Controls: ``layer``, ``head``, ``sequence`` (Enter to apply). View: ``weights`` ``(n, n)``.
    """

    def __init__(self, model: TinyTransformer, sequence: list[int], *, layer: int = 0, head: int = 0) -> None:
        super().__init__()
        self.model = model
        first = model.blocks[0]
        if not isinstance(first, Block):
            raise ValueError(f"model must be built of attnlib's Block (its heads are read), got {type(first).__name__}")
        n_layers, n_heads = len(model.blocks), first.attention.num_heads
        c = self.controls
        c["layer"] = ui.Dropdown(
            options=[(f"layer {i + 1}", i) for i in range(n_layers)], value=layer, description="layer"
        )
        c["head"] = ui.Dropdown(options=[(f"head {h + 1}", h) for h in range(n_heads)], value=head, description="head")
        c["sequence"] = ui.Text(
            value=" ".join(map(str, sequence)),
            description="sequence",
            continuous_update=False,
            layout=ui.Layout(width="520px"),
        )
        self.views["weights"] = HeatmapView(
            None, xlabel="key (earlier token)", ylabel="query", vmin=0.0, vmax=1.0, annotate=False
        )
        self.caption = self.texts["caption"] = ui.HTML()
        self.update()
        self.observe_controls()
        self.widget = ui.VBox(
            [ui.HBox([c["layer"], c["head"]]), c["sequence"], self.message, self.views["weights"], self.caption]
        )

    def compute(self, values: Mapping[str, object]) -> Shown:
        """Run the model on the typed sequence; show the chosen head; score it."""
        values = cast(HeadsValues, values)
        text = values["sequence"]
        n = len(text.replace(",", " ").split())
        if not 2 <= n <= self.model.max_len:
            raise ValueError(f"type from 2 to {self.model.max_len} token ids, got {n}")
        ids = parse_tokens(text, vocab_size=self.model.vocab_size, n_tokens=n)
        with torch.no_grad():
            predicted = self.model(ids).argmax(-1)[0].tolist()
        layer, head = values["layer"], values["head"]
        weights = self.model.attention_maps[layer][0, head]
        labels = [f"{i}:{t}" for i, t in enumerate(ids[0].tolist())]
        repeats = bool((induction_targets(ids) >= 0).any())
        real = real_tokens(ids)  # every typed id is a token (1 … vocab_size − 1): no padding here
        induction = f"{induction_score(weights[None], ids, real):.2f}" if repeats else "— (no token repeats)"
        return Shown(
            views={
                "weights": self.views["weights"].frame(
                    weights, row_labels=labels, col_labels=labels, title=f"layer {layer + 1}, head {head + 1}"
                )
            },
            texts={
                "caption": html.escape(
                    f"previous-token score {previous_token_score(weights, real[0]):.2f} · "
                    f"induction score {induction} · "
                    f"the model predicts next tokens {predicted}"
                )
            },
        )

    def summary(self) -> str:
        c = self.controls
        return f"HeadsExplorer(layer={c['layer'].value + 1}, head={c['head'].value + 1})"


def _fresh() -> tuple[Tensor, Tensor]:
    """14.2's case: a causal 9×9 map no cell shows, and ``real (9,)``: six tokens, then three of padding."""
    scores = 3 * torch.randn(9, 9, generator=torch.Generator().manual_seed(14))
    return softmax(mask_scores(scores, causal_mask(9))), torch.arange(9) < 6


def scores_along(history: History) -> dict[str, list[float]]:
    """From a :func:`attnlib.training.train` history with snapshots: at each stored step, the best
    previous-token score in layer 1 and the best induction score in the last layer, on the probe sequence."""
    real = real_tokens(history.probe)  # token 0 pads the sequence and never belongs to it
    points: dict[str, list[float]] = {"step": [], "previous_token": [], "induction": []}
    for step in sorted(history.snapshots):
        maps = history.snapshots[step]
        points["step"].append(step)
        points["previous_token"].append(max(previous_token_score(m, real) for m in maps[0]))
        points["induction"].append(max(induction_score(m[None], history.probe, real) for m in maps[-1]))
    return points


def _batch(seed: int) -> tuple[Tensor, Tensor, Tensor]:
    return pretrained.RECIPES["induction"].task.batch(512, torch.Generator().manual_seed(seed))


@functools.cache  # the same case every call: computed once, not per answer checked
def _by_position_case() -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor]:
    """14.3's case: 512 sequences the lesson never shows (``ids, targets, counted``), the control's predictions
    on them and the per-position accuracy they give (the right answer)."""
    ids, targets, counted = _batch(414)
    with torch.no_grad():
        predicted = _control()(ids).argmax(-1)
        expected = accuracy_by_position(_control(), ids, targets, counted)
    return ids, targets, counted, predicted, expected


@functools.cache
def _control() -> TinyTransformer:
    """The fallback checkpoint of the one-layer control (14.3 runs on it with sequences the lesson never shows)."""
    return pretrained.load("induction_one_layer")


@functools.cache
def _two_layers() -> TinyTransformer:
    return pretrained.load("induction")


def pick_yours(by_position_function: object) -> tuple[object, str]:
    """``(function, sentence)``: your ``my_accuracy_by_position`` once 14.3 accepts it, attnlib's otherwise."""
    if by_position(by_position_function):
        return by_position_function, "Measured with your my_accuracy_by_position."
    return accuracy_by_position, "Measured with attnlib's accuracy_by_position (14.3 is not solved yet)."


def wrong_answers() -> dict[str, list[tuple[object, str | None]]]:
    """Per exercise, typical wrong answers and the mistake id each must reveal (None: a plain hint)."""

    def per_sequence(model: TinyTransformer, ids: Tensor, targets: Tensor, counted: Tensor) -> Tensor:
        with torch.no_grad():
            logits: Tensor = model(ids)
            right = ((logits.argmax(-1) == targets) | ~counted).all(1)
        return right.double().mean().expand(ids.shape[1])

    def padding_counted(model: TinyTransformer, ids: Tensor, targets: Tensor, counted: Tensor) -> Tensor:
        with torch.no_grad():
            logits: Tensor = model(ids)
            return (logits.argmax(-1) == targets).double().mean(0)

    def layer_ablation_ignored(model: TinyTransformer, layer: int, heads: tuple[int, ...]) -> float:
        from ..training import accuracy

        return accuracy(model, pretrained.RECIPES["induction"].task)

    return {
        "what_heads_learn.1": [(0, None), (3, None)],
        "what_heads_learn.2": [
            (lambda w, real: torch.diagonal(w).mean(), None),
            (lambda w, real: torch.diagonal(w, offset=-1).mean(), None),
            (lambda w, real: torch.diagonal(w, offset=-1)[real[:-1]].mean(), None),
            (lambda w, real: torch.diagonal(w, offset=-1)[real[1:]].sum(), None),
        ],
        "what_heads_learn.3": [
            (padding_counted, None),
            (per_sequence, None),
            (accuracy_by_position, "library-function"),
        ],
        "what_heads_learn.4": [(layer_ablation_ignored, None), (0.0, None)],
    }


@exercise("what_heads_learn.1", alias="heads.1")
def induction_position(answer: object) -> Feedback:
    """``5 8 2 6 5 8 2`` (positions 0 … 6): from position 4 (the second 5) an induction head looks at 1."""
    wrong = [
        (0, "Position 0 is the previous 5 itself. An induction head looks one step further: at what FOLLOWED it."),
        (3, "Position 3 is the token just before: that is a previous-token head's job."),
    ]
    return compare_number(answer, 1, name="the position the induction head attends to", wrong=wrong, tol=0.01)


@exercise("what_heads_learn.2", alias="heads.2")
def previous_token(answer: object) -> Feedback:
    """A function ``my_previous_token_score(weights (n, n), real (n,))`` → the mean weight on the key just before
    each query, over the real queries from the second on. Run on a padded 9×9 map the lesson never showed."""
    weights, real = _fresh()
    diagonal = torch.diagonal(weights, offset=-1)  # entry j: query j + 1 on key j
    wrong = [
        (
            diagonal.mean(),
            "You scored every query, the padding too: keep only the real ones — the stripe below the diagonal "
            "holds queries 1 … n − 1, so its mask is real[1:].",
        ),
        (
            diagonal[real[:-1]].mean(),
            "Off by one: entry j of the stripe below the diagonal is query j + 1, so mask it with real[1:], "
            "not real[:-1].",
        ),
        (
            torch.diagonal(weights, offset=1)[real[1:]].mean(),
            "That is the stripe just ABOVE the diagonal (offset=+1): the key after each query, which the causal "
            "mask hides, so it is 0. The previous token is one BELOW: offset=-1.",
        ),
        (
            torch.diagonal(weights)[real].mean(),
            "That is the weight on the token itself (the diagonal); the previous token is one below.",
        ),
        (
            diagonal[real[1:]].sum(),
            "Take the mean over the real queries that have a previous token, not the sum.",
        ),
    ]
    return compare_call(
        answer,
        (weights, real),
        call="your my_previous_token_score(weights, real)",
        expected=torch.tensor(previous_token_score(weights, real)),
        name="the score of a new 9×9 causal map, six real tokens then three of padding",
        wrong=wrong,
        write_it=(previous_token_score,),
    )


@exercise("what_heads_learn.3")
def by_position(answer: object) -> Feedback:
    """``my_accuracy_by_position(model, ids, targets, counted)`` → ``(n,)``: the share of scored predictions that
    are right at each position (NaN or anything where nothing is scored). Run on the fallback checkpoint of the
    one-layer control and 512 sequences the lesson never shows."""
    model = _control()
    ids, targets, counted, predicted, expected = _by_position_case()
    scored = counted.sum(0) > 0
    got = run_learner_code(
        answer,
        model,
        ids.clone(),
        targets.clone(),
        counted.clone(),
        name="your my_accuracy_by_position(model, ids, targets, counted)",
        write_it=(accuracy_by_position,),
    )
    if isinstance(got, Feedback):
        return got
    if got is None:
        return Feedback(
            False,
            "your my_accuracy_by_position(model, ids, targets, counted) returned None: return one accuracy per "
            "position.",
            tried=False,
        )
    if (isinstance(got, Tensor) and got.dim() == 0) or isinstance(got, float | int):
        return Feedback(
            False,
            "You returned one number: keep one accuracy per POSITION, a tensor (n,) — the mean over the batch "
            "dimension only (dim=0), of the scored predictions.",
        )
    wrong = [
        (
            (predicted == targets).double().mean(0)[scored],
            "You counted every prediction, padding and the unpredictable first half included: keep only the "
            "scored ones (counted), right & counted summed over the batch, divided by counted summed over it.",
        ),
    ]
    got_t = got if isinstance(got, Tensor) else None
    if got_t is not None and got_t.shape == expected.shape:
        got = got_t[scored]
    return compare_tensor(
        got,
        expected[scored],
        name="the per-token accuracy at each scored position (4 … 20) on 512 sequences the lesson never showed",
        wrong=wrong,
        atol=1e-3,
        success="Slicing a measurement by position (or by run length) is how the control's shortcut shows.",
    )


def _heads_swapped(model: TinyTransformer, layer: int) -> TinyTransformer:
    """A copy of ``model`` whose two heads in ``layer`` trade places: the same function, other head numbers —
    so a table of the lesson's printed figures, keyed by head, gives the wrong answer on it."""
    import copy

    swapped = copy.deepcopy(model)
    block = swapped.blocks[layer]
    assert isinstance(block, Block), "the lesson's checkpoints are built of attnlib's Block"
    attention = block.attention
    d = attention.d_head
    order = torch.cat([torch.arange(d, 2 * d), torch.arange(0, d)])
    with torch.no_grad():
        for projection in (attention.w_query, attention.w_key, attention.w_value):
            projection.weight.copy_(projection.weight[order])
            if projection.bias is not None:
                projection.bias.copy_(projection.bias[order])
        attention.out_proj.weight.copy_(attention.out_proj.weight[:, order])
    return swapped.eval()


@functools.cache
def _checked_model() -> TinyTransformer:
    """The fallback checkpoint with its layer-1 heads swapped: a model no cell of the lesson shows."""
    return _heads_swapped(_two_layers(), 0)


@functools.cache  # the checker asks for the same few measurements every call
def _ablated_accuracy(layer: int, heads: tuple[int, ...]) -> float:
    """Held-out accuracy of :func:`_checked_model` with ``heads`` of ``layer`` zero-ablated."""
    from ..training import accuracy

    model = _checked_model()
    task = pretrained.RECIPES["induction"].task
    if not heads:
        return accuracy(model, task)
    with ablated(model, layer, heads):
        return accuracy(model, task)


#: The switches 14.4 is checked on: (layer, heads), none of them the lesson's question (both layer-2 heads).
ABLATION_CASES = ((0, (1,)), (1, (0,)), (0, (0, 1)))


@exercise("what_heads_learn.4", alias="heads.4")
def without_heads(answer: object) -> Feedback:
    """``accuracy_without(model, layer, heads)``: the held-out accuracy per sequence (``accuracy(model, task)``)
    with ``heads`` of ``layer`` zero-ablated. Run on the fallback checkpoint with its layer-1 heads swapped (a
    model the lesson never shows), for three switches."""
    if answer is None or answer is Ellipsis:
        return Feedback(
            False, "Replace the ... with your function accuracy_without, then run the cell again.", tried=False
        )
    if not callable(answer) or isinstance(answer, type):
        return Feedback(
            False,
            "Hand in a function accuracy_without(model, layer, heads) that switches the heads off and measures: "
            "the checker runs it on a model and heads the lesson never showed.",
        )
    model = _checked_model()
    intact = _ablated_accuracy(0, ())
    found = []
    for layer, heads in ABLATION_CASES:
        got = run_learner_code(answer, model, layer, heads, name="your accuracy_without(model, layer, heads)")
        if isinstance(got, Feedback):
            return got
        if got is None:
            return Feedback(
                False, "your accuracy_without(model, layer, heads) returned None: return the accuracy.", tried=False
            )
        expected = _ablated_accuracy(layer, heads)
        verdict = compare_number(
            got, expected, name=f"the accuracy without layer {layer + 1}'s head(s) {heads}", tol=0.015
        )
        if not verdict.correct:
            if isinstance(got, int | float) and abs(float(got) - intact) <= 0.015:
                return Feedback(
                    False,
                    "That is the accuracy of the intact model: measure INSIDE the with ablated(model, layer, heads): "
                    "block; outside it the heads are back.",
                )
            return Feedback(
                False,
                f"On a model the lesson never showed, without layer {layer + 1}'s head(s) {heads}, your function "
                f"gives {got!r:.8}, not {expected:.2f}: switch off exactly those heads (ablated(model, layer, heads)) "
                "and measure accuracy(model, task) inside the with block.",
            )
        found.append(f"layer {layer + 1} heads {tuple(h + 1 for h in heads)}: {expected:.2f}")
    return Feedback(
        True,
        f"On the fallback checkpoint with its layer-1 heads swapped (intact {intact:.2f}): "
        + "; ".join(found)
        + ". Each head's share of the job, measured by taking it away.",
    )
