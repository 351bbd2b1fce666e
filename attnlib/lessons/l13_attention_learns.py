"""Lesson 13 · Build and train: its explorer and its exercise checkers.

Lesson 13 explorer: an attention map forming while a model trains, and the trained model on your input.

Lesson 13 exercises: the learner builds the block, the model and the training step, then changes an experiment.

- ``attention_learns.1`` predict: in the reverse task with n = 8, which input position does output 2 attend to?
- ``attention_learns.2`` code: the ``forward`` of a pre-LN transformer block (``MyBlock``), run on new inputs.
- ``attention_learns.3`` code: ``MyTransformer.embed(ids)``: token vectors plus the first n position vectors.
- ``attention_learns.4`` code: ``MyTransformer.mask(n)``: the causal mask (True = may attend), None when not causal.
- ``attention_learns.5`` code: ``MyTransformer.read_out(x)``: the final layer norm, then the read-out.
- ``attention_learns.6`` code: the whole model (``MyTransformer``): its blocks in turn, with the mask, between
  ``embed`` and ``read_out`` — given attnlib's parameters on configurations the lesson never used, it must give
  its logits. (13.3–13.5 check the parts on sizes of their own.)
- ``attention_learns.7`` code: ``train_step(model, optimiser, inputs, targets)``: forward, loss, backward, step.
- ``attention_learns.8`` code: ``next_token_loss(logits, ids)``: the loss of next-token prediction (the shift by one).
- ``attention_learns.9`` transfer: the copy task without its causal mask — where would position 7 simply look?
- ``attention_learns.10`` change an experiment: the reverse task with a causal mask — hand in the trained model;
  the checker measures it per position on sequences the lesson never showed.

Before this split (issue #35) the whole model was ``attention_learns.3`` and the later exercises were numbered
4–7; the names ``learning.1``–``learning.6`` of an older lesson still work.
"""

from __future__ import annotations

import functools
import html
import inspect
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Protocol, TypedDict, TypeVar, cast

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from ..modules import causal_mask
from ..positions import LearnedPositions
from ..show import ui
from ..show.explorer import Explorer, HeatmapView, Shown
from ..tasks import ReverseTask, Task
from ..training import Adam, History, train
from ..transformer import Block, TinyTransformer
from ._calls import compare_call
from ._check import (
    ATTNLIB,
    Feedback,
    Wrong,
    compare_number,
    compare_tensor,
    course_code,
    exercise,
    library_feedback,
    run_learner_code,
    to_answer_tensor,
)

if TYPE_CHECKING:
    from ..show.plots import Plot

__all__ = [
    "BLOCK_PARTS",
    "MODEL_PARTS",
    "LossCurve",
    "TrainingExplorer",
    "attnlib_twin",
    "block_forward",
    "causal_reverse",
    "mirror_position",
    "model_forward",
    "next_token_loss",
    "no_mask",
    "parse_tokens",
    "pick_yours",
    "train_step",
    "wrong_answers",
]


def parse_tokens(text: str, *, vocab_size: int, n_tokens: int) -> torch.Tensor:
    """Token ids typed as numbers separated by spaces or commas → ``(1, n_tokens)``; a clear error otherwise."""
    parts = [p for p in text.replace(",", " ").split() if p]
    if len(parts) != n_tokens:
        raise ValueError(f"type exactly {n_tokens} token ids (this model's sequence length), got {len(parts)}")
    ids = []
    for p in parts:
        if not p.lstrip("-").isdigit():
            raise ValueError(f"{p!r} is not a token id: type whole numbers from 0 to {vocab_size - 1}")
        value = int(p)
        if not 0 <= value < vocab_size:
            raise ValueError(f"token id {value} is out of range: the vocabulary has ids 0 to {vocab_size - 1}")
        ids.append(value)
    return torch.tensor([ids])


class TrainingValues(TypedDict):
    """What :meth:`TrainingExplorer.compute` reads: the controls' values."""

    step: int
    sequence: str


class TrainingExplorer(Explorer):
    """Slide through training: the attention map on one probe sequence at each stored step.

    Args:
        history: from :func:`attnlib.training.train` with ``snapshot_steps``.
        model: the trained model (for the ``sequence`` view): type your own input and see its attention.
        task: the task both were trained on (sets the allowed ids and length).
        step: the training step shown first (one of the snapshot steps).
        layer, head: which attention map.

    Controls: ``step`` (a slider over the stored steps) and ``sequence`` (token ids, Enter to apply).
    Views: ``during`` (the probe's map at that step) and ``trained`` (the final model on ``sequence``).
    """

    def __init__(
        self,
        history: History,
        model: TinyTransformer,
        task: Task,
        *,
        step: int | None = None,
        layer: int = 0,
        head: int = 0,
    ) -> None:
        super().__init__()
        self.steps = sorted(history.snapshots)
        if not self.steps:
            raise ValueError("history has no snapshots: train with snapshot_steps=(0, 50, …)")
        step = self.steps[-1] if step is None else step
        if step not in history.snapshots:
            raise ValueError(f"step must be one of the stored steps {self.steps}, got {step!r}")
        if not 0 <= layer < len(history.snapshots[step]) or not 0 <= head < history.snapshots[step][layer].shape[0]:
            raise ValueError(f"layer/head out of range: the model has {len(history.snapshots[step])} layer(s)")
        self.history, self.model, self.task, self.layer, self.head = history, model, task, layer, head
        probe = history.probe[0].tolist()
        self.probe_labels = [f"{i}:{t}" for i, t in enumerate(probe)]
        c = self.controls
        c["step"] = ui.SelectionSlider(options=self.steps, value=step, description="training step")
        c["sequence"] = ui.Text(value=" ".join(map(str, probe)), description="your input", continuous_update=False)
        weights_view = functools.partial(
            HeatmapView, None, vmin=0.0, vmax=1.0, decimals=2, xlabel="key (position:token)", ylabel="query"
        )
        self.views["during"] = weights_view(title="")
        self.views["trained"] = weights_view(title="trained model on your input")
        self.caption = self.texts["caption"] = ui.HTML()
        self.update()
        self.observe_controls()
        self.widget = ui.VBox(
            [
                c["step"],
                c["sequence"],
                self.message,
                ui.HBox([self.views["during"], self.views["trained"]]),
                self.caption,
            ]
        )

    def _map(self, step: int) -> torch.Tensor:
        return self.history.snapshots[step][self.layer][self.head]

    def compute(self, values: Mapping[str, object]) -> Shown:
        """The probe's map at the chosen step, and the trained model's map on the typed sequence."""
        values = cast(TrainingValues, values)
        ids = parse_tokens(values["sequence"], vocab_size=self.task.vocab_size, n_tokens=self.task.n_tokens)
        step = values["step"]
        with torch.no_grad():
            predicted = self.model(ids).argmax(-1)[0].tolist()
        trained = self.model.attention_maps[self.layer][0, self.head]
        labels = [f"{i}:{t}" for i, t in enumerate(ids[0].tolist())]
        index = self.history.eval_steps.index(step) if step in self.history.eval_steps else None
        loss = self.history.losses[step - 1] if step > 0 else float("nan")
        accuracy = f", held-out accuracy {self.history.accuracies[index]:.2f}" if index is not None else ""
        return Shown(
            views={
                "during": self.views["during"].frame(
                    self._map(step),
                    row_labels=self.probe_labels,
                    col_labels=self.probe_labels,
                    title=f"probe, after {step} steps",
                ),
                "trained": self.views["trained"].frame(trained, row_labels=labels, col_labels=labels),
            },
            texts={
                "caption": html.escape(
                    f"step {step}: training loss {loss:.3f}{accuracy}. The trained model predicts {predicted}."
                )
            },
        )

    def summary(self) -> str:
        return f"TrainingExplorer(task={self.task.name!r}, steps={self.steps}, step={self.controls['step'].value})"


