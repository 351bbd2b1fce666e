"""Lesson 17 · Where next: its BPE explorer and its two exercise checkers.

Lesson 17 explorer: byte-pair encoding merge by merge — the counts of neighbouring symbol pairs, the next merge.

- ``where_next.1`` code: ``most_frequent_pair(counts)`` — the pair byte-pair encoding merges first.
- ``where_next.2`` transfer: how many times smaller grouped-query attention makes the KV cache of lesson 15.
"""

from __future__ import annotations

import html
from collections import Counter

import ipywidgets as widgets

from ..bpe import learn_merges, pair_counts, split_after
from ..show.explorer import Explorer, HeatmapView, Shown
from ._check import Feedback, compare_number, exercise, run_learner_code

__all__ = ["NEW_CORPUS", "MergesExplorer", "first_merge", "kv_cache_ratio", "wrong_answers"]

MAX_SYMBOLS = 24  # rows and columns of the pair-count view


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
        c["merges"] = widgets.IntSlider(value=merges, min=0, max=max_merges, description="merges done")
        c["corpus"] = widgets.Text(
            value=corpus, description="corpus", continuous_update=False, layout=widgets.Layout(width="620px")
        )
        self.views["pairs"] = HeatmapView(None, xlabel="right symbol", ylabel="left symbol", decimals=0)
        self.caption = self.texts["caption"] = widgets.HTML()
        self.update()
        self.observe_controls()
        self.widget = widgets.VBox([c["merges"], c["corpus"], self.message, self.views["pairs"], self.caption])

    @property
    def next_merge(self) -> tuple[str, str] | None:
        """The merge the view outlines (``None``: nothing left to merge)."""
        view = self.views["pairs"]
        if not view.highlight_cells:
            return None
        i, j = view.highlight_cells[0]
        return view.row_labels[i], view.col_labels[j]

    def compute(self, values) -> Shown:
        """Apply the merges, count the pairs, outline the most frequent one."""
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


def _best(counts: Counter) -> tuple[str, str]:
    return max(counts, key=counts.__getitem__)


def _weighted(words: dict[str, int]) -> tuple[str, str]:
    return _best(pair_counts(Counter({tuple(w): n for w, n in words.items()})))


def _unweighted(words: dict[str, int]) -> tuple[str, str]:
    return _best(pair_counts(Counter({tuple(w): 1 for w in words})))


def wrong_answers() -> dict[str, list[tuple[object, str | None]]]:
    """Per exercise, typical wrong answers and the mistake id each must reveal (None: a plain hint)."""
    return {
        "where_next.1": [(_unweighted, None), (lambda counts: "un", None)],
        "where_next.2": [(8, None), (0.25, None)],
    }


@exercise("where_next.1", alias="next.1")
def first_merge(answer: object) -> Feedback:
    """``most_frequent_pair({"hug": 10, …})`` → the pair of neighbouring characters that occurs most often."""
    got = run_learner_code(answer, dict(NEW_CORPUS), name="your most_frequent_pair(counts)")
    if isinstance(got, Feedback):
        return got
    if got is None:
        return Feedback(
            False,
            "your most_frequent_pair(counts) returned None: replace the ... in its body with the computation and "
            "return it.",
        )
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


@exercise("where_next.2", alias="next.2")
def kv_cache_ratio(answer: object) -> Feedback:
    """32 query heads sharing 8 key/value heads: the KV cache is 32 / 8 = 4 times smaller."""
    wrong = [
        (8, "8 is the number of key/value heads; the question is how many times smaller the cache gets."),
        (0.25, "That is the new cache as a share of the old one; the question asks how many times smaller: invert it."),
        (32, "32 would be multi-query attention (one key/value head for all 32); here there are 8."),
    ]
    return compare_number(answer, 4, name="how many times smaller the KV cache is", wrong=wrong, tol=0.01)
