"""Lesson 10 checkers: the lesson's solutions pass; the typical slips get their hint and mistake id."""

import math

import torch

from attnlib import examples, score, softmax
from attnlib.lessons import check
from attnlib.text import build_vocabulary


def test_id_of_to():
    assert check("sentence.1", 5).correct
    assert check("sentence.1", build_vocabulary("to be or not to be")["to"]).correct
    fb = check("sentence.1", 3)
    assert not fb.correct and "duplicates" in fb.message


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