# ---------------------------------------------------------------- the live loss curve
class LossCurve:
    """The training loss drawn as it falls: ``add(loss)`` every step, the figure redrawn every ``every`` steps.

    Displayed once (``IPython.display`` with a display id) and updated in place; ``losses`` keeps every value.
    """

    def __init__(self, *, every: int = 25, title: str = "training loss (cross-entropy)") -> None:
        from IPython.display import display

        self.every, self.title = every, title
        self.losses: list[float] = []
        self._handle = display(self._plot(), display_id=True)

    def _plot(self) -> Plot:
        from ..show import plots

        return plots.training_curves({"loss": self.losses or [float("nan")]}, title=self.title, ylabel="loss")

    def add(self, loss: Tensor | float) -> None:
        """Record one step's loss (a number or a one-element tensor)."""
        self.losses.append(float(loss.detach()) if isinstance(loss, Tensor) else float(loss))
        if len(self.losses) % self.every == 0:
            self.draw()

    def draw(self) -> None:
        """Redraw the figure now (also at the end of training)."""
        if self._handle is not None:
            self._handle.update(self._plot())


# ---------------------------------------------------------------- helpers of the checkers
Built = TypeVar("Built")


def _seeded(build: Callable[[], Built], seed: int) -> Built:
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return build()


#: The attribute names a block must have (those of :class:`attnlib.transformer.Block`, so that a trained
#: ``MyBlock`` loads into attnlib's ``TinyTransformer``).
BLOCK_PARTS = ("attention", "norm_attention", "mlp", "norm_mlp")
#: The parts a model must have (those of :class:`attnlib.transformer.TinyTransformer`).
MODEL_PARTS = ("embedding", "positions", "blocks", "norm", "readout")


def _unwrap(result: object) -> object:
    return result[0] if isinstance(result, tuple) and result else result


def _attnlib_name(name: str) -> str:
    """A parameter's name in attnlib's TinyTransformer: your positions may be an ``nn.Embedding``
    (``positions.weight``) or a bare ``nn.Parameter`` (``positions``); attnlib's is ``positions.table``."""
    return "positions.table" if name in ("positions", "positions.weight") else name


def attnlib_twin(model: nn.Module, **config: Any) -> TinyTransformer:
    """attnlib's ``TinyTransformer(**config)`` holding the parameters of ``model`` (your ``MyTransformer``).

    ``config``: TinyTransformer's arguments by name (``vocab_size``, ``d_model`` …), passed on as they are:
    TinyTransformer checks them.

    The names match part for part (``embedding``, ``positions``, ``blocks.<i>.…``, ``norm``, ``readout``);
    a part that is missing or has another shape is named in the error.
    """
    twin = TinyTransformer(**config)
    own = dict(twin.named_parameters())
    theirs = {_attnlib_name(name): p for name, p in model.named_parameters()}
    for name, p in own.items():
        if name not in theirs:
            raise ValueError(f"your model has no parameter for attnlib's {name} {tuple(p.shape)}")
        if theirs[name].shape != p.shape:
            raise ValueError(f"{name}: yours has shape {tuple(theirs[name].shape)}, attnlib's {tuple(p.shape)}")
    extra = sorted(set(theirs) - set(own))
    if extra:
        raise ValueError(f"your model has parameters attnlib's has not: {extra[:3]}")
    with torch.no_grad():
        for name, p in own.items():
            p.copy_(theirs[name])
    return twin.train(model.training)


# ---------------------------------------------------------------- reference solutions (fallbacks)
class _ReferenceBlock(nn.Module):
    """What 13.2 asks for; used by :func:`pick_yours` until the learner's block is accepted."""

    def __init__(self, d_model: int, num_heads: int) -> None:
        super().__init__()
        from ..modules import MultiHeadAttention

        self.attention = MultiHeadAttention(d_model, num_heads)
        self.norm_attention = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.GELU(), nn.Linear(4 * d_model, d_model))
        self.norm_mlp = nn.LayerNorm(d_model)

    def forward(self, x: Tensor, mask: Tensor | None = None) -> Tensor:
        x = x + self.attention(self.norm_attention(x), mask=mask)
        out: Tensor = x + self.mlp(self.norm_mlp(x))
        return out


class _ReferenceTransformer(nn.Module):
    """What 13.3–13.6 ask for, its blocks made by :meth:`new_block` (the reference block; see
    :func:`_reference_model` for the learner's)."""

    def __init__(
        self, vocab_size: int, d_model: int, num_heads: int, num_layers: int, max_len: int, causal: bool = False
    ) -> None:
        super().__init__()
        self.causal = causal
        self.embedding = nn.Embedding(vocab_size, d_model)
        self.positions = nn.Embedding(max_len, d_model)
        self.blocks = nn.ModuleList(self.new_block(d_model, num_heads) for _ in range(num_layers))
        self.norm = nn.LayerNorm(d_model)
        self.readout = nn.Linear(d_model, vocab_size)

    def new_block(self, d_model: int, num_heads: int) -> nn.Module:
        return _ReferenceBlock(d_model, num_heads)

    def embed(self, ids: Tensor) -> Tensor:
        embedded: Tensor = self.embedding(ids) + self.positions(torch.arange(ids.shape[1]))
        return embedded

    def mask(self, n: int) -> Tensor | None:
        i = torch.arange(n)
        return i[:, None] >= i[None, :] if self.causal else None

    def read_out(self, x: Tensor) -> Tensor:
        logits: Tensor = self.readout(self.norm(x))
        return logits

    def forward(self, ids: Tensor) -> Tensor:
        x = self.embed(ids)
        mask = self.mask(ids.shape[1])
        for each in self.blocks:
            x = each(x, mask=mask)
            if isinstance(x, tuple):  # a learner's block may return (x, weights), as attnlib's Block does
                x = x[0]
        return self.read_out(x)


def _reference_model(block: Callable[[int, int], nn.Module]) -> type[_ReferenceTransformer]:
    """What 13.3–13.6 ask for, built from ``block``; used by :func:`pick_yours` until the learner's is accepted."""

    class ReferenceTransformer(_ReferenceTransformer):
        def new_block(self, d_model: int, num_heads: int) -> nn.Module:
            return block(d_model, num_heads)

    return ReferenceTransformer


class Optimiser(Protocol):
    """What a training step uses of its optimiser (attnlib's :class:`~attnlib.training.Adam`, or torch's)."""

    def zero_grad(self) -> object: ...

    def step(self) -> object: ...


def _reference_step(model: nn.Module, optimiser: Optimiser, inputs: Tensor, targets: Tensor) -> Tensor:
    logits = model(inputs)
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
    optimiser.zero_grad()
    loss.backward()
    optimiser.step()
    return loss


def _module_class(answer: object) -> type[nn.Module] | None:
    """``answer`` if it is a subclass of ``nn.Module``, else None."""
    return answer if isinstance(answer, type) and issubclass(answer, nn.Module) else None


def pick_yours(block: object, model: object, step: object) -> tuple[type[nn.Module], Callable[..., object], str]:
    """``(model class, training step, sentence)``: yours where exercises 13.2, 13.6 and 13.7 accept them, the
    reference solution otherwise (so the lesson runs before you have written them). The model class is
    called ``(vocab_size, d_model, num_heads, num_layers, max_len, causal=…)``."""
    block_ok, model_ok, step_ok = bool(block_forward(block)), bool(model_forward(model)), bool(train_step(step))
    # the exercises accept nothing but nn.Module classes and functions: the narrowing below only says so to mypy
    your_block = _module_class(block) if block_ok else None
    your_model = _module_class(model) if model_ok else None
    chosen_model = your_model or _reference_model(your_block or _ReferenceBlock)
    chosen_step = step if step_ok and callable(step) else _reference_step
    if model_ok:
        built = "your MyTransformer"
    elif block_ok:
        built = "the reference model (13.6 is not solved yet) around your MyBlock"
    else:
        built = "the reference model and block (13.2 and 13.6 are not solved yet)"
    stepped = "your train_step" if step_ok else "the reference train_step (13.7 is not solved yet)"
    return chosen_model, chosen_step, f"Training {built} with {stepped}."


