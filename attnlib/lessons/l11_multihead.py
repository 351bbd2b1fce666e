"""Lesson 11 · Multi-head attention: its explorer and its exercise checkers.

Lesson 11 explorer: the attention map of each head, one at a time or all side by side.

Lesson 11 exercises: heads, their parameters and torch's mask convention.

- ``multihead.1`` predict: the parameters of ``MultiHeadAttention(512, num_heads=8)`` (biases included).
- ``multihead.2`` code: ``split(x, h)``: ``(batch, n, d_model) -> (batch, h, n, d_head)``, run on fresh inputs.
- ``multihead.3`` transfer: torch's ``attn_mask`` for a window (token i sees i−1, i, i+1) over 5 tokens.
"""

from __future__ import annotations

import ipywidgets as widgets
import torch
from torch import Tensor

from .. import examples
from ..modules import MultiHeadAttention, causal_mask, split_heads
from ..show.explorer import Explorer, HeatmapView, Shown
from ..show.plots import heatmap_png
from ._calls import compare_call
from ._check import Feedback, compare_number, compare_tensor, exercise

__all__ = ["MultiHeadExplorer", "multihead_inputs", "parameters", "split", "window_mask", "wrong_answers"]


ALL = "all"


def multihead_inputs(num_heads: int, *, seed: int = 0) -> tuple[torch.Tensor, list[str], MultiHeadAttention]:
    """003's embedded sentence ``(8, 16)``, its tokens and a seeded ``MultiHeadAttention(16, num_heads)``."""
    x = examples.translate.run().embedded
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        module = MultiHeadAttention(x.shape[-1], num_heads)
    return x, examples.translate.tokens, module


class MultiHeadExplorer(Explorer):
    """Per-head weights ``(num_heads, n, n)`` of a seeded ``MultiHeadAttention`` on 003's sentence.

    Controls: ``head`` (one head, or ``"all"`` for a grid of every head), ``scaled``
    (``1/sqrt(d_head)``), ``causal`` (token ``i`` attends only to ``0 … i``). Colours run from 0 to
    each map's largest weight, so that the nearly uniform untrained heads still show a pattern.
    """

    def __init__(self, num_heads: int = 4, *, head: int | str = 0, scaled: bool = True, causal: bool = False):
        super().__init__()
        self.x, self.tokens, self.module = multihead_inputs(num_heads)
        self.num_heads = num_heads
        options = [(f"head {h + 1}", h) for h in range(num_heads)] + [("all heads", ALL)]
        self.controls = {
            "head": widgets.Dropdown(options=options, value=head, description="head"),
            "scaled": widgets.ToggleButton(value=scaled, description="scale by √d_head"),
            "causal": widgets.ToggleButton(value=causal, description="causal mask"),
        }
        labels = self.tokens
        self.views = {
            "head": HeatmapView(
                None,
                row_labels=labels,
                col_labels=labels,
                xlabel="key",
                ylabel="query",
                vmin=0.0,
                vmax=1.0,  # weights: one scale for every head, so near-uniform heads look near-uniform
            )
        }
        for h in range(num_heads):  # the grid of every head: one small view each
            self.views[f"head {h + 1}"] = HeatmapView(None, title=f"head {h + 1}", vmin=0.0, vmax=1.0, cell_size=22)
        self.grid = widgets.GridBox(
            [self.views[f"head {h + 1}"] for h in range(num_heads)],
            layout=widgets.Layout(grid_template_columns=f"repeat({2 if num_heads <= 4 else 4}, max-content)"),
        )
        self.update()
        self.observe_controls()
        self.widget = widgets.VBox(
            [
                widgets.HBox([self.controls["head"], self.controls["scaled"], self.controls["causal"]]),
                self.message,
                self.views["head"],
                self.grid,
            ]
        )

    def weights(self) -> torch.Tensor:
        """The current per-head weights, shape ``(num_heads, n_tokens, n_tokens)``."""
        return self._weights(self.values_now())

    def _weights(self, values) -> torch.Tensor:
        mask = causal_mask(len(self.tokens)) if values["causal"] else None
        return self.module.intermediates(self.x, mask=mask, scaled=values["scaled"]).weights

    def compute(self, values) -> Shown:
        """Every head's weights: the chosen one large (head 1 when all are shown), and the grid of all."""
        weights = self._weights(values)
        head = 0 if values["head"] == ALL else values["head"]
        parts = ["scaled" if values["scaled"] else "unscaled"] + (["causal"] if values["causal"] else [])
        labels = self.tokens
        views = {
            "head": self.views["head"].frame(
                weights[head],
                row_labels=labels,
                col_labels=labels,
                title=f"head {head + 1} of {self.num_heads} ({', '.join(parts)})",
            )
        }
        for h in range(self.num_heads):
            views[f"head {h + 1}"] = self.views[f"head {h + 1}"].frame(weights[h], row_labels=labels, col_labels=labels)
        return Shown(views=views)

    def show(self, shown: Shown) -> None:
        """Show ``shown``, and either the chosen head or the grid of every head."""
        super().show(shown)
        all_heads = self.controls["head"].value == ALL
        self.views["head"].layout.display = "none" if all_heads else None
        self.grid.layout.display = None if all_heads else "none"

    def snapshot_png(self) -> bytes:
        """Static fallback: the chosen head, or (``"all"``) every head side by side."""
        if self.controls["head"].value == ALL:
            return heatmap_png([self.views[f"head {h + 1}"].spec() for h in range(self.num_heads)])
        return heatmap_png([self.views["head"].spec()])

    def summary(self) -> str:
        c = self.controls
        return (
            f"MultiHeadExplorer(num_heads={self.num_heads}, head={c['head'].value!r}, "
            f"scaled={c['scaled'].value}, causal={c['causal'].value})"
        )


