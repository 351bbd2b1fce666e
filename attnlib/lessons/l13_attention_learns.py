"""Lesson 13 · Build and train: its explorer and its exercise checkers.

Lesson 13 explorer: an attention map forming while a model trains, and the trained model on your input.

Lesson 13 exercises: the learner builds the block and the training step, then changes an experiment.

- ``attention_learns.1`` predict: in the reverse task with n = 8, which input position does output 2 attend to?
- ``attention_learns.2`` code: the ``forward`` of a pre-LN transformer block (``MyBlock``), run on new inputs.
- ``attention_learns.3`` code: ``train_step(model, optimiser, inputs, targets)``: forward, loss, backward, step.
- ``attention_learns.4`` code: ``next_token_loss(logits, ids)``: the loss of next-token prediction (the shift by one).
- ``attention_learns.5`` transfer: the copy task without its causal mask — where would position 7 simply look?
- ``attention_learns.6`` change an experiment: the reverse task with a causal mask — report the per-token accuracy.
"""

from __future__ import annotations

import html
from collections.abc import Callable

import ipywidgets as widgets
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from ..modules import causal_mask
from ..show.explorer import Explorer, HeatmapView, Shown
from ..tasks import ReverseTask, Task
from ..training import History, train
from ..transformer import Block, TinyTransformer
from ._calls import compare_call
from ._check import Feedback, compare_number, compare_tensor, exercise, library_feedback, run_learner_code