# ---------------------------------------------------------------- the exercises
def wrong_answers() -> dict[str, list[tuple[object, str | None]]]:
    """Per exercise, typical wrong answers and the mistake id each must reveal (None: a plain hint)."""

    class PostNorm(_ReferenceBlock):
        def forward(self, x: Tensor, mask: Tensor | None = None) -> Tensor:
            x = self.norm_attention(x + self.attention(x, mask=mask))
            out: Tensor = self.norm_mlp(x + self.mlp(x))
            return out

    class NoResidual(_ReferenceBlock):
        def forward(self, x: Tensor, mask: Tensor | None = None) -> Tensor:
            x = self.attention(self.norm_attention(x), mask=mask)
            out: Tensor = self.mlp(self.norm_mlp(x))
            return out

    class NoPositions(_ReferenceTransformer):
        def forward(self, ids: Tensor) -> Tensor:
            x = self.embedding(ids)
            n = ids.shape[1]
            mask = torch.ones(n, n, dtype=torch.bool).tril() if self.causal else None  # written out, as a learner would
            for each in self.blocks:
                x = each(x, mask=mask)
            logits: Tensor = self.readout(self.norm(x))
            return logits

    class NeverMasked(_ReferenceTransformer):
        def forward(self, ids: Tensor) -> Tensor:
            x = self.embedding(ids) + self.positions(torch.arange(ids.shape[1]))
            for each in self.blocks:
                x = each(x)
            logits: Tensor = self.readout(self.norm(x))
            return logits

    class EmbedNoPositions(_ReferenceTransformer):
        def embed(self, ids: Tensor) -> Tensor:
            embedded: Tensor = self.embedding(ids)
            return embedded

    class EmbedById(_ReferenceTransformer):
        def embed(self, ids: Tensor) -> Tensor:
            embedded: Tensor = self.embedding(ids) + self.positions(ids)
            return embedded

    class EmbedConcatenated(_ReferenceTransformer):
        def embed(self, ids: Tensor) -> Tensor:
            return torch.cat(
                [self.embedding(ids), self.positions(torch.arange(ids.shape[1])).expand_as(self.embedding(ids))], -1
            )

    class MaskInverted(_ReferenceTransformer):
        def mask(self, n: int) -> Tensor | None:
            return torch.ones(n, n, dtype=torch.bool).triu(1) if self.causal else None

    class MaskUpper(_ReferenceTransformer):
        def mask(self, n: int) -> Tensor | None:
            return torch.ones(n, n, dtype=torch.bool).triu() if self.causal else None

    class MaskFloat(_ReferenceTransformer):
        def mask(self, n: int) -> Tensor | None:
            return torch.ones(n, n).tril() if self.causal else None

    class MaskLibrary(_ReferenceTransformer):
        def mask(self, n: int) -> Tensor | None:
            return causal_mask(n) if self.causal else None

    class ReadOutTied(_ReferenceTransformer):
        def read_out(self, x: Tensor) -> Tensor:
            logits: Tensor = self.norm(x) @ self.embedding.weight.T
            return logits

    class ReadOutBackwards(_ReferenceTransformer):
        def read_out(self, x: Tensor) -> Tensor:
            logits: Tensor = self.norm(x) @ self.readout.weight
            return logits

    class ReadOutNoNorm(_ReferenceTransformer):
        def read_out(self, x: Tensor) -> Tensor:
            logits: Tensor = self.readout(x)
            return logits

    def forgets_zero_grad(model: nn.Module, optimiser: Optimiser, inputs: Tensor, targets: Tensor) -> Tensor:
        logits = model(inputs)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
        loss.backward()
        optimiser.step()
        return loss

    def unflattened_targets(model: nn.Module, optimiser: Optimiser, inputs: Tensor, targets: Tensor) -> Tensor:
        logits = model(inputs)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets)
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        return loss

    untrained = _seeded(lambda: TinyTransformer(32, 32, 1, 1, max_len=8, causal=True), 0)
    return {
        "attention_learns.1": [(2, None), (6, None)],
        "attention_learns.2": [
            (PostNorm, "layer-norm-after"),
            (NoResidual, "residual-forgotten"),
            (Block, "library-function"),
        ],
        "attention_learns.3": [
            (EmbedNoPositions, "positions-forgotten"),
            (EmbedById, "positions-forgotten"),
            (EmbedConcatenated, None),
        ],
        "attention_learns.4": [
            (MaskInverted, "mask-not-causal"),
            (MaskUpper, "mask-not-causal"),
            (MaskFloat, "mask-not-boolean"),
            (MaskLibrary, "library-function"),
        ],
        "attention_learns.5": [
            (ReadOutTied, "readout-tied"),
            (ReadOutBackwards, "readout-tied"),
            (ReadOutNoNorm, None),
        ],
        "attention_learns.6": [
            (NoPositions, "positions-forgotten"),
            (NeverMasked, "mask-not-causal"),
            (TinyTransformer, "library-function"),
        ],
        "attention_learns.7": [(forgets_zero_grad, "zero-grad-forgotten"), (unflattened_targets, None)],
        "attention_learns.8": [
            (lambda logits, ids: F.cross_entropy(logits.reshape(-1, logits.shape[-1]), ids.reshape(-1)), None),
            (
                lambda logits, ids: F.cross_entropy(
                    logits[:, 1:].reshape(-1, logits.shape[-1]), ids[:, :-1].reshape(-1)
                ),
                None,
            ),
        ],
        "attention_learns.9": [(2, None), (7, None)],
        "attention_learns.10": [(untrained, None), (0.52, None)],
    }


@exercise("attention_learns.1", alias="learning.1")
def mirror_position(answer: object) -> Feedback:
    """Reverse task, n = 8 (positions 0 … 7): output 2 must copy input ``n − 1 − 2 = 5``."""
    wrong = [
        (2, "Position 2 itself would copy its own token; reversing needs the mirrored position, n − 1 − i."),
        (6, "Positions count from 0 here (0 … 7): the mirror of 2 is 8 − 1 − 2."),
    ]
    return compare_number(answer, 5, name="the input position output 2 attends to", wrong=wrong, tol=0.01)


