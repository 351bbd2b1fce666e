"""No exercise is passed without the work: every exercise (all lessons, over :func:`exercises`) is handed

- every callable of torch's softmax family, of ``torch.special``, of ``torch.nn.functional`` and every
  public function of attnlib, each as the answer itself and adapted to the exercise's signature (its
  arguments forwarded, with ``dim=-1``, through ``.exp()`` of a log-softmax, the ``logsumexp`` form, with
  an identity matrix as keys and values, as self-attention ``f(x, x, x)``, or run in a worker thread);
- every private helper of attnlib's modules (``attnlib.steps._…``) and every function of the lessons' modules,
  the reference solutions among them (``attnlib.lessons.l09_module._reference``,
  ``l13_attention_learns._reference_step`` …), as the answer itself and with its arguments forwarded;
- every number and every tensor its own lesson prints (read from the notebook's stored outputs),
  percentages also as fractions (bare one-digit integers left out: ids, indices and head counts are on
  every page, and an exercise whose answer is one is tested by its own checker tests);

and none may be accepted.
"""

from __future__ import annotations

import ast
import contextlib
import copy
import importlib
import inspect
import io
import json
import math
import pkgutil
import re
import threading
import warnings
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

import attnlib
import attnlib.lessons
from attnlib.lessons import check, exercises, lesson_module

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"

#: would write files, open servers or train for minutes whatever they are given; none computes an answer
NOT_TRIED = {"save_checkpoint", "median_seconds", "train_recipe", "main", "launch", "serve", "build"}
#: attnlib's modules that draw, launch or hold lessons' explorers: no maths to hand in
NOT_MATHS = {"show", "lessons", "launch", "checkpoints"}


def _public(module, prefix: str) -> dict[str, object]:
    names = getattr(module, "__all__", None) or [n for n in dir(module) if not n.startswith("_")]
    found = {}
    for name in names:
        value = getattr(module, name, None)
        if callable(value) and not isinstance(value, type | type(torch)) and name not in NOT_TRIED:
            found[f"{prefix}.{name}"] = value
    return found


def _candidates() -> dict[str, object]:
    found: dict[str, object] = {
        "torch.softmax": torch.softmax,
        "torch.log_softmax": torch.log_softmax,
        "torch._softmax": lambda x, dim=-1: torch._softmax(x, dim, False),
        "torch._log_softmax": lambda x, dim=-1: torch._log_softmax(x, dim, False),
        "torch.logsumexp": torch.logsumexp,
        "torch.logcumsumexp": torch.logcumsumexp,
        "torch.sparse.softmax": lambda x, dim=-1: torch.sparse.softmax(x.to_sparse(), dim).to_dense(),
        "torch.sparse.log_softmax": lambda x, dim=-1: torch.sparse.log_softmax(x.to_sparse(), dim).to_dense(),
        "torch.Tensor.softmax": torch.Tensor.softmax,
        "torch.nn.Softmax": torch.nn.Softmax(dim=-1),
        "torch.ops.aten._softmax": lambda x, dim=-1: torch.ops.aten._softmax(x, dim, False),
    }
    found.update(_public(torch.special, "torch.special"))
    found.update(_public(F, "F"))
    found.update(_public(attnlib, "attnlib"))
    for info in pkgutil.iter_modules(attnlib.__path__):
        if info.name in NOT_MATHS or info.name.startswith("_"):
            continue
        module = importlib.import_module(f"attnlib.{info.name}")
        for label, value in _public(module, f"attnlib.{info.name}").items():
            if getattr(value, "__module__", "").startswith("attnlib"):
                found[label] = value
    return found


CANDIDATES = _candidates()

#: the lessons' functions that train, time or draw whatever they are given: none computes an exercise's answer
SLOW = (
    "train",
    "bench",
    "median",
    "launch",
    "serve",
    "save",
    "main",
    "build",
    "figure",
    "png",
    "yours_or",
    "reverse_model",
    "pick_yours",
)


