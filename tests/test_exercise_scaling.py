"""Lesson 08 checkers: the lesson's solutions pass; the typical slips get their hint and mistake id."""

import math

import torch

from attnlib import softmax
from attnlib.lessons import check


def test_by_hand():
    assert check("scaling.1", [2.0, 1.0, 0.0]).correct
    assert check("scaling.1", [0.5, 0.25, 0.0]).mistake == "scale-by-d"
    assert check("scaling.1", [8.0, 4.0, 0.0]).mistake == "scale-forgotten"


def test_scaled_weights_runs_on_fresh_inputs():
    def scaled_weights(queries, keys):
        return torch.softmax(queries @ keys.T / math.sqrt(queries.shape[-1]), dim=-1)

    assert check("scaling.2", scaled_weights).correct
    assert check("scaling.2", lambda q, k: softmax(q @ k.T / q.shape[-1])).mistake == "scale-by-d"
    assert check("scaling.2", lambda q, k: softmax(k @ q.T / math.sqrt(q.shape[-1]))).mistake == "k-q-transposed"
    assert check("scaling.2", lambda q, k: softmax(q @ k.T / math.sqrt(q.shape[-1]), dim=0)).mistake == "softmax-axis"


def test_per_head_divisor():
    assert check("scaling.3", math.sqrt(512 / 8)).correct
    assert check("scaling.3", 8).correct
    assert check("scaling.3", math.sqrt(512)).mistake == "scale-by-d-model"
    assert check("scaling.3", 64).mistake == "scale-by-d"


def test_scaling_by_the_number_of_keys_gets_its_own_hint():
    feedback = check("scaling.2", lambda q, k: torch.softmax(q @ k.T / math.sqrt(k.shape[0]), dim=-1))
    assert not feedback.correct and "n_k" in feedback.message


def test_the_library_step_is_not_an_answer():
    from attnlib.steps import attention_weights

    assert check("scaling.2", attention_weights).mistake == "library-function"
    assert check("scaling.2", lambda q, k: attention_weights(q, k)).mistake == "library-function"
