"""Lesson 13 · Attention learns: its explorer and its exercise checkers.

Lesson 13 explorer: an attention map forming while a model trains, and the trained model on your input.

Lesson 13 exercises: reading what a trained attention does.

- ``learning.1`` predict: in the reverse task with n = 8, which input position does output 2 attend to?
- ``learning.2`` code: ``mirror_mass(weights)`` — each row's weight on its mirrored key, run on new maps.
- ``learning.3`` transfer: the copy task without its causal mask — where would position 7 simply look?
"""

from __future__ import annotations

import html

import ipywidgets as widgets
import torch
from torch import Tensor

from ..show.explorer import Explorer, HeatmapView
from ..steps import softmax
from ..tasks import ReverseTask, Task
from ..training import History, pattern_mass
from ..transformer import TinyTransformer
from ._calls import compare_call
from ._check import Feedback, compare_number, exercise

__all__ = ["TrainingExplorer", "mirror_mass", "mirror_position", "no_mask", "parse_tokens", "wrong_answers"]


def parse_tokens(text: str, *, vocab_size: int, n_tokens: int) -> torch.Tensor:
    """Token ids typed as numbers separated by spaces or commas → ``(1, n_tokens)``; a clear error otherwise."""
    parts = [p for p in text.replace(",", " ").split() if p]
    if len(parts) != n_tokens:
        raise ValueError(f"type exactly {n_tokens} token ids (this model's sequence length), got {len(parts)}")
    ids = []
    for p in parts:
        if not p.lstrip("-").isdigit():
            raise ValueError(f"{p!r} is not a token id: type whole numbers from 0 to {vocab_size - 1}")
        value = int(p)
        if not 0 <= value < vocab_size:
            raise ValueError(f"token id {value} is out of range: the vocabulary has ids 0 to {vocab_size - 1}")
        ids.append(value)
    return torch.tensor([ids])


class TrainingExplorer(Explorer):
    """Slide through training: the attention map on one probe sequence at each stored step.

    Args:
        history: from :func:`attnlib.training.train` with ``snapshot_steps``.
        model: the trained model (for the ``sequence`` view): type your own input and see its attention.
        task: the task both were trained on (sets the allowed ids and length).
        step: the training step shown first (one of the snapshot steps).
        layer, head: which attention map.

    Controls: ``step`` (a slider over the stored steps) and ``sequence`` (token ids, Enter to apply).
    Views: ``during`` (the probe's map at that step) and ``trained`` (the final model on ``sequence``).
    """

    def __init__(
        self,
        history: History,
        model: TinyTransformer,
        task: Task,
        *,
        step: int | None = None,
        layer: int = 0,
        head: int = 0,
    ) -> None:
        super().__init__()
        self.steps = sorted(history.snapshots)
        if not self.steps:
            raise ValueError("history has no snapshots: train with snapshot_steps=(0, 50, …)")
        step = self.steps[-1] if step is None else step
        if step not in history.snapshots:
            raise ValueError(f"step must be one of the stored steps {self.steps}, got {step!r}")
        if not 0 <= layer < len(history.snapshots[step]) or not 0 <= head < history.snapshots[step][layer].shape[0]:
            raise ValueError(f"layer/head out of range: the model has {len(history.snapshots[step])} layer(s)")
        self.history, self.model, self.task, self.layer, self.head = history, model, task, layer, head
        probe = history.probe[0].tolist()
        self.probe_labels = [f"{i}:{t}" for i, t in enumerate(probe)]
        c = self.controls
        c["step"] = widgets.SelectionSlider(options=self.steps, value=step, description="training step")
        c["sequence"] = widgets.Text(value=" ".join(map(str, probe)), description="your input", continuous_update=False)
        kw = {"vmin": 0.0, "vmax": 1.0, "decimals": 2, "xlabel": "key (position:token)", "ylabel": "query"}
        self.views["during"] = HeatmapView(self._map(step), title="", **kw)
        self.views["trained"] = HeatmapView(self._map(step), title="trained model on your input", **kw)
        self.caption = widgets.HTML()
        self.update()
        self.observe_controls()
        self.widget = widgets.VBox(
            [
                c["step"],
                c["sequence"],
                self.message,
                widgets.HBox([self.views["during"], self.views["trained"]]),
                self.caption,
            ]
        )

    def _map(self, step: int) -> torch.Tensor:
        return self.history.snapshots[step][self.layer][self.head]

    def update(self) -> None:
        """Show the probe's map at the chosen step, and the trained model's map on the typed sequence."""
        c = self.controls
        ids = parse_tokens(c["sequence"].value, vocab_size=self.task.vocab_size, n_tokens=self.task.n_tokens)
        step = c["step"].value
        during = self._map(step)
        self.views["during"].update(
            during, row_labels=self.probe_labels, col_labels=self.probe_labels, title=f"probe, after {step} steps"
        )
        with torch.no_grad():
            predicted = self.model(ids).argmax(-1)[0].tolist()
        labels = [f"{i}:{t}" for i, t in enumerate(ids[0].tolist())]
        self.views["trained"].update(
            self.model.attention_maps[self.layer][0, self.head], row_labels=labels, col_labels=labels
        )
        index = self.history.eval_steps.index(step) if step in self.history.eval_steps else None
        loss = self.history.losses[step - 1] if step > 0 else float("nan")
        accuracy = f", held-out accuracy {self.history.accuracies[index]:.2f}" if index is not None else ""
        self.caption.value = html.escape(
            f"step {step}: training loss {loss:.3f}{accuracy}. The trained model predicts {predicted}."
        )

    def summary(self) -> str:
        return f"TrainingExplorer(task={self.task.name!r}, steps={self.steps}, step={self.controls['step'].value})"


