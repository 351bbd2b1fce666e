"""Lesson 15 · Attention at scale: its explorer and its exercise checkers.

Lesson 15 explorer: tiled attention block by block — the live tile, the running max and normaliser, memory held.

Lesson 15 exercises: attention at scale — memory on paper, the online softmax, masks for fused kernels, KV cache.

- ``scale.1`` by hand: GiB of one float32 score matrix for n = 32 768 tokens.
- ``scale.2`` code: ``online_step(m, ell, acc, scores, values)``, one block of the online softmax; the
  checker runs it over blocks of new data (blocks that do not divide n_k, scores large enough to
  overflow ``exp`` without the running maximum) and compares ``acc / ell`` with attention.
- ``scale.3`` transfer (the fused-kernel trap): one boolean mask for a causal model on padded sequences,
  to pass alone instead of a padding mask *and* ``is_causal=True``.
- ``scale.4`` predict: query·key dot products of one head to generate 3 tokens after a 4-token prompt,
  with a KV cache.
"""

from __future__ import annotations

import html
import math

import ipywidgets as widgets
import torch
from torch import Tensor

from ..cost import GIB, score_matrix_bytes
from ..examples import translate
from ..kv_cache import score_dot_products
from ..show.explorer import Explorer, HeatmapView
from ..steps import attention, scale_scores, score
from ..tiled import OnlineState, online_softmax_blocks
from ._check import Feedback, compare_number, compare_tensor, exercise, run_learner_code

__all__ = [
    "TiledExplorer",
    "dot_products_with_cache",
    "gib_on_paper",
    "online_step",
    "padded_causal_mask",
    "wrong_answers",
]


