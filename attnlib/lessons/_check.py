"""The machinery under every "check yourself" exercise: verdicts, comparisons, the registry.

A lesson's checkers live in ``attnlib/lessons/<lesson>.py``, each registered under a name
``"<lesson>.<n>"`` with :func:`exercise`. :func:`attnlib.lessons.check` looks the name up and
returns a :class:`Feedback`; it never raises, whatever the learner hands it, because the
comparisons below turn every kind of bad answer (text, ``None``, a function, NaN, an empty or a
huge tensor, a tensor that needs a gradient …) into a sentence.

Typical wrong answers carry the id of the misconception they reveal (:data:`MISTAKES`), so the
hint a learner sees is targeted and a test can assert that the right hint fires.
"""

from __future__ import annotations

import _thread
import contextlib
import contextvars
import functools
import html
import inspect
import math
import re
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import CodeType, FrameType
from typing import Any

import torch
from torch import Tensor

from ..cost import TorchCalls

__all__ = [
    "ATTENTION_FAMILY",
    "ATTNLIB",
    "MAX_ANSWER_NUMBERS",
    "MISTAKES",
    "SOFTMAX_FAMILY",
    "Feedback",
    "TensorWork",
    "TorchFamily",
    "Wrong",
    "aliases",
    "compare_number",
    "compare_tensor",
    "course_code",
    "exercise",
    "library_feedback",
    "registry",
    "run_learner_code",
    "to_answer_tensor",
]

#: The misconceptions learners are known to have (evidence: the project's notes on other projects'
#: trackers), by id. A checker's typical wrong answer names the id it reveals.
MISTAKES: dict[str, str] = {
    "softmax-axis": "softmax over the wrong axis (the queries instead of the keys)",
    "scale-by-d": "scaling by d_k instead of sqrt(d_k)",
    "scale-by-d-model": "scaling by the model width d_model instead of the per-head d_head",
    "scale-forgotten": "forgetting to scale the scores",
    "mask-with-zero": "masking with 0 (a score of 0 still gets weight) instead of -inf",
    "mask-after-softmax": "masking after the softmax (rows no longer sum to 1)",
    "fully-masked-row": "a row whose every key is masked: -inf everywhere gives NaN",
    "heads-view-no-transpose": "splitting heads with view/reshape but no transpose (tokens and features mixed)",
    "heads-parameters": "h heads need h times the parameters (one projection is split h ways)",
    "k-q-transposed": "K Qᵀ instead of Q Kᵀ (the transposed score matrix)",
    "causal-and-mask": "passing a mask and is_causal together, or neither, to a fused kernel",
    "online-no-rescale": "online softmax: not rescaling the running sum when the running maximum grows",
    "weights-not-values": "summing the weights or the keys instead of the weighted values",
    "rounded": "rounding like a document instead of computing exactly",
    "transposed": "a transposed matrix",
    "library-function": "handing in the library's own function instead of writing the step",
    "layer-norm-after": "layer norm after each part of the block (post-LN) where the lesson's block is pre-LN",
    "residual-forgotten": "a residual connection forgotten: x = part(x) instead of x = x + part(norm(x))",
    "zero-grad-forgotten": "optimiser.zero_grad() forgotten, or called between backward() and step()",
    "next-token-misaligned": "logits and targets not shifted by one (or shifted the wrong way)",
    "keepdim-forgotten": "a row's sum or maximum taken without keepdim=True, so it lines up with the columns",
    "whole-matrix-sum": "normalising by the sum of the whole matrix instead of each row's",
    "mask-not-boolean": "a 0/1, integer or additive float mask where a boolean one is asked for",
    "positions-forgotten": "a model without positions (or with the whole position table added to n tokens)",
    "mask-not-causal": "a next-token model whose tokens see later ones (no causal mask, or one used always)",
    "readout-tied": "the read-out built the wrong way round, or taken from the embedding table",
}

#: Answers with more numbers than this are refused before they are converted (a learner who passes
#: a 10⁸-element tensor by mistake gets a sentence, not a frozen kernel).
MAX_ANSWER_NUMBERS = 1_000_000