def _fresh() -> Tensor:
    return softmax(3 * torch.randn(6, 6, generator=torch.Generator().manual_seed(13)))


def wrong_answers() -> dict[str, list[tuple[object, str | None]]]:
    """Per exercise, typical wrong answers and the mistake id each must reveal (None: a plain hint)."""
    return {
        "learning.1": [(2, None), (6, None)],
        "learning.2": [(lambda w: torch.diagonal(w), None), (lambda w: w.flip(1).sum(0), None)],
        "learning.3": [(2, None), (7, None)],
    }


@exercise("learning.1")
def mirror_position(answer: object) -> Feedback:
    """Reverse task, n = 8 (positions 0 … 7): output 2 must copy input ``n − 1 − 2 = 5``."""
    wrong = [
        (2, "Position 2 itself would copy its own token; reversing needs the mirrored position, n − 1 − i."),
        (6, "Positions count from 0 here (0 … 7): the mirror of 2 is 8 − 1 − 2."),
    ]
    return compare_number(answer, 5, name="the input position output 2 attends to", wrong=wrong, tol=0.01)


@exercise("learning.2")
def mirror_mass(answer: object) -> Feedback:
    """A function ``mirror_mass(weights (n, n))`` → ``(n,)``: row i's weight on key ``n − 1 − i``."""
    weights = _fresh()
    expected = pattern_mass(weights, ReverseTask.pattern(weights.shape[0]))
    wrong = [
        (torch.diagonal(weights), "That is each row's weight on its own position (the diagonal); the mirror is n−1−i."),
        (weights.flip(1).sum(0), "Sum within each row, not over the rows: one number per query."),
    ]
    return compare_call(
        answer,
        (weights,),
        call="your mirror_mass(weights)",
        expected=expected,
        name="mirror_mass on a new 6×6 attention map",
        wrong=wrong,
        success="weights.flip(1).diagonal() reads the anti-diagonal: the reverse model's must be near 1.",
    )


@exercise("learning.3")
def no_mask(answer: object) -> Feedback:
    """Copy task without a causal mask: input position 7 predicts token 8 — and can simply read it at 8."""
    wrong = [
        (2, "That is where the masked model must look (one half back). Without the mask the answer itself is visible."),
        (7, "Position 7 holds the current token; the target is the next one, and nothing hides it."),
    ]
    return compare_number(answer, 8, name="the position an unmasked copy model would read", wrong=wrong, tol=0.01)