class TiledExplorer(Explorer):
    """Document 003's sentence (8 tokens, ``d_k = d_v = 16``, scaled) through the online softmax.

    Args:
        block_size: keys per block (1 … 8).
        block: how many blocks have been visited (1 … number of blocks).

    Controls: ``block_size``, ``block``. Views: ``scores`` (``S/√d_k``, the whole ``(8, 8)`` matrix
    :func:`attnlib.attention` would hold, the live tile outlined), ``tile`` (``e^(s − m)`` of the live
    block: the only scores held now), ``state`` (``m`` and ``ℓ`` per query after this block) and
    ``output`` (``acc / ℓ``: attention over the keys seen so far; ``Z`` after the last block).
    """

    def __init__(self, block_size: int = 3, block: int = 1) -> None:
        super().__init__()
        self.tokens = translate.tokens
        self.queries, self.keys, self.values = translate.qkv()
        n = len(self.tokens)
        self.scaled = scale_scores(score(self.queries, self.keys), self.queries.shape[-1])
        self.exact = attention(self.queries, self.keys, self.values)
        c = self.controls
        c["block_size"] = widgets.IntSlider(value=block_size, min=1, max=n, description="block size")
        c["block"] = widgets.IntSlider(value=block, min=1, max=math.ceil(n / block_size), description="blocks seen")
        kw = dict(row_labels=self.tokens, ylabel="query")
        self.views["scores"] = HeatmapView(
            self.scaled, col_labels=self.tokens, title="S / √d_k (never held whole)", xlabel="key", **kw
        )
        self.views["tile"] = HeatmapView([[0.0]], title="live tile e^(s − m)", xlabel="key", vmin=0.0, vmax=1.0, **kw)
        self.views["state"] = HeatmapView([[0.0, 0.0]], col_labels=["m", "ℓ"], title="running m and ℓ", **kw)
        self.views["output"] = HeatmapView([[0.0]], title="acc / ℓ so far", xlabel="feature", annotate=False, **kw)
        self.caption = widgets.HTML()
        self.update()
        self.observe_controls()
        self.widget = widgets.VBox(
            [
                widgets.HBox([c["block_size"], c["block"]]),
                self.message,
                widgets.HBox([self.views["scores"], self.views["tile"], self.views["state"]]),
                widgets.HBox([self.views["output"], self.caption]),
            ]
        )

    def current(self) -> tuple[OnlineState, int]:
        """The state after the chosen number of blocks, and how many blocks there are."""
        c = self.controls
        states = list(online_softmax_blocks(self.queries, self.keys, self.values, block_size=c["block_size"].value))
        if c["block"].value > len(states):  # fewer blocks than before: jump to the last one
            self.set_quietly("block", value=len(states))
        self.set_quietly("block", max=len(states))
        return states[c["block"].value - 1], len(states)

    def update(self) -> None:
        """Run the online softmax up to the chosen block; show the tile, the state, the memory held."""
        state, n_blocks = self.current()
        n_q, n_k, d_v = len(self.tokens), self.keys.shape[-2], self.values.shape[-1]
        keys = self.tokens[state.start : state.stop]
        self.views["scores"].highlight(cols=range(state.start, state.stop))
        title = f"live tile e^(s − m): keys {state.start + 1}–{state.stop}"
        rows = self.tokens
        self.views["tile"].update(state.p, row_labels=rows, col_labels=keys, title=title)
        self.views["state"].update(torch.cat([state.m, state.ell], dim=-1), row_labels=rows, col_labels=["m", "ℓ"])
        self.views["output"].update(state.acc / state.ell, row_labels=rows)
        b = state.stop - state.start
        held = n_q * b + n_q * (d_v + 2)
        done = state.stop == n_k
        same = bool(torch.allclose(state.acc / state.ell, self.exact, atol=1e-6))
        self.caption.value = html.escape(
            f"block {self.controls['block'].value} of {n_blocks} (keys {state.start + 1}–{state.stop}). "
            f"Held now: a {n_q}×{b} tile + {n_q}×({d_v} + 2) state = {held} numbers; attention() holds the "
            f"{n_q}×{n_k} = {n_q * n_k} scores, then as many weights. "
            + (
                f"All keys seen: acc / ℓ equals attention() (within 1e-6: {same})."
                if done
                else f"Keys {state.stop + 1}–{n_k} not seen yet: acc / ℓ is attention over the first {state.stop}."
            )
            + f" With {n_q} tokens the state outweighs the scores; it grows as n·(b + d_v + 2), the scores as n²."
        )

    def summary(self) -> str:
        c = self.controls
        return f"TiledExplorer(block_size={c['block_size'].value}, block={c['block'].value} of {c['block'].max})"


N_PAPER = 32_768
LENGTHS, N_PADDED = (5, 3), 5
N_PROMPT, N_NEW = 4, 3


# ---------------------------------------------------------------- scale.2: the learner's block update
def _fresh_inputs() -> tuple[Tensor, Tensor, Tensor]:
    """Queries (5, 4), keys (11, 4), values (11, 3), never shown in a lesson; scores up to about ±120."""
    gen = torch.Generator().manual_seed(15)
    queries = 8 * torch.randn(5, 4, generator=gen)
    return queries, 6 * torch.randn(11, 4, generator=gen), torch.randn(11, 3, generator=gen)


BLOCK = 4  # 11 keys: blocks of 4, 4 and 3


def _run_blocks(step: object, queries: Tensor, keys: Tensor, values: Tensor) -> Tensor | Feedback:
    """Start at m = −∞, ℓ = 0, acc = 0; call ``step`` on each block of scaled scores; return acc / ℓ."""
    scores = queries @ keys.T / queries.shape[-1] ** 0.5
    m = torch.full((queries.shape[0], 1), float("-inf"))
    ell, acc = torch.zeros(queries.shape[0], 1), torch.zeros(queries.shape[0], values.shape[-1])
    call = "your online_step(m, ell, acc, scores, values)"
    for start in range(0, keys.shape[0], BLOCK):
        got = run_learner_code(
            step,
            m.clone(),
            ell.clone(),
            acc.clone(),
            scores[:, start : start + BLOCK].clone(),
            values[start : start + BLOCK].clone(),
            name=call,
        )
        if isinstance(got, Feedback):
            return got
        if got is None:
            return Feedback(False, f"{call} returned None: return the new (m, ell, acc).")
        if not isinstance(got, tuple | list) or len(got) != 3 or not all(isinstance(t, Tensor) for t in got):
            return Feedback(False, f"{call} should return three tensors (m, ell, acc), got {type(got).__name__}.")
        m, ell, acc = got
        shapes = [tuple(t.shape) for t in got]
        if shapes != [(5, 1), (5, 1), (5, 3)]:
            return Feedback(False, f"{call} returned shapes {shapes}; expected m (5, 1), ell (5, 1), acc (5, 3).")
    return (acc / ell).detach()


