"""What "it" refers to (lesson 16): a small template language, its splits, and a tiny encoder that resolves the pronoun.

Every sentence has twelve words, two nouns and one pronoun, in one of two templates::

    the  <animal> did not <cross|reach|enter>  the <place>  because it was too <adjective>
    the  <place>  did not <suit|please|tempt>  the <animal> because it was too <adjective>

"it" is always word 8 and the adjective word 11; the two nouns are words 1 and 6, an animal in one of
them and a place in the other. An animal adjective (*tired*, *hungry* …) makes "it" the animal, a place
adjective (*wide*, *muddy* …) the place. Neither the position nor the verb decides: a model has to read
the adjective and find the noun of the matching kind.

A model reads the whole sentence (no causal mask) and must output, at the position of "it", the noun
itself (``"dog"``, ``"river"``), one of 32. Held out: a quarter of the (noun, adjective) pairs; the
held-out sentences pair *both* nouns with an adjective never seen with them in training.

Shapes: ``ids (batch, n)`` word ids; a model's attention from "it": ``(num_layers, num_heads, n)``.
"""

from __future__ import annotations

import difflib
import functools
import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

from ._validate import AttentionInputError, check_positive_int
from .tasks import Task
from .training import CHECKPOINTS, History, load_checkpoint, save_checkpoint, train
from .transformer import TinyTransformer

__all__ = [
    "ADJECTIVES",
    "ANIMALS",
    "ANIMAL_ADJECTIVES",
    "CONFIG",
    "IT",
    "MODEL",
    "NOUNS",
    "PLACES",
    "PLACE_ADJECTIVES",
    "VOCAB",
    "PronounTask",
    "accuracy",
    "attention_from_it",
    "attention_profile",
    "build",
    "decode",
    "encode",
    "example",
    "load",
    "predict",
    "referent",
    "referent_mass",
    "sentences",
    "train_encoder",
]

ANIMALS = (
    "animal", "dog", "cat", "horse", "cow", "sheep", "goat", "fox",
    "deer", "bear", "rabbit", "mouse", "duck", "pig", "chicken", "wolf",
)  # fmt: skip
PLACES = (
    "street", "road", "river", "bridge", "highway", "lane", "track", "field",
    "stream", "canal", "path", "avenue", "railway", "square", "creek", "valley",
)  # fmt: skip
ANIMAL_ADJECTIVES = ("tired", "sleepy", "scared", "lazy", "weak", "hungry", "nervous", "afraid", "exhausted", "timid")
PLACE_ADJECTIVES = ("wide", "busy", "long", "muddy", "icy", "flooded", "slippery", "crowded", "deep", "steep")
ANIMAL_VERBS = ("cross", "reach", "enter")  # the animal does something to the place
PLACE_VERBS = ("suit", "please", "tempt")  # the place does something to the animal
FUNCTION_WORDS = ("the", "did", "not", "because", "it", "was", "too")

NOUNS = ANIMALS + PLACES
ADJECTIVES = ANIMAL_ADJECTIVES + PLACE_ADJECTIVES
#: every word the model knows, in id order
VOCAB: tuple[str, ...] = FUNCTION_WORDS + ANIMAL_VERBS + PLACE_VERBS + NOUNS + ADJECTIVES
WORD_ID = {w: i for i, w in enumerate(VOCAB)}
IT = 8  # the position of "it" in both templates
N_WORDS = 12
HELD_OUT_SHARE = 4  # one (noun, adjective) pair in this many is held out
SPLIT_SEED = 2026

#: the encoder's size (``TinyTransformer`` keywords beyond the language's own)
MODEL = {"d_model": 32, "num_heads": 1, "num_layers": 2, "mlp": False}
#: all of ``TinyTransformer``'s keyword arguments: bidirectional (``causal=False``), twelve positions
CONFIG = {"vocab_size": len(VOCAB), "max_len": N_WORDS, "causal": False, **MODEL}
STEPS, LR, SEED = 1500, 3e-3, 0  # the full budget (make models); the lesson trains a few hundred steps live
PATH = CHECKPOINTS / "pronouns.pt"


# ---------------------------------------------------------------- words ↔ ids
def _words(sentence: object, name: str) -> list[str]:
    if isinstance(sentence, str):
        words = sentence.lower().replace(".", " ").replace(",", " ").split()
    elif isinstance(sentence, Sequence) and all(isinstance(w, str) for w in sentence):
        words = [w.lower() for w in sentence]
    else:
        raise AttentionInputError(f"{name} must be text or a list of words, got {type(sentence).__name__}")
    if not words:
        raise AttentionInputError(f"{name} is empty: type a sentence such as {' '.join(example())!r}")
    return words


