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
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from ._validate import AttentionInputError, check_positive_int

__all__ = ["CopyTask", "RepeatTask", "ReverseTask", "Task"]

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
