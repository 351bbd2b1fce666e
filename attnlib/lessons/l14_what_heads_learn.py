"""Lesson 14 · What heads learn: its explorer and its exercise checkers.

Lesson 14 explorer: every head of a trained model on a sequence you type, with its two scores.

Lesson 14 exercises: previous-token and induction heads.

- ``what_heads_learn.1`` predict: in ``5 8 2 6 5 8 2``, where does an induction head look from position 4?
- ``what_heads_learn.2`` code: ``my_previous_token_score(weights)``, run on a map the lesson never showed.
- ``what_heads_learn.3`` transfer: the parameters of one ``MultiHeadAttention(64, num_heads=2)`` — vs one head.
- ``what_heads_learn.4`` change an experiment: ablate both layer-2 heads, report the held-out accuracy.
"""

from __future__ import annotations

import functools
import html

import ipywidgets as widgets
import torch

from .. import pretrained
from ..heads import ablated, induction_score, induction_targets, previous_token_score
from ..modules import MultiHeadAttention, causal_mask
from ..show.explorer import Explorer, HeatmapView, Shown
from ..steps import softmax
from ..transformer import TinyTransformer
from ._calls import compare_call
from ._check import Feedback, compare_number, exercise
from .l13_attention_learns import parse_tokens

__all__ = [
    "HeadsExplorer",
    "both_layer_2_heads",
    "induction_position",
    "parameters",
    "previous_token",
    "wrong_answers",
]


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
        n_layers, n_heads = len(model.blocks), model.blocks[0].attention.num_heads
        c = self.controls
        c["layer"] = widgets.Dropdown(
            options=[(f"layer {i + 1}", i) for i in range(n_layers)], value=layer, description="layer"
        )
        c["head"] = widgets.Dropdown(
            options=[(f"head {h + 1}", h) for h in range(n_heads)], value=head, description="head"
        )
        c["sequence"] = widgets.Text(
            value=" ".join(map(str, sequence)),
            description="sequence",
            continuous_update=False,
            layout=widgets.Layout(width="520px"),
        )
        self.views["weights"] = HeatmapView(
            None, xlabel="key (earlier token)", ylabel="query", vmin=0.0, vmax=1.0, annotate=False
        )
        self.caption = self.texts["caption"] = widgets.HTML()
        self.update()
        self.observe_controls()
        self.widget = widgets.VBox(
            [widgets.HBox([c["layer"], c["head"]]), c["sequence"], self.message, self.views["weights"], self.caption]
        )

    def compute(self, values) -> Shown:
        """Run the model on the typed sequence; show the chosen head; score it."""
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
        induction = f"{induction_score(weights[None], ids):.2f}" if repeats else "— (no token repeats)"
        return Shown(
            views={
                "weights": self.views["weights"].frame(
                    weights, row_labels=labels, col_labels=labels, title=f"layer {layer + 1}, head {head + 1}"
                )
            },
            texts={
                "caption": html.escape(
                    f"previous-token score {previous_token_score(weights):.2f} · induction score {induction} · "
                    f"the model predicts next tokens {predicted}"
                )
            },
        )

    def summary(self) -> str:
        c = self.controls
        return f"HeadsExplorer(layer={c['layer'].value + 1}, head={c['head'].value + 1})"


def _fresh() -> torch.Tensor:
    scores = 3 * torch.randn(7, 7, generator=torch.Generator().manual_seed(14))
    return softmax(scores.masked_fill(~causal_mask(7), float("-inf")))


def _parameters() -> int:
    return sum(p.numel() for p in MultiHeadAttention(64, 2).parameters())


def wrong_answers() -> dict[str, list[tuple[object, str | None]]]:
    """Per exercise, typical wrong answers and the mistake id each must reveal (None: a plain hint)."""
    return {
        "what_heads_learn.1": [(0, None), (3, None)],
        "what_heads_learn.2": [
            (lambda w: torch.diagonal(w).mean(), None),
            (lambda w: torch.diagonal(w, offset=-1).sum(), None),
        ],
        "what_heads_learn.3": [(2 * _parameters(), "heads-parameters"), (4 * 64 * 64, None)],
        "what_heads_learn.4": [(_ablated_accuracy(()), None), (_ablated_accuracy((0,)), None)],
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
    """A function ``my_previous_token_score(weights (n, n))`` → the mean weight on the key just before each query."""
    weights = _fresh()
    wrong = [
        (
            torch.diagonal(weights, offset=1).mean(),
            "That is the stripe just ABOVE the diagonal (offset=+1): the key after each query, which the causal "
            "mask hides, so it is 0. The previous token is one BELOW: offset=-1.",
        ),
        (
            torch.diagonal(weights).mean(),
            "That is the weight on the token itself (the diagonal); the previous token is one below.",
        ),
        (
            torch.diagonal(weights, offset=-1).sum(),
            "Take the mean over the n − 1 queries that have a previous token, not the sum.",
        ),
    ]
    return compare_call(
        answer,
        (weights,),
        call="your my_previous_token_score(weights)",
        expected=torch.tensor(previous_token_score(weights)),
        name="the score of a new 7×7 causal map",
        wrong=wrong,
        write_it=(previous_token_score,),
    )


@exercise("what_heads_learn.3", alias="heads.3")
def parameters(answer: object) -> Feedback:
    """Parameters of ``MultiHeadAttention(64, num_heads=2)`` with biases: 4 × (64·64 + 64) = 16 640."""
    n = _parameters()
    wrong = [
        (
            2 * n,
            "Two heads do not double the parameters: W_q, W_k, W_v (64×64) are split into two 32-wide slices, one "
            "per head. One head or two: the same 16 640 numbers.",
            "heads-parameters",
        ),
        (4 * 64 * 64, "Close: the four projections also have biases, 64 numbers each."),
    ]
    return compare_number(answer, n, name="the parameters of MultiHeadAttention(64, num_heads=2)", wrong=wrong, tol=0.5)


@functools.cache  # a checker call asks for four of them; the model and the task never change
def _ablated_accuracy(heads: tuple[int, ...]) -> float:
    """Held-out accuracy of the committed induction model with ``heads`` of layer 2 zero-ablated."""
    from ..training import accuracy

    model = pretrained.load("induction")
    if not heads:
        return accuracy(model, pretrained.RECIPES["induction"].task)
    with ablated(model, 1, heads):
        return accuracy(model, pretrained.RECIPES["induction"].task)


@exercise("what_heads_learn.4", alias="heads.4")
def both_layer_2_heads(answer: object) -> Feedback:
    """Held-out accuracy of the induction model with both layer-2 heads zero-ablated (about 0)."""
    expected = _ablated_accuracy((0, 1))
    wrong = [
        (
            _ablated_accuracy(()),
            "That is the accuracy of the intact model: run accuracy(...) INSIDE the with ablated(model, 1, (0, 1)): "
            "block; outside it the heads are back.",
        ),
        (_ablated_accuracy((0,)), "That is with only head 1 of layer 2 switched off: pass both, (0, 1)."),
        (_ablated_accuracy((1,)), "That is with only head 2 of layer 2 switched off: pass both, (0, 1)."),
    ]
    return compare_number(answer, expected, name="the accuracy without both layer-2 heads", wrong=wrong, tol=0.015)