@exercise("attention_learns.2", alias="learning.2")
def block_forward(answer: object) -> Feedback:
    """``MyBlock(d_model, num_heads)`` whose ``forward(x, mask=None)`` is the pre-LN block:
    ``x + attention(norm_attention(x))``, then ``x + mlp(norm_mlp(x))``."""
    if answer is None or answer is Ellipsis:
        return Feedback(False, "Replace the ... with your class MyBlock, then run the cell again.")
    if answer is Block or answer is TinyTransformer:
        return library_feedback("your MyBlock", f"attnlib's {answer.__name__}")
    if not (isinstance(answer, type) and issubclass(answer, nn.Module)):
        return Feedback(False, "Hand in the class itself, check('attention_learns.2', MyBlock): an nn.Module subclass.")
    borrowed = issubclass(answer, Block) and not any(
        "forward" in vars(c) for c in answer.__mro__[: answer.__mro__.index(Block)]
    )
    if borrowed:
        return library_feedback("your MyBlock", "attnlib's Block.forward (inherited, not written)")
    try:
        block = _seeded(lambda: answer(16, 2), 0)
    except Exception as exc:  # the learner's __init__ may fail in any way
        return Feedback(False, f"MyBlock(16, 2) raised {type(exc).__name__}: {str(exc).splitlines()[0][:160]}")
    parts = {name: part for name in BLOCK_PARTS if isinstance(part := getattr(block, name, None), nn.Module)}
    missing = [name for name in BLOCK_PARTS if name not in parts]
    if missing:
        return Feedback(
            False,
            f"MyBlock has no {', '.join(missing)}: keep the parts of the __init__ given in the exercise "
            "(their names let attnlib's TinyTransformer load your trained weights).",
        )
    g = torch.Generator().manual_seed(13)
    with torch.no_grad():
        for norm in (parts["norm_attention"], parts["norm_mlp"]):  # not 1 and 0, so a swapped norm shows
            if isinstance(norm, nn.LayerNorm):
                norm.weight.copy_(0.5 + torch.rand(norm.weight.shape, generator=g))
                norm.bias.copy_(0.1 * torch.randn(norm.bias.shape, generator=g))
    x = torch.randn(2, 5, 16, generator=g)
    mask = causal_mask(5)
    with torch.no_grad():

        def attend(t: Tensor, m: Tensor | None = mask) -> Tensor:
            attended: Tensor = parts["attention"](t, mask=m)
            return attended

        n1, n2, mlp = parts["norm_attention"], parts["norm_mlp"], parts["mlp"]
        h = x + attend(n1(x))
        expected = h + mlp(n2(h))
        post = n1(x + attend(x))
        no_attention_residual = attend(n1(x))
        normed = n1(x)
        normed_residual = normed + attend(normed)
        unmasked = x + attend(n1(x), None)
        swapped = x + attend(n2(x))
        wrong: list[Wrong] = [
            (
                n2(post + mlp(post)),
                "Layer norm comes AFTER each part in yours (post-LN, the 2017 paper's order). This lesson's "
                "block, like GPT-2 and most models since, is pre-LN: normalise the input of each part, "
                "x + attention(norm(x)), so the residual stream itself is never rescaled.",
                "layer-norm-after",
            ),
            (
                mlp(n2(no_attention_residual)),
                "The residual connections are missing: x = attention(...) replaces the token's vector. "
                "Add each part's output to its input: x = x + attention(norm(x)), then x = x + mlp(norm(x)).",
                "residual-forgotten",
            ),
            (
                mlp(n2(h)),
                "The attention part is right, but the MLP's residual is missing: x = x + mlp(norm_mlp(x)).",
                "residual-forgotten",
            ),
            (
                no_attention_residual + mlp(n2(no_attention_residual)),
                "The attention's residual is missing: x = x + attention(norm_attention(x)).",
                "residual-forgotten",
            ),
            (
                normed_residual + mlp(n2(normed_residual)),
                "You added attention's output to the NORMALISED x. Add it to x itself: "
                "x + attention(norm(x)) — the norm only prepares the part's input.",
            ),
            (
                h,
                "The MLP is missing: after the attention, x = x + mlp(norm_mlp(x)).",
            ),
            (
                unmasked + mlp(n2(unmasked)),
                "The mask is not passed on: attention(norm_attention(x), mask=mask), or next-token "
                "models would see the future.",
            ),
            (
                swapped + mlp(n1(swapped)),
                "The two layer norms are swapped: norm_attention before the attention, norm_mlp before the MLP.",
            ),
        ]
    with torch.no_grad():
        return compare_call(
            lambda t: _unwrap(block(t, mask=mask)),
            (x,),
            call="your MyBlock(16, 2)(x, mask=mask)",
            expected=expected,
            name="your block's output on a new (2, 5, 16) input",
            wrong=wrong,
            success="Pre-LN, both residuals, the MLP: the block of GPT-2 and most models since.",
            write_it=(Block.forward, TinyTransformer.forward),
        )


#: The configurations 13.6 builds your model with (none of them is the lesson's): ``(vocab_size, d_model,
#: num_heads, num_layers, max_len, causal)``, and the ``(batch, n)`` of the token ids it runs.
MODEL_CASES = (((11, 16, 2, 2, 9, True), (3, 7)), ((7, 8, 1, 1, 5, False), (2, 5)))
#: one of those configurations: ``(vocab_size, d_model, num_heads, num_layers, max_len, causal)``
ModelConfig = tuple[int, int, int, int, int, bool]


def _randomised(twin: TinyTransformer, seed: int) -> TinyTransformer:
    """Norms and biases away from 1 and 0, so that a forgotten or swapped part shows."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in twin.named_parameters():
            if name.endswith("bias"):
                p.copy_(0.1 * torch.randn(p.shape, generator=g))
            elif "norm" in name:
                p.copy_(0.5 + torch.rand(p.shape, generator=g))
    return twin


def _variant(
    twin: TinyTransformer,
    ids: Tensor,
    *,
    positions: bool = True,
    mask: str = "model",
    norm: bool = True,
    tied: bool = False,
) -> Tensor:
    """attnlib's forward with one part changed: the output of a typical slip, for the hints."""
    n = ids.shape[1]
    x = twin.embedding(ids)
    if positions and twin.positions is not None:  # as TinyTransformer.forward: a model may have no positions
        x = twin.positions(x)
    m = {"model": causal_mask(n) if twin.causal else None, "none": None, "causal": causal_mask(n)}[mask]
    for each in twin.blocks:
        x, _ = each(x, mask=m)
    x = twin.norm(x) if norm else x
    logits: Tensor = x @ twin.embedding.weight.T if tied else twin.readout(x)
    return logits


def _part_feedback(name: str, shape: tuple[int, ...] | None, config: ModelConfig) -> Feedback:
    """The hint for a parameter of attnlib's model that the learner's lacks (or has in another shape)."""
    vocab, d_model, _, _, max_len, _ = config
    part = name.split(".")[0]
    hints = {
        "positions": (
            f"Positions are missing: without them attention cannot tell order (lesson 12). Add a table of "
            f"max_len = {max_len} learned vectors of d_model = {d_model}: self.positions = nn.Embedding(max_len, "
            "d_model), and add the first n of them to the token vectors.",
            "positions-forgotten",
        ),
        "readout": (
            f"The read-out is missing: self.readout = nn.Linear(d_model, vocab_size) turns each token vector into "
            f"{vocab} logits. (GPT-2 ties it to the embedding table instead; this lesson's model has its own.)",
            "readout-tied",
        ),
        "norm": ("The final layer norm is missing: self.norm = nn.LayerNorm(d_model), before the read-out.", None),
        "embedding": ("The token embedding is missing: self.embedding = nn.Embedding(vocab_size, d_model).", None),
        "blocks": (
            "The blocks are missing: self.blocks = nn.ModuleList(MyBlock(d_model, num_heads) for each layer).",
            None,
        ),
    }
    if shape is not None:
        right = {
            "embedding": "nn.Embedding(vocab_size, d_model)",
            "positions": "nn.Embedding(max_len, d_model)",
            "readout": "nn.Linear(d_model, vocab_size): in features first, out features second",
            "norm": "nn.LayerNorm(d_model)",
        }.get(part, "as in your MyBlock")
        return Feedback(
            False,
            f"MyTransformer{config[:5]}: {name} has shape {shape}, attnlib's the other: {right}.",
            "readout-tied" if part == "readout" else None,
        )
    hint, mistake = hints.get(part, (f"Your model has no parameter for {name}.", None))
    return Feedback(False, hint, mistake)


def _load_into_yours(
    model: nn.Module, twin: TinyTransformer, config: ModelConfig, parts: tuple[str, ...] | None = None
) -> Feedback | None:
    """Copy ``twin``'s parameters into the learner's ``model`` (names as in attnlib); a hint if they do not fit.

    ``parts``: only the parameters of these parts (``("embedding", "norm", "readout")``); without, all of them,
    and a parameter that attnlib's model has not is refused too.
    """
    own = {_attnlib_name(name): p for name, p in model.named_parameters()}
    loaded = [(name, p) for name, p in twin.named_parameters() if parts is None or name.split(".")[0] in parts]
    for name, p in loaded:
        if name not in own:
            return _part_feedback(name, None, config)
        if own[name].shape != p.shape:
            return _part_feedback(name, tuple(own[name].shape), config)
    extra = sorted(set(own) - set(dict(twin.named_parameters()))) if parts is None else []
    if extra:
        return Feedback(
            False,
            f"Your model has parameters attnlib's has not: {', '.join(extra[:3])}. Name the parts embedding, "
            "positions, blocks, norm and readout, and build the blocks from your MyBlock only.",
        )
    with torch.no_grad():
        for name, p in loaded:
            own[name].copy_(p)
    return None


