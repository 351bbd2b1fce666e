"""Lesson 12: PositionsExplorer headless (the views show attnlib's encodings; sliders stay in range; a bad
base keeps the state) and the lesson's checkers (solutions pass; typical slips get their hint)."""

import math

import numpy as np
import torch

from attnlib import attention, derive_qkv, examples
from attnlib.lessons import check
from attnlib.lessons.l12_positions import PositionsExplorer
from attnlib.positions import sinusoidal_encoding


def test_views_are_the_encoding_and_its_similarity():
    e = PositionsExplorer(12, 8, position=3, frequency=1)
    p = sinusoidal_encoding(12, 8).numpy()
    assert np.allclose(e.views["encoding"].data, p, atol=1e-6)
    assert np.allclose(e.views["similarity"].data, p @ p.T, atol=1e-5)
    assert e.views["encoding"].highlight_rows == [3] and e.views["encoding"].highlight_cols == [2, 3]
    assert e.summary() == "PositionsExplorer(n_tokens=12, d_model=8, position=3, frequency=1)"
    assert "ω_c" in e.caption.value


def test_shrinking_keeps_the_choices_in_range():
    e = PositionsExplorer(32, 16, position=30, frequency=7)
    e.controls["n_tokens"].value = 10
    e.controls["d_model"].value = 4
    assert e.controls["position"].value == 9 and e.controls["frequency"].value == 1
    assert e.views["encoding"].data.shape == (10, 4)


def test_bad_base_is_reported_and_the_last_good_state_kept():
    e = PositionsExplorer(8, 4)
    before = e.views["encoding"].data.copy()
    e.controls["base"].value = 0.5
    assert "base must be a number greater than 1" in e.message.value
    assert np.array_equal(e.views["encoding"].data, before)
    e.controls["base"].value = 100.0
    assert e.message.value == ""
    assert np.allclose(e.views["encoding"].data, sinusoidal_encoding(8, 4, base=100.0).numpy(), atol=1e-6)


def test_by_hand_from_the_distance():
    assert check("positions.1", math.cos(2) + math.cos(0.02)).correct
    assert "i − j" in check("positions.1", math.cos(8) + math.cos(0.08)).message
    assert "two" in check("positions.1", math.cos(2)).message
    assert "1/100" in check("positions.1", 2 * math.cos(2)).message
    assert not check("positions.1", "0.58").correct


def test_sinusoid_code():
    def sinusoid(n_tokens, d_model):
        pos = torch.arange(n_tokens)[:, None]
        theta = 10000 ** (-torch.arange(0, d_model, 2) / d_model)
        p = torch.zeros(n_tokens, d_model)
        p[:, 0::2], p[:, 1::2] = torch.sin(pos * theta), torch.cos(pos * theta)
        return p

    assert check("positions.2", sinusoid).correct

    def concatenated(n_tokens, d_model):
        pos = torch.arange(n_tokens)[:, None]
        theta = 10000 ** (-torch.arange(0, d_model, 2) / d_model)
        return torch.cat([torch.sin(pos * theta), torch.cos(pos * theta)], dim=-1)

    assert "[sin | cos]" in check("positions.2", concatenated).message

    assert "positive" in check("positions.2", lambda n, d: _with(n, d, sign=1)).message
    assert "start at 1" in check("positions.2", lambda n, d: _with(n, d, first=1)).message


def _with(n_tokens, d_model, *, sign=-1, first=0):
    pos = torch.arange(first, first + n_tokens)[:, None]
    theta = 10000 ** (sign * torch.arange(0, d_model, 2) / d_model)
    p = torch.zeros(n_tokens, d_model)
    p[:, 0::2], p[:, 1::2] = torch.sin(pos * theta), torch.cos(pos * theta)
    return p


def test_the_library_encoding_is_not_an_answer():
    from attnlib.positions import SinusoidalPositions, sinusoidal_encoding

    assert check("positions.2", sinusoidal_encoding).mistake == "library-function"
    assert check("positions.2", lambda n, d: sinusoidal_encoding(n, d) + 0).mistake == "library-function"
    assert check("positions.2", lambda n, d: SinusoidalPositions(n, d)(torch.zeros(n, d))).mistake == (
        "library-function"
    )


def test_bites():
    w = examples.three_inputs.projections
    z = attention(*derive_qkv(examples.three_inputs.inputs, *w), scale=1.0)
    assert check("positions.3", z[[2, 1, 0]]).correct
    assert "own order" in check("positions.3", z).message


def _train_reverse(model):
    from attnlib.pretrained import RECIPES
    from attnlib.training import train

    recipe = RECIPES["reverse"]
    train(model, recipe.task, steps=100, lr=recipe.lr, progress=False)
    return model


def test_a_training_function_is_run_on_a_fresh_model_and_measured():
    feedback = check("positions.4", _train_reverse)
    assert feedback.correct, feedback.message

    def in_place(model):  # trains the model it is given and returns nothing: fine too
        _train_reverse(model)

    assert check("positions.4", in_place).correct


def test_positions_4_names_what_is_missing():
    from attnlib import pretrained
    from attnlib.lessons.l12_positions import reverse_model
    from attnlib.training import train
    from attnlib.transformer import TinyTransformer

    def stub(model): ...

    untouched = check("positions.4", stub)
    assert not untouched.correct and not untouched.tried  # the exercise as the page hands it out: a neutral prompt
    assert "untrained" in check("positions.4", lambda model: model).message
    task = pretrained.RECIPES["reverse"].task
    short = check("positions.4", lambda model: train(model, task, steps=5, progress=False) and model)
    assert not short.correct and "train it longer" in short.message
    assert "not a model" in check("positions.4", pretrained.load("reverse")).message

    def sinusoids(model):
        return _train_reverse(reverse_model("sinusoidal", steps=1, progress=False))

    assert "did not start from the one it was given" in check("positions.4", sinusoids).message
    too_small = TinyTransformer(vocab_size=5, max_len=8, d_model=8, num_heads=1, num_layers=1)
    assert "does not fit" in check("positions.4", lambda model: too_small).message
    failing = check("positions.4", lambda model: model.no_such_method())
    assert not failing.correct and failing.message.startswith("your train_reverse(model) raised AttributeError")


def test_bites_names_scaled_outputs():
    w = examples.three_inputs.projections
    scaled = attention(*derive_qkv(examples.three_inputs.inputs[[2, 1, 0]], *w))  # the default: divided by √d_k
    feedback = check("positions.3", scaled)
    assert not feedback.correct and "scale=1.0" in feedback.message and feedback.mistake == "scale-forgotten"
