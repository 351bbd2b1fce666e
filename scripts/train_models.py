"""Train every model of lessons 13, 14 and 16 for its full budget and write its checkpoint (``make models``).

The lessons train their models live; these checkpoints are the labelled fallbacks ("skip the wait") and
what the tests and the checkers measure learners' code on. The models: ``reverse`` and ``copy``
(lesson 13), ``induction`` and its one-layer control ``induction_one_layer`` (lesson 14), ``pronouns``
(lesson 16).

Usage: python scripts/train_models.py [name ...]     (default: all of attnlib.pretrained.RECIPES)

Deterministic on a given machine (seeded, deterministic algorithms); another CPU may differ in the
last bits, which is why the tests check what a model does, not its bytes.
"""

from __future__ import annotations

import sys

from attnlib import pretrained
from attnlib.training import accuracy


def main(names: list[str]) -> int:
    for name in names or list(pretrained.RECIPES):
        recipe = pretrained.RECIPES[name]
        model, history = pretrained.train_recipe(recipe)
        pretrained.save(name, model)
        size = recipe.path.stat().st_size / 1024
        print(
            f"{name}: {recipe.steps} steps, final loss {history.losses[-1]:.4f}, held-out accuracy "
            f"{accuracy(model, recipe.task):.3f} per sequence, {accuracy(model, recipe.task, per='token'):.3f} "
            f"per token, {recipe.path.name} {size:.0f} KiB"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