def encode(sentence: str | Sequence[str], *, max_len: int = N_WORDS, name: str = "sentence") -> Tensor:
    """``"the dog did not …"`` (or a list of words) → ids ``(1, n)``; an unknown word is an error naming it."""
    words = _words(sentence, name)
    for word in words:
        if word not in WORD_ID:
            close = difflib.get_close_matches(word, VOCAB, n=3)
            hint = f"; did you mean {', '.join(close)}?" if close else f"; known nouns include {', '.join(NOUNS[:6])} …"
            if "'" in word:
                hint = "; it reads whole words only: write did not instead of didn't"
            raise AttentionInputError(f"{name}: the model does not know the word {word!r}{hint}")
    if len(words) > max_len:
        raise AttentionInputError(
            f"{name} has {len(words)} words but the model reads at most max_len={max_len}; shorten it"
        )
    return torch.tensor([[WORD_ID[w] for w in words]])


def decode(ids: Tensor | Sequence[int]) -> list[str]:
    """Word ids ``(n,)`` → the words."""
    return [VOCAB[int(i)] for i in (ids.reshape(-1).tolist() if isinstance(ids, Tensor) else ids)]


def example(animal: str = "animal", place: str = "street", adjective: str = "tired", *, animal_first: bool = True):
    """One sentence of the language as a list of twelve words."""
    if animal_first:
        return ["the", animal, "did", "not", "cross", "the", place, "because", "it", "was", "too", adjective]
    return ["the", place, "did", "not", "suit", "the", animal, "because", "it", "was", "too", adjective]


def referent(sentence: str | Sequence[str]) -> str:
    """The noun "it" refers to by the language's rule: the animal with an animal adjective, else the place.

    ``sentence`` must have exactly one animal, one place and one adjective, each from the vocabulary.
    """
    words = _words(sentence, "sentence")
    encode(words)  # unknown words, length
    found = {
        kind: [w for w in words if w in group]
        for kind, group in (("animal", ANIMALS), ("place", PLACES), ("adjective", ADJECTIVES))
    }
    for kind, hits in found.items():
        if len(hits) != 1:
            raise AttentionInputError(f"sentence must have exactly one {kind}, found {len(hits)}: {hits}")
    return found["animal"][0] if found["adjective"][0] in ANIMAL_ADJECTIVES else found["place"][0]


