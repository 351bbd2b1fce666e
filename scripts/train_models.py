"""Train every model of lessons 13, 14 and 16 for its full budget and write its checkpoint (``make models``).

The models: ``reverse`` and ``copy`` (lesson 13), ``induction`` and its one-layer control
``induction_one_layer`` (lesson 14), and ``pronouns`` (lesson 16): its seed-0 encoder, trained with the
recipe the lesson runs live (the lesson's "skip the wait" fallback); the other seeds are only reported.

Usage: python scripts/train_models.py [name ...]     (default: all of attnlib.pretrained.RECIPES)

Deterministic on a given machine (seeded, deterministic algorithms); another CPU may differ in the
last bits, which is why the tests check what a model does, not its bytes. For the induction model it
also writes ``induction_history.json``: the loss and both head scores along training (lesson 14 plots it).
"""

from __future__ import annotations

import json
import sys

from attnlib import heads, pretrained, pronouns
from attnlib.training import accuracy

EVERY = 100  # steps between the points of induction_history.json


def induction_history(history, recipe) -> dict:
    """Loss (mean per ``EVERY`` steps) and the best previous-token / induction score at each snapshot."""
    points = {"step": [], "loss": [], "previous_token": [], "induction": []}
    real = history.probe != 0  # token 0 pads the sequence and never belongs to it
    for step in sorted(history.snapshots):
        points["step"].append(step)
        window = history.losses[max(0, step - EVERY) : step] or history.losses[:1]
        points["loss"].append(round(sum(window) / len(window), 4))
        maps = history.snapshots[step]
        points["previous_token"].append(round(max(heads.previous_token_score(m) for m in maps[0]), 4))
        points["induction"].append(round(max(heads.induction_score(m[None], history.probe, real) for m in maps[1]), 4))
    return points


def train_pronouns() -> None:
    """Lesson 16: the seed-0 checkpoint (the lesson's "skip the wait"), trained exactly as the lesson trains it
    live; and the figures of every seed the lesson trains (its spread table, for the README)."""
    for seed in pronouns.SEEDS:
        model, history = pronouns.train_encoder(seed=seed, progress=False)
        saved = ""
        if seed == pronouns.SEED:
            path = pronouns.save(model)
            saved = f", {path.name} {path.stat().st_size / 1024:.0f} KiB"
        figures = pronouns.evidence(model)
        print(
            f"pronouns seed {seed}: {pronouns.STEPS} steps, final loss {history.losses[-1]:.4f}, "
            + ", ".join(f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}" for k, v in figures.items())
            + saved
        )


def main(names: list[str]) -> int:
    for name in names or list(pretrained.RECIPES):
        if name == "pronouns":
            train_pronouns()
            continue
        recipe = pretrained.RECIPES[name]
        snapshots = tuple(range(0, recipe.steps + 1, EVERY)) if name == "induction" else ()
        model, history = pretrained.train_recipe(recipe, snapshot_steps=snapshots)
        pretrained.save(name, model)
        if name == "induction":
            path = recipe.path.with_name("induction_history.json")
            path.write_text(json.dumps(induction_history(history, recipe), indent=1) + "\n")
        size = recipe.path.stat().st_size / 1024
        print(
            f"{name}: {recipe.steps} steps, final loss {history.losses[-1]:.4f}, held-out accuracy "
            f"{accuracy(model, recipe.task):.3f} per sequence, {accuracy(model, recipe.task, per='token'):.3f} "
            f"per token, {recipe.path.name} {size:.0f} KiB"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
