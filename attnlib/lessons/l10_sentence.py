"""Lesson 10 · A real sentence: its explorer and its exercise checkers.

Lesson 10 explorer: type a sentence, see its token-labelled attention map.

Lesson 10 exercises: from a sentence to attention.

- ``sentence.1`` by hand: the ids of "to be or not to be", its distinct words numbered alphabetically from 0.
- ``sentence.2`` code: 003's attention without weight matrices, ``simple_attention(X) = softmax(X Xᵀ) X``.
- ``sentence.3`` transfer: the context vector of "this" (index 6) in 003's scaled part.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from typing import TypedDict, cast

import torch
from torch import Tensor

from .. import examples
from ..show import ui
from ..show.explorer import Explorer, HeatmapView, Shown
from ..steps import score, softmax
from ..text import MAX_TOKENS, build_vocabulary, embed, encode, sentence_attention
from ._calls import compare_call
from ._check import ATTENTION_FAMILY, ATTNLIB, Feedback, Wrong, compare_tensor, exercise

__all__ = ["SentenceExplorer", "context_of_word", "ids_by_hand", "simple_attention", "wrong_answers"]


PROJECTIONS = {
    "with projections (Q = X Uᵀ)": True,
    "without (ω = X Xᵀ)": False,
}


class SentenceValues(TypedDict):
    """What :meth:`SentenceExplorer.compute` reads: the controls' values."""

    sentence: str
    scaled: bool
    projections: bool


class SentenceExplorer(Explorer):
    """Attention weights ``(n_tokens, n_tokens)`` of a typed sentence, labelled with its tokens.

    Controls: ``sentence`` (text; empty or more than 32 tokens → inline message, the map keeps
    its last good state), ``scaled`` (divide by ``sqrt(d)``), ``projections`` (document 003's
    seeded ``U_q, U_k, U_v`` applied as ``X Uᵀ``, or 003's simplified ``ω = X Xᵀ``). Started on
    003's sentence, the row of "you" is 003's ``attention_weights_2``.
    """

    def __init__(self, sentence: str = examples.translate.sentence, *, scaled: bool = True, projections: bool = True):
        super().__init__()
        self.controls = {
            "sentence": ui.Text(
                value=sentence,
                description="sentence",
                continuous_update=False,
                layout=ui.Layout(width="36em"),
            ),
            "scaled": ui.ToggleButton(value=scaled, description="scale by √d"),
            "projections": ui.ToggleButtons(options=list(PROJECTIONS.items()), value=projections),
        }
        self.views = {"weights": HeatmapView(None, xlabel="key", ylabel="query", vmin=0.0, vmax=1.0)}
        self.update()
        self.observe_controls()
        self.widget = ui.VBox(
            [
                self.controls["sentence"],
                ui.HBox([self.controls["projections"], self.controls["scaled"]]),
                self.message,
                self.views["weights"],
            ]
        )

    @property
    def tokens(self) -> list[str]:
        """The tokens shown (the last good sentence's)."""
        return list(self.views["weights"].row_labels)

    def compute(self, values: Mapping[str, object]) -> Shown:
        """The sentence's attention weights; a bad sentence raises ``ValueError`` before anything changes."""
        values = cast(SentenceValues, values)
        result = sentence_attention(
            values["sentence"], projections=values["projections"], scaled=values["scaled"], max_tokens=MAX_TOKENS
        )
        how = "X Uᵀ" if values["projections"] else "X Xᵀ"
        scaled = "scaled" if values["scaled"] else "unscaled"
        return Shown(
            views={
                "weights": self.views["weights"].frame(
                    result.weights,
                    row_labels=result.tokens,
                    col_labels=result.tokens,
                    title=f"weights ({how}, {scaled})",
                )
            }
        )

    def summary(self) -> str:
        c = self.controls
        return (
            f"SentenceExplorer(n_tokens={len(self.tokens)}, scaled={c['scaled'].value}, "
            f"projections={c['projections'].value})"
        )


SHORT = "to be or not to be"

WORD = 6  # "this" in "can you help me to translate this sentence"


def _fresh_embedding() -> Tensor:
    """``X (6, 5)``: six tokens of a sentence no lesson embeds, from a seeded table."""
    return embed(torch.tensor([3, 1, 4, 1, 5, 9]), num_embeddings=10, d=5, seed=10)


def _simple(x: Tensor, *, dim: int = -1, scale: float = 1.0) -> Tensor:
    return torch.softmax(x @ x.T / scale, dim=dim) @ x


@functools.cache  # a few ms each: sentence.3's checker builds five of them for every answer
def _context(*, as_columns: bool = True, transposed: bool = False, scaled: bool = True, word: int = WORD) -> Tensor:
    """003's context vector of ``word`` (by default "this", the right answer of sentence.3), or a slip of it."""
    run = examples.translate.run()
    if as_columns:
        q, k, v = examples.translate.qkv()
    else:
        q, k, v = run.embedded @ run.u_query, run.embedded @ run.u_key, run.embedded @ run.u_value  # X U: a slip
    s = score(k, q) if transposed else score(q, k)
    return softmax(s[word] / (math.sqrt(examples.translate.d) if scaled else 1.0), dim=0) @ v


