"""Small sequence tasks whose correct attention pattern is known in advance (lessons 13 and 14).

Each task makes seeded batches ``(inputs, targets, counted)``: ``inputs`` and ``targets`` are
``(batch, n)`` token ids, ``counted`` ``(n,)`` marks the positions whose prediction is scored
(the ones the inputs determine).

- :class:`ReverseTask` — output position ``i`` must be input token ``n − 1 − i``: the right attention
  is the anti-diagonal. Not causal: every position sees the whole input.
- :class:`CopyTask` — next-token prediction on ``a₁ … a_m a₁ … a_m``: in the second half the next
  token is the one ``m − 1`` places back, so a causal model must look back exactly that far.
- :class:`RepeatTask` — like the copy task but the first half's length varies from sequence to
  sequence: a fixed offset no longer works, the model must find the previous occurrence of the current
  token and copy what followed it — an induction head (lesson 14).

:class:`TwoColoursTask` (lesson 11) is of another kind: a set of items, each a colour and a number, and one
answer per set — the red numbers' sum minus the blue numbers' sum — which needs two lookups at once.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from ._validate import AttentionInputError, check_positive_int

__all__ = ["BLUE", "COLOURS", "GREY", "RED", "CopyTask", "RepeatTask", "ReverseTask", "Task", "TwoColoursTask"]

MAX_TOKENS = 64
MAX_VOCAB = 1000


def _check_range(name: str, value: int, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise AttentionInputError(f"{name} must be an integer from {low} to {high}, got {value!r}")
    return value


@dataclass(frozen=True)
class Task:
    """What every task shares: its vocabulary size, its sequence length, whether it is causal."""

    vocab_size: int
    n_tokens: int

    causal = False
    name = "task"

    def __post_init__(self) -> None:
        _check_range("vocab_size", self.vocab_size, 2, MAX_VOCAB)
        _check_range("n_tokens", self.n_tokens, 2, MAX_TOKENS)

    def batch(self, batch_size: int, generator: torch.Generator) -> tuple[Tensor, Tensor, Tensor]:
        raise NotImplementedError

    def counted(self) -> Tensor:
        """``(n_tokens,)`` bool: the positions whose prediction is scored."""
        return torch.ones(self.n_tokens, dtype=torch.bool)


@dataclass(frozen=True)
class ReverseTask(Task):
    """Reverse a sequence of ``n_tokens`` random tokens: target ``i`` is input ``n − 1 − i``.

    ``causal=True`` (an experiment of lesson 13): the model may only look back, so output ``i`` can see its
    mirror only when ``n − 1 − i ≤ i``.
    """

    causal: bool = False
    name = "reverse"

    def __post_init__(self) -> None:
        super().__post_init__()
        if not isinstance(self.causal, bool):
            raise AttentionInputError(f"causal must be True or False, got {self.causal!r}")

    def batch(self, batch_size: int, generator: torch.Generator) -> tuple[Tensor, Tensor, Tensor]:
        check_positive_int("batch_size", batch_size)
        inputs = torch.randint(self.vocab_size, (batch_size, self.n_tokens), generator=generator)
        return inputs, inputs.flip(1), self.counted()

    @staticmethod
    def pattern(n_tokens: int) -> Tensor:
        """The right attention ``(n, n)``: each output position looks at its mirror image."""
        return torch.eye(n_tokens).flip(1)


@dataclass(frozen=True)
class CopyTask(Task):
    """Next-token prediction on a sequence that repeats once: ``a₁ … a_m a₁ … a_m``, ``n_tokens = 2m − 1`` inputs."""

    name = "copy"
    causal = True

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.n_tokens % 2 == 0:
            raise AttentionInputError(f"n_tokens must be odd (2m − 1 inputs for a half of m), got {self.n_tokens}")

    @property
    def half(self) -> int:
        return (self.n_tokens + 1) // 2

    def counted(self) -> Tensor:
        counted = torch.zeros(self.n_tokens, dtype=torch.bool)
        counted[self.half - 1 :] = True  # from the last token of the first half on, the next token is known
        return counted

    def batch(self, batch_size: int, generator: torch.Generator) -> tuple[Tensor, Tensor, Tensor]:
        check_positive_int("batch_size", batch_size)
        half = torch.randint(self.vocab_size, (batch_size, self.half), generator=generator)
        sequence = torch.cat([half, half], dim=1)
        return sequence[:, :-1], sequence[:, 1:], self.counted()

    def pattern(self) -> Tensor:
        """The right attention ``(n, n)``: from position ``m − 1`` on, position ``i`` looks at ``i − m + 1``."""
        pattern = torch.zeros(self.n_tokens, self.n_tokens)
        for i in range(self.half - 1, self.n_tokens):
            pattern[i, i - self.half + 1] = 1.0
        return pattern


@dataclass(frozen=True)
class RepeatTask(Task):
    """Random tokens of random length ``m`` (``min_half … n_tokens // 2``), repeated, then padding tokens.

    The padding uses token ``0`` (never a sequence token); only the repeated half is scored.
    """

    name = "repeat"
    causal = True
    min_half: int = 4

    def batch(self, batch_size: int, generator: torch.Generator) -> tuple[Tensor, Tensor, Tensor]:
        check_positive_int("batch_size", batch_size)
        n = self.n_tokens + 1
        max_half = n // 2
        halves = torch.randint(self.min_half, max_half + 1, (batch_size,), generator=generator)
        tokens = torch.randint(1, self.vocab_size, (batch_size, max_half), generator=generator)
        m = halves[:, None]  # (batch, 1): each sequence's run length
        position = torch.arange(n)[None]  # (1, n)
        source = torch.where(position < m, position, position - m).clamp(max=max_half - 1)
        sequence = tokens.gather(1, source.expand(batch_size, n)) * (position < 2 * m)  # then padding 0
        counted = (position[:, :-1] >= m) & (position[:, :-1] < 2 * m - 1)  # predicting a₂ … a_m of the repeat
        return sequence[:, :-1], sequence[:, 1:], counted


#: The colours of :class:`TwoColoursTask`'s items, by id.
COLOURS = ("grey", "red", "blue")
GREY, RED, BLUE = 0, 1, 2


@dataclass(frozen=True)
class TwoColoursTask:
    """Sets of items, each a colour and a number; the answer is the red numbers' sum minus the blue numbers'.

    Every set holds ``per_colour`` red items, ``per_colour`` blue ones and ``n_grey`` grey ones, in a random
    order, each with a number ``0 … n_values − 1`` drawn uniformly. The answer runs from ``−offset`` to
    ``+offset`` (``offset = per_colour · (n_values − 1)``); as a class index it is ``answer + offset``, one
    of ``n_classes``. Reading it needs two lookups with different criteria (the red items, the blue items)
    whose results must not be mixed: the sign of each sum matters.
    """

    n_values: int = 5
    per_colour: int = 2
    n_grey: int = 2

    name = "two colours"

    def __post_init__(self) -> None:
        _check_range("n_values", self.n_values, 2, MAX_VOCAB)
        _check_range("per_colour", self.per_colour, 1, MAX_TOKENS // 2)
        _check_range("n_grey", self.n_grey, 0, MAX_TOKENS - 2 * self.per_colour)

    @property
    def n_items(self) -> int:
        return 2 * self.per_colour + self.n_grey

    @property
    def offset(self) -> int:
        """The largest answer, ``per_colour · (n_values − 1)``: class ``c`` is the answer ``c − offset``."""
        return self.per_colour * (self.n_values - 1)

    @property
    def n_classes(self) -> int:
        return 2 * self.offset + 1

    def batch(self, batch_size: int, generator: torch.Generator) -> tuple[Tensor, Tensor, Tensor]:
        """``(colours, numbers, targets)``: ``(batch, n_items)`` colour ids and numbers, ``(batch,)`` class
        indices (the answer plus :attr:`offset`)."""
        check_positive_int("batch_size", batch_size)
        if not isinstance(generator, torch.Generator):
            raise AttentionInputError(f"generator must be a torch.Generator, got {type(generator).__name__}")
        k = self.per_colour
        numbers = torch.randint(self.n_values, (batch_size, self.n_items), generator=generator)
        order = torch.rand(batch_size, self.n_items, generator=generator).argsort(dim=1)  # a random place each
        colours = torch.full((batch_size, self.n_items), GREY)
        colours.scatter_(1, order[:, :k], RED)
        colours.scatter_(1, order[:, k : 2 * k], BLUE)
        return colours, numbers, self.answer(colours, numbers) + self.offset

    def answer(self, colours: Tensor, numbers: Tensor) -> Tensor:
        """``(batch,)``: the red numbers' sum minus the blue numbers', for ``colours`` and ``numbers``
        ``(batch, n_items)`` (any number of items)."""
        for label, t in (("colours", colours), ("numbers", numbers)):
            if not isinstance(t, Tensor) or t.dim() != 2 or t.is_floating_point() or t.is_complex():
                shape = tuple(t.shape) if isinstance(t, Tensor) else type(t).__name__
                raise AttentionInputError(f"{label} must be a (batch, n_items) tensor of integers, got {shape}")
        if colours.shape != numbers.shape:
            raise AttentionInputError(
                f"colours {tuple(colours.shape)} and numbers {tuple(numbers.shape)} must have the same shape "
                "(batch, n_items): one colour and one number per item"
            )
        if colours.numel() and (int(colours.min()) < 0 or int(colours.max()) >= len(COLOURS)):
            raise AttentionInputError(
                f"colours must be ids 0 … {len(COLOURS) - 1} {COLOURS}, got {colours.unique().tolist()}"
            )
        if numbers.numel() and (int(numbers.min()) < 0 or int(numbers.max()) >= self.n_values):
            raise AttentionInputError(
                f"numbers must be from 0 to n_values − 1 = {self.n_values - 1}, "
                f"got {int(numbers.min())} … {int(numbers.max())}"
            )
        return (numbers * (colours == RED)).sum(dim=1) - (numbers * (colours == BLUE)).sum(dim=1)
