"""Lesson 11 · Multi-head attention: its explorer and its exercise checkers.

Lesson 11 explorer: the attention map of each head, one at a time or all side by side.

Lesson 11 exercises: heads, their parameters and torch's mask convention.

- ``multihead.1`` predict: the parameters of ``MultiHeadAttention(512, num_heads=8)`` (biases included).
- ``multihead.2`` code: ``split(x, h)``: ``(batch, n, d_model) -> (batch, h, n, d_head)``, run on fresh inputs.
- ``multihead.3`` transfer: torch's ``attn_mask`` for a window (token i sees i−1, i, i+1) over 5 tokens.
- ``multihead.4`` code: ``cross_attention(x_dec, x_enc, w_q, w_k, w_v)``: queries from one sequence, keys and
  values from another.
- ``multihead.5`` code: ``self_attention_backward(x, w_q, w_k, w_v, grad_z)``: the four gradients by hand.
- ``multihead.6`` code: ``without_head(model, head, colours, numbers)``: a two-colours model with one head
  switched off (its output set to 0 before ``out_proj``), run on models the lesson never built.

Lesson 11's "why several heads": :class:`TwoColoursModel` on :class:`attnlib.tasks.TwoColoursTask`, trained
with one head and with two at the same width (:func:`train_two_colours`), measured by
:func:`two_colours_report` against the best guesses a head that reads one colour, or all numbers equally, can
make (:func:`best_guess_accuracy`). The spread over seeds: ``bench/two_colours.py``, whose stored results
(``bench/results/two_colours.json``) the lesson prints with :func:`two_colours_bench`. :func:`without_head_mean`
replaces a head's output by its mean over the sets (mean-ablation), beside exercise 11.6's zero.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict, cast

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import examples
from .._validate import AttentionInputError, check_positive_int
from ..modules import MultiHeadAttention, causal_mask, combine_heads, split_heads
from ..show import ui
from ..show.explorer import Explorer, HeatmapView, Shown
from ..show.plots import heatmap_png
from ..tasks import COLOURS, TwoColoursTask
from ..training import fit
from ._calls import compare_call
from ._check import (
    ATTENTION_FAMILY,
    ATTNLIB,
    Feedback,
    TensorWork,
    Wrong,
    compare_number,
    compare_tensor,
    exercise,
    run_learner_code,
)

__all__ = [
    "MultiHeadExplorer",
    "TwoColoursModel",
    "TwoColoursReport",
    "best_guess_accuracy",
    "cross_attention",
    "multihead_inputs",
    "parameters",
    "self_attention_backward",
    "split",
    "train_two_colours",
    "two_colours_bench",
    "two_colours_report",
    "window_mask",
    "without_head",
    "without_head_mean",
    "wrong_answers",
    "yours_or_reference",
]


ALL = "all"


class MultiHeadValues(TypedDict):
    """What :meth:`MultiHeadExplorer.compute` reads: the controls' values (``head``: an index or :data:`ALL`)."""

    head: int | str
    scaled: bool
    causal: bool


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
            "head": ui.Dropdown(options=options, value=head, description="head"),
            "scaled": ui.ToggleButton(value=scaled, description="scale by √d_head"),
            "causal": ui.ToggleButton(value=causal, description="causal mask"),
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
        self.grid = ui.GridBox(
            [self.views[f"head {h + 1}"] for h in range(num_heads)],
            layout=ui.Layout(
                grid_template_columns=f"repeat({2 if num_heads <= 4 else 4}, max-content)", visible_if={"head": [ALL]}
            ),
        )
        self.views["head"].layout = ui.Layout(hidden_if={"head": [ALL]})  # the page shows one or the grid
        self.update()
        self.observe_controls()
        self.widget = ui.VBox(
            [
                ui.HBox([self.controls["head"], self.controls["scaled"], self.controls["causal"]]),
                self.message,
                self.views["head"],
                self.grid,
            ]
        )

    def weights(self) -> torch.Tensor:
        """The current per-head weights, shape ``(num_heads, n_tokens, n_tokens)``."""
        return self._weights(self.values_now())

    def _weights(self, values: Mapping[str, object]) -> torch.Tensor:
        values = cast(MultiHeadValues, values)
        mask = causal_mask(len(self.tokens)) if values["causal"] else None
        weights: Tensor = self.module.intermediates(self.x, mask=mask, scaled=values["scaled"]).weights
        return weights

    def compute(self, values: Mapping[str, object]) -> Shown:
        """Every head's weights: the chosen one large (head 1 when all are shown), and the grid of all."""
        values = cast(MultiHeadValues, values)
        weights = self._weights(values)
        chosen = values["head"]
        head = chosen if isinstance(chosen, int) else 0  # ALL: head 1 is the large one
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
        "multihead.3": [
            (_window_allowed(), None),
            (~causal_mask(5), None),
            ((~_window_allowed()).int(), "mask-not-boolean"),
            ((~_window_allowed()).float(), "mask-not-boolean"),
            (torch.zeros(5, 5).masked_fill(~_window_allowed(), float("-inf")), "mask-not-boolean"),
        ],
        "multihead.4": [
            (lambda xd, xe, wq, wk, wv: _cross(xd, xd, wq, wk, wv), None),
            (lambda xd, xe, wq, wk, wv: _cross(xd, xe, wq, wk, wv, scaled=False), "scale-forgotten"),
            (lambda xd, xe, wq, wk, wv: _cross(xd, xe, wq, wk, wv, dim=0), "softmax-axis"),
        ],
        "multihead.5": [
            (lambda *a: _hand_grads(*a, mistake="one-path"), None),
            (lambda *a: _hand_grads(*a, mistake="no-jacobian"), None),
            (lambda *a: _hand_grads(*a, mistake="unscaled"), None),
        ],
        "multihead.6": [
            (lambda m, h, c, n: _without_head(m, h, c, n, mistake="unscaled"), "scale-forgotten"),
            (lambda m, h, c, n: _without_head(m, h, c, n, mistake="softmax-axis"), "softmax-axis"),
            (lambda m, h, c, n: _without_head(m, h, c, n, mistake="next-head"), None),
            (lambda m, h, c, n: m(c, n), "library-function"),
        ],
    }


