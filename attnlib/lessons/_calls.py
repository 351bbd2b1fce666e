"""Checking a learner's *function*: call it on inputs the lesson never showed, then compare its result."""

from __future__ import annotations

from collections.abc import Sequence

from torch import Tensor

from ._check import Feedback, Wrong, compare_tensor, run_learner_code


def compare_call(
    function: object,
    args: Sequence[object],
    *,
    call: str,
    expected: Tensor,
    name: str,
    wrong: Sequence[Wrong] = (),
    success: str = "",
    write_it: Sequence[object] = (),
) -> Feedback:
    """Run ``function(*args)`` (tensors are passed as copies) and compare its result with ``expected``.

    Args:
        call: how the lesson names the function and its arguments, e.g. ``"your weigh(weights, values)"``;
            used when the function is missing, not callable, or raises.
        name, wrong, success: as for :func:`~attnlib.lessons.compare_tensor`.
        write_it: the library functions that do the step asked for (see :func:`run_learner_code`).
    """
    copies = [a.clone() if isinstance(a, Tensor) else a for a in args]
    got = run_learner_code(function, *copies, name=call, write_it=write_it)
    if isinstance(got, Feedback):
        return got
    if got is None:
        return Feedback(
            False, f"{call} returned None: replace the ... in its body with the computation and return it.", tried=False
        )
    return compare_tensor(got, expected, name=name, wrong=wrong, success=success)
