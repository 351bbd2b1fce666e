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
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor

from ._validate import AttentionInputError, check_positive_int
from .heads import ablated
from .tasks import Task
from .training import CHECKPOINTS, History, fit, load_checkpoint, save_checkpoint
from .transformer import Block, TinyTransformer

__all__ = [
    "ADJECTIVES",
    "ANIMALS",
    "ANIMAL_ADJECTIVES",
    "CONFIG",
    "IT",
    "MODEL",
    "NOUNS",
    "PIECES",
    "PLACES",
    "PLACE_ADJECTIVES",
    "SEEDS",
    "TWIN",
    "VOCAB",
    "PronounTask",
    "accuracy",
    "attention_from_it",
    "attention_profile",
    "build",
    "decode",
    "encode",
    "evidence",
    "example",
    "learning_rate",
    "load",
    "outcomes",
    "patched",
    "predict",
    "referent",
    "referent_mass",
    "referent_scores",
    "sentences",
    "train_encoder",
    "twin_margins",
    "twins",
]

ANIMALS = (
    "animal",
    "dog",
    "cat",
    "horse",
    "cow",
    "sheep",
    "goat",
    "fox",
    "deer",
    "bear",
    "rabbit",
    "mouse",
    "duck",
    "pig",
    "chicken",
    "wolf",
)
PLACES = (
    "street",
    "road",
    "river",
    "bridge",
    "highway",
    "lane",
    "track",
    "field",
    "stream",
    "canal",
    "path",
    "avenue",
    "railway",
    "square",
    "creek",
    "valley",
)
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

#: the encoder's size (``TinyTransformer`` keywords beyond the language's own): two heads in each layer
MODEL = {"d_model": 32, "num_heads": 2, "num_layers": 2, "mlp": False}
#: all of ``TinyTransformer``'s keyword arguments: bidirectional (``causal=False``), twelve positions
CONFIG = {"vocab_size": len(VOCAB), "max_len": N_WORDS, "causal": False, **MODEL}
#: the training the lesson runs live and ``make models`` repeats: Adam, a short warm-up, then a cosine decay
STEPS, LR, BATCH, WARMUP, SEED = 300, 2e-2, 64, 20, 0
SEEDS = (0, 1, 2, 3, 4)  # the spread the lesson reports
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


def example(
    animal: str = "animal", place: str = "street", adjective: str = "tired", *, animal_first: bool = True
) -> list[str]:
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
def build(seed: int = SEED, **changes: Any) -> TinyTransformer:
    """A fresh, seeded encoder (:data:`CONFIG`, with ``changes``)."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return TinyTransformer(**{**CONFIG, **changes})


def learning_rate(step: int, *, steps: int = STEPS, lr: float = LR, warmup: int = WARMUP) -> float:
    """The learning rate of optimiser step ``step`` (1 … ``steps``): linear warm-up, then a cosine down to 0."""
    if step <= warmup:
        return lr * step / warmup
    return lr * 0.5 * (1 + math.cos(math.pi * (step - warmup) / max(1, steps - warmup)))


def train_encoder(
    *,
    seed: int = SEED,
    steps: int = STEPS,
    lr: float = LR,
    batch_size: int = BATCH,
    progress: bool = True,
    every: int = 10,
    on_loss: Callable[[list[float]], None] | None = None,
    **changes: Any,
) -> tuple[TinyTransformer, History]:
    """Build (seeded) and train the encoder on the training split; return it in eval mode and its history.

    Each step of :func:`attnlib.training.fit` draws ``batch_size`` training sentences (seeded), scores the output
    at "it" with cross-entropy and takes one step of attnlib's Adam at :func:`learning_rate`. ``progress`` shows
    tqdm's bar; ``on_loss(losses)`` is called every ``every`` steps with the losses so far (the lesson draws its
    curve with it). Deterministic for a given seed on a given CPU kernel.
    """
    for name, value in (("seed", seed), ("steps", steps), ("batch_size", batch_size), ("every", every)):
        if isinstance(value, bool) or not isinstance(value, int) or value < (0 if name == "seed" else 1):
            raise AttentionInputError(f"{name} must be a whole number >= {0 if name == 'seed' else 1}, got {value!r}")
    model = build(seed, **changes)
    ids, answers, _ = sentences("train")
    history = History(probe=ids[:1])

    def step_loss(generator: torch.Generator) -> Tensor:
        pick = torch.randint(len(ids), (batch_size,), generator=generator)
        return F.cross_entropy(model(ids[pick])[:, IT], answers[pick])

    def after(step: int, losses: list[float]) -> None:
        if on_loss is not None and (step % every == 0 or step == steps):
            on_loss(losses)

    model.train()
    history.losses = fit(
        model,
        step_loss,
        steps=steps,
        lr=lr,
        seed=seed,
        lr_at=lambda step: learning_rate(step, steps=steps, lr=lr, warmup=min(WARMUP, steps)),
        on_step=after,
        progress=progress,
        desc=f"training seed {seed}",
    )
    return model.eval(), history


def save(model: TinyTransformer) -> Path:
    return save_checkpoint(model, {**CONFIG}, PATH)


def load() -> TinyTransformer:
    """The encoder ``make models`` trained with the lesson's recipe and seed 0 (its "skip the wait"), in eval mode."""
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
    return _profile(model, ids, positions)