@exercise("multihead.1")
def parameters(answer: object) -> Feedback:
    """``sum(p.numel() for p in MultiHeadAttention(512, num_heads=8).parameters())``, predicted."""
    per_projection = D_MODEL * D_MODEL + D_MODEL  # weight (512, 512) and bias (512,)
    wrong: list[tuple[float, str] | tuple[float, str, str]] = [
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
        success="Head r (index r − 1 in code) holds feature columns 4(r − 1) … 4r − 1 of every token.",
        write_it=(ATTNLIB, split_heads),
    )


def _dtype(answer: object) -> torch.dtype | None:
    try:
        return answer.dtype if isinstance(answer, Tensor) else torch.as_tensor(answer).dtype
    except (TypeError, ValueError, RuntimeError):
        return None


def _mask_kind(answer: object) -> str | None:
    """The hint for a mask that is not boolean (None: not a mask of numbers at all, let the comparison say so)."""
    if isinstance(answer, Tensor) and (answer.device.type == "meta" or answer.is_complex() or answer.is_sparse):
        return None
    try:
        values = torch.as_tensor(answer, dtype=torch.float64)
    except (TypeError, ValueError, RuntimeError):
        return None
    if values.numel() == 0:
        return None
    if bool(torch.isinf(values).any()):
        return (
            "That is an additive float mask (0 where allowed, -inf where not): torch adds it to the scores, so it "
            "works, but this exercise asks for the boolean form: give a boolean mask (dtype torch.bool, True = NOT "
            "allowed): a comparison of token indices, such as i[:, None] > i[None, :], is a bool tensor."
        )
    is_float = isinstance(answer, Tensor) and answer.is_floating_point()
    return (
        "Give a boolean mask (dtype torch.bool, True = NOT allowed). "
        + (
            "A float attn_mask is not a yes/no mask in torch: it is ADDED to the scores, so 1.0 where a key is "
            "forbidden only nudges its score up by 1 and the key still gets weight. "
            if is_float
            else "torch refuses an integer attn_mask (only bool and float masks are supported). "
        )
        + "Build it from a comparison of token indices (i[:, None] > i[None, :] is a bool tensor), "
        "not with .float() or .int()."
    )


