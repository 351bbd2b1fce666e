"""The worked examples of the five source documents, as named data.

Lessons and tests import these; nothing here is copied into a notebook.

================  ========  ==================================================================
name              document  what it is
================  ========  ==================================================================
``four_inputs``   000       4 inputs of size 4, integer weights 4×5, no scaling
``three_inputs``  001       3 inputs of size 4, integer weights 4×3, worked by hand
``history``       002       a 28-word sentence, a vocabulary, 16-d embeddings, d_k=24, d_v=28
``translate``     003       "can you help me to translate this sentence", 16-d embeddings
``encodings``     004       3 token encodings of size 2 and a seeded ``SelfAttention`` module
================  ========  ==================================================================

and the helpers that build the documents' seeded objects in one place:
:func:`document_004_module` (004's module, seed 42), :func:`document_004_projections` (004's weights
rebuilt by arithmetic, with one or two roundings, lesson 09) and :func:`random_qk` (unit-variance
queries and keys, lesson 08).
"""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace

import torch
from torch import Tensor

from ._validate import check_positive_int
from .modules import SelfAttention
from .steps import QKV, Projections, derive_qkv
from .text import build_vocabulary, encode, project_as_columns, tokenize

__all__ = [
    "ALL",
    "MatrixExample",
    "SentenceExample",
    "document_004_module",
    "document_004_projections",
    "encodings",
    "four_inputs",
    "get",
    "history",
    "random_qk",
    "three_inputs",
    "translate",
]

Rows = tuple[tuple[float, ...], ...]


@dataclass(frozen=True)
class MatrixExample:
    """An example given as explicit numbers: inputs and (optionally) the three projections."""

    key: str
    document: str
    title: str
    rows: Rows
    token_labels: tuple[str, ...]
    w_query_rows: Rows | None = None
    w_key_rows: Rows | None = None
    w_value_rows: Rows | None = None
    scale: float | None = None
    seed: int | None = None  # torch.manual_seed before the document builds its module (004)
    d_model: int | None = None  # the size of that module (004's SelfAttention(d_model))
    printed_softmax_1: tuple[float, ...] | None = None  # the document's rounded weights of Input 1 (001, step 5)
    printed_weighted_1: Rows | None = None  # its rounded weighted values of Input 1 (001, step 6)
    printed_output_1: tuple[float, ...] | None = None  # its rounded output of Input 1 (001, step 7)
    printed_context_2_0: float | None = None  # the context entry [2, 0] it prints, rounded (004)
    printed_projections: tuple[Rows, Rows, Rows] | None = None  # W_q, W_k, W_v as it prints them, (d_in, d_out) (004)

    @property
    def inputs(self) -> Tensor:
        """``X``, shape ``(n_tokens, d_in)``, float32."""
        return torch.tensor(self.rows, dtype=torch.float32)

    @property
    def projections(self) -> Projections:
        """``Projections(w_query, w_key, w_value)``, each ``(d_in, d_out)``, float32."""
        if self.w_query_rows is None or self.w_key_rows is None or self.w_value_rows is None:
            raise AttributeError(f"example {self.key!r} has no explicit weights")
        rows = (self.w_query_rows, self.w_key_rows, self.w_value_rows)
        return Projections(*(torch.tensor(r, dtype=torch.float32) for r in rows))

    def qkv(self) -> QKV:
        """Step 3 on this example: ``QKV(queries, keys, values)``."""
        return derive_qkv(self.inputs, *self.projections)


