"""Lesson 01 exercises: inputs as the matrix ``X`` ``(n_tokens, d_in)``, one row per token.

- ``inputs.1`` by hand: three token vectors, written as columns in the lesson, stacked as the rows of X.
- ``inputs.2`` code: ``stack(vectors)`` → X, run on vectors the lesson never showed.
- ``inputs.3`` transfer: the shape of document 002's X (28 tokens, 26 distinct words, a table of 50 000).
"""

from __future__ import annotations

import torch
from torch import Tensor

from .. import examples
from ._calls import compare_call
from ._core import Feedback, compare_tensor, exercise

__all__ = ["by_hand", "sentence_shape", "stack", "wrong_answers"]

#: ``inputs.1``: the vectors of "cats", "chase", "mice" (the lesson shows them as columns).
HAND_VECTORS = ((1.0, 2.0), (0.0, -1.0), (3.0, 0.5))


def _hand() -> Tensor:
    return torch.tensor(HAND_VECTORS)


def _fresh_vectors() -> list[Tensor]:
    gen = torch.Generator().manual_seed(1)
    return [torch.randn(5, generator=gen) for _ in range(4)]


def _sentence_shape() -> Tensor:
    ex = examples.history
    return torch.tensor([len(ex.tokens), ex.d], dtype=torch.float64)


def wrong_answers() -> dict[str, list[tuple[object, str | None]]]:
    """Per exercise, typical wrong answers and the mistake id each must reveal (None: a plain hint)."""
    x = _hand()
    ex = examples.history
    return {
        "inputs.1": [(x.T, "transposed"), (x.reshape(-1), None), (x.flip(0), None)],
        "inputs.2": [
            (lambda vectors: torch.stack(vectors, dim=1), "transposed"),
            (lambda vectors: torch.cat(vectors), None),
        ],
        "inputs.3": [
            ([ex.d, len(ex.tokens)], "transposed"),
            ([len(set(ex.tokens)), ex.d], None),
            ([ex.num_embeddings, ex.d], None),
        ],
    }


@exercise("inputs.1")
def by_hand(answer: object) -> Feedback:
    """X for the three vectors of :data:`HAND_VECTORS`: shape ``(3, 2)``."""
    x = _hand()
    wrong = [
        (
            x.T,
            "Each token is a column here. In this series X has one ROW per token: shape (n_tokens, d_in) = (3, 2).",
            "transposed",
        ),
        (x.reshape(-1), "That is one long vector of 6 numbers: stack the tokens instead, one row each."),
        (x.flip(0), "The rows are in reverse order: row 1 is the first token, 'cats'."),
    ]
    return compare_tensor(
        answer, x, name="X for 'cats chase mice' (3×2)", wrong=wrong, success="n_tokens = 3, d_in = 2."
    )


@exercise("inputs.2")
def stack(answer: object) -> Feedback:
    """A function ``stack(vectors)``: a list of ``n`` vectors ``(d_in,)`` → X ``(n, d_in)``, without prepare_inputs."""
    vectors = _fresh_vectors()
    wrong = [
        (
            torch.stack(vectors, dim=1),
            "Your vectors became columns: torch.stack(vectors, dim=1) is (d_in, n). Stack along dim=0.",
            "transposed",
        ),
        (torch.cat(vectors), "torch.cat glues the vectors into one long vector; torch.stack makes a new axis."),
    ]
    return compare_call(
        answer,
        (vectors,),
        call="your stack(vectors)",
        expected=torch.stack(vectors),
        name="stack(vectors) on four new vectors of size 5",
        wrong=wrong,
        success="Four tokens of size 5: (4, 5).",
    )


@exercise("inputs.3")
def sentence_shape(answer: object) -> Feedback:
    """Document 002's X for its 28-word sentence with embeddings of size 16: ``[n_tokens, d_in]``."""
    ex = examples.history
    n, distinct, table = len(ex.tokens), len(set(ex.tokens)), ex.num_embeddings
    wrong = [
        (torch.tensor([ex.d, n]), "Rows and columns swapped: X is (n_tokens, d_in).", "transposed"),
        (
            torch.tensor([distinct, ex.d]),
            f"{distinct} is the number of distinct words. X has one row per token *occurrence*: a word that "
            "appears twice ('the', 'to') gets two rows.",
        ),
        (
            torch.tensor([table, ex.d]),
            f"{table:,} × {ex.d} is the embedding table (one row per possible id); X only holds the rows of "
            "the sentence's tokens.",
        ),
    ]
    return compare_tensor(
        answer, _sentence_shape(), name="the shape [n_tokens, d_in] of 002's X", wrong=wrong, atol=0.5
    )