#: The start of the message given when a checker itself failed; tests assert that no learner
#: answer reaches it (every bad answer must be handled by the comparisons).
CHECKER_FAILED = "This answer could not be checked"


@dataclass(frozen=True)
class Feedback:
    """The verdict on an answer: ``correct``, a message, and the misconception it reveals, if known.

    ``tried`` is False while the exercise still holds its ``...``: shown as a prompt, not as a failure.
    """

    correct: bool
    message: str
    mistake: str | None = None
    tried: bool = True

    def __bool__(self) -> bool:
        return self.correct

    def _verdict(self) -> tuple[str, str, str]:
        """Colour, mark and word; the marks are plain text symbols, which every font has."""
        if self.correct:
            return "#1a7f37", "✓", "Correct."
        if not self.tried:
            return "#57606a", "✎", "Your turn."
        return "#b35900", "✗", "Not yet."

    def __repr__(self) -> str:
        _, mark, word = self._verdict()
        return f"{mark} {word} {self.message}"

    def _repr_html_(self) -> str:
        colour, mark, word = self._verdict()
        return (
            f'<div style="border-left:4px solid {colour};padding:4px 8px">'
            f'<span style="color:{colour}">{mark}</span> <b>{word}</b> {html.escape(self.message)}</div>'
        )


# ---------------------------------------------------------------- the registry
_REGISTRY: dict[str, Callable[[object], Feedback]] = {}
_ALIASES: dict[str, str] = {}
_NAME = re.compile(r"^[a-z_]+\.[1-9][0-9]*$")


def exercise(
    name: str, *, alias: str | tuple[str, ...] = ()
) -> Callable[[Callable[[object], Feedback]], Callable[[object], Feedback]]:
    """Register a checker under ``name`` = ``"<lesson>.<n>"`` (e.g. ``"softmax.2"``), where
    ``<lesson>`` is the lesson module's name without its number (``l05_softmax`` → ``softmax``).

    ``alias``: former names that keep working (a notebook saved before a rename still checks).
    """
    former = (alias,) if isinstance(alias, str) else alias
    names = [name, *former]
    for each in names:
        if not _NAME.match(each):
            raise ValueError(f"exercise names look like 'softmax.2' (lesson, dot, number), got {each!r}")

    def register(checker: Callable[[object], Feedback]) -> Callable[[object], Feedback]:
        for each in names:
            if each in _REGISTRY and _REGISTRY[each] is not checker:
                raise ValueError(f"exercise {each!r} is registered twice")
            _REGISTRY[each] = checker
        for each in former:
            _ALIASES[each] = name
        return checker

    return register


def registry(*, aliases: bool = True) -> dict[str, Callable[[object], Feedback]]:
    """The checkers registered so far, by name (lesson modules register when imported).

    With ``aliases=False``, only the current names (each checker once).
    """
    return {n: c for n, c in _REGISTRY.items() if aliases or n not in _ALIASES}


def aliases() -> dict[str, str]:
    """Former exercise names and the names they now stand for, e.g. ``{"learning.1": "attention_learns.1"}``."""
    return dict(_ALIASES)


# ---------------------------------------------------------------- turning answers into tensors
Wrong = tuple[Tensor, str] | tuple[Tensor, str, str | None]  # a mistake id of None: as if none were given


def _missing(answer: object) -> bool:
    return answer is None or answer is Ellipsis


def _kind(answer: object) -> str:
    if isinstance(answer, str):
        return f"text ({answer[:30]!r})"
    if callable(answer):
        return "a function; call it and give its result" if not isinstance(answer, type) else "a class"
    return type(answer).__name__


