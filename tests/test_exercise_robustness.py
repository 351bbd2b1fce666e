"""Every registered exercise survives any answer: ``check()`` returns a sentence, never raises, and
no bad answer falls through to the safety net (each is handled by the comparisons themselves)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from attnlib.lessons import Feedback, check, exercises
from attnlib.lessons._check import CHECKER_FAILED, MISTAKES

NAMES = exercises()

BAD_ANSWERS = [
    None,
    ...,
    "0.5",
    "softmax",
    b"bytes",
    {"a": 1},
    {1, 2},
    lambda x: x,
    print,
    torch.Tensor,
    object(),
    True,
    1 + 2j,
    float("nan"),
    float("inf"),
    10**400,
    [],
    [[]],
    [[1, 2], [3]],
    [["a", "b"]],
    np.array(["x", "y"]),
    np.array([1, 2], dtype=object),
    torch.zeros(0),
    torch.zeros(0, 3),
    torch.zeros(3, 0, 2),
    torch.tensor(3.0),
    torch.full((3, 3), float("nan")),
    torch.full((3, 3), float("-inf")),
    torch.full((4, 5), 1e30),
    torch.ones(3, 3, requires_grad=True),
    torch.ones(3, 3, dtype=torch.int64),
    torch.ones(3, 3, dtype=torch.bool),
    torch.ones(3, 3, dtype=torch.float16),
    torch.ones(3, 3, dtype=torch.complex64),
    torch.eye(3).to_sparse(),
    torch.empty(3, 3, device="meta"),
    torch.zeros(2000, 2000),
]


def _assert_sentence(feedback: object) -> None:
    assert isinstance(feedback, Feedback)
    assert isinstance(feedback.message, str) and feedback.message
    assert not feedback.message.startswith(CHECKER_FAILED), feedback.message
    assert feedback.mistake is None or feedback.mistake in MISTAKES


def test_there_are_exercises() -> None:
    assert len(NAMES) >= 11


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("answer", BAD_ANSWERS, ids=[f"bad{i}" for i in range(len(BAD_ANSWERS))])
def test_bad_answers_get_a_sentence(name: str, answer: object) -> None:
    feedback = check(name, answer)
    _assert_sentence(feedback)
    if answer is None or answer is ...:
        assert not feedback.correct


numbers = st.floats(allow_nan=True, allow_infinity=True, width=32)
tensors = st.integers(0, 3).flatmap(
    lambda rank: st.lists(st.integers(0, 5), min_size=rank, max_size=rank).flatmap(
        lambda shape: st.lists(numbers, min_size=int(np.prod(shape)), max_size=int(np.prod(shape))).map(
            lambda values: torch.tensor(values, dtype=torch.float32).reshape(shape)
        )
    )
)
nested = st.recursive(
    numbers | st.integers() | st.text(max_size=3) | st.none(), lambda kids: st.lists(kids, max_size=4)
)


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=12, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(answer=tensors | nested)
def test_random_answers_get_a_sentence(name: str, answer: object) -> None:
    _assert_sentence(check(name, answer))


@pytest.mark.parametrize("name", [None, 3, "attention", "softmax.99", "softmax.x", ""])
def test_unknown_exercise_names_get_a_sentence(name: object) -> None:
    feedback = check(name, None)  # type: ignore[arg-type]
    assert not feedback.correct and "exercise" in feedback.message