@exercise("attention_learns.6")
def model_forward(answer: object) -> Feedback:
    """``MyTransformer(vocab_size, d_model, num_heads, num_layers, max_len, causal=False)``: token embedding,
    learned positions, your blocks (with the causal mask when ``causal``), final norm, read-out.

    Checked on configurations and ids the lesson never used: attnlib's ``TinyTransformer`` with random
    parameters, copied into yours, must give the same logits."""
    yours = _model_class(answer, "attention_learns.6")
    if isinstance(yours, Feedback):
        return yours
    if issubclass(yours, TinyTransformer) and not any(
        "forward" in vars(c) for c in yours.__mro__[: yours.__mro__.index(TinyTransformer)]
    ):
        return library_feedback("your MyTransformer", "attnlib's TinyTransformer.forward (inherited, not written)")
    worst = 0.0
    for case, ((vocab, d_model, heads, layers, max_len, causal), (batch, n)) in enumerate(MODEL_CASES):
        config = (vocab, d_model, heads, layers, max_len, causal)
        call = f"MyTransformer{config[:5]} with causal={causal}"
        try:
            model = _seeded(functools.partial(yours, vocab, d_model, heads, layers, max_len, causal=causal), case)
        except Exception as exc:  # the learner's __init__ may fail in any way
            return Feedback(False, f"{call} raised {type(exc).__name__}: {str(exc).splitlines()[0][:160]}")
        if not isinstance(model, nn.Module):
            return Feedback(False, f"{call} did not give an nn.Module.")
        missing = [p for p in MODEL_PARTS if getattr(model, p, None) is None]
        if len(missing) == len(MODEL_PARTS):
            return Feedback(
                False,
                "Replace the ... in MyTransformer with its parts (embedding, positions, blocks, norm, readout) "
                "and its forward, then run the cell again.",
                tried=False,
            )
        if missing:
            return _part_feedback(missing[0], None, config)
        blocks = model.blocks
        if not isinstance(blocks, nn.ModuleList) or len(blocks) != layers:
            found = f"{len(blocks)} blocks" if isinstance(blocks, nn.ModuleList) else type(blocks).__name__
            return Feedback(
                False,
                f"{call}: self.blocks should be an nn.ModuleList of num_layers = {layers} MyBlocks, got {found}.",
            )
        kind = type(blocks[0])
        if issubclass(kind, Block) or kind is Block:
            return library_feedback("your MyTransformer's blocks", "attnlib's Block (use your MyBlock)")
        if case == 0 and not block_forward(kind):
            return Feedback(False, f"The blocks are {kind.__name__}s, which do not pass 13.2 yet: fix the block first.")
        twin = _randomised(
            _seeded(
                functools.partial(TinyTransformer, vocab, d_model, heads, layers, max_len, causal=causal), 7 + case
            ),
            case,
        )
        refused = _load_into_yours(model, twin, config)
        if refused is not None:
            return refused
        model.eval()
        ids = torch.randint(vocab, (batch, n), generator=torch.Generator().manual_seed(30 + case))
        with torch.no_grad():
            expected = twin.eval()(ids)
            got = run_learner_code(
                model, ids.clone(), name=f"your {call}(ids)", write_it=(TinyTransformer.forward, Block.forward)
            )
        if isinstance(got, Feedback):
            if "size of tensor" in got.message and n < max_len:
                return Feedback(
                    False,
                    f"On {n} tokens (max_len = {max_len}) your forward fails: add only the first n position "
                    "vectors, self.positions(torch.arange(n)), not the whole table.",
                    "positions-forgotten",
                )
            return got
        if got is None:
            return Feedback(False, f"your {call}(ids) returned None: return the logits.")
        if isinstance(got, Tensor) and got.dim() == 3 and tuple(got.shape) == (batch, vocab, n):
            return Feedback(
                False,
                f"Your logits have shape {tuple(got.shape)}: (batch, vocab_size, n). Return (batch, n, vocab_size), "
                "one row of logits per token.",
                "transposed",
            )
        if isinstance(got, Tensor) and tuple(got.shape) in ((batch * n, vocab), (batch * n * vocab,)):
            return Feedback(
                False,
                f"Your logits have shape {tuple(got.shape)}: keep them (batch, n, vocab_size) = {(batch, n, vocab)}; "
                "the training step flattens them for the loss.",
            )
        with torch.no_grad():
            wrong: list[Wrong] = [
                (
                    _variant(twin, ids, positions=False),
                    "Your logits are those of a model without positions: add self.positions(torch.arange(n)) to the "
                    "token vectors, or attention cannot tell order (lesson 12).",
                    "positions-forgotten",
                ),
                (
                    _variant(twin, ids, mask="none"),
                    "With causal=True your model lets every token see the later ones: build the causal mask "
                    "(your self.mask(n), 13.4) and pass it to every block, mask=mask — or next-token prediction "
                    "reads the answer.",
                    "mask-not-causal",
                ),
                (
                    _variant(twin, ids, mask="causal"),
                    "With causal=False your model still masks: use the causal mask only when self.causal is True "
                    "(the reverse task must see the whole input).",
                    "mask-not-causal",
                ),
                (
                    _variant(twin, ids, norm=False),
                    "The final layer norm is not applied: logits = self.readout(self.norm(x)).",
                ),
                (
                    _variant(twin, ids, tied=True),
                    "Your read-out multiplies by the embedding table (tied, as GPT-2): this model has its own "
                    "read-out, logits = self.readout(self.norm(x)).",
                    "readout-tied",
                ),
            ]
        logits = to_answer_tensor(got, f"the logits of {call}")  # a list or an array too, as compare_tensor takes
        if isinstance(logits, Feedback):
            return logits
        verdict = compare_tensor(logits, expected, name=f"the logits of {call}", wrong=wrong, atol=1e-4)
        if not verdict.correct:
            if verdict.message.endswith("check that entry by hand."):
                changed = ids.clone()
                changed[:, -1] = (changed[:, -1] + 1) % vocab
                with torch.no_grad():
                    later = _unwrap(model(changed))
                if causal and isinstance(later, Tensor) and later.shape == logits.shape:
                    if not torch.allclose(later[:, :-1].double(), logits[:, :-1], atol=1e-5):
                        return Feedback(
                            False,
                            "Changing only the LAST token changed your logits at earlier positions: the future "
                            "leaks in. The mask is True where a token may attend: causal_mask(n) (lesson 09).",
                            "mask-not-causal",
                        )
                return Feedback(
                    False,
                    verdict.message.replace("check that entry by hand.", "")
                    + "The order is: embedding + positions, the blocks (each with the mask), the final norm, "
                    "the read-out.",
                )
            return verdict
        worst = max(worst, float((logits - expected.double()).abs().max()))
    return Feedback(
        True,
        "Embedding, positions, your blocks, the final norm, the read-out and the causal mask: given the same "
        f"parameters, your model and attnlib's TinyTransformer agree to {worst:.1e} on two configurations "
        "the lesson never used.",
    )


# ---------------------------------------------------------------- 13.3–13.5: the model's parts, one by one
#: The configurations the part exercises build your model with (none is the lesson's): ``(vocab_size,
#: d_model, num_heads, num_layers, max_len, causal)`` and the ``(batch, n)`` they run; vocab_size ≠ d_model
#: and n < max_len, so that a read-out built the wrong way round or a whole position table shows.
PART_CASES = (((13, 12, 2, 1, 10, True), (3, 6)), ((6, 8, 1, 2, 7, False), (2, 4)))


def _model_class(answer: object, exercise_name: str) -> type[nn.Module] | Feedback:
    """``answer`` as a MyTransformer class to check, or why it is not one (the stub, attnlib's own class, not a
    class)."""
    if answer is None or answer is Ellipsis:
        return Feedback(False, "Replace the ... with your class MyTransformer, then run the cell again.", tried=False)
    if answer is TinyTransformer or answer is Block:
        return library_feedback("your MyTransformer", f"attnlib's {answer.__name__}")
    if not (isinstance(answer, type) and issubclass(answer, nn.Module)):
        return Feedback(
            False, f"Hand in the class itself, check('{exercise_name}', MyTransformer): an nn.Module subclass."
        )
    return answer


