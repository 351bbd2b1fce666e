"""Lesson 10 exercise: the attention weights of "translate" in document 003's scaled part."""

from __future__ import annotations

import math

import torch
from torch import Tensor

from .. import examples
from ..steps import softmax
from ._core import Feedback, compare_tensor, exercise

__all__ = ["QUERY_INDEX", "check", "expected", "omega", "typical_mistakes"]

QUERY_INDEX = 5  # "translate" in "can you help me to translate this sentence"
NAME = 'the attention weights of "translate" (8 numbers)'


def omega(*, as_document: bool = True) -> Tensor:
    """003's ``ω = Q Kᵀ`` ``(8, 8)``; ``as_document=False`` applies the weights as ``X U`` instead of ``X Uᵀ``."""
    run = examples.translate.run()
    x = run.embedded
    if as_document:
        queries, keys = x @ run.w_query.T, x @ run.w_key.T
    else:
        queries, keys = x @ run.w_query, x @ run.w_key
    return queries @ keys.T


def expected() -> Tensor:
    """``softmax(ω[5] / sqrt(16))``, shape ``(8,)``."""
    d = examples.translate.d
    return softmax(omega()[QUERY_INDEX] / math.sqrt(d), dim=0)


def typical_mistakes() -> list[tuple[Tensor, str]]:
    om = omega()
    d = examples.translate.d
    return [
        (softmax(om[QUERY_INDEX], dim=0), "Forgot to scale: divide ω by sqrt(d) = 4 before the softmax."),
        (
            softmax(om[:, QUERY_INDEX] / math.sqrt(d), dim=0),
            "You took a column of ω (every query against the key of 'translate', i.e. K·Q): take the row ω[5].",
        ),
        (
            softmax(om[QUERY_INDEX - 1] / math.sqrt(d), dim=0),
            "That is the row of 'to' (index 4): Python counts from 0, 'translate' is index 5.",
        ),
        (
            softmax(om[QUERY_INDEX + 1] / math.sqrt(d), dim=0),
            "That is the row of 'this' (index 6): 'translate' is index 5.",
        ),
        (softmax(om[QUERY_INDEX] / d, dim=0), "You divided by d = 16; the scale is sqrt(d) = 4."),
        (
            softmax(omega(as_document=False)[QUERY_INDEX] / math.sqrt(d), dim=0),
            "Document 003 applies its matrices as U x, i.e. X Uᵀ: transpose the U's (queries = X @ U_query.T).",
        ),
        (
            om[QUERY_INDEX] / math.sqrt(d),
            "These are scaled scores: apply the softmax (dim=0) to turn them into weights.",
        ),
    ]


@exercise("sentence.1")
def check(answer: object) -> Feedback:
    return compare_tensor(
        answer,
        expected(),
        name=NAME,
        wrong=[(t.to(torch.float32), hint) for t, hint in typical_mistakes()],
        success="They sum to 1.",
    )