def _profile(model: TinyTransformer, ids: Tensor, positions: Tensor) -> dict[str, Tensor]:
    """:func:`attention_profile` of the sentences ``ids`` whose referents are at ``positions``."""
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
    parts["rest"] = 1 - sum(parts.values(), torch.zeros(()))
    return parts


@torch.no_grad()
def twin_margins(model: TinyTransformer, split: str = "held-out") -> Tensor:
    """Each head's weight from "it" on the referent minus its weight on the other noun, averaged over every
    sentence of ``split`` *and* its twin (:func:`twins`): ``(num_layers, num_heads)``.

    Each twin has the other referent, so the pairs balance referent kind, template and noun: a head that always
    prefers one noun — places, say, or word 6 — scores about 0 here however uneven ``split`` is.
    """
    ids, _, positions = sentences(split)
    ones, their_twins = _profile(model, ids, positions), _profile(model, twins(ids), 7 - positions)  # nouns: 1, 6
    return (ones["referent"] - ones["other noun"] + their_twins["referent"] - their_twins["other noun"]) / 2


@torch.no_grad()
def outcomes(model: TinyTransformer, split: str = "held-out") -> dict[str, float]:
    """What the model outputs at "it", as shares of ``split``'s sentences (they sum to 1).

    ``"referent"``, ``"other noun"`` (the sentence's other noun), ``"noun not in the sentence"`` and
    ``"other word"``. Run it inside :func:`attnlib.heads.ablated` to see what an ablated model says.
    """
    ids, answers, positions = sentences(split)
    said = model(_check_ids(model, ids))[:, IT].argmax(-1)
    other = ids[torch.arange(len(ids)), 7 - positions]
    is_noun = torch.isin(said, torch.tensor([WORD_ID[w] for w in NOUNS]))
    shares = {
        "referent": said == answers,
        "other noun": said == other,
        "noun not in the sentence": is_noun & (said != answers) & (said != other),
    }
    result = {name: float(hit.float().mean()) for name, hit in shares.items()}
    result["other word"] = float((~is_noun).float().mean())
    return result


# ---------------------------------------------------------------- twins and activation patching
#: each adjective's twin: the adjective of the other kind at the same place in its list (tired ↔ wide …)
TWIN = {
    **dict(zip(ANIMAL_ADJECTIVES, PLACE_ADJECTIVES, strict=True)),
    **dict(zip(PLACE_ADJECTIVES, ANIMAL_ADJECTIVES, strict=True)),
}
PIECES = ("query", "keys", "values", "keys and values", "layer-1 output")
#: where the adjective's kind can enter layer 2's keys and values on its way to "it": the two nouns and the adjective
ROUTE_POSITIONS = (1, 6, N_WORDS - 1)


def twins(ids: Tensor) -> Tensor:
    """``ids (batch, 12)`` with each adjective (word 11) replaced by its :data:`TWIN`: the referent becomes the
    other noun, and nothing else changes."""
    if not isinstance(ids, Tensor) or ids.dim() != 2 or ids.shape[1] != N_WORDS:
        raise AttentionInputError(f"ids must be sentences (batch, {N_WORDS}) from sentences() or encode()")
    twin_id = {WORD_ID[a]: WORD_ID[b] for a, b in TWIN.items()}
    adjectives = ids[:, N_WORDS - 1].tolist()
    if any(a not in twin_id for a in adjectives):
        raise AttentionInputError("every sentence's word 11 must be an adjective, as in the templates")
    out = ids.clone()
    out[:, N_WORDS - 1] = torch.tensor([twin_id[a] for a in adjectives])
    return out


def _sites(model: TinyTransformer, piece: str) -> tuple[torch.nn.Module, ...]:
    if piece not in PIECES:
        raise AttentionInputError(f"piece must be one of {PIECES}, got {piece!r}")
    if len(model.blocks) != 2:
        raise AttentionInputError(f"patching reads a two-layer model; this one has {len(model.blocks)} layers")
    first, second = model.blocks
    if not isinstance(second, Block):
        raise AttentionInputError(f"patching needs attnlib's Block (block=None), got a {type(second).__name__}")
    attention = second.attention
    return {
        "query": (attention.w_query,),
        "keys": (attention.w_key,),
        "values": (attention.w_value,),
        "keys and values": (attention.w_key, attention.w_value),
        "layer-1 output": (first,),
    }[piece]