def _build_yours(
    answer: object, exercise_name: str, method: str, config: ModelConfig, seed: int
) -> nn.Module | Feedback:
    """The learner's ``MyTransformer(*config)`` (seeded), or the sentence saying why there is none."""
    yours = _model_class(answer, exercise_name)
    if isinstance(yours, Feedback):
        return yours
    if issubclass(yours, TinyTransformer):
        return library_feedback("your MyTransformer", "attnlib's TinyTransformer (write the class, do not inherit it)")
    if not callable(getattr(yours, method, None)):
        return Feedback(
            False,
            f"Your MyTransformer has no method {method}: write it inside the class, as the lesson's cell shows "
            f"(def {method}(self, …)), then run the class cell and this one again.",
        )
    vocab, d_model, heads, layers, max_len, causal = config
    try:
        model = _seeded(functools.partial(yours, vocab, d_model, heads, layers, max_len, causal=causal), seed)
    except Exception as exc:  # the learner's __init__ may fail in any way
        said = f"MyTransformer{config[:5]} with causal={causal} raised {type(exc).__name__}"
        return Feedback(False, f"{said}: {str(exc).splitlines()[0][:160]}")
    if not isinstance(model, nn.Module):
        return Feedback(False, f"MyTransformer{config[:5]} did not give an nn.Module.")
    if all(getattr(model, part, None) is None for part in MODEL_PARTS):
        return Feedback(
            False,
            "Replace the ... in MyTransformer's __init__ with its parts (embedding, positions, blocks, norm, "
            f"readout) and the ... in {method}, then run the cell again.",
            tried=False,
        )
    return model


def _twin(config: ModelConfig, seed: int) -> TinyTransformer:
    vocab, d_model, heads, layers, max_len, causal = config
    build = functools.partial(TinyTransformer, vocab, d_model, heads, layers, max_len, causal=causal)
    twin = _seeded(build, 40 + seed)
    assert isinstance(twin, TinyTransformer)
    return _randomised(twin, seed).eval()


@exercise("attention_learns.3")
def model_embed(answer: object) -> Feedback:
    """``MyTransformer.embed(ids)``: ``(batch, n)`` ids → ``(batch, n, d_model)``, the token vectors plus the
    first ``n`` learned position vectors. Checked with attnlib's parameters on sizes the lesson never used."""
    for case, (config, (batch, n)) in enumerate(PART_CASES):
        model = _build_yours(answer, "attention_learns.3", "embed", config, case)
        if isinstance(model, Feedback):
            return model
        twin = _twin(config, case)
        refused = _load_into_yours(model, twin, config, ("embedding", "positions"))
        if refused is not None:
            return refused
        vocab, d_model, _, _, max_len, _ = config
        ids = torch.randint(vocab, (batch, n), generator=torch.Generator().manual_seed(50 + case))
        call = f"your MyTransformer{config[:5]}.embed(ids)"
        tokens, table = twin.embedding.weight[ids], dict(twin.named_parameters())["positions.table"]
        by_id = table[ids.clamp(max=max_len - 1)]

        def hint(
            exc: Exception, n: int = n, max_len: int = max_len, call: str = call, batch: int = batch, vocab: int = vocab
        ) -> Feedback | None:
            said = str(exc)
            if "index out of range" in said or "out of bounds" in said:
                return Feedback(
                    False,
                    f"{call} failed on ids (batch, n) = {(batch, n)} with ids up to {vocab - 1}: the position "
                    "table is indexed by POSITION 0 … n − 1, self.positions(torch.arange(n)), not by the token ids.",
                    "positions-forgotten",
                )
            if "size of tensor" in said or "must match" in said:
                return Feedback(
                    False,
                    f"On n = {n} tokens (max_len = {max_len}) your embed fails: add only the first n position "
                    "vectors, self.positions(torch.arange(n)), not the whole table.",
                    "positions-forgotten",
                )
            return None

        with torch.no_grad():
            got = run_learner_code(
                model.embed,
                ids.clone(),
                name=call,
                write_it=(TinyTransformer.forward, LearnedPositions.forward),
                on_error=hint,
            )
        if isinstance(got, Feedback):
            return got
        wrong: list[Wrong] = [
            (
                tokens,
                "These are the token vectors alone: add the position vectors, self.positions(torch.arange(n)), or "
                "attention cannot tell order (lesson 12).",
                "positions-forgotten",
            ),
            (
                table[:n].expand(batch, n, d_model),
                "These are the position vectors alone: add them to the token vectors, self.embedding(ids).",
            ),
            (
                tokens + by_id,
                "You looked the positions up by token id, self.positions(ids): the table is indexed by position, "
                "self.positions(torch.arange(n)).",
                "positions-forgotten",
            ),
            (
                torch.cat([tokens, table[:n].expand(batch, n, d_model)], dim=-1),
                f"Add the two, do not concatenate them: the result stays (batch, n, d_model) = {(batch, n, d_model)}.",
            ),
        ]
        verdict = compare_tensor(got, tokens + table[:n], name=f"the vectors of {call}", wrong=wrong, atol=1e-5)
        if not verdict.correct:
            return verdict
    return Feedback(
        True,
        "Token vector plus position vector, (batch, n, d_model): the same as attnlib's embedding and positions on "
        "two sizes the lesson never used.",
    )


def _mask_hint(got: Tensor, n: int) -> Feedback | None:
    """The hint for a mask that is not the causal one (None: let the comparison speak)."""
    allowed = torch.ones(n, n, dtype=torch.bool).tril()
    if torch.equal(got, ~allowed):
        return Feedback(
            False,
            "That is torch's nn.MultiheadAttention convention (True = NOT allowed). attnlib's blocks, like your "
            "MyBlock, read True = MAY attend: token i may see keys 0 … i, the lower triangle with its diagonal.",
            "mask-not-causal",
        )
    if torch.equal(got, allowed.T):
        return Feedback(
            False,
            "Your mask lets token i see the LATER tokens i … n − 1: the upper triangle. A causal token sees "
            "itself and the earlier ones, keys j ≤ i: the lower triangle.",
            "mask-not-causal",
        )
    if torch.equal(got, allowed.tril(-1)):
        return Feedback(
            False,
            "Almost: a token must also see itself (the diagonal). Without it token 0 sees nothing at all and its "
            "row of weights is 0/0 (lesson 09). Use j ≤ i, not j < i.",
            "mask-not-causal",
        )
    if bool(got.all()):
        return Feedback(
            False,
            "Every entry is True: nothing is masked, so with causal=True each token sees the later ones and "
            "next-token prediction reads the answer.",
            "mask-not-causal",
        )
    return None


class _Masking(Protocol):
    """A model with the method of 13.4."""

    def mask(self, n: int) -> object: ...


@exercise("attention_learns.4")
def model_mask(answer: object) -> Feedback:
    """``MyTransformer.mask(n)``: the causal mask ``(n, n)``, bool, True = may attend (key ``j ≤`` query ``i``),
    written from index comparisons or ``torch.tril``; ``None`` when the model is not causal."""
    for case, (config, _shape) in enumerate(PART_CASES):
        model = _build_yours(answer, "attention_learns.4", "mask", config, case)
        if isinstance(model, Feedback):
            return model
        causal = config[-1]
        masking = cast(_Masking, model)  # _build_yours found a method mask on it
        for n in (5, 9) if causal else (6,):
            call = f"your MyTransformer(..., causal={causal}).mask({n})"

            def mask_of(k: int, model: _Masking = masking) -> object:
                made = model.mask(k)
                return _NO_MASK if made is None else made

            got = run_learner_code(mask_of, n, name=call, write_it=(ATTNLIB,))
            if isinstance(got, Feedback):
                return got
            if not causal:
                if got is _NO_MASK or (isinstance(got, Tensor) and got.dtype == torch.bool and bool(got.all())):
                    continue
                return Feedback(
                    False,
                    f"{call} masks a model that is not causal: return None when self.causal is False (the "
                    "reverse task must see the whole input).",
                    "mask-not-causal",
                )
            if got is _NO_MASK:
                written = _has_body(answer, "mask")
                return Feedback(
                    False,
                    f"{call} returned None: with causal=True return the ({n}, {n}) boolean mask, True where token i "
                    "may attend to token j (j ≤ i); None only when self.causal is False.",
                    "mask-not-causal" if written else None,
                    tried=written,
                )
            if not isinstance(got, Tensor):
                return Feedback(False, f"{call} should return a ({n}, {n}) tensor, got {type(got).__name__}.")
            if got.dtype != torch.bool:
                return Feedback(
                    False,
                    f"{call} has dtype {got.dtype}: give a boolean mask (True = may attend), a comparison of "
                    "indices such as i[:, None] >= i[None, :]. A float mask would be ADDED to the scores.",
                    "mask-not-boolean",
                )
            if got.numel() != n * n or got.dim() < 2 or tuple(got.shape[-2:]) != (n, n):
                return Feedback(
                    False, f"{call} should have shape ({n}, {n}), one row per query; yours has {tuple(got.shape)}."
                )
            square = got.reshape(n, n)
            hint = _mask_hint(square, n)
            if hint is not None:
                return hint
            verdict = compare_tensor(square, torch.ones(n, n, dtype=torch.bool).tril(), name=f"the mask of {call}")
            if not verdict.correct:
                return verdict
    return Feedback(
        True,
        "The lower triangle with its diagonal for a causal model (token i sees 0 … i), no mask otherwise: checked "
        "on n = 5, 6 and 9.",
    )