def _private_and_references() -> dict[str, object]:
    """attnlib's private helpers and every function of the lessons' modules (their references and helpers),
    the checkers left out (a checker handed to itself only returns a verdict)."""
    from attnlib.lessons._check import registry

    attnlib.lessons.exercises()  # every lesson module imported: its checkers registered
    checkers = {id(checker) for checker in registry().values()}
    found: dict[str, object] = {}
    modules = [info.name for info in pkgutil.iter_modules(attnlib.__path__) if info.name not in NOT_MATHS]
    modules += [f"lessons.{name}" for name in attnlib.lessons.MODULES]
    for short in modules:
        module = importlib.import_module(f"attnlib.{short}")
        lesson = short.startswith("lessons.")
        for name, value in vars(module).items():
            if name.startswith("__") or any(word in name.lower() for word in SLOW) or id(value) in checkers:
                continue
            if not (lesson or name.startswith("_")):
                continue  # the public ones are CANDIDATES already
            if inspect.isfunction(value) and value.__module__ == module.__name__:
                found[f"attnlib.{short}.{name}"] = value
    return found


REFERENCES = _private_and_references()


def _first_tensor(args):
    return next((a for a in args if isinstance(a, torch.Tensor)), None)


def _in_thread(function):
    def threaded(*args):
        out = []

        def work():
            with contextlib.suppress(Exception):
                out.append(function(*args))

        worker = threading.Thread(target=work)
        worker.start()
        worker.join()
        return out[0] if out else None

    return threaded


def _adapted(function) -> dict[str, object]:
    """``function`` as it could be handed to an exercise, by form."""

    def identity(*args):
        x = _first_tensor(args)
        eye = torch.eye(x.shape[-1], dtype=x.dtype)
        rest = [a for a in args if a is not x]
        try:
            return function(x, eye, eye, *rest, scale=1.0)
        except TypeError:
            return function(x, eye, *rest, scale=1.0)

    def masked_identity(x, mask, *rest):
        eye = torch.eye(x.shape[-1], dtype=x.dtype)
        try:
            return function(x, eye, mask=mask, scale=1.0)
        except TypeError:
            return function(x[None], eye[None], eye[None], attn_mask=mask[None], scale=1.0)[0]

    def stabilised(x, *rest):
        return torch.exp(x - function(x, -1, keepdim=True))

    return {
        "itself": function,
        "forwarded": lambda *a: function(*a),
        "dim=-1": lambda *a: function(*a, dim=-1),
        "exp(f(x, -1))": lambda *a: function(*a, -1).exp(),
        "exp(x - f(x, -1, keepdim=True))": stabilised,
        "identity keys and values": identity,
        "identity with the mask": masked_identity,
        "self-attention f(x, x, x)": lambda x, *rest: function(x, x, x, *rest, scale=1.0),
        "in a worker thread": _in_thread(lambda *a: function(*a, -1) if len(a) == 1 else function(*a)),
    }


# ---------------------------------------------------------------- the lessons' printed numbers
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:[.,]\d+)*(?:[eE][-+]?\d+)?(%?)")


def _notebook(lesson: str) -> Path | None:
    module = lesson_module(lesson).__name__.rsplit(".", 1)[-1]  # l05_softmax
    found = sorted(NOTEBOOKS.glob(f"*_{module[4:]}.ipynb"))
    return found[0] if found else None


def _output_texts(path: Path) -> list[str]:
    texts = []
    for cell in json.loads(path.read_text())["cells"]:
        for output in cell.get("outputs", []):
            texts.append("".join(output.get("text", "")))
            for kind in ("text/plain", "text/html", "text/markdown"):
                value = output.get("data", {}).get(kind, "")
                texts.append("".join(value) if isinstance(value, list) else value)
    return [t for t in texts if t]


def _tensors(text: str) -> list[object]:
    """The nested lists of every ``tensor([...])`` / ``[[...]]`` literal printed in ``text``."""
    found = []
    for start in [m.end() - 1 for m in re.finditer(r"tensor\(\[|(?<!\[)\[\[", text)]:
        depth = 0
        for end in range(start, len(text)):
            depth += {"[": 1, "]": -1}.get(text[end], 0)
            if depth == 0:
                literal = re.sub(r"\s+", " ", text[start : end + 1]).replace("nan", "0").replace("inf", "0")
                with contextlib.suppress(ValueError, SyntaxError, MemoryError, RecursionError):
                    found.append(ast.literal_eval(literal))
                break
    return found


