"""How much a softmax row still mixes: the spread of scores and the largest weight (lesson 08).

Maths only; the lesson-08 explorer (:mod:`attnlib.lessons.l08_scaling`) draws what this computes.
"""

from __future__ import annotations

from typing import NamedTuple

from torch import Tensor

from .examples import random_qk
from .steps import trace

__all__ = ["ScalingStats", "mean_max_weight", "scaling_stats"]


def mean_max_weight(weights: Tensor) -> float:
    """The mean over the rows of each row's largest weight: 1 = every row one-hot, ``1/n_k`` = uniform.

    Args:
        weights: ``(..., n_q, n_k)``, rows summing to 1.
    """
    return float(weights.amax(dim=-1).mean())


class ScalingStats(NamedTuple):
    """Unscaled/scaled ``scores`` and ``weights`` ``(n_tokens, n_tokens)`` and their summaries."""

    scores: Tensor
    scaled_scores: Tensor
    weights: Tensor
    scaled_weights: Tensor
    std: float
    scaled_std: float
    max_weight: float
    scaled_max_weight: float


def scaling_stats(d_k: int, *, n_tokens: int = 6, seed: int = 0) -> ScalingStats:
    """Scores of random q, k of size ``d_k`` before and after ``scale_scores``, with their softmaxes.

    ``std`` is the standard deviation of all ``n_tokens²`` scores; ``max_weight`` the mean over
    the rows of each row's largest weight (1 = every row one-hot, ``1/n_tokens`` = uniform).
    """
    queries, keys = random_qk(d_k, n_tokens=n_tokens, seed=seed)
    unscaled, scaled = trace(queries, keys, scale=1.0), trace(queries, keys)
    return ScalingStats(
        unscaled.scores,
        scaled.scaled_scores,
        unscaled.weights,
        scaled.weights,
        float(unscaled.scores.std()),
        float(scaled.scaled_scores.std()),
        mean_max_weight(unscaled.weights),
        mean_max_weight(scaled.weights),
    )
