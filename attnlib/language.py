"""A model of real language, one character at a time (lesson 17): the text, its baselines, sampling, a head score.

The text ships with attnlib (``attnlib/corpus/``, no download): :func:`load_text`. A character-level
model reads ids ``(batch, n)`` and predicts, at every position, the next character:
``logits (batch, n, vocab_size)`` against ``targets (batch, n)`` = the inputs shifted by one.

Baselines a trained model must beat, in nats per character (cross-entropy; perplexity = e^loss):

- **unigram**: every character with its frequency in the training text, whatever came before;
- **bigram**: the next character given only the one before (counts of pairs, add-one smoothed so that
  a pair the training text never showed does not cost an infinite loss).

:func:`sampling_probabilities` is what generation draws from: ``softmax(logits / T)`` over the ``k``
highest logits. :func:`same_character_score` measures a head of a trained model: the weight a query puts
on earlier copies of its own character, against the share a uniform causal head would put there.
"""

from __future__ import annotations

import math
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import Tensor

from ._validate import AttentionInputError, check_positive_int, shape_str
from .kv_cache import sampling_probabilities  # generation's one temperature and top-k, lesson 17's name for it
from .training import fit

__all__ = [
    "CORPUS",
    "WRITER",
    "Vocabulary",
    "bigram_counts",
    "bigram_loss",
    "evaluate",
    "learning_rate",
    "load_text",
    "random_batch",
    "same_character_score",
    "sampling_probabilities",
    "split",
    "train_on_text",
    "uniform_same_character_score",
    "unigram_loss",
]

CORPUS = Path(__file__).parent / "corpus"

#: Lesson 17's model and its live training (tuned to beat the counted trigram on held-out text within the
#: lesson's time on one CPU thread): a causal ``TinyTransformer(vocab_size, **WRITER["model"])`` trained
#: ``steps`` steps of ``batch_size`` windows of ``max_len`` characters with Adam, the rate warmed up over
#: ``warmup`` steps to ``lr`` then decayed along a cosine to ``final_lr`` (:func:`learning_rate`).
#: ``make models`` trains the same model for ``checkpoint_steps`` steps (``checkpoint_batch_size``, the rate
#: decayed from ``lr`` to ``checkpoint_final_lr``).
WRITER = {
    "model": {"d_model": 64, "num_heads": 4, "num_layers": 2, "max_len": 32},
    "steps": 700,
    "batch_size": 32,
    "lr": 1e-2,
    "warmup": 30,
    "final_lr": 5e-4,
    "checkpoint_steps": 4000,
    "checkpoint_batch_size": 32,
    "checkpoint_final_lr": 1e-3,
}


def learning_rate(step: int, steps: int, lr: float, final_lr: float | None = None, warmup: int = 0) -> float:
    """The rate at ``step`` (0-based) of ``steps``: a linear warm-up over ``warmup`` steps to ``lr``, then a
    cosine from ``lr`` down to ``final_lr`` at the last step (``final_lr=None``: constant after the warm-up)."""
    if step < warmup:
        return lr * (step + 1) / warmup
    if final_lr is None:
        return lr
    return final_lr + (lr - final_lr) * 0.5 * (1 + math.cos(math.pi * (step - warmup) / max(1, steps - warmup)))


def load_text(name: str = "macbeth") -> str:
    """The text ``attnlib/corpus/<name>.txt`` or ``<name>.txt.xz`` (its source and public-domain status:
    ``corpus/README.md``)."""
    path = CORPUS / f"{name}.txt"
    if path.is_file():
        return path.read_text(encoding="utf-8")
    packed = CORPUS / f"{name}.txt.xz"
    if packed.is_file():
        import lzma

        return lzma.decompress(packed.read_bytes()).decode("utf-8")
    have = sorted(p.name.split(".")[0] for p in CORPUS.glob("*.txt*"))
    raise FileNotFoundError(f"no text named {name!r} in {CORPUS}; the texts are {have}")