@dataclass(frozen=True)
class SentenceExample:
    """An example built from a sentence: token ids, a seeded embedding and seeded weights."""

    key: str
    document: str
    title: str
    sentence: str
    seed: int
    num_embeddings: int
    d: int
    d_k: int
    d_v: int
    token_ids: tuple[int, ...] | None = None  # given explicitly (003) or from the vocabulary (002)
    reseed_before_weights: bool = False  # seed again between the embedding and the weights (003)
    column_vectors: bool = False  # the weights act on column vectors, q = U x, i.e. X Uᵀ (003)
    query_index: int | None = None  # the query the document follows (003: "you")

    @property
    def tokens(self) -> list[str]:
        return tokenize(self.sentence)

    @property
    def vocabulary(self) -> dict[str, int]:
        """The document's vocabulary (002's construction, duplicates overwrite)."""
        return build_vocabulary(self.sentence)

    @property
    def ids(self) -> Tensor:
        """Token ids, shape ``(n_tokens,)``."""
        if self.token_ids is not None:
            return torch.tensor(self.token_ids)
        return encode(self.sentence, self.vocabulary)

    def run(self) -> SimpleNamespace:
        """Replay the document's random draws in its order, without touching global RNG state.

        Returns a namespace with ``embedded (n_tokens, d)`` and the three matrices as the document draws
        them, named by how they act: 002's ``w_query``, ``w_key``, ``w_value`` (``(d, d_k)``, ``(d, d_k)``,
        ``(d, d_v)``, drawn right after the embedding, multiplying rows: ``X W``); 003's ``u_query``,
        ``u_key``, ``u_value`` (three ``(d, d)`` matrices after reseeding, applied to column vectors as
        ``U x``, i.e. ``X Uᵀ``: the notation's $U_q, U_k, U_v$).
        """
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(self.seed)
            embedded = torch.nn.Embedding(self.num_embeddings, self.d)(self.ids).detach()
            if self.reseed_before_weights:
                torch.manual_seed(self.seed)
            w_query = torch.rand(self.d, self.d_k)
            w_key = torch.rand(self.d, self.d_k)
            w_value = torch.rand(self.d, self.d_v)
        if self.column_vectors:
            return SimpleNamespace(embedded=embedded, u_query=w_query, u_key=w_key, u_value=w_value)
        return SimpleNamespace(embedded=embedded, w_query=w_query, w_key=w_key, w_value=w_value)

    def qkv(self) -> QKV:
        """Queries, keys and values as the document computes them from :meth:`run`'s draws.

        002 multiplies rows, ``X W``; 003 applies its matrices to column vectors, ``q = U x``,
        i.e. ``X Uᵀ`` (:func:`attnlib.text.project_as_columns`).
        """
        run = self.run()
        if self.column_vectors:
            return project_as_columns(run.embedded, run.u_query, run.u_key, run.u_value)
        return derive_qkv(run.embedded, run.w_query, run.w_key, run.w_value)


four_inputs = MatrixExample(
    key="000",
    document="000 — Self Attention - Pytorch",
    title="four inputs, weights 4×5, unscaled",
    rows=((1, 0, 1, 0), (0, 2, 0, 2), (1, 1, 1, 1), (3, 1, 1, 1)),
    token_labels=("Input 1", "Input 2", "Input 3", "Input 4"),
    w_query_rows=((1, 0, 1, 0, 1), (1, 0, 0, 1, 1), (0, 0, 1, 0, 0), (0, 1, 1, 1, 0)),
    w_key_rows=((0, 0, 1, 1, 1), (1, 1, 0, 0, 1), (0, 1, 0, 1, 1), (1, 1, 0, 0, 0)),
    w_value_rows=((0, 2, 0, 3, 1), (0, 3, 0, 1, 3), (1, 0, 3, 1, 1), (1, 1, 0, 2, 2)),
    scale=1.0,
)

three_inputs = MatrixExample(
    key="001",
    document="001 — Self-Attention (illustrated, worked by hand)",
    title="three inputs, weights 4×3, worked by hand",
    rows=((1, 0, 1, 0), (0, 2, 0, 2), (1, 1, 1, 1)),
    token_labels=("Input 1", "Input 2", "Input 3"),
    w_query_rows=((1, 0, 1), (1, 0, 0), (0, 0, 1), (0, 1, 1)),
    w_key_rows=((0, 0, 1), (1, 1, 0), (0, 1, 0), (1, 1, 0)),
    w_value_rows=((0, 2, 0), (0, 3, 0), (1, 0, 3), (1, 1, 0)),
    scale=1.0,
    printed_softmax_1=(0.0, 0.5, 0.5),
    printed_weighted_1=((0.0, 0.0, 0.0), (1.0, 4.0, 0.0), (1.0, 3.0, 1.5)),
    printed_output_1=(2.0, 7.0, 1.5),
)

history = SentenceExample(
    key="002",
    document="002 — self-attention from scratch on a long sentence",
    title="a 28-word sentence, embeddings of size 16, d_k=24, d_v=28",
    sentence=(
        "history can be misleading guide to the future of the economy and stock market because "
        "it does not account for structural changes that are relevant to today's world"
    ),
    seed=123,
    num_embeddings=50000,
    d=16,
    d_k=24,
    d_v=28,
)