def to_answer_tensor(answer: object, name: str) -> Tensor | Feedback:
    """``answer`` as a float64 tensor (no gradient), or a :class:`Feedback` saying why it is not one."""
    if _missing(answer):
        return Feedback(False, f"Replace the ... with {name}, then run the cell again.", tried=False)
    if isinstance(answer, str | bytes | dict | set | frozenset) or callable(answer):
        return Feedback(False, f"{name} should be a tensor or a nested list of numbers, not {_kind(answer)}.")
    if isinstance(answer, Tensor):
        if answer.numel() > MAX_ANSWER_NUMBERS:
            return Feedback(False, f"{name} has {answer.numel():,} numbers, shape {tuple(answer.shape)}: far too many.")
        if answer.is_complex():
            return Feedback(False, f"{name} has complex numbers; attention works with real numbers.")
        if answer.layout != torch.strided:
            answer = answer.to_dense()
        if answer.device.type == "meta":
            return Feedback(False, f"{name} is a tensor without data (device 'meta').")
        got = answer.detach().to(device="cpu", dtype=torch.float64)
    else:
        try:
            got = torch.as_tensor(answer, dtype=torch.float64)
        except (TypeError, ValueError, RuntimeError, OverflowError) as exc:
            reason = str(exc).split("\n")[0][:120]
            return Feedback(
                False, f"{name} should be a tensor or a nested list of numbers of equal lengths ({reason})."
            )
        if got.numel() > MAX_ANSWER_NUMBERS:
            return Feedback(False, f"{name} has {got.numel():,} numbers, shape {tuple(got.shape)}: far too many.")
    if got.numel() and not bool(torch.isfinite(got).all()):
        bad = "NaN" if bool(torch.isnan(got).any()) else "inf"
        return Feedback(
            False,
            f"{name} contains {bad}. A NaN often comes from a row whose every score is -inf "
            "(nothing to normalise) or from 0 × inf; an inf from exp of a large score.",
        )
    return got


def _split(wrong: Wrong) -> tuple[Tensor, str, str | None]:
    candidate, hint, *rest = wrong
    return candidate, hint, (rest[0] if rest else None)


def compare_tensor(
    answer: object,
    expected: Tensor,
    *,
    name: str,
    wrong: Sequence[Wrong] = (),
    atol: float = 1e-3,
    success: str = "",
) -> Feedback:
    """Compare ``answer`` with ``expected`` (tolerance ``atol``), hinting on known wrong answers.

    Args:
        answer: the learner's tensor, array or nested list (``None``/``...`` = not answered yet).
        expected: the right answer, computed by attnlib.
        name: what the answer is, for the messages ("the scores of Input 1").
        wrong: ``(typical wrong answer, hint)`` or ``(…, hint, mistake id)``, tried in order.
        success: extra sentence for a right answer.
    """
    got = to_answer_tensor(answer, name)
    if isinstance(got, Feedback):
        return got
    want = expected.detach().to(torch.float64)

    def known_mistake() -> Feedback | None:
        for candidate, hint, mistake in map(_split, wrong):
            c = candidate.detach().to(torch.float64)
            if c.shape == got.shape and torch.allclose(got, c, atol=atol, rtol=0, equal_nan=True):
                return Feedback(False, hint, mistake)
        return None

    if got.shape != want.shape:
        found = known_mistake()
        if found is not None:
            return found
        if got.dim() == 2 and got.shape == want.shape[::-1] and got.shape[0] != got.shape[1]:
            return Feedback(
                False,
                f"{name} has shape {tuple(got.shape)}: it looks transposed; expected {tuple(want.shape)}.",
                "transposed",
            )
        return Feedback(False, f"{name} should have shape {tuple(want.shape)}, yours has {tuple(got.shape)}.")
    if torch.allclose(got, want, atol=atol, rtol=0):
        return Feedback(True, (f"That is {name}. " + success).strip())
    found = known_mistake()
    if found is not None:
        return found
    diff = (got - want).abs()
    idx = tuple(int(i) for i in torch.nonzero(diff == diff.max())[0])
    where = f" at index {list(idx)}" if idx else ""
    return Feedback(False, f"{name} is off by up to {float(diff.max()):.4g}{where}; check that entry by hand.")