def wrong_answers() -> dict[str, list[tuple[object, str | None]]]:
    """Per exercise, typical wrong answers and the mistake id each must reveal (None: a plain hint)."""
    return {
        "sentence.1": [([4, 1, 3, 2, 4, 1], None), ([0, 1, 2, 3, 0, 1], None), ([5, 1, 3, 2, 5, 1], None)],
        "sentence.2": [
            (lambda x: _simple(x, dim=0), "softmax-axis"),
            (lambda x: _simple(x, scale=math.sqrt(x.shape[-1])), None),
            (lambda x: torch.softmax(x @ x.T, dim=-1), "weights-not-values"),
        ],
        "sentence.3": [
            (_context(transposed=True), "k-q-transposed"),
            (_context(scaled=False), "scale-forgotten"),
            (_context(as_columns=False), None),
            (_context(word=WORD + 1), None),
        ],
    }


def _ids(vocabulary: dict[str, int]) -> Tensor:
    return encode(SHORT, vocabulary).to(torch.float64)


@exercise("sentence.1")
def ids_by_hand(answer: object) -> Feedback:
    """The ids of "to be or not to be" (6 numbers) with its distinct words numbered alphabetically from 0."""
    unique = build_vocabulary(SHORT, unique=True)
    in_order = {word: i for i, word in enumerate(dict.fromkeys(SHORT.split()))}
    wrong: list[Wrong] = [
        (
            _ids({w: i + 1 for w, i in unique.items()}),
            "Those ids count from 1; Python (and the embedding table's rows) count from 0: 'be' is 0.",
        ),
        (
            _ids(in_order),
            "You numbered the words in the order they first appear; number them in alphabetical order "
            "(be, not, or, to), as 003 and build_vocabulary(..., unique=True) do.",
        ),
        (
            _ids(build_vocabulary(SHORT)),
            "That is document 002's numbering, which numbers a repeated word once per occurrence (lesson 20 "
            "looks at it). Number each distinct word once: be, not, or, to.",
        ),
    ]
    return compare_tensor(answer, _ids(unique), name='the ids of "to be or not to be" (6 numbers)', wrong=wrong)


@exercise("sentence.2")
def simple_attention(answer: object) -> Feedback:
    """A function ``simple_attention(X (n, d_in)) -> (n, d_in)``: ``softmax(X Xᵀ)`` over each row, times ``X``."""
    x = _fresh_embedding()
    wrong: list[Wrong] = [
        (
            _simple(x, dim=0),
            "Your softmax runs down the columns (dim=0): each word's weights over the others must sum to 1, "
            "softmax(..., dim=-1).",
            "softmax-axis",
        ),
        (
            _simple(x, scale=math.sqrt(x.shape[-1])),
            "You scaled by √d_in: right for scaled dot-product attention, but 003's first form does not scale.",
        ),
        (
            softmax(x @ x.T),
            "These are the weights (n, n); the context vectors weight the embeddings: weights @ X (n, d_in).",
            "weights-not-values",
        ),
        (x.T @ x, "Xᵀ X is (d_in, d_in): it compares features, not words. The word-to-word scores are X Xᵀ (n, n)."),
    ]
    return compare_call(
        answer,
        (x,),
        call="your simple_attention(X)",
        expected=_simple(x),
        name="simple_attention(X) on a new 6-word embedding (6×5)",
        wrong=wrong,
        success="S = X Xᵀ (003's ω), softmax per row, weights @ X.",
        write_it=(ATTNLIB, ATTENTION_FAMILY),
    )


@exercise("sentence.3")
def context_of_word(answer: object) -> Feedback:
    """003's scaled part: the context vector z of "this" (index 6), 16 numbers."""
    wrong: list[Wrong] = [
        (
            _context(transposed=True),
            "You took a column of the scores S (the key of 'this' against every query, K Qᵀ): its weights come from "
            "its query against every key, row 6 of S = Q Kᵀ.",
            "k-q-transposed",
        ),
        (
            _context(scaled=False),
            "Divide the scores by √d_k = 4 before the softmax, as 003 does.",
            "scale-forgotten",
        ),
        (
            _context(as_columns=False),
            "Document 003 applies its matrices to column vectors, q = U x, so for the rows of X: X Uᵀ, not X U.",
        ),
        (
            _context(word=WORD + 1),
            "That is the context vector of 'sentence', the 8th word. 'this' is the 7th word, and Python counts "
            f"from 0: its row is S[{WORD}].",
        ),
    ]
    return compare_tensor(answer, _context(), name='the context vector of "this" (16 numbers)', wrong=wrong)
