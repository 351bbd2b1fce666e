"""Training the tiny transformer on the CPU, reproducibly, and reading what its attention learned.

:func:`train` runs a seeded, deterministic loop (``torch.use_deterministic_algorithms(True)``, on
:func:`one_thread`) and records the loss, the held-out accuracy and snapshots of the attention maps on
one probe sequence at chosen steps. Progress is shown with tqdm's bar (a notebook widget in Jupyter), never
as printed text with wall-clock times. :func:`save_checkpoint` / :func:`load_checkpoint` keep a trained model small
and say exactly which tensor differs when a checkpoint does not fit.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor

from ._validate import AttentionInputError, check_positive_int
from .tasks import Task
from .transformer import TinyTransformer

__all__ = [
    "CHECKPOINTS",
    "Adam",
    "History",
    "accuracy",
    "fit",
    "load_checkpoint",
    "one_thread",
    "pattern_mass",
    "save_checkpoint",
    "train",
]

CHECKPOINTS = Path(__file__).parent / "checkpoints"
MAX_STEPS = 100_000


class Adam:
    """Adam (Kingma & Ba, 2015) with no weight decay: ``torch.optim.Adam``'s update on the CPU, bit for bit (so
    ``torch.optim.AdamW``'s with ``weight_decay=0`` too), with its ``step()`` and ``zero_grad()``.

    Per parameter, from its gradient g at the t-th step that gives it one: ``m ← m + (1 − β₁)(g − m)``,
    ``v ← β₂v + (1 − β₂)g²``, ``p ← p − lr / (1 − β₁ᵗ) · m / (√v / √(1 − β₂ᵗ) + ε)``, in torch's order of
    operations. Written out because creating any ``torch.optim`` optimiser imports torch's compiler
    (``torch._dynamo``: 5.8 s of CPU on 2026-12-03's machine), which every lesson that trains would wait for. A
    parameter without a gradient is left as it is and its t does not advance, as in torch.
    """

    def __init__(
        self, parameters: Iterable[Tensor], lr: float, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8
    ) -> None:
        self.parameters = list(parameters)
        self.lr, self.betas, self.eps = lr, betas, eps
        self.moments = [(torch.zeros_like(p), torch.zeros_like(p)) for p in self.parameters]
        self.steps = [0] * len(self.parameters)

    @torch.no_grad()
    def step(self) -> None:
        """One update of every parameter that has a gradient."""
        beta1, beta2 = self.betas
        for k, (p, (m, v)) in enumerate(zip(self.parameters, self.moments, strict=True)):
            if p.grad is None:
                continue
            self.steps[k] += 1
            t = float(self.steps[k])
            m.lerp_(p.grad, 1 - beta1)
            v.mul_(beta2).addcmul_(p.grad, p.grad, value=1 - beta2)
            denom = (v.sqrt() / (1 - beta2**t) ** 0.5).add_(self.eps)
            p.addcdiv_(m, denom, value=-(self.lr / (1 - beta1**t)))

    def zero_grad(self) -> None:
        """Every parameter's gradient gone (``None``), as ``torch.optim``'s ``zero_grad()``."""
        for p in self.parameters:
            p.grad = None


@contextlib.contextmanager
def one_thread() -> Iterator[None]:
    """torch on one thread inside the block (its number of threads restored afterwards).

    Split over threads, a sum adds its terms in another order and its last bits change; training grows them
    into another model. Lesson 14's recipe trained on two threads gave a model whose ablations read 0.43 and
    0.28 where one thread gives 0.28 and 0.46, and the lesson's claims failed. On one thread a seed trains the
    same model whatever the machine's number of cores (its vector unit may still move the last bits)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


@dataclass
class History:
    """What :func:`train` records: ``steps``, ``losses`` (every step), ``accuracies`` (every
    ``eval_every`` steps, at ``eval_steps``) and ``snapshots`` (step → attention maps on ``probe``)."""

    probe: Tensor
    losses: list[float] = field(default_factory=list)
    eval_steps: list[int] = field(default_factory=list)
    accuracies: list[float] = field(default_factory=list)
    snapshots: dict[int, list[Tensor]] = field(default_factory=dict)


def _loss(model: TinyTransformer, inputs: Tensor, targets: Tensor, counted: Tensor) -> Tensor:
    logits = model(inputs)
    mask = counted.expand_as(targets)
    return F.cross_entropy(logits[mask], targets[mask])


@torch.no_grad()
def accuracy(
    model: TinyTransformer, task: Task, *, n_sequences: int = 512, seed: int = 10_000, per: str = "sequence"
) -> float:
    """Held-out accuracy on fresh, seeded sequences (the model's top token counts as its prediction).

    ``per="sequence"``: the share of sequences whose *every* scored token is right (the default, strict);
    ``per="token"``: the share of scored tokens that are right.
    """
    if per not in ("sequence", "token"):
        raise AttentionInputError(f"per must be 'sequence' or 'token', got {per!r}")
    inputs, targets, counted = task.batch(n_sequences, torch.Generator().manual_seed(seed))
    predicted = model(inputs).argmax(-1)
    mask = counted.expand_as(targets)
    if per == "token":
        return float((predicted == targets)[mask].float().mean())
    right = ((predicted == targets) | ~mask).all(dim=1)
    return float(right.float().mean())


def pattern_mass(weights: Tensor, pattern: Tensor) -> Tensor:
    """For each row, the attention weight on the cells ``pattern`` marks: ``(..., n_q)``.

    ``weights (..., n_q, n_k)``, ``pattern (n_q, n_k)`` of 0/1. Rows with no marked cell give NaN
    (use the rows the pattern defines).
    """
    mass = (weights * pattern).sum(-1)
    defined = pattern.sum(-1) > 0
    return torch.where(defined, mass, torch.full_like(mass, float("nan")))


def fit(
    model: torch.nn.Module,
    step_loss: Callable[[torch.Generator], Tensor],
    *,
    steps: int,
    lr: float,
    seed: int = 0,
    lr_at: Callable[[int], float] | None = None,
    on_step: Callable[[int, list[float]], object] | None = None,
    progress: bool = True,
    desc: str = "training",
) -> list[float]:
    """The one training loop: ``steps`` times, ``zero_grad``, ``loss.backward()``, one :class:`Adam` step; return
    every step's loss.

    ``step_loss(generator)`` draws a batch from ``generator`` (seeded with ``seed``) and returns its loss, a scalar
    tensor. ``lr_at(step)``: the learning rate of step 1 … ``steps`` (``None``: ``lr`` throughout).
    ``on_step(step, losses)`` runs after each step (a live curve, snapshots, held-out checks). ``progress``: tqdm's
    bar (a widget in a notebook), labelled ``desc``. On :func:`one_thread`, so a seed trains the same model whatever
    the machine's cores; every op the course trains with is deterministic on the CPU (``tests/test_training.py``
    trains twice and compares the bits), so ``torch.use_deterministic_algorithms``, whose first call imports torch's
    compiler (4–5 s of CPU), is not needed.
    """
    if isinstance(steps, bool) or not isinstance(steps, int) or not 1 <= steps <= MAX_STEPS:
        raise AttentionInputError(f"steps must be an integer from 1 to {MAX_STEPS}, got {steps!r}")
    generator = torch.Generator().manual_seed(seed)
    optimiser = Adam(model.parameters(), lr=lr)
    losses: list[float] = []
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=steps, desc=desc, leave=False)
    try:
        with one_thread():
            for step in range(1, steps + 1):
                if lr_at is not None:
                    optimiser.lr = lr_at(step)
                loss = step_loss(generator)
                optimiser.zero_grad()
                loss.backward()
                optimiser.step()
                losses.append(float(loss.detach()))
                if on_step is not None:
                    on_step(step, losses)
                if bar is not None:
                    bar.update(1)
    finally:
        if bar is not None:
            bar.close()
    return losses