__all__ = [
    "BLOCK_PARTS",
    "TrainingExplorer",
    "block_forward",
    "causal_reverse",
    "mirror_position",
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
        c["step"] = widgets.SelectionSlider(options=self.steps, value=step, description="training step")
        c["sequence"] = widgets.Text(value=" ".join(map(str, probe)), description="your input", continuous_update=False)
        kw = {"vmin": 0.0, "vmax": 1.0, "decimals": 2, "xlabel": "key (position:token)", "ylabel": "query"}
        self.views["during"] = HeatmapView(None, title="", **kw)
        self.views["trained"] = HeatmapView(None, title="trained model on your input", **kw)
        self.caption = self.texts["caption"] = widgets.HTML()
        self.update()
        self.observe_controls()
        self.widget = widgets.VBox(
            [
                c["step"],
                c["sequence"],
                self.message,
                widgets.HBox([self.views["during"], self.views["trained"]]),
                self.caption,
            ]
        )

    def _map(self, step: int) -> torch.Tensor:
        return self.history.snapshots[step][self.layer][self.head]

    def compute(self, values) -> Shown:
        """The probe's map at the chosen step, and the trained model's map on the typed sequence."""
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


# ---------------------------------------------------------------- helpers of the checkers
def _seeded(build: Callable[[], object], seed: int) -> object:
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return build()


#: The attribute names a block must have (those of :class:`attnlib.transformer.Block`, so that a trained
#: ``MyBlock`` loads into attnlib's ``TinyTransformer``).
BLOCK_PARTS = ("attention", "norm_attention", "mlp", "norm_mlp")


def _unwrap(result: object) -> object:
    return result[0] if isinstance(result, tuple) and result else result


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
        return x + self.mlp(self.norm_mlp(x))


def _reference_step(model, optimiser, inputs: Tensor, targets: Tensor) -> Tensor:
    logits = model(inputs)
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
    optimiser.zero_grad()
    loss.backward()
    optimiser.step()
    return loss


def pick_yours(block: object, step: object) -> tuple[Callable, Callable, str]:
    """``(block class, training step, sentence)``: yours where exercises 13.2 and 13.3 accept them,
    the reference solution otherwise (so the lesson runs before you have written them)."""
    block_ok, step_ok = bool(block_forward(block)), bool(train_step(step))
    chosen_block = block if block_ok else _ReferenceBlock
    chosen_step = step if step_ok else _reference_step
    said = [
        "your MyBlock" if block_ok else "the reference block (13.2 is not solved yet)",
        "your train_step" if step_ok else "the reference train_step (13.3 is not solved yet)",
    ]
    return chosen_block, chosen_step, f"Training with {said[0]} and {said[1]}."


# ---------------------------------------------------------------- the exercises
def wrong_answers() -> dict[str, list[tuple[object, str | None]]]:
    """Per exercise, typical wrong answers and the mistake id each must reveal (None: a plain hint)."""

    class PostNorm(_ReferenceBlock):
        def forward(self, x, mask=None):
            x = self.norm_attention(x + self.attention(x, mask=mask))
            return self.norm_mlp(x + self.mlp(x))

    class NoResidual(_ReferenceBlock):
        def forward(self, x, mask=None):
            x = self.attention(self.norm_attention(x), mask=mask)
            return self.mlp(self.norm_mlp(x))

    def forgets_zero_grad(model, optimiser, inputs, targets):
        logits = model(inputs)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
        loss.backward()
        optimiser.step()
        return loss

    def zero_grad_too_late(model, optimiser, inputs, targets):
        logits = model(inputs)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
        loss.backward()
        optimiser.zero_grad()
        optimiser.step()
        return loss

    return {
        "attention_learns.1": [(2, None), (6, None)],
        "attention_learns.2": [
            (PostNorm, "layer-norm-after"),
            (NoResidual, "residual-forgotten"),
            (Block, "library-function"),
        ],
        "attention_learns.3": [(forgets_zero_grad, None), (zero_grad_too_late, None)],
        "attention_learns.4": [
            (lambda logits, ids: F.cross_entropy(logits.reshape(-1, logits.shape[-1]), ids.reshape(-1)), None),
            (
                lambda logits, ids: F.cross_entropy(
                    logits[:, 1:].reshape(-1, logits.shape[-1]), ids[:, :-1].reshape(-1)
                ),
                None,
            ),
        ],
        "attention_learns.5": [(2, None), (7, None)],
        "attention_learns.6": [(1.0, None), (0.0, None)],
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
    missing = [name for name in BLOCK_PARTS if not isinstance(getattr(block, name, None), nn.Module)]
    if missing:
        return Feedback(
            False,
            f"MyBlock has no {', '.join(missing)}: keep the parts of the __init__ given in the exercise "
            "(their names let attnlib's TinyTransformer load your trained weights).",
        )
    g = torch.Generator().manual_seed(13)
    with torch.no_grad():
        for norm in (block.norm_attention, block.norm_mlp):  # not 1 and 0, so a swapped norm shows
            if isinstance(norm, nn.LayerNorm):
                norm.weight.copy_(0.5 + torch.rand(norm.weight.shape, generator=g))
                norm.bias.copy_(0.1 * torch.randn(norm.bias.shape, generator=g))
    x = torch.randn(2, 5, 16, generator=g)
    mask = causal_mask(5)
    with torch.no_grad():

        def attend(t, m=mask):
            return block.attention(t, mask=m)

        n1, n2, mlp = block.norm_attention, block.norm_mlp, block.mlp
        h = x + attend(n1(x))
        expected = h + mlp(n2(h))
        post = n1(x + attend(x))
        no_attention_residual = attend(n1(x))
        normed = n1(x)
        normed_residual = normed + attend(normed)
        unmasked = x + attend(n1(x), None)
        swapped = x + attend(n2(x))
        wrong = [
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


def _two_steps(step: object, name: str) -> Tensor | Feedback:
    """Run ``step`` twice on a fresh seeded model: ``[loss 1, loss 2, every parameter after]``."""
    model = _seeded(lambda: TinyTransformer(10, 16, 2, 1, max_len=6), 1)
    optimiser = torch.optim.AdamW(model.parameters(), lr=1e-2)
    g = torch.Generator().manual_seed(2)
    losses = []
    for _ in range(2):
        inputs, targets, _counted = ReverseTask(10, 6).batch(8, g)
        got = run_learner_code(step, model, optimiser, inputs, targets, name=name, write_it=(train,))
        if isinstance(got, Feedback):
            return got
        if got is None:
            return Feedback(False, f"{name} returned None: return the loss (so the lesson can plot it).")
        if isinstance(got, Tensor) and got.numel() == 1:
            got = got.detach().item()
        if isinstance(got, bool) or not isinstance(got, int | float):
            return Feedback(False, f"{name} should return the loss, one number; it returned {type(got).__name__}.")
        losses.append(float(got))
    params = torch.cat([p.detach().flatten() for p in model.parameters()]).double()
    return torch.cat([torch.tensor(losses, dtype=torch.float64), params])


@exercise("attention_learns.3", alias="learning.3")
def train_step(answer: object) -> Feedback:
    """``train_step(model, optimiser, inputs, targets)``: forward, cross-entropy, ``zero_grad``,
    ``backward``, ``step``; returns the loss. Checked by two steps on a fresh model."""
    if answer is None or answer is Ellipsis:
        return Feedback(False, "Replace the ... with your train_step function, then run the cell again.")
    name = "your train_step(model, optimiser, inputs, targets)"
    got = _two_steps(answer, name)
    if isinstance(got, Feedback):
        return got
    expected = _two_steps(_reference_step, "reference")
    start = _seeded(lambda: TinyTransformer(10, 16, 2, 1, max_len=6), 1)
    before = torch.cat([p.detach().flatten() for p in start.parameters()]).double()
    if torch.allclose(got[2:], before, atol=1e-7, rtol=0):
        return Feedback(
            False,
            "The parameters did not change. loss.backward() computes the gradients, optimiser.step() applies "
            "them; optimiser.zero_grad() belongs BEFORE backward() (it erases gradients — called between "
            "backward() and step(), nothing is left to apply).",
        )

    def variant(zero_grad: bool = True, softmaxed: bool = False, fresh_optimiser: bool = False):
        def step(model, optimiser, inputs, targets):
            if fresh_optimiser:
                optimiser = torch.optim.AdamW(model.parameters(), lr=1e-2)
            logits = model(inputs)
            scores = logits.softmax(-1) if softmaxed else logits
            loss = F.cross_entropy(scores.reshape(-1, logits.shape[-1]), targets.reshape(-1))
            if zero_grad:
                optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            return loss

        return _two_steps(step, "variant")

    wrong = [
        (
            variant(zero_grad=False),
            "Your first step is right, the second is not: the gradients of step 1 are still there. PyTorch ADDS "
            "each backward() to .grad, so call optimiser.zero_grad() in every step, before loss.backward().",
        ),
        (
            variant(softmaxed=True),
            "F.cross_entropy takes the raw logits — it applies the (log-)softmax itself. A softmax before it "
            "squashes the scores twice and the model learns slowly.",
        ),
        (
            variant(fresh_optimiser=True),
            "Use the optimiser you are given: a new AdamW in every step forgets its running averages of the "
            "gradients, so it is no longer Adam.",
        ),
    ]
    return compare_tensor(
        got,
        expected,
        name="your two training steps (both losses, then every parameter)",
        wrong=wrong,
        atol=1e-5,
        success="Forward, loss, zero_grad, backward, step: every training loop in PyTorch has these five lines.",
    )


@exercise("attention_learns.4", alias="learning.4")
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


@exercise("attention_learns.5", alias="learning.5")
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


#: 13.6: outputs 4 … 7 of 8 can see their mirror, outputs 0 … 3 must guess one of 32 tokens:
#: 4/8 + 4/8 · 1/32 ≈ 0.52 per token. A short run lands a little below or above.
CAUSAL_REVERSE_RANGE = (0.40, 0.62)


@exercise("attention_learns.6", alias="learning.6")
def causal_reverse(answer: object) -> Feedback:
    """The per-token held-out accuracy of the reverse model trained with ``causal=True``: about one half."""
    if answer is None or answer is Ellipsis:
        return Feedback(False, "Replace the ... with the per-token accuracy you measured, then run the cell again.")
    if isinstance(answer, Tensor) and answer.numel() == 1:
        answer = answer.item()
    if isinstance(answer, bool) or not isinstance(answer, int | float):
        return Feedback(False, f"Give the accuracy as one number from 0 to 1, got {type(answer).__name__}.")
    try:
        value = float(answer)
    except OverflowError:
        value = float("inf")
    if not 0.0 <= value <= 1.0:
        return Feedback(False, f"An accuracy is a number from 0 to 1, got {answer!r:.40}.")
    low, high = CAUSAL_REVERSE_RANGE
    if low <= value <= high:
        return Feedback(
            True,
            f"{value:.2f}: about half. Outputs 4 … 7 see their mirror (3 … 0, earlier positions) and are right; "
            "outputs 0 … 3 would need a later token the mask hides, so they guess (1 in 32). The mask decides "
            "what a model CAN learn, whatever its training.",
        )
    if value > high:
        return Feedback(
            False,
            f"{value:.2f} is too good for a causal model: check that both the task and the model have "
            "causal=True (train() refuses a mismatch) and that you measured the causal model.",
        )
    if value < 0.1:
        return Feedback(
            False,
            f"{value:.2f}: is that per SEQUENCE? One hidden mirror fails a whole sequence, so that is about 0. "
            "Report accuracy(model, task, per='token'); if it is low too, train the full 150 steps.",
        )
    return Feedback(
        False,
        f"{value:.2f} is lower than a trained causal model reaches: train the full 150 steps (lr 1e-2) and "
        "measure with accuracy(model, task, per='token').",
    )
