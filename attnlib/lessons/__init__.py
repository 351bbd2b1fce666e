"""Each lesson's glue: ``lessons/lNN_name.py`` holds lesson NN's explorers and its exercise checkers.

A lesson calls ``check("<exercise>.<n>", answer)``, e.g. ``check("softmax.2", my_softmax)``. Each
checker is registered with :func:`~attnlib.lessons._check.exercise` in its lesson's module;
:mod:`attnlib.lessons._check` holds the comparisons they share. Checkers compare with attnlib's own
computation and recognise the typical wrong answers (the softmax over the wrong axis, the scaling
forgotten, a mask of zeros …, see :data:`MISTAKES`) to give a hint instead of a bare "no". :func:`check` never raises.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
from dataclasses import replace
from types import ModuleType

from ._check import (
    CHECKER_FAILED,
    CHECKING,
    MISTAKES,
    Feedback,
    compare_number,
    compare_tensor,
    exercise,
    registry,
    run_learner_code,
)

__all__ = [
    "MISTAKES",
    "MODULES",
    "Feedback",
    "check",
    "compare_number",
    "compare_tensor",
    "exercise",
    "exercises",
    "lesson_module",
    "lessons",
    "run_learner_code",
]

#: The lessons' modules, ``l01_inputs`` … in order.
MODULES: tuple[str, ...] = tuple(
    sorted(m.name for m in pkgutil.iter_modules(__path__) if m.name[:1] == "l" and m.name[1:3].isdigit())
)


def _load_all() -> None:
    for module in MODULES:
        importlib.import_module(f"{__name__}.{module}")  # registers the module's checkers


def lessons() -> list[str]:
    """The exercise prefixes of all lessons, e.g. ``["attention_at_scale", "inputs", …]`` (former names left out)."""
    _load_all()
    return sorted({n.split(".")[0] for n in registry(aliases=False)})


def lesson_module(lesson: str) -> ModuleType:
    """The module holding the checkers of exercises ``"<lesson>.<n>"``, e.g. ``"softmax"`` → ``l05_softmax``."""
    _load_all()
    for name, checker in registry().items():
        if name.split(".")[0] == lesson:
            return sys.modules[checker.__module__]
    raise KeyError(f"no lesson has exercises named {lesson!r}.<n>")


def exercises(lesson: str | None = None) -> list[str]:
    """The names of all exercises (or one lesson's), in order: ``["softmax.1", "softmax.2", …]``.

    Former names (see :func:`~attnlib.lessons._check.aliases`) still check but are not listed.
    """
    _load_all()
    names = [n for n in registry(aliases=False) if lesson is None or n.split(".")[0] == lesson]
    return sorted(names, key=lambda n: (n.split(".")[0], int(n.split(".")[1])))


def check(name: str, answer: object) -> Feedback:
    """Check ``answer`` to exercise ``name`` (``"<lesson>.<n>"``). Never raises: every problem is a sentence."""
    if not isinstance(name, str):
        return Feedback(False, f"the exercise name should be text like 'softmax.1', not {type(name).__name__}")
    _load_all()
    if name not in registry():  # current and former names
        lesson = name.split(".")[0]
        names = exercises(lesson)
        if not names:
            return Feedback(
                False, f"there is no exercise {name!r}; the lessons with exercises are {', '.join(lessons())}"
            )
        return Feedback(False, f"there is no exercise {name!r}; lesson {lesson!r} has {', '.join(names)}")
    token = CHECKING.set(name)
    try:
        feedback = registry()[name](answer)
    except Exception as exc:  # a checker bug must not put a traceback in front of a learner
        return Feedback(
            False,
            f"{CHECKER_FAILED} ({type(exc).__name__}: {str(exc)[:120]}). "
            "Check its type and shape against the exercise; please report this to the course.",
        )
    finally:
        CHECKING.reset(token)
    if (answer is None or answer is Ellipsis) and not feedback.correct:
        return replace(feedback, tried=False)  # an untouched exercise is a prompt, never a failure
    return feedback