def printed_answers(lesson: str) -> list[object]:
    """Every number (a percentage also as a fraction) and every tensor literal the lesson's outputs show."""
    path = _notebook(lesson)
    if path is None:
        return []
    numbers: set[float] = set()
    tensors: list[object] = []
    for text in _output_texts(path):
        for match in _NUMBER.finditer(text):
            raw = match.group(0).rstrip("%").replace(",", "")
            with contextlib.suppress(ValueError):
                value = float(raw)
                if raw.lstrip("-").isdigit() and abs(value) < 10 and not match.group(1):
                    continue  # a bare digit (an id, an index, a count of heads) is on every page, not a result
                numbers.add(value)
                if match.group(1):
                    numbers.add(value / 100)
        tensors.extend(_tensors(text))
    numbers |= {int(n) for n in numbers if math.isfinite(n) and abs(n) < 1e15 and n == int(n)}
    return sorted(numbers) + tensors


# ---------------------------------------------------------------- the cases
#: exercises of the lessons being rewritten (13, 14, 16) that some candidate passes today
def _cases():
    for name in exercises():
        yield pytest.param(name, id=name)


class _Recorded(Exception):
    """Raised by :func:`_first_call` once it has the arguments a checker hands the learner's function."""


def _first_call(name: str) -> tuple | None:
    """The arguments ``name``'s checker passes to a learner's function first (None: it calls none)."""
    seen: list[tuple] = []

    def recorder(*args):
        seen.append(args)
        raise _Recorded

    check(name, recorder)
    return seen[0] if seen else None


def _fails_first(form, args: tuple) -> bool:
    """Whether ``form`` raises on the checker's first arguments: then the checker refuses it, whatever it is."""
    try:
        form(*copy.deepcopy(args))
    except Exception:
        return True
    return False


class _Bound(BaseException):
    """Raised by a probe (:func:`_probe`) once its arguments bind: the function's body would run next. A
    BaseException, so that no form's ``except TypeError`` or ``except Exception`` takes it for a failure."""


#: the name a probe's default values and its raise use (no parameter of attnlib or torch is called so)
_PROBE_NAMES = {"_fuzz_default_": None, "_fuzz_bound_": _Bound}


def _probe(function) -> object | None:
    """For a Python function: a function with the same parameters (names, kinds, which have defaults) whose body
    only raises :class:`_Bound`. Python binds a call's arguments before the body runs, so a form of the probe
    raises an exception before ``_Bound`` exactly when that form of ``function`` raises before ``function``'s
    body runs (its arguments do not bind, or the form's own code fails): nothing of the arguments was touched,
    and no copy of them is needed to know it. None for builtins and callable objects (no parameters to copy)."""
    if not inspect.isfunction(function) or "__signature__" in vars(function):
        return None
    signature = inspect.signature(function, follow_wrapped=False)
    if set(_PROBE_NAMES) & set(signature.parameters):
        return None
    parameters = [
        p.replace(annotation=p.empty, default=p.empty if p.default is p.empty else _ProbeDefault())
        for p in signature.parameters.values()
    ]
    namespace = dict(_PROBE_NAMES)
    exec(
        f"def probe{signature.replace(parameters=parameters, return_annotation=signature.empty)}:\n"
        "    raise _fuzz_bound_\n",
        namespace,
    )
    return namespace["probe"]


class _ProbeDefault:
    def __repr__(self) -> str:
        return "_fuzz_default_"


def _refused_before_the_body(probe_form, args: tuple) -> bool:
    """Whether the form of a probe (:func:`_probe`) raises before the probed function's body would run."""
    try:
        probe_form(*args)
    except _Bound:
        return False
    except Exception:
        return True
    return False


def _forwarding(function):
    def forwarded(*args):
        return function(*args)

    return forwarded


#: the probe of every candidate and reference that is a Python function (:func:`_probe`), by label
PROBES = {label: _probe(function) for label, function in {**CANDIDATES, **REFERENCES}.items()}


