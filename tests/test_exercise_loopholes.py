"""No exercise is passed by handing in the library: every public callable of attnlib's maths modules, and
torch's softmax and SDPA, is tried against every exercise — as the answer itself and wrapped in a lambda
that forwards the exercise's own arguments to it — and none may be accepted.

Written over :func:`attnlib.lessons.exercises`, so it covers every lesson that exists, present or future.
"""

from __future__ import annotations

import importlib
import warnings

import pytest
import torch
import torch.nn.functional as F

from attnlib.lessons import check

MATHS_MODULES = (
    "steps",
    "modules",
    "positions",
    "tiled",
    "heads",
    "training",
    "cost",
    "kv_cache",
    "saturation",
    "text",
    "language",
    "transformer",
    "tasks",
)
#: would write files or train for minutes whatever they are given; they compute no exercise's answer
NOT_TRIED = {"save_checkpoint", "median_seconds"}


def _public_callables() -> dict[str, object]:
    found: dict[str, object] = {}
    for short in MATHS_MODULES:
        module = importlib.import_module(f"attnlib.{short}")
        names = getattr(module, "__all__", None) or [n for n in vars(module) if not n.startswith("_")]
        for name in names:
            value = getattr(module, name)
            defined_here = getattr(value, "__module__", "") == module.__name__
            if callable(value) and defined_here and name not in NOT_TRIED:
                found[f"attnlib.{short}.{name}"] = value
    found.update({"torch.softmax": torch.softmax, "F.softmax": F.softmax, "F.sdpa": F.scaled_dot_product_attention})
    return found


CALLABLES = _public_callables()


def _exercises() -> list[str]:
    from attnlib.lessons import exercises
    from attnlib.lessons._check import aliases

    return [name for name in exercises() if name not in aliases()]


def _forward(function):
    def forwarding(*args):
        return function(*args)

    return forwarding


def test_the_library_is_tried():
    assert {"attnlib.steps.softmax", "attnlib.positions.sinusoidal_encoding", "attnlib.modules.split_heads"} <= set(
        CALLABLES
    )
    assert len(_exercises()) >= 40


@pytest.mark.parametrize("name", _exercises())
def test_no_library_callable_passes(name):
    accepted = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for label, function in CALLABLES.items():
            for form, answer in (("itself", function), ("called with the exercise's arguments", _forward(function))):
                if check(name, answer).correct:
                    accepted.append(f"{label} ({form})")
    assert not accepted, f"{name} accepts the library: {accepted}"


# ---------------------------------------------------------------- positions.4: the experiment needs the training
# The review (section 4): the committed checkpoint passed; then the checkpoint trained >= 10 steps more did. The
# checker now hands the learner's train_reverse(model) a fresh model on a seed the page never used.


def _checkpoint_trained_more(model):
    from attnlib import pretrained
    from attnlib.training import train

    model.load_state_dict(pretrained.load("reverse").state_dict())  # the given model, overwritten
    train(model, pretrained.RECIPES["reverse"].task, steps=10, lr=1e-2, seed=5, progress=False)
    return model


def test_positions_4_refuses_the_committed_checkpoint_handed_in():
    from attnlib import pretrained

    feedback = check("positions.4", pretrained.load("reverse"))
    assert not feedback.correct and "not a model" in feedback.message


def test_positions_4_refuses_a_function_returning_the_checkpoint():
    from attnlib import pretrained

    feedback = check("positions.4", lambda model: pretrained.load("reverse"))
    assert not feedback.correct and "checkpoint" in feedback.message and "nothing was trained" in feedback.message


def test_positions_4_refuses_the_checkpoint_loaded_into_the_fresh_model_and_trained_more():
    feedback = check("positions.4", _checkpoint_trained_more)
    assert not feedback.correct and "did not start from the one it was given" in feedback.message


def test_positions_4_refuses_the_lessons_own_model_instead_of_the_one_given():
    from attnlib.lessons.l12_positions import reverse_model

    feedback = check("positions.4", lambda model: reverse_model("learned", progress=False))
    assert not feedback.correct and "did not start from the one it was given" in feedback.message