def train(
    model: TinyTransformer,
    task: Task,
    *,
    steps: int,
    batch_size: int = 64,
    lr: float = 3e-3,
    seed: int = 0,
    snapshot_steps: tuple[int, ...] = (),
    eval_every: int = 0,
    progress: bool = True,
    on_loss: Callable[[float], object] | None = None,
) -> History:
    """Train ``model`` on ``task`` with :func:`fit` for ``steps`` steps; return the :class:`History`.

    Args:
        steps: optimiser steps (1 … 100 000).
        snapshot_steps: steps after which the attention maps on the probe sequence are stored
            (0 = before training).
        eval_every: measure held-out accuracy every so many steps (0: only at the end).
        progress: show tqdm's progress bar (a widget in a notebook).
        on_loss: called with each step's loss (e.g. a live curve's ``add``).
    """
    check_positive_int("batch_size", batch_size)
    if model.vocab_size != task.vocab_size or model.max_len < task.n_tokens or model.causal != task.causal:
        raise AttentionInputError(
            f"the model (vocab_size={model.vocab_size}, max_len={model.max_len}, causal={model.causal}) does not "
            f"fit the task (vocab_size={task.vocab_size}, n_tokens={task.n_tokens}, causal={task.causal})"
        )
    probe = task.batch(1, torch.Generator().manual_seed(seed + 1))[0]
    history = History(probe=probe)

    def snapshot(step: int) -> None:
        with torch.no_grad(), one_thread():
            model(probe)
        history.snapshots[step] = [m[0].clone() for m in model.attention_maps]

    def after(step: int, losses: list[float]) -> None:
        if on_loss is not None:
            on_loss(losses[-1])
        if step in snapshot_steps:
            snapshot(step)
        if (eval_every and step % eval_every == 0) or step == steps:
            history.eval_steps.append(step)
            history.accuracies.append(accuracy(model, task))

    if 0 in snapshot_steps:
        snapshot(0)
    history.losses = fit(
        model,
        lambda generator: _loss(model, *task.batch(batch_size, generator)),
        steps=steps,
        lr=lr,
        seed=seed,
        on_step=after,
        progress=progress,
        desc=f"training on {task.name}",
    )
    return history


def save_checkpoint(model: TinyTransformer, config: dict[str, Any], path: str | Path) -> Path:
    """Save ``model``'s weights with the ``config`` that builds it (``TinyTransformer(**config)``)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save({"config": dict(config), "state_dict": model.state_dict()}, path)
    return path


def load_checkpoint(path: str | Path, model: TinyTransformer | None = None) -> TinyTransformer:
    """Load a checkpoint into ``model`` (or a new ``TinyTransformer(**config)``), in eval mode.

    A checkpoint that does not fit says which tensor and which shapes differ.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no checkpoint at {path} (make models writes them)")
    saved = torch.load(path, map_location="cpu", weights_only=True)
    model = TinyTransformer(**saved["config"]) if model is None else model
    own = model.state_dict()
    state = saved["state_dict"]
    missing, unexpected = sorted(set(own) - set(state)), sorted(set(state) - set(own))
    if missing or unexpected:
        raise AttentionInputError(
            f"checkpoint {path.name} does not fit the model: missing tensors {missing[:3]}, unexpected {unexpected[:3]}"
        )
    for name, tensor in state.items():
        if tensor.shape != own[name].shape:
            raise AttentionInputError(
                f"checkpoint {path.name} does not fit the model: tensor {name!r} has shape {tuple(tensor.shape)} "
                f"in the checkpoint but {tuple(own[name].shape)} in the model"
            )
    model.load_state_dict(state)
    return model.eval()