# ---------------------------------------------------------------- the splits
@functools.cache
def held_out_pairs() -> frozenset[tuple[str, str]]:
    """The (noun, adjective) pairs no training sentence contains: one in :data:`HELD_OUT_SHARE`, seeded."""
    pairs = list(itertools.product(NOUNS, ADJECTIVES))
    order = torch.randperm(len(pairs), generator=torch.Generator().manual_seed(SPLIT_SEED)).tolist()
    return frozenset(pairs[i] for i in order[: len(pairs) // HELD_OUT_SHARE])


@functools.cache
def sentences(split: str = "train") -> tuple[Tensor, Tensor, Tensor]:
    """Every sentence of ``split`` (``"train"`` or ``"held-out"``): ``ids (N, 12)``, the referent's word id
    ``(N,)`` and its position ``(N,)`` (1 or 6).

    Training sentences contain no held-out pair; held-out sentences pair both nouns with their adjective
    in a held-out pair. (Sentences with one of each belong to neither.)
    """
    if split not in ("train", "held-out"):
        raise AttentionInputError(f"split must be 'train' or 'held-out', got {split!r}")
    held = held_out_pairs()
    rows, targets, positions = [], [], []
    for animal, place, adjective in itertools.product(ANIMALS, PLACES, ADJECTIVES):
        n_held = ((animal, adjective) in held) + ((place, adjective) in held)
        if n_held != (0 if split == "train" else 2):
            continue
        answer = animal if adjective in ANIMAL_ADJECTIVES else place
        for animal_first, verbs in ((True, ANIMAL_VERBS), (False, PLACE_VERBS)):
            for verb in verbs:
                words = example(animal, place, adjective, animal_first=animal_first)
                words[4] = verb
                rows.append([WORD_ID[w] for w in words])
                targets.append(WORD_ID[answer])
                positions.append(words.index(answer))
    return torch.tensor(rows), torch.tensor(targets), torch.tensor(positions)


@dataclass(frozen=True)
class PronounTask(Task):
    """Batches of one split's sentences for :func:`attnlib.training.train`: only the prediction at "it" counts.

    ``inputs (batch, 12)``; ``targets (batch, 12)`` = the inputs except the referent at position 8.
    """

    vocab_size: int = len(VOCAB)
    n_tokens: int = N_WORDS
    split: str = "train"
    name = "pronouns"

    def batch(self, batch_size: int, generator: torch.Generator) -> tuple[Tensor, Tensor, Tensor]:
        check_positive_int("batch_size", batch_size)
        ids, answers, _ = sentences(self.split)
        pick = torch.randint(len(ids), (batch_size,), generator=generator)
        inputs = ids[pick]
        targets = inputs.clone()
        targets[:, IT] = answers[pick]
        return inputs, targets, self.counted()

    def counted(self) -> Tensor:
        counted = torch.zeros(self.n_tokens, dtype=torch.bool)
        counted[IT] = True
        return counted


# ---------------------------------------------------------------- the model
def build(seed: int = SEED, **changes) -> TinyTransformer:
    """A fresh, seeded encoder (:data:`CONFIG`, with ``changes``)."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return TinyTransformer(**{**CONFIG, **changes})


def train_encoder(
    *, steps: int = STEPS, seed: int = SEED, lr: float = LR, progress: bool = True, **changes
) -> tuple[TinyTransformer, History]:
    """Build and train the encoder on the training split (tqdm bar with ``progress``); eval mode."""
    model = build(seed, **changes)
    history = train(model, PronounTask(), steps=steps, lr=lr, seed=seed, progress=progress)
    return model.eval(), history


def save(model: TinyTransformer) -> None:
    save_checkpoint(model, {**CONFIG}, PATH)


def load() -> TinyTransformer:
    """The committed encoder (``make models``), in eval mode."""
    return load_checkpoint(PATH)


def _check_ids(model: TinyTransformer, ids: Tensor) -> Tensor:
    if not isinstance(ids, Tensor) or ids.dim() != 2 or ids.dtype != torch.int64:
        raise AttentionInputError("ids must be an integer tensor (batch, n) from encode()")
    if ids.shape[1] <= IT or bool((ids[:, IT] != WORD_ID["it"]).any()):
        raise AttentionInputError(f'"it" must be word {IT} (counting from 0) of every sentence, as in the templates')
    if ids.shape[1] > model.max_len:
        raise AttentionInputError(f"the sentences have {ids.shape[1]} words; the model reads at most {model.max_len}")
    return ids


@torch.no_grad()
def predict(model: TinyTransformer, sentence: str | Sequence[str]) -> tuple[str, float]:
    """The word the model outputs at "it" and its probability. "it" may be anywhere (exactly once)."""
    words = _words(sentence, "sentence")
    ids = encode(words, max_len=model.max_len)
    if words.count("it") != 1:
        raise AttentionInputError(f'sentence must contain the word "it" exactly once, found {words.count("it")}')
    probabilities = model(ids)[0, words.index("it")].softmax(-1)
    best = int(probabilities.argmax())
    return VOCAB[best], float(probabilities[best])


@torch.no_grad()
def attention_from_it(model: TinyTransformer, sentence: str | Sequence[str]) -> Tensor:
    """Each layer's and head's weights from "it" over the words: ``(num_layers, num_heads, n)``."""
    words = _words(sentence, "sentence")
    ids = encode(words, max_len=model.max_len)
    if words.count("it") != 1:
        raise AttentionInputError(f'sentence must contain the word "it" exactly once, found {words.count("it")}')
    model(ids)
    return torch.stack([m[0, :, words.index("it")] for m in model.attention_maps])


@torch.no_grad()
def accuracy(model: TinyTransformer, split: str = "held-out") -> float:
    """Share of ``split``'s sentences (all of them) whose prediction at "it" is the referent."""
    ids, answers, _ = sentences(split)
    return float((model(_check_ids(model, ids))[:, IT].argmax(-1) == answers).float().mean())


@torch.no_grad()
def referent_mass(model: TinyTransformer, split: str = "held-out") -> Tensor:
    """``(num_layers, num_heads)``: each head's weight from "it" on the referent noun, mean over ``split``."""
    ids, _, positions = sentences(split)
    model(_check_ids(model, ids))
    rows = torch.arange(len(ids))
    return torch.stack([m[rows, :, IT, positions].mean(0) for m in model.attention_maps])


@torch.no_grad()
def attention_profile(model: TinyTransformer, split: str = "held-out") -> dict[str, Tensor]:
    """Where each head's attention from "it" goes, mean over ``split``: ``(num_layers, num_heads)`` per part.

    Parts: ``"referent"``, ``"other noun"``, ``"adjective"`` (word 11), ``"it"`` (itself) and ``"rest"``;
    they sum to 1 for every head.
    """
    ids, _, positions = sentences(split)
    model(_check_ids(model, ids))
    rows = torch.arange(len(ids))
    other = 7 - positions  # the nouns are words 1 and 6
    weights = torch.stack([m[:, :, IT, :] for m in model.attention_maps], dim=1)  # (N, layers, heads, n)
    parts = {
        "referent": weights[rows, ..., positions],
        "other noun": weights[rows, ..., other],
        "adjective": weights[..., N_WORDS - 1],
        "it": weights[..., IT],
    }
    parts = {name: part.mean(0) for name, part in parts.items()}
    parts["rest"] = 1 - sum(parts.values())
    return parts