def _no_rescale(m, ell, acc, scores, values):
    m_new = torch.maximum(m, scores.amax(-1, keepdim=True))
    p = torch.exp(scores - m_new)
    return m_new, ell + p.sum(-1, keepdim=True), acc + p @ values


def _acc_not_rescaled(m, ell, acc, scores, values):
    m_new = torch.maximum(m, scores.amax(-1, keepdim=True))
    correction, p = torch.exp(m - m_new), torch.exp(scores - m_new)
    return m_new, ell * correction + p.sum(-1, keepdim=True), acc + p @ values


def _no_maximum(m, ell, acc, scores, values):
    p = torch.exp(scores)  # overflows for scores above ~88 in float32
    return m, ell + p.sum(-1, keepdim=True), acc + p @ values


def _solution(m, ell, acc, scores, values):
    m_new = torch.maximum(m, scores.amax(-1, keepdim=True))
    correction, p = torch.exp(m - m_new), torch.exp(scores - m_new)
    return m_new, ell * correction + p.sum(-1, keepdim=True), acc * correction + p @ values


# ---------------------------------------------------------------- scale.3: one mask for padded, causal sequences
def _masks() -> dict[str, Tensor]:
    n = N_PADDED
    causal = torch.ones(n, n, dtype=torch.bool).tril()  # key j ≤ query i
    valid = torch.arange(n) < torch.tensor(LENGTHS)[:, None]  # (batch, n_k): key j is a real token
    padding = valid[:, None, :].expand(len(LENGTHS), n, n)
    return {
        "right": causal & padding,
        "causal": causal.expand(len(LENGTHS), n, n),
        "padding": padding,
        "either": causal | padding,
        "future": causal.T & padding,
    }


def wrong_answers() -> dict[str, list[tuple[object, str | None]]]:
    """Per exercise, typical wrong answers and the mistake id each must reveal (None: a plain hint)."""
    masks = _masks()
    return {
        "scale.1": [(N_PAPER * 4 / GIB, None), (N_PAPER**2 * 4 / 1e9, None), (N_PAPER**2 * 2 / GIB, None)],
        "scale.2": [(_no_rescale, "online-no-rescale"), (_acc_not_rescaled, "online-no-rescale"), (_no_maximum, None)],
        "scale.3": [
            (masks["causal"], "causal-and-mask"),
            (masks["padding"], "causal-and-mask"),
            (masks["future"], None),
            (masks["either"], None),
        ],
        "scale.4": [(score_dot_products(N_PROMPT, N_NEW, use_cache=False), None), (N_PROMPT + N_NEW, None)],
    }


@exercise("scale.1")
def gib_on_paper(answer: object) -> Feedback:
    """GiB of one float32 (n, n) score matrix at n = 32 768 (one head, one layer, one sequence)."""
    want = score_matrix_bytes(N_PAPER) / GIB
    wrong = [
        (N_PAPER * 4 / GIB, "That is one row of scores (n numbers); the matrix has n × n of them."),
        (N_PAPER**2 * 4 / 1e9, "That is in GB (10⁹ bytes); a GiB is 2³⁰ = 1 073 741 824 bytes."),
        (N_PAPER**2 * 2 / GIB, "That is at 2 bytes per number (float16/bfloat16); the question asks for float32."),
        (N_PAPER**2 * 32 / GIB, "That counts bits: a float32 number takes 4 bytes."),
    ]
    return compare_number(
        answer, want, name="the size of one 32 768 × 32 768 float32 score matrix in GiB", wrong=wrong, tol=1e-3
    )


