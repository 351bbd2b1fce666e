"""Lesson 19 · Where next: its BPE explorer and its two exercise checkers.

Lesson 19 explorer: byte-pair encoding merge by merge — the counts of neighbouring symbol pairs, the next merge.

- ``where_next.1`` code: ``most_frequent_pair(counts)`` — the pair byte-pair encoding merges first.
- ``where_next.2`` code: ``share_kv(kv, n_query_heads)`` — grouped-query attention hands each key/value head to
  its group of consecutive query heads; the KV cache keeps only the key/value heads.
"""

from __future__ import annotations

import html
from collections import Counter
from collections.abc import Mapping
from itertools import pairwise
from typing import TypedDict, cast

import torch
from torch import Tensor

from ..bpe import learn_merges, pair_counts, split_after
from ..show import ui
from ..show.explorer import Explorer, HeatmapView, Shown
from ._check import ATTNLIB, Feedback, compare_tensor, exercise, run_learner_code

__all__ = ["NEW_CORPUS", "MergesExplorer", "first_merge", "share_kv", "wrong_answers"]

MAX_SYMBOLS = 24  # rows and columns of the pair-count view


class MergesValues(TypedDict):
    """What :meth:`MergesExplorer.compute` reads: the controls' values."""

    merges: int
    corpus: str


class MergesExplorer(Explorer):
    """Step through BPE's merges on a corpus: how often each pair of neighbouring symbols occurs, and the next merge.

    Args:
        corpus: words separated by spaces (repeat a word to make it frequent).
        merges: how many merges are done when the explorer opens.

    Controls: ``merges`` (a slider), ``corpus`` (Enter to apply). View: ``pairs`` ``(symbols, symbols)``:
    row = left symbol, column = right symbol; the outlined cell is the next merge.
    """

    def __init__(self, corpus: str, *, merges: int = 0, max_merges: int = 12) -> None:
        super().__init__()
        c = self.controls
        c["merges"] = ui.IntSlider(value=merges, min=0, max=max_merges, description="merges done")
        c["corpus"] = ui.Text(
            value=corpus, description="corpus", continuous_update=False, layout=ui.Layout(width="620px")
        )
        self.views["pairs"] = HeatmapView(None, xlabel="right symbol", ylabel="left symbol", decimals=0)
        self.caption = self.texts["caption"] = ui.HTML()
        self.update()
        self.observe_controls()
        self.widget = ui.VBox([c["merges"], c["corpus"], self.message, self.views["pairs"], self.caption])

    @property
    def next_merge(self) -> tuple[str, str] | None:
        """The merge the view outlines (``None``: nothing left to merge)."""
        view = self.views["pairs"]
        if not view.highlight_cells:
            return None
        i, j = view.highlight_cells[0]
        return view.row_labels[i], view.col_labels[j]

    def compute(self, values: Mapping[str, object]) -> Shown:
        """Apply the merges, count the pairs, outline the most frequent one."""
        values = cast(MergesValues, values)
        corpus, k = values["corpus"], values["merges"]
        words = split_after(corpus, k)  # ValueError on an empty corpus
        counts = pair_counts(words)
        symbols = sorted({s for word in words for s in word}, key=lambda s: (-len(s), s))
        if len(symbols) > MAX_SYMBOLS:
            raise ValueError(f"corpus has {len(symbols)} different symbols; use at most {MAX_SYMBOLS} letters")
        index = {s: i for i, s in enumerate(symbols)}
        matrix = [[0.0] * len(symbols) for _ in symbols]
        for (a, b), n in counts.items():
            matrix[index[a]][index[b]] = float(n)
        following = max(counts, key=counts.__getitem__) if counts else None
        done = learn_merges(corpus, k)
        shown = " · ".join(" ".join(word) for word in list(words)[:6])
        said = f"next merge: {following[0]} + {following[1]}" if following else "nothing to merge"
        return Shown(
            views={
                "pairs": self.views["pairs"].frame(
                    matrix,
                    row_labels=symbols,
                    col_labels=symbols,
                    title=f"pair counts after {len(done)} merges",
                    cells=[(index[following[0]], index[following[1]])] if following else [],
                )
            },
            texts={"caption": html.escape(f"{said}; the words now: {shown}")},
        )

    def summary(self) -> str:
        return f"MergesExplorer(merges={self.controls['merges'].value}, next merge={self.next_merge})"


#: the corpus the checker of ``where_next.1`` runs the learner's function on (weights matter here)
NEW_CORPUS = {"hug": 10, "pug": 5, "pun": 12, "bun": 10, "hugs": 5}


def _best(counts: Counter[tuple[str, str]]) -> tuple[str, str]:
    return max(counts, key=counts.__getitem__)


def _weighted(words: dict[str, int]) -> tuple[str, str]:
    return _best(pair_counts(Counter({tuple(w): n for w, n in words.items()})))


