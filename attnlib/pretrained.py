"""The trained models of lessons 13, 14 and 16: one recipe each (task, model, training), one checkpoint each.

``make models`` (``scripts/train_models.py``) trains every recipe for its full budget and writes
``attnlib/checkpoints/<name>.pt``. Lessons 13 and 14 train their models live: these checkpoints are their
labelled fallbacks ("skip the wait") and the models their checkers run learners' code on.
``tests/test_pretrained.py`` retrains the short budget and checks the committed checkpoints still do
what they must (accuracy and attention pattern), not their bytes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from . import language, pronouns
from .tasks import CopyTask, RepeatTask, ReverseTask, Task
from .training import CHECKPOINTS, History, load_checkpoint, save_checkpoint, train
from .transformer import TinyTransformer

__all__ = ["RECIPES", "TEXT_MODELS", "Recipe", "build", "load", "text_vocabulary", "train_recipe"]


@dataclass(frozen=True)
class Recipe:
    """How one model is made: its task, its ``TinyTransformer`` settings and its training."""

    name: str
    task: Task
    model: dict[str, Any] = field(default_factory=dict)
    steps: int = 2000
    lr: float = 1e-2
    seed: int = 0

    @property
    def config(self) -> dict[str, Any]:
        """The keyword arguments of ``TinyTransformer`` (stored in the checkpoint)."""
        return {
            "vocab_size": self.task.vocab_size,
            "max_len": self.task.n_tokens,
            "causal": self.task.causal,
            **self.model,
        }

    @property
    def path(self) -> Path:
        return CHECKPOINTS / f"{self.name}.pt"


ONE_HEAD = {"d_model": 32, "num_heads": 1, "num_layers": 1}
REPEAT = RepeatTask(vocab_size=64, n_tokens=23, min_half=4)
INDUCTION = {"d_model": 32, "num_heads": 2, "num_layers": 2, "mlp": False}
RECIPES: dict[str, Recipe] = {
    "reverse": Recipe("reverse", ReverseTask(vocab_size=32, n_tokens=8), ONE_HEAD),
    "copy": Recipe("copy", CopyTask(vocab_size=32, n_tokens=11), ONE_HEAD),
    # lesson 14: two attention-only layers of two heads each, on sequences that repeat; trained live in the
    # lesson (300 steps: about 0.8 of the sequences and 0.97 of the tokens right on seeds 0, 1 and 2)
    "induction": Recipe("induction", REPEAT, INDUCTION, steps=300, lr=2e-2),
    # lesson 14's control: the same training with one layer, so no head can build on another
    "induction_one_layer": Recipe("induction_one_layer", REPEAT, {**INDUCTION, "num_layers": 1}, steps=300, lr=2e-2),
    # lesson 16: a bidirectional encoder that resolves "it" (attnlib.pronouns)
    "pronouns": Recipe(
        "pronouns", pronouns.PronounTask(), pronouns.MODEL, steps=pronouns.STEPS, lr=pronouns.LR, seed=pronouns.SEED
    ),
}


#: Models trained on text, not on a task (lesson 17), by ``scripts/train_models.py writer-plays``:
#: name → (checkpoint file, the texts whose characters are its vocabulary). ``writer_plays``: a causal
#: character-level model of every play of Shakespeare's but *Macbeth* (held out whole); its recipe, training
#: curve, CPU and wall time are in ``writer_plays.json``.
TEXT_MODELS: dict[str, tuple[str, tuple[str, ...]]] = {"writer_plays": ("writer_plays.pt", ("plays", "macbeth"))}


def text_vocabulary(name: str) -> language.Vocabulary:
    """The character vocabulary of the text model ``name`` (:data:`TEXT_MODELS`): ids ↔ characters."""
    if name not in TEXT_MODELS:
        raise KeyError(f"no text model {name!r}; choose one of {sorted(TEXT_MODELS)}")
    return language.Vocabulary("".join(language.load_text(text) for text in TEXT_MODELS[name][1]))


def build(recipe: Recipe) -> TinyTransformer:
    """A fresh, seeded model for ``recipe`` (the same initial weights every time)."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(recipe.seed)
        return TinyTransformer(**recipe.config)


def train_recipe(
    recipe: Recipe, *, steps: int | None = None, progress: bool = True, **kwargs: Any
) -> tuple[TinyTransformer, History]:
    """Build and train ``recipe``'s model (``steps`` overrides the full budget)."""
    model = build(recipe)
    history = train(
        model, recipe.task, steps=steps or recipe.steps, lr=recipe.lr, seed=recipe.seed, progress=progress, **kwargs
    )
    return model.eval(), history


def load(name: str) -> TinyTransformer:
    """The committed, fully trained model ``name`` (see :data:`RECIPES` and :data:`TEXT_MODELS`), in eval mode."""
    if name in TEXT_MODELS:
        return load_checkpoint(CHECKPOINTS / TEXT_MODELS[name][0])
    if name not in RECIPES:
        raise KeyError(f"no model {name!r}; choose one of {sorted(RECIPES) + sorted(TEXT_MODELS)}")
    return load_checkpoint(RECIPES[name].path)


def save(name: str, model: TinyTransformer) -> None:
    save_checkpoint(model, RECIPES[name].config, RECIPES[name].path)