class Vocabulary:
    """The characters of a text, sorted: ``encode`` a string to ids ``(n,)``, ``decode`` ids back."""

    def __init__(self, text: str) -> None:
        if not isinstance(text, str) or not text:
            raise AttentionInputError(f"text must be a non-empty string, got {type(text).__name__} {text!r:.40}")
        self.characters = sorted(set(text))
        self.ids = {c: i for i, c in enumerate(self.characters)}

    def __len__(self) -> int:
        return len(self.characters)

    def encode(self, text: str) -> Tensor:
        unknown = sorted(set(text) - set(self.ids))
        if unknown:
            raise AttentionInputError(f"text has characters the vocabulary does not: {unknown[:10]}")
        return torch.tensor([self.ids[c] for c in text], dtype=torch.int64)

    def decode(self, ids: Tensor | list[int]) -> str:
        values = ids.tolist() if isinstance(ids, Tensor) else list(ids)
        if any(not 0 <= i < len(self) for i in values):
            raise AttentionInputError(f"ids must be from 0 to {len(self) - 1}")
        return "".join(self.characters[i] for i in values)


def _check_ids(name: str, ids: object, vocab_size: int | None = None) -> Tensor:
    if not isinstance(ids, Tensor) or ids.dim() != 1 or ids.dtype not in (torch.int64, torch.int32):
        got = f"{shape_str(ids)} {ids.dtype}" if isinstance(ids, Tensor) else type(ids).__name__
        raise AttentionInputError(f"{name} must be a 1-D integer tensor of token ids (n,), got {got}")
    if vocab_size is not None and ids.numel() and (int(ids.min()) < 0 or int(ids.max()) >= vocab_size):
        raise AttentionInputError(f"{name} has ids {int(ids.min())}…{int(ids.max())}, outside 0…{vocab_size - 1}")
    return ids.long()


def split(ids: Tensor, fraction: float = 0.9) -> tuple[Tensor, Tensor]:
    """The first ``fraction`` of the text to train on, the rest held out (the end of the play)."""
    ids = _check_ids("ids", ids)
    if not 0 < fraction < 1:
        raise AttentionInputError(f"fraction must be between 0 and 1, got {fraction!r}")
    cut = int(len(ids) * fraction)
    return ids[:cut], ids[cut:]


def random_batch(ids: Tensor, n_tokens: int, batch_size: int, generator: torch.Generator) -> tuple[Tensor, Tensor]:
    """``batch_size`` windows of ``n_tokens`` at random starts: ``inputs (b, n)``, ``targets (b, n)`` one later."""
    ids = _check_ids("ids", ids)
    check_positive_int("n_tokens", n_tokens)
    check_positive_int("batch_size", batch_size)
    if len(ids) <= n_tokens:
        raise AttentionInputError(f"ids has {len(ids)} tokens: a window of n_tokens={n_tokens} plus one needs more")
    starts = torch.randint(0, len(ids) - n_tokens, (batch_size,), generator=generator)
    windows = torch.stack([ids[s : s + n_tokens + 1] for s in starts.tolist()])
    return windows[:, :-1], windows[:, 1:]


def unigram_loss(train: Tensor, held_out: Tensor, vocab_size: int) -> float:
    """Cross-entropy (nats per character) on ``held_out`` of the character frequencies of ``train``.

    Add-one smoothed: a character ``train`` never showed still has probability ``1 / (len(train) + vocab_size)``.
    """
    check_positive_int("vocab_size", vocab_size)
    train, held_out = _check_ids("train", train, vocab_size), _check_ids("held_out", held_out, vocab_size)
    counts = torch.bincount(train, minlength=vocab_size).double() + 1
    log_p = counts.log() - counts.sum().log()
    return float(-log_p[held_out].mean())


def bigram_counts(train: Tensor, vocab_size: int) -> Tensor:
    """``(vocab_size, vocab_size)``: row = a character, column = the character that follows it, add-one."""
    train = _check_ids("train", train, vocab_size)
    pairs = train[:-1] * vocab_size + train[1:]
    return torch.bincount(pairs, minlength=vocab_size * vocab_size).double().view(vocab_size, vocab_size) + 1


def bigram_loss(train: Tensor, held_out: Tensor, vocab_size: int) -> float:
    """Cross-entropy (nats per character) on ``held_out`` of the next character given only the one before.

    Probabilities from the add-one smoothed pair counts of ``train``, each row normalised; scored on every
    pair of neighbours in ``held_out``.
    """
    check_positive_int("vocab_size", vocab_size)
    counts = bigram_counts(train, vocab_size)
    held_out = _check_ids("held_out", held_out, vocab_size)
    if len(held_out) < 2:
        raise AttentionInputError(f"held_out must have at least 2 tokens (one pair), got {len(held_out)}")
    log_p = counts.log() - counts.sum(-1, keepdim=True).log()
    return float(-log_p[held_out[:-1], held_out[1:]].mean())


