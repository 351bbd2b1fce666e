"""attnlib.saturation: the spread of scores and how one-hot the softmax rows are (lesson 08)."""

import math

import torch

from attnlib import examples, scale_scores, score, softmax
from attnlib.saturation import mean_max_weight, scaling_stats


def test_mean_max_weight_runs_from_uniform_to_one_hot() -> None:
    assert mean_max_weight(torch.full((3, 4), 0.25)) == 0.25
    assert mean_max_weight(torch.eye(3)) == 1.0


def test_scaling_stats_agree_with_the_steps() -> None:
    st = scaling_stats(64, n_tokens=32, seed=0)
    q, k = examples.random_qk(64, n_tokens=32, seed=0)
    assert torch.allclose(st.scores, score(q, k))
    assert torch.allclose(st.scaled_weights, softmax(scale_scores(score(q, k), 64)))
    assert math.isclose(st.std, float(score(q, k).std()))


def test_scaling_restores_mixing_on_unit_variance_data_not_on_document_000() -> None:
    st = scaling_stats(256, n_tokens=32, seed=0)
    assert st.max_weight > 0.8 and st.scaled_max_weight < 0.3
    q, k, _ = examples.four_inputs.qkv()
    s = score(q, k)
    assert mean_max_weight(softmax(scale_scores(s, 5))) > 0.95  # 000 stays saturated