def compare_number(
    answer: object,
    expected: float,
    *,
    name: str,
    wrong: Sequence[tuple[float, str] | tuple[float, str, str]] = (),
    tol: float = 1e-3,
) -> Feedback:
    """Like :func:`compare_tensor` for a single number (a one-element tensor counts as a number)."""
    if _missing(answer):
        return Feedback(False, f"Replace the ... with {name}, then run the cell again.", tried=False)
    if isinstance(answer, Tensor):
        if answer.numel() != 1 or answer.is_complex():
            return Feedback(False, f"{name} should be one number, got a tensor of shape {tuple(answer.shape)}.")
        answer = answer.detach().item()
    if isinstance(answer, str):
        return Feedback(False, f"{name} should be a number, not the text {answer[:20]!r}: remove the quotes.")
    if isinstance(answer, bool) or not hasattr(answer, "__float__"):
        return Feedback(False, f"{name} should be a number, got {_kind(answer)}.")
    try:
        got = float(answer)
    except (TypeError, ValueError, OverflowError):
        return Feedback(False, f"{name} should be a number, got {_kind(answer)}.")
    if not math.isfinite(got):
        return Feedback(False, f"{name} should be a finite number, got {got}.")
    if math.isclose(got, expected, abs_tol=tol):
        return Feedback(True, f"That is {name}.")
    for candidate, hint, *mistake in wrong:
        if math.isclose(got, candidate, abs_tol=tol):
            return Feedback(False, hint, mistake[0] if mistake else None)
    if 0 < abs(expected) < 1 and abs(got) > 1 and math.isclose(got, 100 * expected, abs_tol=100 * tol):
        return Feedback(
            False,
            f"{name} is asked as a fraction between 0 and 1, not as a percentage: {got:g} % is {got / 100:g}.",
        )
    return Feedback(False, f"{name} is not {got:g}; recompute it step by step.")


def run_learner_code(
    function: object,
    *args: object,
    name: str,
    write_it: Sequence[object] = (),
    allowed: Sequence[Callable[..., object]] = (),
    on_error: Callable[[Exception], Feedback | None] | None = None,
) -> object:
    """Call the learner's ``function(*args)``; return its result, or a :class:`Feedback` if it failed.

    ``name`` says what the function should be ("your softmax"). A missing answer, something that
    is not callable, a result of ``None`` (the body still ``...``) and any exception the learner's
    code raises become a sentence. ``write_it`` lists what does the step the learner is asked to
    write: library functions (attnlib's ``softmax``, ``torch.softmax`` …) and :class:`TorchFamily`
    groups of torch functions (:data:`SOFTMAX_FAMILY`: every softmax, log-softmax, logsumexp and
    fused attention of torch). An exercise with a ``write_it`` also refuses every call into attnlib
    itself: its public functions, its private helpers and the lessons' reference solutions
    (``attnlib.lessons.l09_module._reference`` …); only the methods of attnlib objects the checker
    hands the function (a model's ``forward`` and its parts) stay callable, unless ``write_it`` names
    them, and the attnlib functions ``allowed`` names (an earlier step the exercise builds on, e.g. 5.3's
    ``softmax``). An answer that is one of them, calls one, or hands its work to a thread is refused kindly,
    naming what it called. ``on_error`` turns an exception of the learner's code into a
    targeted hint (return ``None`` to fall back to the general sentence, which names the shapes).
    """
    if _missing(function):
        return Feedback(False, f"Replace the ... with {name}, then run the cell again.", tried=False)
    if not callable(function):
        return Feedback(False, f"{name} should be a function (def … or lambda …), not {_kind(function)}.")
    watch = _LibraryWatch(write_it, given=(function, *args), allowed=allowed)
    handed_in = watch.handed_in(function)
    if handed_in:
        return library_feedback(name, handed_in)
    try:
        with watch:
            result = function(*args)
    except Exception as exc:  # the learner's code may fail in any way: report it, do not raise
        if watch.used:  # it failed inside the library function it should not have called
            return library_feedback(name, watch.used)
        hint = on_error(exc) if on_error is not None else None
        if hint is not None:
            return hint
        return _error_feedback(name, exc, args)
    if watch.used:
        return library_feedback(name, watch.used)
    if result is None:
        return Feedback(
            False, f"{name} returned None: replace the ... in its body with the computation and return it.", tried=False
        )
    return result


def _shape_of(arg: object) -> str:
    if isinstance(arg, Tensor):
        return f"a {'×'.join(map(str, arg.shape)) or 'scalar'} tensor"
    if isinstance(arg, int | float):
        return repr(arg)
    return type(arg).__name__