def train_on_text(
    model: torch.nn.Module,
    ids: Tensor,
    *,
    steps: int,
    n_tokens: int,
    batch_size: int,
    lr: float,
    final_lr: float | None = None,
    warmup: int = 0,
    seed: int = 0,
    progress: bool = True,
) -> list[float]:
    """Train ``model`` on next-character prediction over ``ids`` with :func:`attnlib.training.fit`; return the
    loss of every step.

    The loop lesson 17's learner runs: ``batch_size`` random windows per step (:func:`random_batch`, drawn
    from a generator seeded with ``seed``), cross-entropy, ``zero_grad``, ``backward``, one step of attnlib's
    Adam at the rate of :func:`learning_rate` (``warmup``, ``final_lr``), on one thread.
    """

    def step_loss(generator: torch.Generator) -> Tensor:
        inputs, targets = random_batch(ids, n_tokens, batch_size, generator)
        logits = model(inputs)
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))

    return fit(
        model,
        step_loss,
        steps=check_positive_int("steps", steps),
        lr=lr,
        seed=seed,
        lr_at=lambda step: learning_rate(step - 1, steps, lr, final_lr, warmup),
        progress=progress,
        desc="training on the text",
    )


_CHUNK = 64  # windows per forward in evaluate


@torch.no_grad()
def evaluate(model: torch.nn.Module, ids: Tensor, n_tokens: int, *, max_windows: int | None = None) -> float:
    """Mean next-character loss of ``model`` on ``ids``, cut into consecutive windows of ``n_tokens`` (+1).

    Every window is scored at every position (the first characters of a window see little context, as at
    the start of generation). ``max_windows``: score only the first so many.
    """
    ids = _check_ids("ids", ids)
    check_positive_int("n_tokens", n_tokens)
    count = (len(ids) - 1) // n_tokens
    if count < 1:
        raise AttentionInputError(f"ids has {len(ids)} tokens, fewer than one window of n_tokens={n_tokens} + 1")
    if max_windows is not None:
        count = min(count, check_positive_int("max_windows", max_windows))
    inputs = ids[: count * n_tokens].view(count, n_tokens)
    targets = ids[1 : count * n_tokens + 1].view(count, n_tokens)
    was_training = model.training
    model.eval()
    total = 0.0
    for start in range(0, count, _CHUNK):  # a few windows at a time: small tensors stay in the CPU's cache
        logits = model(inputs[start : start + _CHUNK])
        chunk = targets[start : start + _CHUNK]
        total += float(F.cross_entropy(logits.reshape(-1, logits.shape[-1]), chunk.reshape(-1), reduction="sum"))
    model.train(was_training)
    return total / targets.numel()


def _same_character(ids: Tensor) -> Tensor:
    """``(batch, n, n)``: 1 where key ``j < i`` holds the same character as query ``i``."""
    same = ids[:, :, None] == ids[:, None, :]
    earlier = torch.ones(ids.shape[1], ids.shape[1], dtype=torch.bool).tril(-1)
    return same & earlier


def _check_map(weights: object, ids: object) -> tuple[Tensor, Tensor]:
    if not isinstance(ids, Tensor) or ids.dim() != 2 or ids.is_floating_point():
        got = shape_str(ids) if isinstance(ids, Tensor) else type(ids).__name__
        raise AttentionInputError(f"ids must be an integer tensor (batch, n), got {got}")
    n = ids.shape[1]
    if not isinstance(weights, Tensor) or weights.shape != (ids.shape[0], n, n):
        got = shape_str(weights) if isinstance(weights, Tensor) else type(weights).__name__
        raise AttentionInputError(f"weights must be one head's maps (batch, n, n) = {(ids.shape[0], n, n)}, got {got}")
    return weights, ids


def same_character_score(weights: Tensor, ids: Tensor) -> float:
    """Mean weight a query puts on the earlier keys that hold its own character.

    ``weights (batch, n, n)`` one head's maps on ``ids (batch, n)``; averaged over the queries that have an
    earlier copy of their character (NaN if none has).
    """
    weights, ids = _check_map(weights, ids)
    same = _same_character(ids)
    has = same.any(-1)
    return float((weights * same).sum(-1)[has].mean())


def uniform_same_character_score(ids: Tensor) -> float:
    """The baseline: what a head spreading its weight evenly over the keys ``0 … i`` scores."""
    same = _same_character(ids)
    has = same.any(-1)
    share = same.sum(-1).double() / torch.arange(1, ids.shape[1] + 1)
    return float(share[has].mean())