def _unweighted(words: dict[str, int]) -> tuple[str, str]:
    return _best(pair_counts(Counter({tuple(w): 1 for w in words})))


def _count_once(counts: dict[str, int]) -> tuple[str, str]:
    """The typical slip, written without attnlib: every word counts once, whatever its frequency."""
    pairs: Counter[tuple[str, str]] = Counter()
    for word in counts:
        for a, b in pairwise(word):
            pairs[a, b] += 1
    return max(pairs, key=pairs.__getitem__)


def wrong_answers() -> dict[str, list[tuple[object, str | None]]]:
    """Per exercise, typical wrong answers and the mistake id each must reveal (None: a plain hint)."""
    return {
        "where_next.1": [(_count_once, None), (lambda counts: "un", None)],
        "where_next.2": [
            (lambda kv, h: kv.repeat(1, h // kv.shape[1], 1, 1), None),
            (lambda kv, h: kv, None),
            (lambda kv, h: kv.repeat_interleave(h, dim=1), None),
        ],
    }


@exercise("where_next.1", alias="next.1")
def first_merge(answer: object) -> Feedback:
    """``most_frequent_pair({"hug": 10, …})`` → the pair of neighbouring characters that occurs most often."""
    got = run_learner_code(answer, dict(NEW_CORPUS), name="your most_frequent_pair(counts)", write_it=(ATTNLIB,))
    if isinstance(got, Feedback):
        return got
    if isinstance(got, list):
        got = tuple(got)
    if not (isinstance(got, tuple) and len(got) == 2 and all(isinstance(s, str) for s in got)):
        return Feedback(
            False, f"most_frequent_pair should return a pair of characters like ('u', 'g'), got {got!r}"[:200]
        )
    right = _weighted(NEW_CORPUS)
    if got == right:
        return Feedback(
            True, f"That is the first merge on {NEW_CORPUS}: {right}. BPE would now write 'un' as one symbol."
        )
    if got == _unweighted(NEW_CORPUS):
        return Feedback(
            False,
            f"{got} is the most frequent pair if every word counts once. Weigh each word by how often it occurs: "
            "'pun' alone brings 12.",
        )
    return Feedback(False, f"On {NEW_CORPUS} your function returns {got}; count every pair of neighbours by hand.")


#: ``where_next.2``: keys of 2 sequences, 2 key/value heads, 5 tokens, d_head 3, shared by 6 query heads
KV_SHAPE, N_QUERY_HEADS = (2, 2, 5, 3), 6


def _fresh_kv() -> Tensor:
    """Keys (2, 2, 5, 3): 2 sequences, 2 key/value heads, 5 tokens, d_head 3; never shown in a lesson."""
    return torch.randn(*KV_SHAPE, generator=torch.Generator().manual_seed(17))


@exercise("where_next.2", alias="next.2")
def share_kv(answer: object) -> Feedback:
    """``share_kv(kv (batch, h_kv, n, d_head), n_query_heads)`` → ``(batch, n_query_heads, n, d_head)``: query
    head j reads key/value head j // (n_query_heads // h_kv), as grouped-query attention does."""
    kv = _fresh_kv()
    group = N_QUERY_HEADS // KV_SHAPE[1]
    call = "your share_kv(kv, n_query_heads)"
    got = run_learner_code(answer, kv.clone(), N_QUERY_HEADS, name=call, write_it=(ATTNLIB,))
    if isinstance(got, Feedback):
        return got
    want = kv.repeat_interleave(group, dim=1)
    name = f"share_kv on new keys {tuple(KV_SHAPE)} for {N_QUERY_HEADS} query heads"
    wrong = [
        (
            kv.repeat(1, group, 1, 1),
            "Right shape, wrong heads: repeat tiles the whole stack of heads, 0, 1, 0, 1, 0, 1, so query head 1 "
            "reads key/value head 1 instead of 0. In grouped-query attention CONSECUTIVE query heads share: "
            f"heads 0–{group - 1} read key/value head 0, heads {group}–{2 * group - 1} head 1. Repeat each head in "
            "place: repeat_interleave(…, dim=1), or expand a new axis after the head axis and reshape.",
        ),
        (
            kv,
            f"These are still the {KV_SHAPE[1]} key/value heads: each of the {N_QUERY_HEADS} query heads needs one, "
            f"so every key/value head is used by {group} query heads in a row.",
        ),
    ]
    feedback = compare_tensor(got, want, name=name, wrong=wrong)
    if not feedback.correct:
        return feedback
    cache, full = kv.numel(), want.numel()
    return Feedback(
        True,
        f"Query head j reads key/value head j // {group}. The cache keeps only the {KV_SHAPE[1]} key/value heads: "
        f"{cache} numbers per tensor instead of {full}, {full // cache} times smaller (32 query heads on 8 "
        "key/value heads: 4 times).",
    )
