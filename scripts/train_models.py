"""Train every model of lessons 13, 14, 16 and 17 for its full budget and write its checkpoint (``make models``).

The lessons train their models live; these checkpoints are the labelled fallbacks ("skip the wait") and
what the tests and the checkers measure learners' code on. The models: ``reverse`` and ``copy``
(lesson 13), ``induction`` and its one-layer control ``induction_one_layer`` (lesson 14), ``pronouns``
(lesson 16: its seed-0 encoder, trained with the recipe the lesson runs live; the other seeds are only
reported), ``writer`` (lesson 17: the character-level model of *Macbeth*, trained for far longer than the
lesson's live run; ``writer.json`` also holds the live recipe's figures over three seeds, the spread the
lesson prints).

Usage: python scripts/train_models.py [name ...]     (default: all of attnlib.pretrained.RECIPES, then writer;
       writer-seeds: only the writer's live-recipe seeds, keeping its checkpoint)

Deterministic on a given machine (seeded, deterministic algorithms); another CPU may differ in the
last bits, which is why the tests check what a model does, not its bytes.
"""

from __future__ import annotations

import json
import math
import sys
import time

import torch

from attnlib import heads, language, pretrained, pronouns
from attnlib.training import CHECKPOINTS, accuracy, save_checkpoint
from attnlib.transformer import TinyTransformer

WRITER_SEEDS = (0, 1, 2)


def _figures(model, losses: list[float], held_out) -> dict:
    """Losses, and per layer the best head's previous-token and same-character scores on held-out windows."""
    n = model.max_len
    held = language.evaluate(model, held_out, n)
    windows = held_out[: (len(held_out) // n) * n].view(-1, n)
    with torch.no_grad():
        model.eval()(windows)
    scores = [
        [
            (round(heads.previous_token_score(m[:, h]), 4), round(language.same_character_score(m[:, h], windows), 4))
            for h in range(m.shape[1])
        ]
        for m in model.attention_maps
    ]
    return {
        "train_loss": round(sum(losses[-20:]) / 20, 4),  # the mean of the last 20 steps, as the lesson prints
        "held_out_loss": round(held, 4),
        "held_out_perplexity": round(math.exp(held), 3),
        "heads": scores,  # [layer][head] = (previous-token score, same-character score)
        "ablation": _ablation_costs(model, held_out),
    }


def _ablation_costs(model, held_out, windows: int = 128) -> list[dict]:
    """Per layer, as lesson 17 measures it: each head mean-ablated alone (the costs' sum) and all at once."""
    n = model.max_len
    base = language.evaluate(model, held_out, n, max_windows=windows)
    costs = []
    for layer, block in enumerate(model.blocks):
        every = tuple(range(block.attention.num_heads))
        alone = 0.0
        for head in every:
            with heads.ablated(model, layer, head, how="mean"):
                alone += language.evaluate(model, held_out, n, max_windows=windows) - base
        with heads.ablated(model, layer, every, how="mean"):
            whole = language.evaluate(model, held_out, n, max_windows=windows) - base
        costs.append({"each_alone_summed": round(alone, 4), "all_at_once": round(whole, 4)})
    return costs


def writer(*, checkpoint: bool = True) -> None:
    """Lesson 17: the live recipe over ``WRITER_SEEDS`` (the spread), then the long-trained checkpoint.

    ``checkpoint=False`` (``writer-seeds``): only the seeds; writer.json keeps the checkpoint's entry.
    """
    recipe = language.WRITER
    text = language.load_text("macbeth")
    vocabulary = language.Vocabulary(text)
    train_ids, held_out = language.split(vocabulary.encode(text))
    config = {"vocab_size": len(vocabulary), "causal": True, **recipe["model"]}
    n_tokens = recipe["model"]["max_len"]
    report = {
        "baselines": {
            "unigram": round(language.unigram_loss(train_ids, held_out, len(vocabulary)), 4),
            "bigram": round(language.bigram_loss(train_ids, held_out, len(vocabulary)), 4),
        },
        "live": {},
    }
    for seed in WRITER_SEEDS:
        torch.manual_seed(seed)
        model = TinyTransformer(**config)
        losses = language.train_on_text(
            model,
            train_ids,
            steps=recipe["steps"],
            n_tokens=n_tokens,
            batch_size=recipe["batch_size"],
            lr=recipe["lr"],
            seed=seed,
            progress=False,
        )
        report["live"][str(seed)] = _figures(model, losses, held_out)
        print(f"writer, live recipe, seed {seed}: {report['live'][str(seed)]}")
    path = CHECKPOINTS / "writer.json"
    if not checkpoint:
        report["checkpoint"] = json.loads(path.read_text())["checkpoint"]
        path.write_text(json.dumps(report, indent=1) + "\n")
        return
    torch.manual_seed(0)
    model = TinyTransformer(**config)
    start = time.perf_counter()
    losses = language.train_on_text(
        model,
        train_ids,
        steps=recipe["checkpoint_steps"],
        n_tokens=n_tokens,
        batch_size=recipe["checkpoint_batch_size"],
        lr=recipe["lr"],
        final_lr=recipe["checkpoint_final_lr"],
        seed=0,
    )
    minutes = (time.perf_counter() - start) / 60
    report["checkpoint"] = {
        "steps": recipe["checkpoint_steps"],
        "minutes": round(minutes, 1),
        **_figures(model, losses, held_out),
    }
    path = save_checkpoint(model, config, CHECKPOINTS / "writer.pt")
    path.with_suffix(".json").write_text(json.dumps(report, indent=1) + "\n")
    print(f"writer: checkpoint {report['checkpoint']}, {path.name} {path.stat().st_size / 1024:.0f} KiB")


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
    for name in names or [*pretrained.RECIPES, "writer"]:
        if name in ("writer", "writer-seeds"):
            writer(checkpoint=name == "writer")
            continue
        if name == "pronouns":
            train_pronouns()
            continue
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