def _error_feedback(name: str, exc: Exception, args: Sequence[object]) -> Feedback:
    """The sentence for an exception of the learner's code: what it was given, what went wrong, where to look."""
    message = str(exc).split("\n")[0][:160]
    given = ", ".join(_shape_of(a) for a in args)
    said = f"{name} raised {type(exc).__name__} on new inputs ({given}): {message}"
    if isinstance(exc, RuntimeError | IndexError | ValueError) and any(isinstance(a, Tensor) for a in args):
        said += (
            ". Write down the shape of every intermediate tensor: A @ B needs A's last size to equal B's first, "
            "and an elementwise operation needs sizes that are equal or 1 (keepdim=True keeps a reduced axis as 1)."
        )
    return Feedback(False, said)


def library_feedback(name: str, used: str) -> Feedback:
    """The kind refusal of an answer that hands the exercise's work to ``used`` (a library function, named)."""
    if used.startswith("attnlib."):  # a helper or a reference solution of the course's own library
        return Feedback(
            False,
            f"{name} hands the work to {used}, which is the very thing this exercise asks you to write: in a "
            '"write it" exercise no function of attnlib may do any of the work. Build it from torch\'s operations '
            "(@, .mT, einsum, sum, exp, view, transpose …) instead; attnlib's version is what your answer is "
            "checked against.",
            "library-function",
        )
    return Feedback(
        False,
        f"{name} hands the work to {used}, which is the very thing this exercise asks you to write. "
        "Build it from the lesson's operations instead; the library's version is what your answer is "
        "checked against.",
        "library-function",
    )


@dataclass(frozen=True)
class TorchFamily:
    """The torch functions whose name contains one of ``fragments`` (e.g. ``"softmax"``: ``torch.softmax``,
    ``torch.special.log_softmax``, ``torch._softmax``, ``torch.sparse.softmax``, ``Tensor.softmax`` …).

    They are recognised by name when called, through torch's public ``__torch_function__`` protocol
    (:class:`torch.overrides.TorchFunctionMode`), so every spelling of the same operation is caught.
    """

    what: str
    fragments: tuple[str, ...]

    def matches(self, name: str) -> bool:
        return any(fragment in name for fragment in self.fragments)


#: Everything in torch that computes a softmax, or hands over its stabilisation or a whole attention.
SOFTMAX_FAMILY = TorchFamily(
    "a softmax of torch's",
    ("softmax", "softmin", "logsumexp", "logcumsumexp", "scaled_dot_product", "multi_head_attention", "_transformer"),
)
#: torch's fused attention: a whole attention (or its weights) in one call.
ATTENTION_FAMILY = TorchFamily(
    "torch's fused attention", ("scaled_dot_product", "multi_head_attention", "_transformer")
)

#: In ``write_it``: every function of the course's library. Any ``write_it`` refuses attnlib as a whole now
#: (public functions, private helpers, the lessons' reference solutions); the name stays for the lessons.
ATTNLIB = "attnlib"

_PACKAGE = Path(__file__).resolve().parent.parent  # attnlib/
#: the exercise machinery itself (this file, compare_call, check): runs around the learner's code, hands in nothing
_MACHINERY = frozenset(
    str(Path(__file__).resolve().parent / name) for name in ("_check.py", "_calls.py", "__init__.py")
)


def _codes_within(code: CodeType) -> Iterator[CodeType]:
    """``code`` and the code of every comprehension and function defined within it."""
    yield code
    for constant in code.co_consts:
        if isinstance(constant, CodeType):
            yield from _codes_within(constant)


#: the machinery's part that lives in the maths core: the torch-function mode under the watches (attnlib.cost),
#: whose methods run around every torch call the learner's code makes while a watch is active
_MACHINERY_CODES = frozenset(
    inner
    for name in ("__torch_function__", "called", "returned")
    for inner in _codes_within(getattr(TorchCalls, name).__code__)
)