@exercise("multihead.3")
def window_mask(answer: object) -> Feedback:
    """torch's boolean ``attn_mask`` (True = NOT allowed) for 5 tokens, token i seeing i−1, i and i+1."""
    allowed = _window_allowed()
    if isinstance(answer, Tensor | list | tuple) and _dtype(answer) != torch.bool:
        kind = _mask_kind(answer)
        if kind is not None:
            return Feedback(False, kind, "mask-not-boolean")
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


# ---------------------------------------------------------------- cross-attention and the backward pass
def _cross_inputs() -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor]:
    """``x_dec (5, 6)``, ``x_enc (7, 6)``, ``w_q, w_k (6, 4)``, ``w_v (6, 3)``: never shown in a lesson."""
    g = torch.Generator().manual_seed(1104)
    return (
        torch.randn(5, 6, generator=g),
        torch.randn(7, 6, generator=g),
        torch.randn(6, 4, generator=g),
        torch.randn(6, 4, generator=g),
        torch.randn(6, 3, generator=g),
    )


def _cross(
    x_q: Tensor, x_kv: Tensor, w_q: Tensor, w_k: Tensor, w_v: Tensor, *, scaled: bool = True, dim: int = -1
) -> Tensor:
    scores = (x_q @ w_q) @ (x_kv @ w_k).T / (w_k.shape[-1] ** 0.5 if scaled else 1.0)
    return torch.softmax(scores, dim=dim) @ (x_kv @ w_v)


def _shapes_hint(call: str, feedback: Feedback, shapes: str) -> Feedback:
    """A raised shape error becomes a sentence about the shapes (a raw torch error is never the feedback)."""
    if feedback.correct or not feedback.message.startswith(f"{call} raised"):
        return feedback
    return Feedback(
        False,
        f"{call} failed on the shapes {shapes}. The queries come from the decoder (one output per decoder "
        "token), the keys and the values from the encoder: the weights are (n_dec, n_enc), the output (n_dec, d_v).",
    )


@exercise("multihead.4")
def cross_attention(answer: object) -> Feedback:
    """``cross_attention(x_dec (n_dec, d), x_enc (n_enc, d), w_q, w_k (d, d_k), w_v (d, d_v)) -> (n_dec, d_v)``."""
    from .. import steps, tiled
    from ..modules import MultiHeadAttention as Module

    x_dec, x_enc, w_q, w_k, w_v = _cross_inputs()
    wrong: list[Wrong] = [
        (
            _cross(x_enc, x_dec, w_q, w_k, w_v),
            "The roles are swapped: your queries come from the encoder's output x_enc and your keys and values from "
            "the decoder's x_dec, so you get one row per ENCODER token (7) instead of one per decoder token (5). "
            "The decoder asks: Q = x_dec W_q; the encoder answers: K = x_enc W_k, V = x_enc W_v.",
        ),
        (
            _cross(x_dec, x_dec, w_q, w_k, w_v),
            "That is self-attention over the decoder: in cross-attention the keys and the values come from the "
            "encoder's output x_enc; only the queries come from x_dec.",
        ),
        (
            _cross(x_dec, x_enc, w_q, w_k, w_v, scaled=False),
            "Divide the scores by √d_k (d_k = the keys' width) before the softmax, as in self-attention.",
            "scale-forgotten",
        ),
        (
            _cross(x_dec, x_enc, w_q, w_k, w_v, dim=0),
            "Your softmax runs down the columns: each decoder token's weights over the encoder's tokens must "
            "sum to 1, softmax(..., dim=-1).",
            "softmax-axis",
        ),
    ]
    call = "your cross_attention(x_dec, x_enc, w_q, w_k, w_v)"
    feedback = compare_call(
        answer,
        (x_dec, x_enc, w_q, w_k, w_v),
        call=call,
        expected=_cross(x_dec, x_enc, w_q, w_k, w_v),
        name="cross_attention on a new decoder (5×6) and encoder output (7×6)",
        wrong=wrong,
        success="Q = X_dec W_q, K = X_enc W_k, V = X_enc W_v: weights (5, 7), one output row per decoder token.",
        write_it=(
            ATTNLIB,
            ATTENTION_FAMILY,
            steps.attention,
            steps.attention_weights,
            tiled.tiled_attention,
            torch.nn.functional.scaled_dot_product_attention,
            Module.forward,
            torch.nn.MultiheadAttention.forward,
        ),
    )
    return _shapes_hint(call, feedback, "x_dec (5, 6), x_enc (7, 6), w_q and w_k (6, 4), w_v (6, 3)")


