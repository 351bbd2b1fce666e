""" "Check yourself" exercises: each lesson's answers checked against attnlib, with targeted hints.

A lesson calls ``check("<lesson>.<n>", answer)``, e.g. ``check("softmax.2", my_softmax)``. The
checkers of lesson ``<lesson>`` live in ``attnlib/exercises/<lesson>.py``, each registered with
:func:`~attnlib.exercises._core.exercise`; :mod:`attnlib.exercises._core` holds the comparisons
they share. Checkers compare with attnlib's own computation and recognise the typical wrong answers
(the softmax over the wrong axis, the scaling forgotten, a mask of zeros …, see :data:`MISTAKES`)
to give a hint instead of a bare "no". :func:`check` never raises.
"""

from __future__ import annotations

import importlib
import pkgutil

from ._core import (
    CHECKER_FAILED,
    MISTAKES,
    Feedback,
    compare_number,
    compare_tensor,
    exercise,
    registry,
    run_learner_code,
)

__all__ = [
    "LESSONS",
    "MISTAKES",
    "Feedback",
    "check",
    "compare_number",
    "compare_tensor",
    "exercise",
    "exercises",
    "run_learner_code",
]

#: The lessons that have exercises: one module each in this package.
LESSONS: tuple[str, ...] = tuple(sorted(m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_")))


def exercises(lesson: str | None = None) -> list[str]:
    """The names of all exercises (or one lesson's), in order: ``["softmax.1", "softmax.2", …]``."""
    for name in LESSONS if lesson is None else (lesson,):
        if name in LESSONS:
            importlib.import_module(f"{__name__}.{name}")
    names = [n for n in registry() if lesson is None or n.split(".")[0] == lesson]
    return sorted(names, key=lambda n: (n.split(".")[0], int(n.split(".")[1])))


def check(name: str, answer: object) -> Feedback:
    """Check ``answer`` to exercise ``name`` (``"<lesson>.<n>"``). Never raises: every problem is a sentence."""
    if not isinstance(name, str):
        return Feedback(False, f"the exercise name should be text like 'softmax.1', not {type(name).__name__}")
    lesson = name.split(".")[0]
    if lesson not in LESSONS:
        return Feedback(False, f"there is no exercise {name!r}; the lessons with exercises are {', '.join(LESSONS)}")
    names = exercises(lesson)  # imports the lesson's module, which registers its checkers
    if name not in names:
        return Feedback(False, f"there is no exercise {name!r}; lesson {lesson!r} has {', '.join(names)}")
    try:
        return registry()[name](answer)
    except Exception as exc:  # a checker bug must not put a traceback in front of a learner
        return Feedback(
            False,
            f"{CHECKER_FAILED} ({type(exc).__name__}: {str(exc)[:120]}). "
            "Check its type and shape against the exercise; please report this to the course.",
        )