def _label(function: object) -> str:
    module = getattr(function, "__module__", None) or "torch"
    if module.split(".")[0] == "attnlib":  # the course's own: its dotted place, attnlib.tiled.tiled_attention
        return f"{module}.{getattr(function, '__qualname__', getattr(function, '__name__', 'function'))}"
    return f"{module.split('.')[0]}'s {getattr(function, '__name__', 'function')}"


def _attnlib_name(code: object) -> str:
    """``attnlib.lessons.l09_module._reference`` for the code of that function (its dotted place in the package)."""
    path = Path(getattr(code, "co_filename", "")).resolve()
    parts = path.relative_to(_PACKAGE.parent).with_suffix("").parts
    module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
    return f"{module}.{getattr(code, 'co_qualname', getattr(code, 'co_name', 'function'))}"


def _in_attnlib(code: object) -> bool:
    """Whether ``code`` is attnlib's own (maths, views, lessons' helpers and references), not the exercise machinery."""
    filename = getattr(code, "co_filename", "")
    return bool(filename) and code not in _MACHINERY_CODES and _attnlib_file(filename)


@functools.lru_cache(maxsize=4096)
def _attnlib_file(filename: str) -> bool:
    try:
        path = Path(filename).resolve()
    except (OSError, RuntimeError, ValueError):
        return False
    return _PACKAGE in path.parents and str(path) not in _MACHINERY


def _is_decorator(code: object) -> bool:
    """Whether ``code`` is torch's wrapper of a decorated function (``@torch.no_grad()``): not a caller of its own."""
    return getattr(code, "co_filename", "").endswith(("torch/utils/_contextlib.py", "/contextlib.py"))


def _filled(cell: object) -> bool:
    try:
        return cell.cell_contents is not _EMPTY  # type: ignore[attr-defined]
    except ValueError:  # an empty cell
        return False


_EMPTY = object()


def _is_glue(code: object) -> bool:
    """Whether ``code`` is a checker's own adapter around the learner's code (a lambda or a local function of a
    lesson's module, e.g. ``lambda x, mask: block(x, mask=mask)``): run by the checker, it hands in nothing."""
    filename = getattr(code, "co_filename", "")
    return _in_attnlib(code) and "<locals>" in getattr(code, "co_qualname", "") and "/lessons/" in filename


def _shipped_codes() -> frozenset[object]:
    """The code of the typical wrong answers the lesson ships in ``wrong_answers()`` for the exercise being checked
    (for the tests of its hints): wrong there by construction, each hands in nothing and may use its lesson's helpers
    like a learner's slip would. A slip listed for another exercise is not spared (it may be right here). Read before
    the learner's code runs, never inside the watch."""
    exercise_name = CHECKING.get()
    checker = _REGISTRY.get(exercise_name) if exercise_name else None
    module = sys.modules.get(getattr(checker, "__module__", ""))
    filename = getattr(module, "__file__", None)
    if exercise_name is None or not filename:
        return frozenset()
    return _wrong_answer_codes(filename, exercise_name)


#: the exercise :func:`attnlib.lessons.check` is checking (set there), for :func:`_shipped_codes`
CHECKING: contextvars.ContextVar[str | None] = contextvars.ContextVar("checking", default=None)


@functools.lru_cache(maxsize=256)
def _wrong_answer_codes(filename: str, exercise_name: str) -> frozenset[object]:
    """The code of every function a lesson's ``wrong_answers()`` lists for ``exercise_name``, read once."""
    module = next((m for m in list(sys.modules.values()) if getattr(m, "__file__", None) == filename), None)
    listed = getattr(module, "wrong_answers", None)
    if not callable(listed):
        return frozenset()
    try:
        answers = listed().get(exercise_name, [])
    except Exception:  # a lesson's list that cannot be built spares nothing
        return frozenset()
    codes = set()
    for each in answers:
        function = each[0]
        while isinstance(function, functools.partial):
            function = function.func
        parts = (
            list(vars(function).values()) if isinstance(function, type) else [function]
        )  # a slip's class: its methods
        for part in parts:
            code = getattr(inspect.unwrap(part), "__code__", None) if callable(part) else None
            if code is not None:
                codes.add(code)
    return frozenset(codes)


