"""Lesson 15 explorer: tiled attention block by block — the live tile, the running max and normaliser, memory held."""

from __future__ import annotations

import html
import math

import ipywidgets as W
import torch

from ..examples import translate
from ..steps import attention, scale_scores, score
from ..tiled import OnlineState, online_softmax_blocks
from ._core import Explorer, HeatmapView

__all__ = ["TiledExplorer"]


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
        c["block_size"] = W.IntSlider(value=block_size, min=1, max=n, description="block size")
        c["block"] = W.IntSlider(value=block, min=1, max=math.ceil(n / block_size), description="blocks seen")
        kw = dict(row_labels=self.tokens, ylabel="query")
        self.views["scores"] = HeatmapView(self.scaled, col_labels=self.tokens, title="S / √d_k (never held whole)",
                                           xlabel="key", **kw)  # fmt: skip
        self.views["tile"] = HeatmapView([[0.0]], title="live tile e^(s − m)", xlabel="key", vmin=0.0, vmax=1.0, **kw)
        self.views["state"] = HeatmapView([[0.0, 0.0]], col_labels=["m", "ℓ"], title="running m and ℓ", **kw)
        self.views["output"] = HeatmapView([[0.0]], title="acc / ℓ so far", xlabel="feature", annotate=False, **kw)
        self.caption = W.HTML()
        self.update()
        self.observe_controls()
        self.widget = W.VBox(
            [
                W.HBox([c["block_size"], c["block"]]),
                self.message,
                W.HBox([self.views["scores"], self.views["tile"], self.views["state"]]),
                W.HBox([self.views["output"], self.caption]),
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
            + (f"All keys seen: acc / ℓ equals attention() (within 1e-6: {same})." if done
               else f"Keys {state.stop + 1}–{n_k} not seen yet: acc / ℓ is attention over the first {state.stop}.")
            + f" With {n_q} tokens the state outweighs the scores; it grows as n·(b + d_v + 2), the scores as n²."
        )  # fmt: skip

    def summary(self) -> str:
        c = self.controls
        return f"TiledExplorer(block_size={c['block_size'].value}, block={c['block'].value} of {c['block'].max})"
