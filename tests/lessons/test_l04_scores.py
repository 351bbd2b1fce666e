"""Lesson 04: ScoresExplorer headless (the heatmap is Q Kᵀ, the chosen row is outlined and written out)
and the lesson's checkers (solutions pass; typical slips get their hint and mistake id)."""

import numpy as np
import pytest
import torch

from attnlib import examples, score
from attnlib.lessons import check
from attnlib.lessons.l04_scores import ScoresExplorer, dot_product_line


def _box(rect):
    return (rect.get_x(), rect.get_y(), rect.get_width(), rect.get_height())


def test_starts_on_001_input_1():
    e = ScoresExplorer()
    q, k, _ = examples.three_inputs.qkv()
    assert np.array_equal(e.views["scores"].data, score(q, k).numpy())
    assert e.summary() == "ScoresExplorer(example='001', query='Input 1')"
    # document 001: the scores of Input 1 are [2, 4, 4]
    assert "[2, 4, 4]" in e.terms.value
    assert e.term_texts[1] == "q_1·k_2 = 1×4 + 0×4 + 2×0 = 4"
    assert e.views["scores"].annotations[:3] == ["2", "4", "4"]
    bundle, _ = e._repr_mimebundle_()
    assert bundle["text/plain"] == e.summary() and "image/png" in bundle


@pytest.mark.parametrize("example", ["001", "000"])
def test_every_query(example):
    e = ScoresExplorer()
    e.controls["example"].value = example
    ex = examples.get(example)
    q, k, _ = ex.qkv()
    s = score(q, k)
    n = len(ex.rows)
    for i in range(n):
        e.controls["query"].value = i
        assert np.array_equal(e.views["scores"].data, s.numpy())
        assert e.views["scores"].highlight_boxes[0] == (-0.5, i - 0.5, n, 1)
        assert e.views["queries"].highlight_boxes[0] == (-0.5, i - 0.5, q.shape[1], 1)
        sums = [float(t.rsplit("= ", 1)[1]) for t in e.term_texts]
        assert sums == s[i].tolist()
        assert e.term_texts == [dot_product_line(q[i], k[j], i, j) for j in range(n)]
        assert e.summary() == f"ScoresExplorer(example={example!r}, query={ex.token_labels[i]!r})"


def test_key_outlines_a_cell_and_bolds_its_sum():
    e = ScoresExplorer("000", query=3)
    e.controls["key"].value = 2
    assert (1.5, 2.5, 1, 1) in e.views["scores"].highlight_boxes
    assert "<b>q_4·k_3 = 4×2 + 1×3 + 5×1 + 2×2 + 4×3 = 32</b>" in e.terms.value
    e.controls["example"].value = "001"  # 3 tokens: the selection is clamped
    assert e.controls["query"].value == 2 and e.controls["key"].value == 2
    ticks = e.views["scores"].col_labels
    assert ticks == ["k1", "k2", "k3"]


def test_dot_product_line_numbers():
    q, k, _ = examples.three_inputs.qkv()
    line = dot_product_line(q[2], k[1], 2, 1)
    assert line == f"q_3·k_2 = 2×4 + 1×4 + 3×0 = {int(q[2] @ k[1])}"


def test_bad_example():
    with pytest.raises(ValueError, match="example"):
        ScoresExplorer("004")


def test_scores():
    assert check("scores.1", [1, 2, 4]).correct
    assert check("scores.1", [1, 2, 7]).mistake == "k-q-transposed"
    assert check("scores.2", lambda q, k: q @ k.T).correct
    assert check("scores.2", lambda q, k: k @ q.T).mistake == "k-q-transposed"
    assert check("scores.2", score).mistake == "library-function"
    x = torch.tensor([[1.0, 0, 1], [0, 2, 1], [1, 1, 0], [2, 0, 0]])
    w = torch.tensor([[1.0, 0], [0, 1], [1, 1]])
    assert check("scores.3", (x @ w) @ (x @ w).T).correct
    assert check("scores.3", [[5, 5, 3, 4], [5, 10, 4, 2], [3, 4, 2, 2], [4, 2, 2, 4]]).correct
    assert "project them first" in check("scores.3", x @ x.T).message
    _, keys, _ = examples.three_inputs.qkv()
    assert not check("scores.3", keys @ keys.T).correct  # the old one-liner on the lesson's variable


def test_scores_of_asks_for_the_product_with_at_not_a_one_call_transpose():
    import torch.nn.functional as F

    # torch.inner(q, k) and F.linear(q, k) are Q Kᵀ, but in one call: the prompt asks for @, and the hint says why
    for answer in (F.linear, lambda q, k: F.linear(q, k), lambda q, k: torch.inner(q, k)):
        feedback = check("scores.2", answer)
        assert not feedback.correct and feedback.mistake == "library-function"
        assert "do compute Q Kᵀ" in feedback.message and "queries @ keys.T" in feedback.message
    assert check("scores.2", lambda q, k: torch.einsum("id,jd->ij", q, k)).correct  # the indices are the work
    assert check("scores.2", lambda q, k: q @ k.mT).correct