def _methods_of(given: Sequence[object]) -> set[object]:
    """The code of every attnlib-defined method of the attnlib objects in ``given`` (and of a module's parts):
    a checker that hands the learner a model lets them call it."""
    handed: list[object] = []
    for each in given:
        handed.append(getattr(each, "__self__", each))  # a bound method: its object
        if _is_glue(getattr(each, "__code__", None)):  # a checker's adapter: what it closes over is handed in
            handed.extend(cell.cell_contents for cell in getattr(each, "__closure__", None) or () if _filled(cell))
    objects: list[object] = []
    for each in handed:
        objects.append(each)
        if isinstance(each, torch.nn.Module):
            objects.extend(each.modules())
    codes: set[object] = set()
    seen: set[type] = set()
    for obj in objects:
        for cls in type(obj).__mro__:
            if cls in seen or not (getattr(cls, "__module__", "") or "").startswith("attnlib"):
                continue
            seen.add(cls)
            for value in vars(cls).values():
                for part in (value, getattr(value, "fget", None), getattr(value, "__func__", None)):
                    code = getattr(inspect.unwrap(part), "__code__", None) if callable(part) else None
                    if code is not None:
                        codes.add(code)
    return codes


_COURSE_CODE: contextvars.ContextVar[bool] = contextvars.ContextVar("course_code", default=False)


@contextlib.contextmanager
def course_code() -> Iterator[None]:
    """Within it, :func:`run_learner_code` runs the course's own code (a checker's reference or its typical slip,
    put through the same path as the learner's answer): attnlib as a whole is not refused, only ``write_it``'s
    named functions."""
    token = _COURSE_CODE.set(True)
    try:
        yield
    finally:
        _COURSE_CODE.reset(token)


class TensorWork(TorchCalls):
    """While active, counts the numbers torch computes: :attr:`numbers`, the elements of every tensor a torch
    function returns. A derivation does a fixed amount of work; finite differences evaluate the forward pass
    once or twice per input entry, and so compute many times more (exercise 11.5 refuses them by this count).
    """

    def __init__(self) -> None:
        super().__init__()
        self.numbers = 0

    def returned(self, tensors: list[Tensor]) -> None:
        self.numbers += sum(each.numel() for each in tensors)


class _TorchWatch(TorchCalls):
    """Notes the first call of a torch function of one of ``families`` (by name)."""

    def __init__(self, families: Sequence[TorchFamily], found: Callable[[str], None]) -> None:
        super().__init__()
        self.families, self.found = families, found

    def called(self, func: Callable[..., Any]) -> None:
        name = getattr(func, "__name__", "") or ""
        if any(family.matches(name) for family in self.families):
            self.found(f"torch's {name.split('.')[0]}")


