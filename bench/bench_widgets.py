"""Live-view cost in the kernel: every lesson explorer displayed (its one widget model), one change at a time.

Each :class:`~attnlib.show.explorer.Explorer` subclass of ``attnlib.lessons`` is built as its lesson builds it and
displayed: its :class:`~attnlib.show.page.ExplorerWidget` exists, with its table of states. Each enumerable control
(``Explorer.control_grid``) then takes a few of its values in turn, two ways:

- **from the page**: the message the front end sends (``values``), handed to the widget's comm with its public
  ``handle_msg``, as the kernel gets it. A change the table covers is drawn by the page: the kernel only adopts
  it (no compute, nothing sent back); one it does not cover is computed and answered with one ``shown``.
- **from Python**: ``control.value = v``, as learner code or a test sets it; one message carries values and shown.

Timed from the message (or the assignment) until the kernel has handled it and its messages have left; the messages
it sends are counted at the comm (``comm.create_comm``, the hook a kernel sets: here nothing leaves).

Run: ``.venv/bin/python -m bench.bench_widgets [--changes N] [--json PATH]``.
Goal: ≤ 10 ms median per change.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import pkgutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import ClassVar

import comm
import comm.base_comm
import numpy as np

import attnlib.lessons
from attnlib.show.explorer import Explorer
from bench import results


def _pipeline() -> Explorer:
    from attnlib.lessons.pipeline import PipelineExplorer

    explorer = PipelineExplorer("003")  # the linked explorer on the 8-token sentence, as lesson 07
    explorer.controls["example"].disabled = True
    return explorer


def _training() -> Explorer:
    from attnlib import pretrained
    from attnlib.lessons.l13_attention_learns import TrainingExplorer

    recipe = pretrained.RECIPES["reverse"]
    model, history = pretrained.train_recipe(
        recipe, steps=40, snapshot_steps=(0, 20, 40), eval_every=20, progress=False
    )
    return TrainingExplorer(history, model, recipe.task, step=0)


def _heads() -> Explorer:
    from attnlib import pretrained
    from attnlib.lessons.l14_what_heads_learn import HeadsExplorer

    return HeadsExplorer(pretrained.load("induction"), [7, 21, 3, 44, 9, 12, 7, 21, 3, 44, 9, 12], layer=1)


def _referent() -> Explorer:
    from attnlib import pronouns
    from attnlib.lessons.l16_what_it_refers_to import ReferentExplorer

    return ReferentExplorer(pronouns.load(), " ".join(pronouns.example()))  # the lesson's sentence


def _writer() -> Explorer:
    import torch

    from attnlib import language
    from attnlib.lessons.l17_a_model_that_writes import WriterExplorer
    from attnlib.transformer import TinyTransformer

    vocabulary = language.Vocabulary(language.load_text("macbeth"))
    torch.manual_seed(0)  # the live model's shape; its weights do not change the cost of a change
    model = TinyTransformer(len(vocabulary), **language.WRITER["model"], causal=True)
    return WriterExplorer(model, vocabulary.characters, prompt="MACBETH.\n", temperature=0.7, top_k=5)


def _model_heads() -> Explorer:
    from attnlib.lessons.l18_inside_a_model import ModelHeadsExplorer, load_writer

    model, vocabulary = load_writer()
    return ModelHeadsExplorer(model, vocabulary.characters)


def _merges() -> Explorer:
    from attnlib.lessons.l19_where_next import MergesExplorer

    return MergesExplorer("low " * 5 + "lower " * 2 + "newest " * 6 + "widest " * 3, merges=0)


#: explorers whose lesson builds them with arguments (the rest with their defaults)
FACTORIES: dict[str, Callable[[], Explorer]] = {
    "PipelineExplorer": _pipeline,
    "TrainingExplorer": _training,
    "HeadsExplorer": _heads,
    "ReferentExplorer": _referent,
    "WriterExplorer": _writer,
    "ModelHeadsExplorer": _model_heads,
    "MergesExplorer": _merges,
}


def explorers() -> Iterator[type[Explorer]]:
    """Every Explorer subclass defined in a module of ``attnlib.lessons``."""
    for info in pkgutil.iter_modules(attnlib.lessons.__path__):
        module = importlib.import_module(f"attnlib.lessons.{info.name}")
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if issubclass(cls, Explorer) and cls is not Explorer and cls.__module__ == module.__name__:
                yield cls


def grid_values(explorer: Explorer) -> list[tuple[str, list[object]]]:
    """Each enumerable control's name and a few of its values (at most six, spread over its grid), ending with
    its current value."""
    plan = []
    for name, grid in explorer.control_grid().items():
        control = explorer.controls[name]
        if control.disabled or len(grid) < 2:
            continue
        picks = [grid[int(k)] for k in np.linspace(0, len(grid) - 1, min(6, len(grid))).round()]
        current = control.value
        plan.append((name, [v for v in dict.fromkeys(picks) if v != current] + [current]))
    return plan


class Messages(comm.base_comm.BaseComm):
    """A comm that records the messages it would send to the page (``comm.create_comm`` is the hook a kernel
    sets; here no kernel runs, so the message leaves nowhere)."""

    sent: ClassVar[list[str]] = []  # the comm id of each message, in order

    def publish_msg(self, msg_type, data=None, metadata=None, buffers=None, **keys) -> None:
        if msg_type == "comm_msg":
            Messages.sent.append(self.comm_id)


def _timed(change: Callable[[], None], model_id: str) -> tuple[float, int]:
    before = len(Messages.sent)
    t0 = time.perf_counter()
    change()
    elapsed = (time.perf_counter() - t0) * 1000
    return elapsed, sum(c == model_id for c in Messages.sent[before:])


def bench_explorer(cls: type[Explorer], changes: int) -> dict[str, dict[str, float]] | None:
    """Kernel ms per change from the page (covered and answered apart) and from Python; messages per change."""
    explorer = FACTORIES.get(cls.__name__, cls)()
    widget = explorer.page  # displayed: its one model and its table
    plan = grid_values(explorer)
    if not plan:
        return None

    def from_page(name: str, value: object) -> Callable[[], None]:
        state = {"values": {**widget.values, name: value}}
        return lambda: widget.comm.handle_msg(
            {"content": {"data": {"method": "update", "state": state}}, "buffers": []}
        )

    def from_python(name: str, value: object) -> Callable[[], None]:
        return lambda: setattr(explorer.controls[name], "value", value)

    timings: dict[str, tuple[list[float], list[int]]] = {"covered": ([], []), "answered": ([], []), "python": ([], [])}
    done = 0
    while done < changes:
        for make in (from_page, from_python):  # each pass ends where it began: every value ends on the current one
            for name, values in plan:
                for value in values:
                    elapsed, sent = _timed(make(name, value), widget.model_id)
                    kind = "python" if make is from_python else ("covered" if sent == 0 else "answered")
                    timings[kind][0].append(elapsed)
                    timings[kind][1].append(sent)
                    explorer.summary()  # a read between changes: a covered change is computed here, untimed
            done += sum(len(values) for _, values in plan)
    return {
        kind: {**results.summary(times), "messages": float(np.median(counts))}
        for kind, (times, counts) in timings.items()
        if times
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--changes", type=int, default=60, help="timed changes per explorer")
    parser.add_argument("--json", type=Path, default=results.RESULTS / "kernel.json", help="where to write")
    args = parser.parse_args()
    comm.create_comm = Messages
    rows = {}
    for cls in explorers():
        got = bench_explorer(cls, args.changes)
        if got is not None:
            rows[cls.__name__] = got
            print(cls.__name__ + ": " + ", ".join(f"{k} {f['median']:.1f} / {f['p90']:.1f} ms" for k, f in got.items()))
    results.write(args.json, {"changes": args.changes, "rows": rows})


if __name__ == "__main__":
    main()