_NO_MASK = object()


def _has_body(answer: object, method: str) -> bool:
    """Whether the learner's ``method`` holds more than ``...`` (an untouched stub gets the neutral prompt)."""
    function = getattr(answer, method)
    if getattr(function, "__name__", "") == "<lambda>":
        return True
    try:
        source = inspect.getsource(function)
    except (OSError, TypeError):
        return True
    body = [line.split("#")[0].strip() for line in source.splitlines()[1:]]
    return any(line and line != "..." for line in body)


@exercise("attention_learns.5")
def model_read_out(answer: object) -> Feedback:
    """``MyTransformer.read_out(x)``: ``(batch, n, d_model)`` → ``(batch, n, vocab_size)`` logits: the final
    layer norm, then the read-out. Checked with attnlib's parameters on sizes the lesson never used."""
    for case, (config, (batch, n)) in enumerate(PART_CASES):
        model = _build_yours(answer, "attention_learns.5", "read_out", config, case)
        if isinstance(model, Feedback):
            return model
        twin = _twin(config, case)
        refused = _load_into_yours(model, twin, config, ("embedding", "norm", "readout"))
        if refused is not None:
            return refused
        vocab, d_model = config[0], config[1]
        x = torch.randn(batch, n, d_model, generator=torch.Generator().manual_seed(60 + case))
        call = f"your MyTransformer{config[:5]}.read_out(x)"

        def hint(
            exc: Exception, d_model: int = d_model, vocab: int = vocab, call: str = call, batch: int = batch, n: int = n
        ) -> Feedback | None:
            said = str(exc)
            if "shape" in said or "size" in said or "normalized_shape" in said:
                return Feedback(
                    False,
                    f"{call} failed on x (batch, n, d_model) = {(batch, n, d_model)}: the final norm works on "
                    f"the d_model = {d_model} features, so it comes first, and the read-out maps them to vocab_size "
                    f"= {vocab} logits: self.readout(self.norm(x)) (an nn.Linear, not a product with its weight "
                    "the wrong way round).",
                    "readout-tied",
                )
            return None

        with torch.no_grad():
            got = run_learner_code(
                model.read_out, x.clone(), name=call, write_it=(TinyTransformer.forward,), on_error=hint
            )
            if isinstance(got, Feedback):
                return got
            logits = twin.readout(twin.norm(x))
            wrong: list[Wrong] = [
                (
                    twin.readout(x),
                    "The final layer norm is not applied: logits = self.readout(self.norm(x)).",
                ),
                (
                    twin.norm(x) @ twin.embedding.weight.T,
                    "Your read-out multiplies by the embedding table (tied, as GPT-2 does): this model has its own "
                    "read-out, logits = self.readout(self.norm(x)).",
                    "readout-tied",
                ),
                (
                    twin.norm(x) @ twin.readout.weight.T,
                    "The read-out's bias is missing: call the layer, self.readout(...), rather than multiplying by "
                    "its weight.",
                ),
                (
                    logits.softmax(-1),
                    "Return the logits themselves: the softmax belongs to the loss (F.cross_entropy applies it) "
                    "and to sampling.",
                ),
            ]
        if isinstance(got, Tensor) and tuple(got.shape) == (batch, vocab, n):
            return Feedback(
                False,
                f"Your logits have shape {tuple(got.shape)}: (batch, vocab_size, n). Return (batch, n, vocab_size).",
                "transposed",
            )
        verdict = compare_tensor(got, logits, name=f"the logits of {call}", wrong=wrong, atol=1e-5)
        if not verdict.correct:
            return verdict
    return Feedback(
        True,
        "Final layer norm, then the read-out d_model → vocab_size: one logit per vocabulary entry for every token, "
        "the same as attnlib's on two sizes the lesson never used.",
    )


class _RecordingAdam(Adam):
    """attnlib's Adam (torch's, bit for bit, without importing torch's compiler) that keeps each ``step()``'s
    gradients, so a training step is checked by its loss and gradients."""

    def __init__(self, params: Iterable[Tensor], lr: float) -> None:
        super().__init__(params, lr=lr)
        self.recorded: list[Tensor] = []

    def step(self) -> None:
        self.recorded.append(
            torch.cat(
                [torch.zeros(p.numel()) if p.grad is None else p.grad.detach().flatten() for p in self.parameters]
            ).double()
        )
        super().step()


def _two_steps(step: object, name: str) -> Tensor | Feedback:
    """Run ``step`` twice on a fresh seeded model: ``[loss 1, loss 2, gradients of step 1, of step 2]``."""
    model = _seeded(lambda: TinyTransformer(10, 16, 2, 1, max_len=6), 1)
    optimiser = _RecordingAdam(model.parameters(), lr=1e-2)
    g = torch.Generator().manual_seed(2)
    losses = []
    for _ in range(2):
        inputs, targets, _counted = ReverseTask(10, 6).batch(8, g)
        got = run_learner_code(step, model, optimiser, inputs, targets, name=name, write_it=(train,))
        if isinstance(got, Feedback):
            if "target" in got.message and ("size" in got.message or "batch_size" in got.message):
                return Feedback(
                    False,
                    "F.cross_entropy refused the shapes: the logits are (batch, n, vocab) = (8, 6, 10) and the "
                    "targets (batch, n) = (8, 6). Flatten both, logits.reshape(-1, logits.shape[-1]) to (48, 10) "
                    "and targets.reshape(-1) to (48,), or pass the logits as (batch, vocab, n) with "
                    "logits.transpose(1, 2).",
                )
            return got
        if got is None:
            return Feedback(False, f"{name} returned None: return the loss (so the lesson can plot it).", tried=False)
        if isinstance(got, Tensor) and got.numel() == 1:
            got = got.detach().item()
        if isinstance(got, bool) or not isinstance(got, int | float):
            return Feedback(False, f"{name} should return the loss, one number; it returned {type(got).__name__}.")
        losses.append(float(got))
    if len(optimiser.recorded) != 2:
        return Feedback(
            False,
            f"The optimiser you are given took {len(optimiser.recorded)} steps in two calls of your train_step: "
            "call optimiser.step() once per step, on the optimiser passed in (a new Adam each time forgets "
            "Adam's running averages).",
        )
    return torch.cat([torch.tensor(losses, dtype=torch.float64), *optimiser.recorded])


def _course_steps(step: Callable[..., object]) -> Tensor:
    """:func:`_two_steps` of one of the course's own training steps (the reference or a typical slip): they
    always run, so a failure is the course's bug, raised."""
    with course_code():
        got = _two_steps(step, "the course's train_step")
    if isinstance(got, Feedback):
        raise RuntimeError(f"the course's own step {getattr(step, '__name__', step)} failed: {got}")
    return got