def _fails(form: str, answer, probe, args: tuple, fails: dict[str, bool], copyable: bool) -> bool:
    """:func:`_fails_first` of ``answer``, the form ``form`` of one function, with the same verdict for less work:

    - "forwarded" (``lambda *a: function(*a)``) makes the very call "itself" makes: "itself"'s verdict is reused;
    - "in a worker thread" never raises (the thread keeps the exception and the form returns None), so it fails
      first only where copying the arguments does (``copyable``, found once per exercise);
    - a form that raises before the function's body runs (its probe says so) fails first, without a deep copy of
      the arguments; only a form whose function would run gets the copy and the real call.
    """
    if form == "in a worker thread":
        return not copyable
    if form == "forwarded" and "itself" in fails:
        return fails["itself"]
    if probe is not None and _refused_before_the_body(probe, args):
        fails[form] = True
    else:
        fails[form] = _fails_first(answer, args)
    return fails[form]


def _accepted(name: str) -> tuple[list[str], int, int]:
    """The answers ``name`` accepts, how many were tried, and how many of those were handed to check().

    A form that raises on the arguments the checker passes first is refused without asking the checker
    (its first call would raise). An exercise that calls no function is handed each candidate's form once
    per type of object (it can only tell them apart by type without calling them).
    """
    accepted, tried, checked = [], 0, 0
    args = _first_call(name)
    copyable = args is not None and not _fails_first(lambda *a: None, args)
    kinds: set[type] = set()
    quiet = contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO())
    with warnings.catch_warnings(), quiet[0], quiet[1]:
        warnings.simplefilter("ignore")
        for label, function in CANDIDATES.items():
            probes = _adapted(PROBES[label]) if PROBES[label] is not None else {}
            fails: dict[str, bool] = {}
            for form, answer in _adapted(function).items():
                tried += 1
                if args is None:
                    if type(answer) in kinds:
                        continue
                    kinds.add(type(answer))
                elif _fails(form, answer, probes.get(form), args, fails, copyable):
                    continue
                checked += 1
                if check(name, answer).correct:
                    accepted.append(f"{label} ({form})")
        for label, function in REFERENCES.items():
            probe = PROBES[label]
            fails = {}
            for form, answer in (("itself", function), ("forwarded", _forwarding(function))):
                tried += 1
                if args is None:
                    if type(answer) in kinds:
                        continue
                    kinds.add(type(answer))
                elif _fails(form, answer, probe, args, fails, copyable):
                    continue
                checked += 1
                if check(name, answer).correct:
                    accepted.append(f"{label} ({form})")
        for value in printed_answers(name.split(".")[0]):
            tried += 1
            checked += 1
            if check(name, value).correct:
                accepted.append(f"the printed {str(value)[:60]}")
    return accepted, tried, checked


def test_the_candidates_cover_the_families():
    assert {"torch.special.softmax", "torch.special.logsumexp", "F.softmax", "F.scaled_dot_product_attention"} <= set(
        CANDIDATES
    )
    assert {"attnlib.steps.softmax", "attnlib.steps.attention_weights", "attnlib.bpe.learn_merges"} <= set(CANDIDATES)
    assert len(CANDIDATES) > 200
    assert len(exercises()) >= 50


def test_the_private_helpers_and_the_references_are_handed_in():
    assert {
        "attnlib.lessons.l09_module._reference",
        "attnlib.lessons.l11_multihead._without_head",
        "attnlib.lessons.l13_attention_learns._reference_step",
        "attnlib.lessons.l15_attention_at_scale._solution",
    } <= set(REFERENCES)
    assert any(label.startswith("attnlib.steps._") for label in REFERENCES)


def test_the_printed_numbers_are_read():
    printed = printed_answers("attention_at_scale")
    assert 4096 in printed and any(isinstance(p, list) for p in printed)


@pytest.mark.parametrize("name", list(_cases()))
def test_no_candidate_passes(name):
    accepted, tried, checked = _accepted(name)
    assert tried > len(CANDIDATES) and checked > 0
    assert not accepted, f"{name} accepts: {accepted[:12]}"
