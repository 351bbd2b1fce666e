"""Lesson 20 · The documents, reconciled: its exercise checker.

- ``documents_reconciled.1`` by hand: the id document 002's vocabulary gives "to" in "to be or not to be"
  (the sorted tokens numbered with their duplicates; the dictionary keeps the last number).
"""

from __future__ import annotations

from ..text import build_vocabulary
from ._check import Feedback, compare_number, exercise

__all__ = ["SHORT", "id_of_to", "wrong_answers"]

SHORT = "to be or not to be"


def wrong_answers() -> dict[str, list[tuple[object, str | None]]]:
    """Per exercise, typical wrong answers and the mistake id each must reveal (None: a plain hint)."""
    return {"documents_reconciled.1": [(3, None), (4, None)]}


@exercise("documents_reconciled.1")
def id_of_to(answer: object) -> Feedback:
    """The id of "to" in document 002's vocabulary of "to be or not to be": 5."""
    wrong = [
        (
            float(build_vocabulary(SHORT, unique=True)["to"]),
            "3 numbers each distinct word once. Document 002 numbers the sorted list *with* its duplicates: "
            "be, be, not, or, to, to.",
        ),
        (4.0, "4 is the first of the two numbers 'to' gets; the dictionary keeps the last one."),
    ]
    feedback = compare_number(answer, float(build_vocabulary(SHORT)["to"]), name='the id of "to"', wrong=wrong, tol=0.5)
    if feedback.correct:
        return Feedback(True, "5: 'to' is numbered 4, then 5, and the dictionary keeps 5; the ids 0 and 4 go unused.")
    return feedback
