"""Lesson 08: ScalingExplorer headless (shown softmaxes and statistics equal attnlib's for each d_k) and
the lesson's checkers (solutions pass; typical slips get their hint and mistake id)."""

import math

import numpy as np
import pytest
import torch

from attnlib import scale_scores, score, softmax
from attnlib.lessons import check
from attnlib.lessons.l08_scaling import ScalingExplorer, random_qk, scaling_stats


def test_starts_at_d_k_64():
    e = ScalingExplorer()
    q, k = random_qk(64)
    s = score(q, k)
    assert np.allclose(e.views["unscaled"].data, softmax(s).numpy())
    assert np.allclose(e.views["scaled"].data, softmax(scale_scores(s, 64)).numpy())
    assert e.summary() == "ScalingExplorer(d_k=64, seed=0, n_tokens=6)"
    assert f"{float(s.std()):.3f}" in e.stats.value


@pytest.mark.parametrize("d_k", [1, 4, 16, 256])
def test_slider(d_k):
    e = ScalingExplorer()
    e.controls["d_k"].value = d_k
    st = scaling_stats(d_k)
    q, k = random_qk(d_k)
    assert torch.allclose(st.scores, q @ k.T)
    assert np.allclose(e.views["unscaled"].data, st.weights.numpy())
    assert np.allclose(e.views["scaled"].data, softmax(q @ k.T / math.sqrt(d_k)).numpy())
    assert f"{st.std:.3f}" in e.stats.value and f"{st.scaled_max_weight:.3f}" in e.stats.value
    assert math.isclose(st.scaled_std, st.std / math.sqrt(d_k), rel_tol=1e-5)


def test_variance_grows_with_d_k_and_scaling_undoes_it():
    gen = torch.Generator().manual_seed(1)
    for d_k in (4, 64, 1024):
        q = torch.randn(4000, d_k, generator=gen)
        k = torch.randn(4000, d_k, generator=gen)
        dots = (q * k).sum(-1)
        assert abs(float(dots.var()) / d_k - 1) < 0.1
        assert abs(float((dots / math.sqrt(d_k)).var()) - 1) < 0.1


def test_unscaled_saturates_for_large_d_k():
    assert scaling_stats(512).max_weight > 0.95
    assert scaling_stats(512).scaled_max_weight < 0.7


def test_seed_is_reproducible_and_bad_d_k_rejected():
    assert torch.equal(random_qk(8, seed=3)[0], random_qk(8, seed=3)[0])
    assert not torch.equal(random_qk(8, seed=3)[0], random_qk(8, seed=4)[0])
    with pytest.raises(ValueError, match="d_k must be a positive integer"):
        random_qk(0)


def test_by_hand():
    assert check("scaling.1", [2.0, 1.0, 0.0]).correct
    assert check("scaling.1", [0.5, 0.25, 0.0]).mistake == "scale-by-d"
    assert check("scaling.1", [8.0, 4.0, 0.0]).mistake == "scale-forgotten"


def test_scaled_weights_runs_on_fresh_inputs():
    def scaled_weights(queries, keys):
        return torch.softmax(queries @ keys.T / math.sqrt(queries.shape[-1]), dim=-1)

    assert check("scaling.2", scaled_weights).correct
    assert check("scaling.2", lambda q, k: torch.softmax(q @ k.T / q.shape[-1], -1)).mistake == "scale-by-d"
    transposed = lambda q, k: torch.softmax(k @ q.T / math.sqrt(q.shape[-1]), -1)  # noqa: E731
    assert check("scaling.2", transposed).mistake == "k-q-transposed"
    over_queries = lambda q, k: torch.softmax(q @ k.T / math.sqrt(q.shape[-1]), dim=0)  # noqa: E731
    assert check("scaling.2", over_queries).mistake == "softmax-axis"


def test_scaled_weights_refuses_the_library_using_only_torch_and_math():
    from attnlib import scale_scores, score

    pieces = lambda q, k: softmax(scale_scores(score(q, k), q.shape[-1]))  # noqa: E731  # the review's answer
    feedback = check("scaling.2", pieces)
    assert not feedback.correct and feedback.mistake == "library-function" and "attnlib" in feedback.message
    sdpa = lambda q, k: torch.nn.functional.scaled_dot_product_attention(q, k, torch.eye(k.shape[0]))  # noqa: E731
    assert check("scaling.2", sdpa).mistake == "library-function"


def test_per_head_divisor():
    assert check("scaling.3", math.sqrt(512 / 16)).correct  # d_model = 512, h = 16
    assert check("scaling.3", 5.657).correct
    assert check("scaling.3", math.sqrt(512)).mistake == "scale-by-d-model"
    assert check("scaling.3", 32).mistake == "scale-by-d"
    assert "8 heads" in check("scaling.3", 8).message


def test_scaling_by_the_number_of_keys_gets_its_own_hint():
    feedback = check("scaling.2", lambda q, k: torch.softmax(q @ k.T / math.sqrt(k.shape[0]), dim=-1))
    assert not feedback.correct and "n_k" in feedback.message


def test_the_library_step_is_not_an_answer():
    from attnlib.steps import attention_weights

    assert check("scaling.2", attention_weights).mistake == "library-function"
    assert check("scaling.2", lambda q, k: attention_weights(q, k)).mistake == "library-function"


def test_explorer_refuses_a_d_k_its_slider_does_not_offer() -> None:
    with pytest.raises(ValueError, match=r"d_k must be a power of two .* got 48"):
        ScalingExplorer(d_k=48)