def _backward_inputs() -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor]:
    """``x (5, 4)``, ``w_q, w_k (4, 3)``, ``w_v (4, 2)``, ``grad_z (5, 2)``, float64: never shown in a lesson."""
    g = torch.Generator().manual_seed(1105)
    shapes = ((5, 4), (4, 3), (4, 3), (4, 2), (5, 2))
    x, w_q, w_k, w_v, grad_z = (torch.randn(*s, generator=g, dtype=torch.float64) for s in shapes)
    return x, w_q, w_k, w_v, grad_z


def _self_attention_grads(x: Tensor, w_q: Tensor, w_k: Tensor, w_v: Tensor, grad_z: Tensor) -> list[Tensor]:
    """``[dx, dw_q, dw_k, dw_v]`` of ``⟨softmax(X W_q (X W_k)ᵀ / √d_k) X W_v, grad_z⟩``, by autograd."""
    leaves = [t.detach().clone().requires_grad_(True) for t in (x, w_q, w_k, w_v)]
    x_, wq_, wk_, wv_ = leaves
    z = _cross(x_, x_, wq_, wk_, wv_)
    return list(torch.autograd.grad(z, leaves, grad_z))


def _hand_grads(x: Tensor, w_q: Tensor, w_k: Tensor, w_v: Tensor, grad_z: Tensor, *, mistake: str = "") -> list[Tensor]:
    """The backward pass by hand, right or with one typical ``mistake`` (for the hints)."""
    scale = 1.0 if mistake == "unscaled" else w_k.shape[-1] ** -0.5
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    a = torch.softmax(q @ k.T * w_k.shape[-1] ** -0.5, dim=-1)
    d_a = grad_z @ v.T
    d_s = d_a if mistake == "no-jacobian" else a * (d_a - (d_a * a).sum(dim=-1, keepdim=True))
    d_q, d_k, d_v = d_s @ k * scale, d_s.T @ q * scale, a.T @ grad_z
    d_x = d_v @ w_v.T if mistake == "one-path" else d_q @ w_q.T + d_k @ w_k.T + d_v @ w_v.T
    return [d_x, x.T @ d_q, x.T @ d_k, x.T @ d_v]


#: 11.5's tolerance, in float64: the derived gradients agree with autograd's to about 1e-15 here; central finite
#: differences at their best step reach about 2e-10, sixth-order ones about 1e-12.
BACKWARD_ATOL = 1e-13
#: 11.5's budget of computed numbers: the derived backward pass computes a few hundred, one finite-difference
#: forward pass over the 52 entries about 140 each, twice per entry.
BACKWARD_WORK = 5_000


