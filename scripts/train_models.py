"""Train every model of lessons 13–14 for its full budget and write its checkpoint (``make models``).

Usage: python scripts/train_models.py [name ...]     (default: all of attnlib.models.RECIPES)

Deterministic on a given machine (seeded, deterministic algorithms); another CPU may differ in the
last bits, which is why the tests check what a model does, not its bytes.
"""

from __future__ import annotations

import sys

from attnlib import models
from attnlib.training import accuracy


def main(names: list[str]) -> int:
    for name in names or list(models.RECIPES):
        recipe = models.RECIPES[name]
        model, history = models.train_recipe(recipe)
        models.save(name, model)
        size = recipe.path.stat().st_size / 1024
        print(f"{name}: {recipe.steps} steps, final loss {history.losses[-1]:.4f}, "
              f"held-out accuracy {accuracy(model, recipe.task):.3f}, {recipe.path.name} {size:.0f} KiB")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
