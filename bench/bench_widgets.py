"""Live-view cost in the kernel: every lesson explorer driven headless, one control change at a time.

Each :class:`~attnlib.show.explorer.Explorer` subclass of ``attnlib.lessons`` is built as its lesson
builds it and each of its controls set to a few valid values. A change is timed from setting
``control.value`` until the update has run and its messages have left (the whole observer chain,
maths included); the widget ``update`` messages the change sends are counted at the comm.

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
import ipywidgets as widgets
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


def _merges() -> Explorer:
    from attnlib.lessons.l18_where_next import MergesExplorer

    return MergesExplorer("low " * 5 + "lower " * 2 + "newest " * 6 + "widest " * 3, merges=0)


#: explorers whose lesson builds them with arguments (the rest with their defaults)
FACTORIES: dict[str, Callable[[], Explorer]] = {
    "PipelineExplorer": _pipeline,
    "TrainingExplorer": _training,
    "HeadsExplorer": _heads,
    "ReferentExplorer": _referent,
    "WriterExplorer": _writer,
    "MergesExplorer": _merges,
}


def explorers() -> Iterator[type[Explorer]]:
    """Every Explorer subclass defined in a module of ``attnlib.lessons``."""
    for info in pkgutil.iter_modules(attnlib.lessons.__path__):
        module = importlib.import_module(f"attnlib.lessons.{info.name}")
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if issubclass(cls, Explorer) and cls is not Explorer and cls.__module__ == module.__name__:
                yield cls


def control_values(control: widgets.Widget) -> list[object]:
    """A few valid values for ``control``, different from its current value, ending with it."""
    current = control.value
    if isinstance(control, (widgets.Checkbox, widgets.ToggleButton)):
        values: list[object] = [not current]
    elif hasattr(control, "options"):
        values = [o[1] if isinstance(o, tuple) else o for o in control.options][:6]
    elif isinstance(control, widgets.FloatLogSlider):
        values = [float(control.base**e) for e in np.linspace(control.min, control.max, 5)]
    elif isinstance(control, (widgets.IntSlider, widgets.BoundedIntText)):
        values = sorted({int(v) for v in np.linspace(control.min, control.max, 5).round()})
    elif isinstance(control, (widgets.FloatSlider, widgets.BoundedFloatText)):
        values = [float(v) for v in np.linspace(control.min, control.max, 5)]
    elif isinstance(control, (widgets.Textarea, widgets.Text)):
        values = [current + " "]  # same numbers, a new value: a full re-parse and redraw
    else:
        return []
    return [v for v in values if v != current] + [current]


class Messages(comm.base_comm.BaseComm):
    """A comm that records the widget ``update`` messages it would send (``comm.create_comm`` is the
    hook a kernel sets; here no kernel runs, so the message leaves nowhere)."""

    sent: ClassVar[list[str]] = []  # the comm id of each update message, in order

    def publish_msg(self, msg_type, data=None, metadata=None, buffers=None, **keys) -> None:
        if isinstance(data, dict) and data.get("method") == "update":
            Messages.sent.append(self.comm_id)


def bench_explorer(cls: type[Explorer], changes: int) -> dict[str, float] | None:
    """Kernel ms per change (median, p90) and update messages per change (median)."""
    explorer = FACTORIES.get(cls.__name__, cls)()
    plan = [(c, control_values(c)) for c in explorer.controls.values() if not c.disabled]
    plan = [(c, values) for c, values in plan if values]
    if not plan:
        return None
    times: list[float] = []
    counts: list[int] = []
    while len(times) < changes:
        for control, values in plan:
            for value in values:
                before = len(Messages.sent)
                t0 = time.perf_counter()
                control.value = value
                times.append((time.perf_counter() - t0) * 1000)
                counts.append(sum(c != control.comm.comm_id for c in Messages.sent[before:]))  # not its own
    return {**results.summary(times), "messages": float(np.median(counts))}


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
            print(f"{cls.__name__}: {got['median']:.1f} / {got['p90']:.1f} ms, {got['messages']:.0f} messages")
    results.write(args.json, {"changes": args.changes, "rows": rows})


if __name__ == "__main__":
    main()