@exercise("multihead.5")
def self_attention_backward(answer: object) -> Feedback:
    """``self_attention_backward(x, w_q, w_k, w_v, grad_z) -> (dx, dw_q, dw_k, dw_v)``, without autograd."""
    args = _backward_inputs()
    call = "your self_attention_backward(x, w_q, w_k, w_v, grad_z)"
    with TensorWork() as work:
        got = run_learner_code(
            answer,
            *[a.clone() for a in args],
            name=call,
            write_it=(
                ATTNLIB,
                torch.autograd.grad,
                torch.autograd.backward,
                torch.Tensor.backward,
                torch.func.vjp,
                torch.func.grad,
                torch.func.jacrev,
                torch.func.jacfwd,
                torch.autograd.functional.vjp,
                torch.autograd.functional.jacobian,
            ),
        )
    if isinstance(got, Feedback):
        if got.message.startswith(f"{call} raised"):
            return Feedback(
                False,
                f"{call} failed on x (5, 4), w_q and w_k (4, 3), w_v (4, 2), grad_z (5, 2). Check each "
                "gradient has the shape of what it is the gradient of: dA = dZ Vᵀ is (n, n), dV = Aᵀ dZ (n, d_v), "
                "dQ = dS K (n, d_k), dK = dSᵀ Q (n, d_k), dW = Xᵀ dQ (d, d_k).",
            )
        return got
    if got is None:
        return Feedback(
            False, f"{call} returned None: replace the ... in its body and return the four gradients.", tried=False
        )
    if not isinstance(got, tuple | list) or len(got) != 4:
        return Feedback(False, f"{call} should return four tensors (dx, dw_q, dw_k, dw_v), got {_kind(got)}.")
    if work.numbers > BACKWARD_WORK:
        return Feedback(
            False,
            f"{call} computed {work.numbers:,} numbers for gradients of 52 entries; the derived backward pass "
            f"computes a few hundred (under {BACKWARD_WORK:,}). That is finite differences (the forward pass run "
            "again for every entry), which this exercise does not accept: derive the four gradients from the table "
            "above, one matrix product per step.",
        )
    right = _self_attention_grads(*args)
    hints = {
        "one-path": "X feeds the queries, the keys and the values: dX is the sum of the three paths, "
        "dQ W_qᵀ + dK W_kᵀ + dV W_vᵀ.",
        "no-jacobian": "The softmax has a Jacobian: dS = A ⊙ (dA − rowsum(dA ⊙ A)) / √d_k, not dA itself.",
        "unscaled": "The scores were divided by √d_k on the way forward: dS carries that factor back, and with it "
        "dQ = dS K and dK = dSᵀ Q.",
    }
    names = ["dx (5×4)", "dw_q (4×3)", "dw_k (4×3)", "dw_v (4×2)"]
    for i, (mine, want, name) in enumerate(zip(got, right, names)):
        wrong = [(_hand_grads(*args, mistake=m)[i], hint) for m, hint in hints.items()]
        wrong = [(c, h) for c, h in wrong if not torch.allclose(c, want)]  # a mistake that cannot show here
        feedback = compare_tensor(mine, want, name=f"{name} on new inputs", wrong=wrong, atol=BACKWARD_ATOL)
        if not feedback.correct:
            if compare_tensor(mine, want, name=name, atol=1e-5).correct:  # near, not exact: an approximation
                return Feedback(
                    False,
                    f"{name} is within 1e-5 of autograd's but not within {BACKWARD_ATOL:g}: the formulas give "
                    "autograd's gradient to the last digits of float64, an approximation such as finite "
                    "differences (or float32 somewhere) does not. Derive the gradient and keep every tensor float64.",
                )
            return feedback
    return Feedback(True, "All four gradients match autograd's to float64 precision on inputs the lesson never showed.")


def _kind(value: object) -> str:
    return f"a {type(value).__name__}"


# ---------------------------------------------------------------- why several heads: the two-colours task
class TwoColoursModel(nn.Module):
    """One query reads a set of items (lesson 11's "why several heads"): keys from the items' colours, values
    from their numbers, ``num_heads`` heads of one :class:`MultiHeadAttention`, then a linear read-out.

    The read-out is linear on purpose: what the attention gathers must already hold the answer, the read-out
    only names it. ``forward(colours, numbers)`` — ``(batch, n_items)`` each — gives ``(batch,
    task.n_classes)`` logits and keeps the weights of the call in :attr:`weights` ``(batch, num_heads,
    n_items)``. The parts, for exercise 11.6: :attr:`query` ``(d_model,)``, :attr:`colour` and :attr:`number`
    (embeddings), :attr:`attention`, :attr:`readout`.
    """

    def __init__(self, task: TwoColoursTask, *, d_model: int = 4, num_heads: int = 1):
        super().__init__()
        if not isinstance(task, TwoColoursTask):
            raise AttentionInputError(f"task must be a TwoColoursTask, got {type(task).__name__}")
        self.task = task
        self.query = nn.Parameter(torch.randn(d_model))  # the one question every set is asked
        self.colour = nn.Embedding(len(COLOURS), d_model)
        self.number = nn.Embedding(task.n_values, d_model)
        self.attention = MultiHeadAttention(d_model, num_heads)
        self.readout = nn.Linear(d_model, task.n_classes)
        self.weights: Tensor | None = None

    def forward(self, colours: Tensor, numbers: Tensor) -> Tensor:
        self.task.answer(colours, numbers)  # checks the shapes and ranges, with a message naming them
        query = self.query.expand(colours.shape[0], 1, -1)  # (batch, 1, d_model): one query per set
        read, weights = self.attention(query, self.colour(colours), self.number(numbers), return_weights=True)
        self.weights = weights[:, :, 0].detach()  # (batch, heads, n_items)
        logits: Tensor = self.readout(read[:, 0])
        return logits