class _LibraryWatch:
    """While active, notes whether any of ``functions`` is called: directly, through a lambda or a
    ``functools.partial``, as the tensor method of the same name (``x.softmax``), as a member of a
    :class:`TorchFamily`, as any function of ``attnlib`` (if the package is listed), or in a thread
    the learner's code starts (any thread counts: the step runs in the function itself)."""

    def __init__(
        self,
        functions: Sequence[object],
        *,
        given: Sequence[object] = (),
        allowed: Sequence[Callable[..., object]] = (),
    ):
        # a "write it" exercise: nothing of attnlib may do the work (unless the course runs its own reference)
        self.attnlib = bool(functions) and not _COURSE_CODE.get()
        self.allowed = _methods_of(given) if self.attnlib else set()
        self.allowed |= {inspect.unwrap(f).__code__ for f in allowed if hasattr(inspect.unwrap(f), "__code__")}
        self.families = [f for f in functions if isinstance(f, TorchFamily)]
        callables = [f for f in functions if callable(f) and not isinstance(f, TorchFamily)]
        # the wrapped function's code: a decorator (``@torch.no_grad()``) shares one wrapper among all it decorates
        self.codes = {inspect.unwrap(f).__code__: f for f in callables if hasattr(inspect.unwrap(f), "__code__")}
        self.builtins = {f: f for f in callables if not hasattr(f, "__code__")}
        self.method_names = {getattr(f, "__name__", None): f for f in self.builtins}
        self.used: str | None = None
        self.glue: object = None  # the checker's adapter the learner's code runs in, if any
        self.shipped: frozenset[object] = frozenset()  # the lesson's listed slips for this exercise, if handed in
        self._previous: Callable[..., object] | None = None  # what sys.getprofile() returned
        self._torch: contextlib.ExitStack | None = None  # holds the _TorchWatch while active

    @property
    def active(self) -> bool:
        return bool(self.codes or self.builtins or self.families or self.attnlib)

    def handed_in(self, function: object) -> str | None:
        """The label of the library function ``function`` is (or wraps with ``functools.partial``)."""
        while isinstance(function, functools.partial):
            function = function.func
        if callable(function) and getattr(inspect.unwrap(function), "__code__", None) in self.codes:
            return _label(function)
        if any(function is f for f in self.builtins):
            return _label(function)
        name = getattr(function, "__name__", "") or ""
        if self.families and not hasattr(function, "__code__") and any(f.matches(name) for f in self.families):
            return _label(function)
        code = getattr(inspect.unwrap(function), "__code__", None) if callable(function) else None
        if self.attnlib and (_in_attnlib(code) or (getattr(function, "__module__", "") or "").startswith("attnlib")):
            self.shipped = _shipped_codes()  # handed attnlib's own code: perhaps one of the lesson's listed slips
        if self.attnlib and code in self.shipped:
            return None
        if self.attnlib and _is_glue(code):
            self.glue = code  # the checker's adapter: the learner's code runs inside it
            return None
        if self.attnlib and _in_attnlib(code) and code not in self.allowed:
            return _attnlib_name(code)
        return None

    def _attnlib_caller(self, back: object, code: object) -> bool:
        """Whether the caller ``back`` (a frame) is attnlib's own code, so ``code`` is the library at work. A lesson's
        shipped slip counts as the learner's code when it calls the core (a library cheat it demonstrates) but may
        use its lesson's helpers (which build the slip)."""
        while back is not None and _is_decorator(getattr(back, "f_code", None)):  # @torch.no_grad() and the like
            back = back.f_back  # type: ignore[attr-defined]
        caller = getattr(back, "f_code", None)
        if caller is None or not _in_attnlib(caller):
            return False
        if caller in self.shipped and "/lessons/" not in getattr(code, "co_filename", ""):
            return False
        return True

    def _note(self, label: str) -> None:
        if self.used is None:
            self.used = label

    def _profile(self, frame: FrameType, event: str, arg: Any) -> None:  # sys.setprofile's signature
        if self.used is not None:
            return
        if event == "call":
            code = frame.f_code
            if code in self.codes:
                self._note(_label(self.codes[code]))
            elif code is _THREAD_START:
                self._note("a thread it starts (write the step in the function itself)")
            elif (
                self.attnlib
                and code not in self.allowed
                and code is not self.glue
                and _in_attnlib(code)
                and not self._attnlib_caller(frame.f_back, code)
                and code not in self.shipped
            ):
                self._note(_attnlib_name(code))
        elif event == "c_call":
            if any(arg is f for f in self.builtins):
                self._note(_label(arg))
            elif arg in _THREAD_BUILTINS:
                self._note("a thread it starts (write the step in the function itself)")
            elif isinstance(getattr(arg, "__self__", None), Tensor) and arg.__name__ in self.method_names:
                self._note(f"the tensor method .{arg.__name__}()")

    def __enter__(self) -> _LibraryWatch:
        if not self.active:  # nothing to hand the work to: no watch (and no thread is suspect)
            return self
        self._previous = sys.getprofile()
        sys.setprofile(self._profile)
        if self.families:
            self._torch = contextlib.ExitStack()
            self._torch.enter_context(_TorchWatch(self.families, self._note))
        return self

    def __exit__(self, *exc: object) -> None:
        if self._torch is not None:
            self._torch.close()
            self._torch = None
        if self.active:
            sys.setprofile(self._previous)


_THREAD_START = threading.Thread.start.__code__
_THREAD_BUILTINS = tuple(
    f for f in (getattr(_thread, "start_new_thread", None), getattr(_thread, "start_joinable_thread", None)) if f
)
