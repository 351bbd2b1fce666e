"""Lesson 15 · Attention at scale: its explorer and its exercise checkers.

Lesson 15 explorer: tiled attention block by block — the live tile, the running max and normaliser, memory held.

Lesson 15 exercises: attention at scale — memory on paper, the online softmax, masks for fused kernels, KV cache.

The exercises were called ``scale.*`` before lesson 08's ``scaling.*`` made the names too alike; the
old names still work.

- ``attention_at_scale.1`` on paper: the longest context whose 32 float32 score matrices (one layer) fit in 80 GiB.
- ``attention_at_scale.2`` code: ``online_step(m, ell, acc, scores, values)``, one block of the online softmax; the
  checker runs it over blocks of new data (blocks that do not divide n_k, scores large enough to
  overflow ``exp`` without the running maximum) and compares ``acc / ell`` with attention.
- ``attention_at_scale.3`` transfer (the fused-kernel trap): one boolean mask for a causal model on padded sequences,
  to pass alone instead of a padding mask *and* ``is_causal=True``.
- ``attention_at_scale.4`` predict: query·key dot products of one head for the 100th new token after a 4-token
  prompt, with a KV cache.
- ``attention_at_scale.5`` experiment: change ``tiled_attention``'s block size and predict its largest tensor.
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable, Mapping
from functools import partial
from typing import TypedDict, cast

import torch
import torch.nn.functional as F
from torch import Tensor

from ..cost import GIB, MIB
from ..examples import translate
from ..modules import causal_mask
from ..show import ui
from ..show.explorer import Explorer, HeatmapView, Shown
from ..steps import attention, attention_weights, scale_scores, score, softmax
from ..tiled import OnlineState, online_softmax_blocks, tiled_attention
from ._check import (
    ATTNLIB,
    SOFTMAX_FAMILY,
    Feedback,
    Wrong,
    compare_number,
    compare_tensor,
    course_code,
    exercise,
    run_learner_code,
)

__all__ = [
    "TiledExplorer",
    "block_memory",
    "dot_products_with_cache",
    "longest_context",
    "online_step",
    "padded_causal_mask",
    "wrong_answers",
]


class TiledValues(TypedDict):
    """What :meth:`TiledExplorer.compute` reads: the controls' values."""

    block_size: int
    block: int