def train_two_colours(
    model: TwoColoursModel,
    *,
    steps: int = 600,
    batch_size: int = 64,
    lr: float = 1e-2,
    seed: int = 0,
    progress: bool = True,
    desc: str = "training",
) -> list[float]:
    """Adam on fresh batches of ``model.task`` (seeded by ``seed``), with :func:`attnlib.training.fit`; the loss
    of every step. ``progress``: tqdm's bar, labelled ``desc``."""

    def step_loss(generator: torch.Generator) -> Tensor:
        colours, numbers, targets = model.task.batch(batch_size, generator)
        return F.cross_entropy(model(colours, numbers), targets)

    steps = check_positive_int("steps", steps)
    return fit(model, step_loss, steps=steps, lr=lr, seed=seed, progress=progress, desc=desc)


@dataclass(frozen=True)
class TwoColoursReport:
    """What :func:`two_colours_report` measures on held-out sets."""

    accuracy: float  #: the share of sets answered right
    on_colour: Tensor  #: ``(heads, 3)``: each head's mean total weight on the grey, red and blue items
    uniform: Tensor  #: ``(3,)``: each colour's share of the items (the weight a uniform head puts on it)


@torch.no_grad()
def two_colours_report(
    model: TwoColoursModel,
    *,
    seed: int = 999,
    batch_size: int = 2048,
    without: Callable[[Tensor, Tensor], Tensor] | None = None,
) -> TwoColoursReport:
    """On ``batch_size`` held-out sets: ``accuracy`` and ``on_colour`` ``(heads, 3)``, each head's mean total
    weight on the grey, red and blue items (uniform: each colour's share of the items). ``without(colours,
    numbers) -> logits`` replaces the model's forward (an ablation) for the accuracy."""
    colours, numbers, targets = model.task.batch(batch_size, torch.Generator().manual_seed(seed))
    logits = model(colours, numbers)
    weights = model.weights  # (batch, heads, n_items)
    assert weights is not None
    if without is not None:
        logits = without(colours, numbers)
    on_colour = torch.stack([(weights * (colours == c)[:, None]).sum(-1).mean(0) for c in range(len(COLOURS))], -1)
    counts = torch.tensor([model.task.n_grey, model.task.per_colour, model.task.per_colour])
    return TwoColoursReport(
        accuracy=float((logits.argmax(-1) == targets).double().mean()),
        on_colour=on_colour,
        uniform=counts / counts.sum(),
    )


def best_guess_accuracy(task: TwoColoursTask, knows: str) -> float:
    """The accuracy of the best possible guess of the answer from partial information, by enumeration:
    ``knows="blue"`` (the blue numbers only — a head that reads one colour) or ``"bag"`` (all the red and
    blue numbers without their colours — a head that averages them equally)."""
    from collections import Counter
    from itertools import combinations, product

    if knows not in ("blue", "bag"):
        raise AttentionInputError(f"knows must be 'blue' or 'bag', got {knows!r}")
    k, values = task.per_colour, range(task.n_values)
    if knows == "blue":  # the red sum is independent of the blues: guess its most likely value
        reds = Counter(sum(r) for r in product(values, repeat=k))
        sets: int = task.n_values**k  # int ** int is typed as Any (a negative power is a float)
        return max(reds.values()) / sets
    right = 0.0
    for numbers in product(values, repeat=2 * k):  # the red items first, then the blue ones
        splits = Counter(
            2 * sum(numbers[i] for i in red) - sum(numbers) for red in combinations(range(2 * k), k)
        )  # every way of calling k of the 2k numbers red, equally likely given the bag
        right += max(splits.values()) / sum(splits.values())
    bags: int = task.n_values ** (2 * k)
    return right / bags


