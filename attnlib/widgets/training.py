"""Lesson 13 explorer: an attention map forming while a model trains, and the trained model on your input."""

from __future__ import annotations

import html

import ipywidgets as W
import torch

from ..tasks import Task
from ..training import History
from ..transformer import TinyTransformer
from ._core import Explorer, HeatmapView

__all__ = ["TrainingExplorer", "parse_tokens"]


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

    def __init__(self, history: History, model: TinyTransformer, task: Task, *, step: int | None = None,
                 layer: int = 0, head: int = 0) -> None:  # fmt: skip
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
        c["step"] = W.SelectionSlider(options=self.steps, value=step, description="training step")
        c["sequence"] = W.Text(value=" ".join(map(str, probe)), description="your input", continuous_update=False)
        kw = {"vmin": 0.0, "vmax": 1.0, "decimals": 2, "xlabel": "key (position:token)", "ylabel": "query"}
        self.views["during"] = HeatmapView(self._map(step), title="", **kw)
        self.views["trained"] = HeatmapView(self._map(step), title="trained model on your input", **kw)
        self.caption = W.HTML()
        self.update()
        self.observe_controls()
        self.widget = W.VBox([c["step"], c["sequence"], self.message,
                              W.HBox([self.views["during"], self.views["trained"]]), self.caption])  # fmt: skip

    def _map(self, step: int) -> torch.Tensor:
        return self.history.snapshots[step][self.layer][self.head]

    def update(self) -> None:
        """Show the probe's map at the chosen step, and the trained model's map on the typed sequence."""
        c = self.controls
        ids = parse_tokens(c["sequence"].value, vocab_size=self.task.vocab_size, n_tokens=self.task.n_tokens)
        step = c["step"].value
        during = self._map(step)
        self.views["during"].update(during, row_labels=self.probe_labels, col_labels=self.probe_labels,
                                    title=f"probe, after {step} steps")  # fmt: skip
        with torch.no_grad():
            predicted = self.model(ids).argmax(-1)[0].tolist()
        labels = [f"{i}:{t}" for i, t in enumerate(ids[0].tolist())]
        self.views["trained"].update(self.model.attention_maps[self.layer][0, self.head], row_labels=labels,
                                     col_labels=labels)  # fmt: skip
        index = self.history.eval_steps.index(step) if step in self.history.eval_steps else None
        loss = self.history.losses[step - 1] if step > 0 else float("nan")
        accuracy = f", held-out accuracy {self.history.accuracies[index]:.2f}" if index is not None else ""
        self.caption.value = html.escape(
            f"step {step}: training loss {loss:.3f}{accuracy}. The trained model predicts {predicted}."
        )

    def summary(self) -> str:
        return f"TrainingExplorer(task={self.task.name!r}, steps={self.steps}, step={self.controls['step'].value})"
