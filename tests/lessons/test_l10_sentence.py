"""Lesson 10: SentenceExplorer (typed sentences, toggles, and bad text kept out) and the lesson's checkers
(solutions pass; typical slips get their hint and mistake id)."""

from __future__ import annotations

import math

import pytest
import torch

from attnlib import examples, init_projections, score, softmax
from attnlib.lessons import check
from attnlib.lessons.l10_sentence import SentenceExplorer
from attnlib.text import build_vocabulary, embed, encode, tokenize


def _reference(sentence: str, projections: bool, scaled: bool) -> torch.Tensor:
    vocabulary = build_vocabulary(sentence, unique=True)
    x = embed(encode(sentence, vocabulary), num_embeddings=len(vocabulary), d=16, seed=123)
    if projections:
        u_q, u_k, _ = init_projections(16, 16, seed=123)
        q, k = x @ u_q.T, x @ u_k.T  # document 003's q = U x
    else:
        q = k = x
    return torch.softmax(q @ k.T / (4.0 if scaled else 1.0), dim=-1)


def _ticks(explorer):
    plot = explorer.views["weights"]
    return plot.col_labels, plot.row_labels


def test_starts_on_003s_sentence():
    explorer = SentenceExplorer()
    cols, rows = _ticks(explorer)
    assert cols == rows == examples.translate.tokens
    assert explorer.views["weights"].data == pytest.approx(
        _reference(examples.translate.sentence, True, True).double().numpy(), abs=1e-6
    )
    assert str(explorer) == "SentenceExplorer(n_tokens=8, scaled=True, projections=True)"


def test_starts_on_003s_attention_weights_2():
    # document 003's printed attention_weights_2 (the row of "you")
    printed = [2.2317e-09, 1.2499e-05, 4.3696e-05, 3.7242e-03, 8.5596e-01, 1.4026e-01, 8.8897e-07, 3.1935e-10]
    plot = SentenceExplorer().views["weights"]
    assert plot.data[1] == pytest.approx(printed, rel=1e-3, abs=1e-8)
    assert plot.annotations[8:16][3:6] == ["3.7e-03", "0.86", "0.14"]


@pytest.mark.parametrize("projections", [True, False])
@pytest.mark.parametrize("scaled", [True, False])
def test_typed_sentence_and_toggles(projections, scaled):
    explorer = SentenceExplorer()
    sentence = "the cat sat on the mat because it was warm"
    explorer.controls["sentence"].value = sentence
    explorer.controls["projections"].value = projections
    explorer.controls["scaled"].value = scaled
    plot = explorer.views["weights"]
    assert plot.data == pytest.approx(_reference(sentence, projections, scaled).double().numpy(), abs=1e-6)
    assert _ticks(explorer) == (tokenize(sentence), tokenize(sentence))
    assert len(plot.annotations) == 100  # 10×10 is annotated
    assert explorer.message.value == ""


def test_without_projections_the_map_is_003s_simplified_attention():
    explorer = SentenceExplorer(projections=False, scaled=False)
    x = examples.translate.run().embedded  # 003's ids are the unique sorted vocabulary
    assert explorer.views["weights"].data == pytest.approx(torch.softmax(x @ x.T, dim=1).double().numpy(), abs=1e-6)


@pytest.mark.parametrize(
    ("text", "needle"),
    [("", "no words"), ("   ", "no words"), (" ".join(["word"] * 33), "33 tokens")],
)
def test_bad_text_shows_message_and_keeps_last_good_state(text, needle):
    explorer = SentenceExplorer()
    explorer.controls["sentence"].value = "a short good sentence"
    before = explorer.views["weights"].data.copy()
    before_png = explorer.views["weights"].to_png()
    explorer.controls["sentence"].value = text
    assert needle in explorer.message.value
    assert (explorer.views["weights"].data == before).all()
    assert explorer.views["weights"].to_png() == before_png
    assert _ticks(explorer)[0] == ["a", "short", "good", "sentence"]
    explorer.controls["sentence"].value = "good again"
    assert explorer.message.value == ""
    assert explorer.views["weights"].data.shape == (2, 2)


def test_32_tokens_are_accepted_unannotated_above_16():
    explorer = SentenceExplorer()
    explorer.controls["sentence"].value = " ".join(f"w{i}" for i in range(32))
    assert explorer.message.value == ""
    assert explorer.views["weights"].data.shape == (32, 32)
    assert explorer.views["weights"].annotations == []


def test_ids_by_hand():
    assert check("sentence.1", [3, 0, 2, 1, 3, 0]).correct
    short = "to be or not to be"
    assert check("sentence.1", encode(short, build_vocabulary(short, unique=True))).correct
    assert "count from 1" in check("sentence.1", [4, 1, 3, 2, 4, 1]).message
    assert "alphabetical" in check("sentence.1", [0, 1, 2, 3, 0, 1]).message
    assert "document 002's numbering" in check("sentence.1", [5, 1, 3, 2, 5, 1]).message
    assert not check("sentence.1", 3).correct  # one id is not the sentence's ids


def test_simple_attention_runs_on_fresh_inputs():
    assert check("sentence.2", lambda x: torch.softmax(x @ x.T, dim=-1) @ x).correct
    assert check("sentence.2", lambda x: torch.softmax(x @ x.T, dim=0) @ x).mistake == "softmax-axis"
    assert check("sentence.2", lambda x: torch.softmax(x @ x.T, dim=-1)).mistake == "weights-not-values"


def test_context_of_this():
    q, k, v = examples.translate.qkv()
    right = softmax(score(q, k)[6] / math.sqrt(16), dim=0) @ v
    assert check("sentence.3", right).correct
    assert check("sentence.3", softmax(score(k, q)[6] / 4, dim=0) @ v).mistake == "k-q-transposed"
    assert check("sentence.3", softmax(score(q, k)[6], dim=0) @ v).mistake == "scale-forgotten"


def test_simple_attention_refuses_the_library():
    import torch.nn.functional as F

    from attnlib import attention

    for answer in (
        lambda X: F.scaled_dot_product_attention(X, X, X, scale=1.0),
        lambda X: attention(X, X, X, scale=1.0),
    ):
        assert check("sentence.2", answer).mistake == "library-function"