def _without_head(model: TwoColoursModel, head: int, colours: Tensor, numbers: Tensor, *, mistake: str = "") -> Tensor:
    """The reference of 11.6: the logits with head ``head``'s output set to 0 (or with one typical ``mistake``)."""
    att = model.attention
    h = att.num_heads
    q = split_heads(att.w_query(model.query.expand(colours.shape[0], 1, -1)), h)  # (batch, h, 1, d_head)
    k = split_heads(att.w_key(model.colour(colours)), h)  # (batch, h, n, d_head)
    v = split_heads(att.w_value(model.number(numbers)), h)
    scale = 1.0 if mistake == "unscaled" else att.d_head**0.5
    weights = torch.softmax(q @ k.transpose(-2, -1) / scale, dim=-2 if mistake == "softmax-axis" else -1)
    heads = weights @ v  # (batch, h, 1, d_head)
    off = {"next-head": (head + 1) % h, "none": None}.get(mistake, head)
    if off is not None and mistake != "after-out-proj":
        heads = heads.clone()
        heads[:, off] = 0.0
    out = att.out_proj(combine_heads(heads))[:, 0]
    if mistake == "after-out-proj":
        out = out.clone()
        out[:, head * att.d_head : (head + 1) * att.d_head] = 0.0
    logits: Tensor = model.readout(out)
    return logits


@torch.no_grad()
def without_head_mean(model: TwoColoursModel, head: int, colours: Tensor, numbers: Tensor) -> Tensor:
    """The logits ``(batch, n_classes)`` with head ``head``'s output replaced by its mean over the ``batch`` sets
    given (mean-ablation, as lesson 14 names it): the head still adds its typical output, only the part that
    depends on the set is gone. Exercise 11.6's ``without_head`` replaces it by zeros instead."""
    if not isinstance(model, TwoColoursModel):
        raise AttentionInputError(f"model must be a TwoColoursModel, got {type(model).__name__}")
    att = model.attention
    h = att.num_heads
    if not isinstance(head, int) or not 0 <= head < h:
        raise AttentionInputError(f"head must be an index 0 … {h - 1} (the model has {h} heads), got {head!r}")
    model.task.answer(colours, numbers)  # checks the shapes and ranges, with a message naming them
    q = split_heads(att.w_query(model.query.expand(colours.shape[0], 1, -1)), h)  # (batch, h, 1, d_head)
    k = split_heads(att.w_key(model.colour(colours)), h)  # (batch, h, n, d_head)
    v = split_heads(att.w_value(model.number(numbers)), h)
    heads = torch.softmax(q @ k.transpose(-2, -1) / att.d_head**0.5, dim=-1) @ v  # (batch, h, 1, d_head)
    heads[:, head] = heads[:, head].mean(0)  # the head's mean output over the sets
    logits: Tensor = model.readout(att.out_proj(combine_heads(heads))[:, 0])
    return logits


#: where ``python -m bench.two_colours --json bench/results/two_colours.json`` stores its five seeds, in a checkout
TWO_COLOURS_BENCH = Path(__file__).resolve().parents[2] / "bench" / "results" / "two_colours.json"


def two_colours_bench() -> dict[str, object] | None:
    """The figures ``bench/two_colours.py`` stored in ``bench/results/two_colours.json``: ``steps``,
    ``d_model``, ``one_colour`` and ``bag`` (the best guesses), and ``rows``, one per seed and number of heads
    ``h``: ``accuracy`` on 2048 held-out sets and each head's total ``red`` and ``blue`` weight. None where the
    file is not there (a learner's copy without the repository)."""
    if not TWO_COLOURS_BENCH.is_file():
        return None
    stored: dict[str, object] = json.loads(TWO_COLOURS_BENCH.read_text(encoding="utf-8"))
    return stored


#: 11.6 is checked on models the lesson never built: ``(n_values, per_colour, n_grey, d_model, num_heads, head,
#: seed)`` — random parameters (no training needed to check the arithmetic) and fresh sets.
ABLATION_CASES = ((7, 3, 1, 12, 3, 1, 1106), (4, 1, 3, 6, 2, 0, 1107))


def _ablation_case(case: tuple[int, int, int, int, int, int, int]) -> tuple[TwoColoursModel, int, Tensor, Tensor]:
    n_values, per_colour, n_grey, d_model, heads, head, seed = case
    task = TwoColoursTask(n_values, per_colour, n_grey)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = TwoColoursModel(task, d_model=d_model, num_heads=heads)
    colours, numbers, _ = task.batch(5, torch.Generator().manual_seed(seed + 1))
    return model.eval(), head, colours, numbers