@exercise("scale.2")
def online_step(answer: object) -> Feedback:
    """``online_step(m (n_q, 1), ell (n_q, 1), acc (n_q, d_v), scores (n_q, b), values (b, d_v))`` → new state."""
    queries, keys, values = _fresh_inputs()
    got = _run_blocks(answer, queries, keys, values)
    if isinstance(got, Feedback):
        return got
    if not bool(torch.isfinite(got).all()):
        return Feedback(
            False,
            "acc / ell has NaN or inf: an exp overflowed. These scores reach about 120, and e^120 does not fit in "
            "float32: subtract the new running maximum m' before exp, and rescale by e^(m − m') (≤ 1; 0 while m = −∞).",
        )
    wrong = [
        (
            _run_blocks(_no_rescale, queries, keys, values),
            "When a block raises the maximum from m to m', what you accumulated was measured from the old m: multiply "
            "ell and acc by e^(m − m') before adding the new block.",
            "online-no-rescale",
        ),
        (
            _run_blocks(_acc_not_rescaled, queries, keys, values),
            "ell is rescaled but acc is not: both were accumulated under the old maximum, both need e^(m − m').",
            "online-no-rescale",
        ),
    ]
    return compare_tensor(
        got,
        attention(queries, keys, values),
        name="acc / ell after the last block",
        wrong=wrong,
        atol=1e-4,
        success="Block by block, without ever holding all 5 × 11 scores.",
    )


@exercise("scale.3")
def padded_causal_mask(answer: object) -> Feedback:
    """A boolean ``(2, 5, 5)`` mask: causal, and hiding the padding keys of sequences of lengths 5 and 3."""
    masks = _masks()
    got = answer
    if isinstance(answer, Tensor) and answer.dtype != torch.bool:
        return Feedback(
            False,
            f"the mask should be boolean (True = may attend), got dtype {answer.dtype}; "
            "combine boolean masks with & (and) and | (or).",
        )
    wrong = [
        (
            masks["causal"],
            "This is the causal mask alone: sequence 2's padding keys 4 and 5 are still visible. "
            "Passing the padding mask *and* is_causal=True is the fused-kernel trap: combine them "
            "into one mask with &.",
            "causal-and-mask",
        ),
        (
            masks["padding"],
            "This hides the padding but lets every query see the future: combine it with the causal "
            "mask (tril) using &.",
            "causal-and-mask",
        ),
        (masks["future"], "Query i sees keys j ≥ i here: the transposed triangle (triu). Causal is j ≤ i, tril."),
        (masks["either"], "| lets a key through when it is past OR valid; it must be both: use &."),
    ]
    return compare_tensor(
        got,
        masks["right"].double(),
        name="the causal padding mask (2, 5, 5)",
        wrong=wrong,
        atol=0.5,
        success="Pass it alone: attention(q, k, v, mask=mask), no is_causal.",
    )


@exercise("scale.4")
def dot_products_with_cache(answer: object) -> Feedback:
    """Dot products of one head of one layer: 3 new tokens after a 4-token prompt, with a KV cache."""
    wrong = [
        (
            score_dot_products(N_PROMPT, N_NEW, use_cache=False),
            "That is without a cache: 4², 5², 6². With one, only the newest token's query meets the keys.",
        ),
        (float(N_PROMPT + N_NEW), "Count dot products, not tokens: one query meets every key so far."),
        (
            float(N_PROMPT**2 + N_PROMPT + 1 + N_PROMPT + 2 + N_PROMPT + 3),
            "The last token needs no forward pass: it is predicted by the step before (3 steps = the prompt + 2 rows).",
        ),
    ]
    return compare_number(
        answer, score_dot_products(N_PROMPT, N_NEW, use_cache=True), name="the dot products with a cache", wrong=wrong
    )