@exercise("attention_learns.7", alias="learning.3")
def train_step(answer: object) -> Feedback:
    """``train_step(model, optimiser, inputs, targets)``: forward, cross-entropy, ``zero_grad``,
    ``backward``, ``step``; returns the loss. Checked by two steps on a fresh model: both losses and the
    gradients each ``optimiser.step()`` applies (not the parameters after Adam, whose division by each
    gradient's size would magnify harmless float differences)."""
    if answer is None or answer is Ellipsis:
        return Feedback(False, "Replace the ... with your train_step function, then run the cell again.", tried=False)
    name = "your train_step(model, optimiser, inputs, targets)"
    got = _two_steps(answer, name)
    if isinstance(got, Feedback):
        return got
    expected = _course_steps(_reference_step)
    if float(got[2:].abs().max()) == 0.0:
        return Feedback(
            False,
            "optimiser.step() found no gradients to apply. loss.backward() computes them, optimiser.step() applies "
            "them; optimiser.zero_grad() belongs BEFORE backward() (it erases gradients — called between "
            "backward() and step(), nothing is left to apply).",
            "zero-grad-forgotten",
        )

    def variant(zero_grad: bool = True, softmaxed: bool = False) -> Tensor:
        def step(model: nn.Module, optimiser: Optimiser, inputs: Tensor, targets: Tensor) -> Tensor:
            logits = model(inputs)
            scores = logits.softmax(-1) if softmaxed else logits
            loss = F.cross_entropy(scores.reshape(-1, logits.shape[-1]), targets.reshape(-1))
            if zero_grad:
                optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            return loss

        return _course_steps(step)

    wrong: list[Wrong] = [
        (
            variant(zero_grad=False),
            "Your first step is right, the second is not: the gradients of step 1 are still there. PyTorch ADDS "
            "each backward() to .grad, so call optimiser.zero_grad() in every step, before loss.backward().",
            "zero-grad-forgotten",
        ),
        (
            variant(softmaxed=True),
            "F.cross_entropy takes the raw logits — it applies the (log-)softmax itself. A softmax before it "
            "squashes the scores twice and the model learns slowly.",
        ),
    ]
    verdict = compare_tensor(
        got,
        expected,
        name="your two training steps (both losses, then the gradients each step applied)",
        wrong=wrong,
        atol=1e-5,
        success="Forward, loss, zero_grad, backward, step: every training loop in PyTorch has these five lines.",
    )
    if not verdict.correct and verdict.message.endswith("check that entry by hand."):
        if abs(float(got[0] - expected[0])) > 1e-5:
            return Feedback(
                False,
                f"Your first loss is {float(got[0]):.4f}, the mean cross-entropy of these logits is "
                f"{float(expected[0]):.4f}: take the mean over all batch · n predictions of F.cross_entropy "
                "on the raw logits.",
            )
        return Feedback(
            False,
            "Your losses are right but the gradients your optimiser.step() applied are not: call zero_grad(), "
            "then loss.backward() on that loss, then step(), once each.",
        )
    return verdict


@exercise("attention_learns.8", alias="learning.4")
def next_token_loss(answer: object) -> Feedback:
    """``next_token_loss(logits (batch, n, V), ids (batch, n))``: position t's logits predict ``ids[:, t + 1]``."""
    if answer is F.cross_entropy:
        return Feedback(
            False,
            "F.cross_entropy alone does not shift: write next_token_loss(logits, ids) that calls it on the "
            "aligned predictions and targets.",
        )
    g = torch.Generator().manual_seed(4)
    logits = 2 * torch.randn(3, 7, 11, generator=g)
    ids = torch.randint(11, (3, 7), generator=g)

    def ce(scores: Tensor, targets: Tensor, reduction: str = "mean") -> Tensor:
        return F.cross_entropy(scores.reshape(-1, scores.shape[-1]), targets.reshape(-1), reduction=reduction)

    wrong = [
        (
            ce(logits, ids),
            "No shift: you scored position t's logits against ids[:, t], the token it already sees. Position t "
            "predicts the NEXT token: logits[:, :-1] against ids[:, 1:] (the last position has no target).",
        ),
        (
            ce(logits[:, 1:], ids[:, :-1]),
            "Shifted the wrong way: logits[:, 1:] against ids[:, :-1] asks each position for the token BEFORE "
            "it. Use logits[:, :-1] against ids[:, 1:].",
        ),
        (
            ce(logits[:, :-1].softmax(-1), ids[:, 1:]),
            "Aligned right, but cross_entropy takes raw logits: drop the softmax.",
        ),
        (
            ce(logits[:, :-1], ids[:, 1:], "sum"),
            "Aligned right; take the mean over the predictions (cross_entropy's default), not the sum.",
        ),
    ]
    return compare_call(
        answer,
        (logits, ids),
        call="your next_token_loss(logits, ids)",
        expected=ce(logits[:, :-1], ids[:, 1:]),
        name="the next-token loss of a new batch",
        wrong=wrong,
        success="Inputs and targets are the same sequence, one position apart.",
    )


@exercise("attention_learns.9", alias="learning.5")
def no_mask(answer: object) -> Feedback:
    """Copy task without a causal mask: input position 7 predicts token 8 — and can simply read it at 8."""
    wrong = [
        (
            2,
            "That is where the masked model must look (5 positions back). Without the mask the answer itself "
            "is visible.",
        ),
        (7, "Position 7 holds the current token; the target is the next one, and nothing hides it."),
    ]
    return compare_number(answer, 8, name="the position an unmasked copy model would read", wrong=wrong, tol=0.01)


@torch.no_grad()
def _per_position(model: nn.Module, task: Task, seed: int) -> Tensor | Feedback:
    """Per-position accuracy of ``model`` on 1024 fresh sequences (a seed the lesson never printed)."""
    inputs, targets, _ = task.batch(1024, torch.Generator().manual_seed(seed))
    logits = run_learner_code(model, inputs.clone(), name="your model(inputs)")
    if isinstance(logits, Feedback):
        return logits
    logits = _unwrap(logits)
    want = (len(inputs), task.n_tokens, task.vocab_size)
    if not isinstance(logits, Tensor) or tuple(logits.shape) != want:
        got = tuple(logits.shape) if isinstance(logits, Tensor) else type(logits).__name__
        return Feedback(
            False, f"your model(inputs) should give logits {want} for inputs {tuple(inputs.shape)}, got {got}."
        )
    return (logits.argmax(-1) == targets).double().mean(0)


@exercise("attention_learns.10", alias="learning.6")
def causal_reverse(answer: object) -> Feedback:
    """The reverse model trained with a causal mask, handed in: the checker measures it on sequences the lesson
    never showed. Outputs 4 … 7 see their mirror and are right; outputs 0 … 3 can only guess (1 in 32)."""
    if answer is None or answer is Ellipsis:
        return Feedback(False, "Replace the ... with your trained causal model, then run the cell again.", tried=False)
    if isinstance(answer, type) or not isinstance(answer, nn.Module):
        return Feedback(
            False,
            f"Hand in the trained model itself (check('attention_learns.10', model7)), not {type(answer).__name__}: "
            "the checker measures it on sequences the lesson never showed.",
        )
    task = ReverseTask(32, 8, causal=True)
    was_training = answer.training
    answer.eval()
    try:
        inputs = task.batch(64, torch.Generator().manual_seed(77))[0]
        changed = inputs.clone()
        changed[:, -1] = (changed[:, -1] + 1) % 32
        with torch.no_grad():
            before, after = (run_learner_code(answer, x, name="your model(inputs)") for x in (inputs, changed))
        for out in (before, after):
            if isinstance(out, Feedback):
                return out
        before, after = _unwrap(before), _unwrap(after)
        if (
            isinstance(before, Tensor)
            and isinstance(after, Tensor)
            and before.shape == after.shape
            and before.dim() == 3
        ):
            if not torch.allclose(before[:, :-1], after[:, :-1], atol=1e-5):
                return Feedback(
                    False,
                    "Changing only the last token changed your model's predictions at earlier positions: it sees "
                    "the future. Build and train it with causal=True (the task too).",
                )
        right = _per_position(answer, task, seed=2027)
    finally:
        answer.train(was_training)
    if isinstance(right, Feedback):
        return right
    seen, hidden = float(right[4:].mean()), float(right[:4].mean())
    table = " ".join(f"{float(a):.2f}" for a in right)
    if seen < 0.9:
        return Feedback(
            False,
            f"Per output position 0 … 7 your model is right {table} of the time: outputs 4 … 7, which can see "
            "their mirror, should be right almost always. Train it the full 150 steps of your train_step "
            "(lr 1e-2, batches of 64).",
        )
    return Feedback(
        True,
        f"On 1024 sequences the lesson never showed, per output position 0 … 7: {table} (per token "
        f"{float(right.mean()):.2f}). Outputs 4 … 7 see their mirror (3 … 0, earlier positions); outputs 0 … 3 "
        f"would need a later token the mask hides, so they guess ({hidden:.2f}, chance 1/32 = 0.03). The mask "
        "decides what a model CAN learn, whatever its training.",
    )