class TiledExplorer(Explorer):
    """Document 003's sentence (8 tokens, ``d_k = d_v = 16``, scaled) through the online softmax.

    Args:
        block_size: keys per block (1 … 8).
        block: how many blocks have been visited (1 … number of blocks).

    Controls: ``block_size``, ``block``. Views: ``scores`` (``S/√d_k``, the whole ``(8, 8)`` matrix
    :func:`attnlib.attention` would hold, the live tile outlined), ``tile`` (``e^(s/√d_k − m)`` of the live
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
        c["block_size"] = ui.IntSlider(value=block_size, min=1, max=n, description="block size")
        c["block"] = ui.IntSlider(value=block, min=1, max=math.ceil(n / block_size), description="blocks seen")
        by_query = partial(HeatmapView, None, ylabel="query")  # one row per query
        self.views["scores"] = by_query(title="S / √d_k (never held whole)", xlabel="key")
        self.views["tile"] = by_query(title="live tile e^(s/√d_k − m)", xlabel="key", vmin=0.0, vmax=1.0)
        self.views["state"] = by_query(title="running m and ℓ")
        self.views["output"] = by_query(title="acc / ℓ so far", xlabel="feature", annotate=False)
        self.caption = self.texts["caption"] = ui.HTML()
        self.update()
        self.observe_controls()
        self.widget = ui.VBox(
            [
                ui.HBox([c["block_size"], c["block"]]),
                self.message,
                ui.HBox([self.views["scores"], self.views["tile"], self.views["state"]]),
                ui.HBox([self.views["output"], self.caption]),
            ]
        )

    def state_at(self, values: Mapping[str, object]) -> tuple[OnlineState, int, int]:
        """The state after the chosen number of blocks (clamped to how many there are), that number, and how many."""
        values = cast(TiledValues, values)
        states = list(online_softmax_blocks(self.queries, self.keys, self.values, block_size=values["block_size"]))
        block = min(values["block"], len(states))
        return states[block - 1], block, len(states)

    def current(self) -> tuple[OnlineState, int]:
        """The state after the chosen number of blocks, and how many blocks there are."""
        state, _block, n_blocks = self.state_at(self.values_now())
        return state, n_blocks

    def compute(self, values: Mapping[str, object]) -> Shown:
        """Run the online softmax up to the chosen block; show the tile, the state, the memory held."""
        state, block, n_blocks = self.state_at(values)
        n_q, n_k, d_v = len(self.tokens), self.keys.shape[-2], self.values.shape[-1]
        rows = self.tokens
        b = state.stop - state.start
        held = n_q * b + n_q * (d_v + 2)
        done = state.stop == n_k
        same = bool(torch.allclose(state.acc / state.ell, self.exact, atol=1e-6))
        v = self.views
        return Shown(
            views={
                "scores": v["scores"].frame(
                    self.scaled, row_labels=rows, col_labels=rows, cols=range(state.start, state.stop)
                ),
                "tile": v["tile"].frame(
                    state.p,
                    row_labels=rows,
                    col_labels=self.tokens[state.start : state.stop],
                    title=f"live tile e^(s/√d_k − m): keys {state.start + 1}–{state.stop}",
                ),
                "state": v["state"].frame(
                    torch.cat([state.m, state.ell], dim=-1), row_labels=rows, col_labels=["m", "ℓ"]
                ),
                "output": v["output"].frame(state.acc / state.ell, row_labels=rows),
            },
            texts={
                "caption": html.escape(
                    f"block {block} of {n_blocks} (keys {state.start + 1}–{state.stop}). "
                    f"Held now: a {n_q}×{b} tile + {n_q}×({d_v} + 2) state = {held} numbers; attention() holds "
                    f"the {n_q}×{n_k} = {n_q * n_k} scores, then as many weights. "
                    + (
                        f"All keys seen: acc / ℓ equals attention() (within 1e-6: {same})."
                        if done
                        else f"Keys {state.stop + 1}–{n_k} not seen yet: acc / ℓ is attention over the first "
                        f"{state.stop}."
                    )
                    + f" With {n_q} tokens the tile and state outweigh the scores; together they grow as "
                    "n·(n_b + d_v + 2), the scores as n²."
                )
            },
            controls={"block": {"max": n_blocks, "value": block}},
        )

    def summary(self) -> str:
        c = self.controls
        return f"TiledExplorer(block_size={c['block_size'].value}, block={c['block'].value} of {c['block'].max})"


GPU_GIB, HEADS = 80, 32  # at_scale.1: 80 GiB for the scores of one layer, 32 heads built at once
LENGTHS, N_PADDED = (5, 3), 5
N_PROMPT, NTH_NEW = 4, 100  # at_scale.4: the 100th new token after a 4-token prompt
N_TILED, D_TILED, BLOCK_TRY = 4096, 64, 640  # at_scale.5: 10 MiB (a figure the lesson does not print)


def _longest(bytes_per_number: int = 4, heads: int = HEADS, unit: float = GIB) -> int:
    """The largest n with heads · n² · bytes_per_number <= GPU_GIB · unit."""
    return math.isqrt(int(GPU_GIB * unit) // (heads * bytes_per_number))


# ---------------------------------------------------------------- scale.2: the learner's block update
#: the seeds of at_scale.2's inputs: the blocks the step sees all of, and those whose first two it is not shown
FRESH_SEED, UNSEEN_SEED = 15, 1515


def _fresh_inputs(seed: int = FRESH_SEED) -> tuple[Tensor, Tensor, Tensor]:
    """Queries (5, 4), keys (11, 4), values (11, 3), never shown in a lesson; scores up to about ±120."""
    gen = torch.Generator().manual_seed(seed)
    queries = 8 * torch.randn(5, 4, generator=gen)
    return queries, 6 * torch.randn(11, 4, generator=gen), torch.randn(11, 3, generator=gen)


BLOCK = 4  # 11 keys: blocks of 4, 4 and 3
#: the state online softmax carries from block to block: the running maximum m, normaliser ℓ and accumulator
OnlineStepState = tuple[Tensor, Tensor, Tensor]
#: one block's update, ``(m, ell, acc, scores, values) -> (m', ell', acc')``: what at_scale.2 asks for
OnlineStep = Callable[[Tensor, Tensor, Tensor, Tensor, Tensor], OnlineStepState]
#: what at_scale.2 asks the learner to write: any of these does the whole softmax or attention at once
WRITE_IT = (
    ATTNLIB,
    SOFTMAX_FAMILY,
    attention,
    attention_weights,
    tiled_attention,
    online_softmax_blocks,
    softmax,
    torch.softmax,
    F.softmax,
    F.scaled_dot_product_attention,
)


def _run_blocks(
    step: object, queries: Tensor, keys: Tensor, values: Tensor, *, handed_from: int = 0
) -> Tensor | Feedback:
    """Start at m = −∞, ℓ = 0, acc = 0; call ``step`` on each block of scaled scores; return acc / ℓ.

    ``handed_from``: the checker itself runs the blocks before this key (with the course's step) and hands
    ``step`` only the state they leave: a step that keeps anything besides (m, ℓ, acc) cannot know them.
    """
    scores = queries @ keys.T / queries.shape[-1] ** 0.5
    m = torch.full((queries.shape[0], 1), float("-inf"))
    ell, acc = torch.zeros(queries.shape[0], 1), torch.zeros(queries.shape[0], values.shape[-1])
    call = "your online_step(m, ell, acc, scores, values)"
    for start in range(0, keys.shape[0], BLOCK):
        block = scores[:, start : start + BLOCK].clone(), values[start : start + BLOCK].clone()
        if start < handed_from:
            m, ell, acc = _solution(m, ell, acc, *block)
            continue
        got = run_learner_code(step, m.clone(), ell.clone(), acc.clone(), *block, name=call, write_it=WRITE_IT)
        if isinstance(got, Feedback):
            return got
        if not isinstance(got, tuple | list) or len(got) != 3 or not all(isinstance(t, Tensor) for t in got):
            return Feedback(False, f"{call} should return three tensors (m, ell, acc), got {type(got).__name__}.")
        m, ell, acc = got
        shapes = [tuple(t.shape) for t in got]
        want = [(queries.shape[0], 1), (queries.shape[0], 1), (queries.shape[0], values.shape[-1])]
        if shapes != want:
            return Feedback(
                False, f"{call} returned shapes {shapes}; expected m {want[0]}, ell {want[1]}, acc {want[2]}."
            )
    return (acc / ell).detach()


def _mistake(step: object, queries: Tensor, keys: Tensor, values: Tensor) -> Tensor:
    """``acc / ℓ`` of one of the course's typical wrong steps (they always return three right-shaped tensors)."""
    with course_code():  # the course's own slip, through the learner's path: attnlib may do its work
        got = _run_blocks(step, queries, keys, values)
    if isinstance(got, Feedback):
        raise RuntimeError(f"the course's own step {getattr(step, '__name__', step)} failed: {got}")
    return got


HINT_HIDDEN_STATE = (
    "Right when your step sees every block, wrong when the checker hands it a state (m, ell, acc) built from "
    "blocks it never saw: your step keeps something besides that state between calls (the blocks, or their "
    "scores). Online softmax holds only m, ell (n_q, 1) and acc (n_q, d_v): n_q · (d_v + 2) numbers, whatever "
    "the length. Compute the new state from the old one and the block alone."
)


def _no_rescale(m: Tensor, ell: Tensor, acc: Tensor, scores: Tensor, values: Tensor) -> OnlineStepState:
    m_new = torch.maximum(m, scores.amax(-1, keepdim=True))
    p = torch.exp(scores - m_new)
    return m_new, ell + p.sum(-1, keepdim=True), acc + p @ values


def _acc_not_rescaled(m: Tensor, ell: Tensor, acc: Tensor, scores: Tensor, values: Tensor) -> OnlineStepState:
    m_new = torch.maximum(m, scores.amax(-1, keepdim=True))
    correction, p = torch.exp(m - m_new), torch.exp(scores - m_new)
    return m_new, ell * correction + p.sum(-1, keepdim=True), acc + p @ values


def _flipped(m: Tensor, ell: Tensor, acc: Tensor, scores: Tensor, values: Tensor) -> OnlineStepState:
    m_new = torch.maximum(m, scores.amax(-1, keepdim=True))
    correction, p = torch.exp(m_new - m), torch.exp(scores - m_new)  # e^(m' − m): upside down
    return m_new, ell * correction + p.sum(-1, keepdim=True), acc * correction + p @ values


def _block_maximum(m: Tensor, ell: Tensor, acc: Tensor, scores: Tensor, values: Tensor) -> OnlineStepState:
    m_new = scores.amax(-1, keepdim=True)  # the block's maximum, forgetting the earlier blocks'
    correction, p = torch.exp(m - m_new), torch.exp(scores - m_new)
    return m_new, ell * correction + p.sum(-1, keepdim=True), acc * correction + p @ values


def _probe(step: object) -> str | None:
    """Which known slip ``step`` makes, tried on two one-query states where it shows: ``"flipped"`` or ``"block"``."""
    one = torch.ones(1, 1)
    values = torch.tensor([[1.0], [2.0]])
    cases = {
        "flipped": (one, one, one, torch.tensor([[3.0, 0.0]]), values, _flipped),  # the maximum rises 1 → 3
        "block": (3 * one, one, one, torch.tensor([[1.0, 2.0]]), values, _block_maximum),  # the block's is lower
    }
    for slip, (*args, wrong) in cases.items():
        got = run_learner_code(step, *[a.clone() for a in args], name="probe", write_it=WRITE_IT)
        if isinstance(got, tuple | list) and len(got) == 3 and all(isinstance(t, Tensor) for t in got):
            want = wrong(*args)
            if all(g.shape == w.shape and torch.allclose(g.double(), w.double(), atol=1e-4) for g, w in zip(got, want)):
                return slip
    return None


PROBE_HINTS = {
    "flipped": (
        "Your correction is upside down: e^(m' − m) ≥ 1 blows up what was accumulated. The old sums were measured "
        "from m and must be re-measured from the larger m': multiply by e^(m − m') ≤ 1."
    ),
    "block": (
        "Your m' is the block's own maximum, so it can go down when a later block is lower, and the correction "
        "e^(m − m') then exceeds 1. Keep the running maximum: m' = max(m, the block's maximum)."
    ),
}


def _keeps_every_block() -> OnlineStep:
    """A step that stores every block it is given and recomputes the whole softmax: right at the end, not online."""
    seen: list[tuple[Tensor, Tensor]] = []

    def step(m: Tensor, ell: Tensor, acc: Tensor, scores: Tensor, values: Tensor) -> OnlineStepState:
        if not bool(torch.isfinite(m).any()):
            seen.clear()  # a new run starts at m = −∞
        seen.append((scores, values))
        all_scores, all_values = torch.cat([s for s, _ in seen], -1), torch.cat([v for _, v in seen])
        top = all_scores.amax(-1, keepdim=True)
        p = torch.exp(all_scores - top)
        return top, p.sum(-1, keepdim=True), p @ all_values

    return step


def _no_maximum(m: Tensor, ell: Tensor, acc: Tensor, scores: Tensor, values: Tensor) -> OnlineStepState:
    p = torch.exp(scores)  # overflows for scores above ~88 in float32
    return m, ell + p.sum(-1, keepdim=True), acc + p @ values


def _solution(m: Tensor, ell: Tensor, acc: Tensor, scores: Tensor, values: Tensor) -> OnlineStepState:
    m_new = torch.maximum(m, scores.amax(-1, keepdim=True))
    correction, p = torch.exp(m - m_new), torch.exp(scores - m_new)
    return m_new, ell * correction + p.sum(-1, keepdim=True), acc * correction + p @ values


# ---------------------------------------------------------------- scale.3: one mask for padded, causal sequences
def _masks() -> dict[str, Tensor]:
    n = N_PADDED
    causal = causal_mask(n)  # key j ≤ query i
    valid = torch.arange(n) < torch.tensor(LENGTHS)[:, None]  # (batch, n_k): key j is a real token
    padding = valid[:, None, :].expand(len(LENGTHS), n, n)
    return {
        "right": causal & padding,
        "causal": causal.expand(len(LENGTHS), n, n),
        "padding": padding,
        "either": causal | padding,
        "future": causal.T & padding,
        "queries_too": causal & padding & padding.transpose(-1, -2),
        "inverted": ~(causal & padding),
    }


def wrong_answers() -> dict[str, list[tuple[object, str | None]]]:
    """Per exercise, typical wrong answers and the mistake id each must reveal (None: a plain hint)."""
    masks = _masks()
    return {
        "attention_at_scale.1": [
            (_longest(unit=1e9), None),
            (_longest(heads=1), None),
            (_longest(2), None),
            (_longest() + 1, None),
        ],
        "attention_at_scale.2": [
            (_no_rescale, "online-no-rescale"),
            (_acc_not_rescaled, "online-no-rescale"),
            (_flipped, "online-no-rescale"),
            (_block_maximum, "online-no-rescale"),
            (_no_maximum, None),
            (_keeps_every_block(), None),
        ],
        "attention_at_scale.3": [
            (masks["causal"], "causal-and-mask"),
            (masks["padding"], "causal-and-mask"),
            (masks["future"], None),
            (masks["either"], None),
            (masks["queries_too"], "fully-masked-row"),
            (masks["inverted"], None),
        ],
        "attention_at_scale.4": [((N_PROMPT + NTH_NEW - 1) ** 2, None), (N_PROMPT + NTH_NEW, None)],
        "attention_at_scale.5": [(N_TILED**2 * 4 / MIB, None), (N_TILED * 128 * 4 / MIB, None)],
    }


@exercise("attention_at_scale.1", alias=("at_scale.1", "scale.1"))
def longest_context(answer: object) -> Feedback:
    """The largest n whose 32 float32 (n, n) score matrices (one layer, one sequence) fit in 80 GiB."""
    want = _longest()
    wrong = [
        (_longest(unit=1e9), "That is for 80 GB (80 · 10⁹ bytes); a GiB is 2³⁰ = 1 073 741 824 bytes."),
        (_longest(heads=1), "That fits one head's matrix; the readable path builds all 32 heads' at once."),
        (_longest(2), "That is at 2 bytes per number (bfloat16); the question asks for float32, 4 bytes."),
        (_longest(heads=1, bytes_per_number=1), "Count bytes: 32 heads × n² numbers × 4 bytes each."),
    ]
    over = want + 1
    wrong.append(
        (
            over,
            f"{over} does not fit: 32 · {over}² · 4 B = {HEADS * over * over * 4:,} B, more than 80 GiB = "
            f"{GPU_GIB * GIB:,} B. The longest n is the largest whole number whose matrices fit: round the square "
            "root down (math.isqrt).",
        )
    )
    return compare_number(answer, float(want), name="the longest context that fits", wrong=wrong, tol=0.5)


@exercise("attention_at_scale.2", alias=("at_scale.2", "scale.2"))
def online_step(answer: object) -> Feedback:
    """``online_step(m (n_q, 1), ell (n_q, 1), acc (n_q, d_v), scores (n_q, n_b), values (n_b, d_v))`` → new state."""
    queries, keys, values = _fresh_inputs()
    got = _run_blocks(answer, queries, keys, values)
    if isinstance(got, Feedback):
        return got
    slip = _probe(answer) if not torch.allclose(got, attention(queries, keys, values), atol=1e-4) else None
    if slip is not None:
        return Feedback(False, PROBE_HINTS[slip], "online-no-rescale")
    if not bool(torch.isfinite(got).all()):
        return Feedback(
            False,
            "acc / ell has NaN or inf: an exp overflowed. These scores reach about 120, and e^120 does not fit in "
            "float32: subtract the new running maximum m' before exp, and rescale by e^(m − m') (≤ 1; 0 while m = −∞).",
        )
    wrong: list[Wrong] = [
        (
            _mistake(_no_rescale, queries, keys, values),
            "When a block raises the maximum from m to m', what you accumulated was measured from the old m: multiply "
            "ell and acc by e^(m − m') before adding the new block.",
            "online-no-rescale",
        ),
        (
            _mistake(_acc_not_rescaled, queries, keys, values),
            "ell is rescaled but acc is not: both were accumulated under the old maximum, both need e^(m − m').",
            "online-no-rescale",
        ),
    ]
    feedback = compare_tensor(
        got, attention(queries, keys, values), name="acc / ell after the last block", wrong=wrong, atol=1e-4
    )
    if not feedback.correct:
        return feedback
    unseen = _fresh_inputs(UNSEEN_SEED)  # other inputs: the checker hands the step the state of two blocks
    handed = _run_blocks(answer, *unseen, handed_from=2 * BLOCK)
    if isinstance(handed, Feedback):
        return handed
    if not torch.allclose(handed, attention(*unseen), atol=1e-4):
        return Feedback(False, HINT_HIDDEN_STATE)
    return Feedback(
        True,
        "acc / ell after the last block is attention's output, block by block. The checker also handed your "
        "step a state built from two blocks it never saw, and it still finished right: m, ell and acc, "
        "5 × (1 + 1 + 3) numbers, carry everything the earlier blocks contributed.",
    )


@exercise("attention_at_scale.3", alias=("at_scale.3", "scale.3"))
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
    wrong: list[Wrong] = [
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
        (
            masks["queries_too"],
            "You also hid the padding *queries*: sequence 2's rows 4 and 5 are now all False, every score −inf, "
            "and the softmax gives NaN (lesson 09's fully masked row). Mask only the keys: a padding query's "
            "output is thrown away anyway, but it must not be NaN.",
            "fully-masked-row",
        ),
        (
            masks["inverted"],
            "Your mask is inverted: True marks what is hidden, torch.nn.MultiheadAttention's convention (lesson 11). "
            "Here True = may attend: negate it with ~.",
        ),
    ]
    return compare_tensor(
        got,
        masks["right"].double(),
        name="the causal padding mask (2, 5, 5)",
        wrong=wrong,
        atol=0.5,
        success="Pass it alone: attention(q, k, v, mask=mask), no is_causal.",
    )


@exercise("attention_at_scale.4", alias=("at_scale.4", "scale.4"))
def dot_products_with_cache(answer: object) -> Feedback:
    """Dot products of one head of one layer for the 100th new token after a 4-token prompt, with a KV cache."""
    length = N_PROMPT + NTH_NEW - 1  # tokens in the sequence when the 100th new token is predicted
    wrong = [
        (
            float(length * length),
            f"That is without a cache: the whole {length} × {length} score matrix again. With one, only the newest "
            "token's query meets the keys.",
        ),
        (
            float(length + 1),
            "One too many: the 100th new token is the *output* of its step; the query is the token before it, "
            f"and the sequence then holds 4 + 99 = {length} keys.",
        ),
        (float(NTH_NEW), "Count the prompt's keys too: the newest query meets every key so far, prompt included."),
        (float(N_PROMPT * N_PROMPT), "The prompt's 4 × 4 is computed once, in the first step, not for every token."),
    ]
    return compare_number(answer, float(length), name="the dot products of that step", wrong=wrong, tol=0.5)


@exercise("attention_at_scale.5", alias="at_scale.5")
def block_memory(answer: object) -> Feedback:
    """MiB of ``tiled_attention``'s largest tensor for n = 4096, d_k = 64, float32, ``block_size=640``."""
    want = N_TILED * BLOCK_TRY * 4 / MIB
    wrong = [
        (N_TILED**2 * 4 / MIB, "That is the whole (4096, 4096) matrix: tiled_attention never builds it."),
        (N_TILED * 128 * 4 / MIB, f"That is the default block size 128; the question changes it to {BLOCK_TRY}."),
        (
            BLOCK_TRY * BLOCK_TRY * 4 / MIB,
            "Every query meets the block at once: the tile is (n_q, n_b), not (n_b, n_b).",
        ),
        (N_TILED * BLOCK_TRY * 2 / MIB, "float32 takes 4 bytes per number."),
        (N_TILED * D_TILED * 4 / MIB, "That is one (4096, 64) matrix such as Q; the score tile is larger."),
        (
            N_TILED * BLOCK_TRY * 4 / 1e6,
            "That is in MB (10⁶ bytes); the question asks for MiB, 2²⁰ = 1 048 576 bytes, as the lesson prints "
            "(like GB for GiB in 15.1).",
        ),
    ]
    return compare_number(answer, want, name="the largest tensor in MiB", wrong=wrong, tol=0.01)