@torch.no_grad()
def patched(
    model: TinyTransformer, ids: Tensor, donor: Tensor, piece: str, positions: Sequence[int] | None = None
) -> tuple[Tensor, Tensor]:
    """Run ``model`` on ``ids`` with one piece of its computation taken from its run on ``donor``.

    ``piece``: ``"query"`` — layer 2's queries (every head's) at ``positions`` (default: "it" alone);
    ``"keys"`` / ``"values"`` / ``"keys and values"`` — layer 2's keys, its values or both at ``positions``
    (default: every word): the keys move only where layer 2 looks, the values only what it brings back;
    ``"layer-1 output"`` — the vectors layer 1 passes on (the residual stream after block 1) at ``positions``
    (default: "it" alone).
    ``ids``, ``donor``: ``(batch, 12)``, sentence ``b`` of one patched from sentence ``b`` of the other.

    Returns the logits at "it" ``(batch, vocab)`` and layer 2's weights from "it" ``(batch, num_heads, 12)``.
    """
    sites = _sites(model, piece)
    _check_ids(model, ids)
    _check_ids(model, donor)
    if ids.shape != donor.shape:
        raise AttentionInputError(f"ids {tuple(ids.shape)} and donor {tuple(donor.shape)} must have the same shape")
    if positions is None:
        positions = range(ids.shape[1]) if piece in ("keys", "values", "keys and values") else (IT,)
    columns = list(positions)
    if not columns or any(isinstance(p, bool) or not isinstance(p, int) or not 0 <= p < ids.shape[1] for p in columns):
        raise AttentionInputError(f"positions must be word positions 0…{ids.shape[1] - 1}, got {list(positions)!r}")
    saved: dict[torch.nn.Module, Tensor] = {}

    def record(module: torch.nn.Module, _args: tuple[Any, ...], out: Tensor | tuple[Tensor, ...]) -> None:
        saved[module] = (out[0] if isinstance(out, tuple) else out).clone()

    def replace(
        module: torch.nn.Module, _args: tuple[Any, ...], out: Tensor | tuple[Tensor, ...]
    ) -> Tensor | tuple[Tensor, ...]:
        x = (out[0] if isinstance(out, tuple) else out).clone()
        x[:, columns] = saved[module][:, columns]
        return (x, *out[1:]) if isinstance(out, tuple) else x

    for hook, batch in ((record, donor), (replace, ids)):
        handles = [site.register_forward_hook(hook) for site in sites]
        try:
            logits = model(batch)
        finally:
            for handle in handles:
                handle.remove()
    return logits[:, IT], model.attention_maps[1][:, :, IT]


@torch.no_grad()
def referent_scores(model: TinyTransformer, ids: Tensor, positions: Tensor) -> Tensor:
    """``(num_layers, num_heads)``: each head's mean weight from "it" on the word at ``positions (batch,)``."""
    model(_check_ids(model, ids))
    rows = torch.arange(len(ids))
    return torch.stack([m[rows, :, IT, positions].mean(0) for m in model.attention_maps])


@torch.no_grad()
def evidence(model: TinyTransformer, split: str = "held-out") -> dict[str, float]:
    """The figures the lesson reports for one trained model (the seed table):

    ``accuracy``; ``head``: the best layer-2 head (from 0) by referent score, and its ``score``;
    ``query swap``: that head's weight on the referent when layer 2's query at "it" comes from the twin;
    ``keys swap``: the same when layer 2's keys come from the twin; ``flip at it`` / ``flip at nouns`` /
    ``flip at adjective`` / ``flip at all four``: the share of predictions that become the twin's referent when
    layer 1's output at "it" / at both nouns / at the adjective / at those four words together comes from the twin;
    ``flip by keys`` / ``flip by values`` / ``flip by keys and values``: the same share when layer 2's keys, its
    values or both come from the twin at the nouns and the adjective (:data:`ROUTE_POSITIONS`);
    ``layer 2 off: referent`` / ``… other noun`` / ``… noun not in the sentence``: what the model says with all of
    layer 2 mean-ablated (:func:`outcomes`).
    """
    ids, _, positions = sentences(split)
    donor = twins(ids)
    other = ids[torch.arange(len(ids)), 7 - positions]  # the twin's referent
    scores = referent_scores(model, ids, positions)
    head = int(scores[1].argmax())
    rows = torch.arange(len(ids))
    figures = {"accuracy": accuracy(model, split), "head": head, "score": float(scores[1, head])}
    for name, piece in (("query swap", "query"), ("keys swap", "keys")):
        _, weights = patched(model, ids, donor, piece)
        figures[name] = float(weights[rows, head, positions].mean())
    places = {"flip at it": [IT], "flip at nouns": [1, 6], "flip at adjective": [N_WORDS - 1]}
    places["flip at all four"] = [1, 6, IT, N_WORDS - 1]
    for name, where in places.items():
        logits, _ = patched(model, ids, donor, "layer-1 output", where)
        figures[name] = float((logits.argmax(-1) == other).float().mean())
    for piece in ("keys", "values", "keys and values"):
        logits, _ = patched(model, ids, donor, piece, ROUTE_POSITIONS)
        figures[f"flip by {piece}"] = float((logits.argmax(-1) == other).float().mean())
    second = model.blocks[1]
    assert isinstance(second, Block)  # patched() above refused any other block
    with ablated(model, 1, tuple(range(second.attention.num_heads)), how="mean"):
        said = outcomes(model, split)
    for name in ("referent", "other noun", "noun not in the sentence"):
        figures[f"layer 2 off: {name}"] = said[name]
    return figures