translate = SentenceExample(
    key="003",
    document="003 — The Attention Mechanism",
    title='"can you help me to translate this sentence", embeddings of size 16',
    sentence="can you help me to translate this sentence",
    seed=123,
    num_embeddings=10,
    d=16,
    d_k=16,
    d_v=16,
    token_ids=(0, 7, 1, 2, 5, 6, 4, 3),
    reseed_before_weights=True,
    column_vectors=True,
    query_index=1,
)

encodings = MatrixExample(
    key="004",
    document="004 — Coding a Self-Attention class in PyTorch",
    title="three token encodings of size 2, module weights from seed 42",
    rows=((1.16, 0.23), (0.57, 1.36), (4.41, -2.16)),
    token_labels=("token 1", "token 2", "token 3"),
    seed=42,
    d_model=2,
    printed_context_2_0=-0.9534,
    printed_projections=(
        ((0.5406, -0.1657), (0.5869, 0.6496)),  # "Query Weight Matrix", W_q.weight.transpose(0, 1)
        ((0.6233, 0.6146), (-0.5188, 0.1323)),  # "Key Weight Matrix"
        ((-0.1549, -0.3443), (0.1427, 0.4153)),  # "Value Weight Matrix"
    ),
)


def document_004_module(d_in: int = 2) -> SelfAttention:
    """Document 004's module: ``torch.manual_seed(42)`` then ``SelfAttention(d_in)`` (layers q, v, k).

    Drawn inside ``torch.random.fork_rng``, so the caller's random state is left alone.
    """
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(encodings.seed)
        return SelfAttention(d_in)


def document_004_projections(*, roundings: int) -> Projections:
    """004's three projections ``(d_in, d_out) = (2, 2)`` rebuilt by arithmetic (lesson 09).

    ``nn.Linear(2, 2)`` draws each weight as ``w = low + u · (high − low)`` with ``u`` uniform in
    [0, 1) (the numbers ``torch.rand`` gives after ``manual_seed(42)``) and ``high = −low = 1/√2``.
    In float32 that formula can be evaluated with ``roundings=2`` (round the product, then the sum)
    or ``roundings=1`` (exact product and sum, rounded once, as a fused multiply–add does). The two
    differ in the last bit of some weights; which one ``torch.manual_seed(42)`` gives depends on the
    CPU kernel torch runs. Returned as the document prints them, ``weight.transpose(0, 1)``.
    """
    if roundings not in (1, 2):
        raise ValueError(f"roundings must be 1 or 2, got {roundings!r}")
    assert encodings.seed is not None  # document 004 seeds its module
    u = torch.rand(12, generator=torch.Generator().manual_seed(encodings.seed))
    high = torch.tensor(2**-0.5, dtype=torch.float32)
    low, width = -high, high - (-high)
    if roundings == 2:
        w = u * width + low
    else:
        w = (u.double() * width.double() + low.double()).float()
    w_query, w_value, w_key = (m.T.contiguous() for m in w.reshape(3, 2, 2))  # created as q, v, k
    return Projections(w_query, w_key, w_value)


def random_qk(d_k: int, *, n_tokens: int = 6, seed: int = 0) -> tuple[Tensor, Tensor]:
    """Queries and keys ``(n_tokens, d_k)`` with independent N(0, 1) entries (lesson 08's random data).

    Drawn from a private seeded generator, so the caller's random state is left alone.
    """
    check_positive_int("d_k", d_k)
    check_positive_int("n_tokens", n_tokens)
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(n_tokens, d_k, generator=gen), torch.randn(n_tokens, d_k, generator=gen)


ALL: dict[str, MatrixExample | SentenceExample] = {
    e.key: e for e in (four_inputs, three_inputs, history, translate, encodings)
}


def get(key: str) -> MatrixExample | SentenceExample:
    """An example by document number (``"000"`` … ``"004"``) or by name (``"three_inputs"``)."""
    by_name: dict[str, MatrixExample | SentenceExample] = {
        "four_inputs": four_inputs,
        "three_inputs": three_inputs,
        "history": history,
        "translate": translate,
        "encodings": encodings,
    }
    if key in ALL:
        return ALL[key]
    if key in by_name:
        return by_name[key]
    raise KeyError(f"no example {key!r}; choose one of {sorted(ALL)} or {sorted(by_name)}")
