"""The lesson 04 checker: scores Q Kᵀ of document 000."""

import math

import pytest

from attnlib import examples, score
from attnlib.exercises import check

Q, K, V = examples.four_inputs.qkv()
S = score(Q, K)


def test_document_fact():
    # document 000's attn_sc
    assert S.tolist() == [[4, 6, 7, 13], [16, 20, 26, 42], [12, 16, 20, 34], [18, 28, 32, 54]]


def test_right_answer_passes():
    assert check("scores", Q @ K.T).correct


def test_placeholder():
    assert check("scores", ...).message.startswith("Replace the ...")


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (K @ Q.T, "K Qᵀ"),
        (S[0], "Input 1 only"),
        (S / math.sqrt(Q.shape[1]), "scaled"),
        (Q @ Q.T, "queries with themselves"),
        (K @ K.T, "keys with themselves"),
        (Q @ V.T, "values"),
        (Q * K, "element-wise"),
    ],
)
def test_typical_mistakes_get_their_hint(answer, hint):
    feedback = check("scores", answer)
    assert not feedback.correct
    assert hint in feedback.message


def test_001_scores_are_symmetric_which_is_why_000_is_used():
    q, k, _ = examples.three_inputs.qkv()
    s = score(q, k)
    assert s[0].tolist() == [2, 4, 4]
    assert (s == s.T).all()