@exercise("multihead.6")
def without_head(answer: object) -> Feedback:
    """``without_head(model, head, colours, numbers) -> logits``: a :class:`TwoColoursModel`'s logits with head
    ``head``'s output replaced by zeros (before ``out_proj``), written from the model's parts."""
    worst = 0.0
    for case in ABLATION_CASES:
        model, head, colours, numbers = _ablation_case(case)
        shapes = (
            f"a model with d_model = {case[3]} and {case[4]} heads, head = {head}, colours and numbers "
            f"{tuple(colours.shape)}"
        )
        call = "your without_head(model, head, colours, numbers)"

        def said(exc: Exception, shapes: str = shapes, call: str = call) -> Feedback:
            return Feedback(
                False,
                f"{call} failed on {shapes}: {type(exc).__name__}. The query is one vector per set, "
                "(batch, 1, d_model) → split (batch, h, 1, d_head); keys and values (batch, h, n_items, d_head); "
                "weights (batch, h, 1, n_items); head outputs (batch, h, 1, d_head).",
            )

        with torch.no_grad():
            got = run_learner_code(
                answer,
                model,
                head,
                colours.clone(),
                numbers.clone(),
                name=call,
                write_it=(
                    ATTNLIB,
                    MultiHeadAttention.forward,
                    MultiHeadAttention.intermediates,
                    TwoColoursModel.forward,
                    torch.nn.MultiheadAttention.forward,
                    ATTENTION_FAMILY,
                ),
                on_error=said,
            )
            if isinstance(got, Feedback):
                return got
            expected = _without_head(model, head, colours, numbers)
            wrong: list[Wrong] = [
                (
                    _without_head(model, head, colours, numbers, mistake="none"),
                    "These are the whole model's logits: no head is switched off. Set head `head`'s output, "
                    "heads[:, head] (batch, 1, d_head), to 0 before the heads are joined and projected.",
                ),
                (
                    _without_head(model, head, colours, numbers, mistake="after-out-proj"),
                    "You zeroed columns AFTER out_proj: there every column mixes all the heads. Zero the head's "
                    "own output before out_proj, where the heads sit side by side.",
                ),
                (
                    _without_head(model, head, colours, numbers, mistake="unscaled"),
                    "Divide the scores by √d_head (the head's size) before the softmax, as the model does.",
                    "scale-forgotten",
                ),
                (
                    _without_head(model, head, colours, numbers, mistake="softmax-axis"),
                    "Your softmax runs over the wrong axis: each head's weights over the ITEMS must sum to 1, "
                    "softmax(..., dim=-1).",
                    "softmax-axis",
                ),
            ]
            wrong += [
                (
                    _without_head(model, other, colours, numbers),
                    f"You switched off head {other}, not head {head}: `head` is an index, counted from 0 (the "
                    "lesson's head r is index r − 1), and its output is heads[:, head] (its columns head·d_head … "
                    "(head + 1)·d_head − 1 side by side).",
                )
                for other in range(model.attention.num_heads)
                if other != head
            ]
        if isinstance(got, Tensor) and got.shape == (len(colours), 1, model.task.n_classes):
            got = got[:, 0]
        verdict = compare_tensor(got, expected, name=f"the logits without head {head} on {shapes}", wrong=wrong)
        if not verdict.correct:
            return verdict
        if isinstance(got, Tensor):
            worst = max(worst, float((got.detach().double() - expected.double()).abs().max()))
    return Feedback(
        True,
        f"Right on two models the lesson never built (3 heads of 4 and 2 heads of 3), within {worst:.0e}: "
        "one head's output set to 0 before out_proj, the others untouched.",
    )


#: ``without_head(model, head, colours, numbers) -> logits``, exercise 11.6's function
Ablation = Callable[[TwoColoursModel, int, Tensor, Tensor], Tensor]


def yours_or_reference(without: object) -> tuple[Ablation, str]:
    """``(ablation, sentence)``: your ``without_head`` once 11.6 accepts it, the reference until then."""
    if without_head(without).correct:
        return cast(Ablation, without), "your without_head"  # 11.6 ran it on two models and accepted its logits
    return (lambda m, h, c, n: _without_head(m, h, c, n)), "the reference without_head (11.6 is not solved yet)"