D_MODEL, NUM_HEADS = 512, 8
WINDOW_TOKENS = 5


def _fresh_input() -> Tensor:
    """``x (batch, n, d_model) = (2, 5, 12)``, to split into 3 heads of 4, never shown in a lesson."""
    return torch.randn(2, 5, 12, generator=torch.Generator().manual_seed(11))


def _window_allowed() -> Tensor:
    """attnlib's convention (True = may attend): ``|i − j| ≤ 1``, shape ``(5, 5)``."""
    i = torch.arange(WINDOW_TOKENS)
    return (i[:, None] - i[None, :]).abs() <= 1


def wrong_answers() -> dict[str, list[tuple[object, str | None]]]:
    """Per exercise, typical wrong answers and the mistake id each must reveal (None: a plain hint)."""
    per_projection = D_MODEL * D_MODEL + D_MODEL
    return {
        "multihead.1": [
            (NUM_HEADS * 4 * per_projection, "heads-parameters"),
            (4 * D_MODEL * D_MODEL, None),
            (3 * per_projection, None),
        ],
        "multihead.2": [
            (lambda x, h: x.view(x.shape[0], h, x.shape[1], x.shape[2] // h), "heads-view-no-transpose"),
            (lambda x, h: x.view(x.shape[0], x.shape[1], h, x.shape[2] // h), "heads-view-no-transpose"),
            (split_heads, "library-function"),
        ],
        "multihead.3": [(_window_allowed(), None), (~causal_mask(5), None)],
    }


@exercise("multihead.1")
def parameters(answer: object) -> Feedback:
    """``sum(p.numel() for p in MultiHeadAttention(512, num_heads=8).parameters())``, predicted."""
    per_projection = D_MODEL * D_MODEL + D_MODEL  # weight (512, 512) and bias (512,)
    wrong = [
        (
            NUM_HEADS * 4 * per_projection,
            "Eight heads do not need eight sets of projections: one (512 × 512) projection is *split* into "
            "8 slices of d_head = 64 columns. The count does not depend on h.",
            "heads-parameters",
        ),
        (4 * D_MODEL * D_MODEL, "Close: the four projections (query, key, value, output) also have a bias each."),
        (3 * per_projection, "Do not forget the output projection out_proj: four projections in all."),
    ]
    return compare_number(answer, 4 * per_projection, name="the number of parameters", wrong=wrong, tol=0.5)


@exercise("multihead.2")
def split(answer: object) -> Feedback:
    """A function ``split(x (batch, n, d_model), h) -> (batch, h, n, d_head)``."""
    x = _fresh_input()
    b, n, d = x.shape
    wrong = [
        (
            x.reshape(b, 3, n, d // 3),
            "The shape is right but the numbers are scrambled: view(batch, h, n, d_head) cuts the memory in "
            "order, so a 'head' gets pieces of several tokens. Split the features first, view(batch, n, h, "
            "d_head), then move the head axis with .transpose(1, 2).",
            "heads-view-no-transpose",
        ),
        (
            x.reshape(b, n, 3, d // 3),
            "You split the features into heads, (batch, n, h, d_head); now move the head axis in front of the "
            "tokens with .transpose(1, 2).",
            "heads-view-no-transpose",
        ),
    ]
    return compare_call(
        answer,
        (x, 3),
        call="your split(x, h)",
        expected=split_heads(x, 3),
        name="split(x, 3) on a new x (2, 5, 12)",
        wrong=wrong,
        success="Head j holds feature columns 4j … 4j+3 of every token.",
        write_it=(split_heads,),
    )


@exercise("multihead.3")
def window_mask(answer: object) -> Feedback:
    """torch's boolean ``attn_mask`` (True = NOT allowed) for 5 tokens, token i seeing i−1, i and i+1."""
    allowed = _window_allowed()
    wrong = [
        (
            allowed,
            "That is attnlib's convention (True = may attend). torch.nn.MultiheadAttention's boolean attn_mask "
            "means the opposite (True = NOT allowed): invert it with ~.",
        ),
        (
            ~causal_mask(5),
            "That is the causal mask: this window also lets token i see token i+1, and hides i−2 and before.",
        ),
    ]
    return compare_tensor(
        answer,
        ~allowed,
        name="torch's attn_mask for the window (5×5, True = NOT allowed)",
        wrong=wrong,
        success="True off the three central diagonals.",
    )
