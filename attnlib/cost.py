"""What attention costs: the score matrix on paper, the largest tensor a call really makes, its time (lesson 15).

- :func:`score_matrix_bytes` — ``n_q · n_k`` numbers of ``bytes_per_number`` each, per head per layer;
- :func:`kv_cache_bytes` — what a key/value cache holds: keys and values of every layer for every token;
- :func:`layer_flops` — the arithmetic of one transformer layer, split into the parts that grow as ``n``
  (projections, MLP) and as ``n²`` (scores and weighted values);
- :func:`largest_intermediate` — runs a call and records the shape of every tensor a torch operation
  returns inside it: the largest is what the call held at least once (deterministic, unlike a
  process's peak memory, which ``bench/bench_scale.py`` measures in fresh processes);
- :class:`TorchCalls` — the torch-function mode under it (and under the exercises' watches of torch calls):
  every torch call shown to a hook before it runs and to another with the tensors it returned;
- :func:`median_seconds` — the median wall time of repeated calls (it varies: plot it, never print it
  into a stored notebook output).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any, NamedTuple

import torch
from torch.overrides import TorchFunctionMode

from ._validate import check_positive_int

__all__ = [
    "GIB",
    "MIB",
    "LayerFlops",
    "TorchCalls",
    "kv_cache_bytes",
    "largest_intermediate",
    "layer_flops",
    "median_seconds",
    "score_matrix_bytes",
]

MIB = 2**20
GIB = 2**30


def score_matrix_bytes(n_q: int, n_k: int | None = None, *, bytes_per_number: int = 4) -> int:
    """Bytes of one ``(n_q, n_k)`` score matrix (one head, one layer, one sequence); float32 = 4 bytes."""
    n_k = n_q if n_k is None else n_k
    for name, value in (("n_q", n_q), ("n_k", n_k), ("bytes_per_number", bytes_per_number)):
        check_positive_int(name, value)
    return n_q * n_k * bytes_per_number


def kv_cache_bytes(n_tokens: int, *, num_layers: int, d_model: int, bytes_per_number: int = 2) -> int:
    """Bytes of a key/value cache for one sequence of ``n_tokens``: ``2 · num_layers · n_tokens · d_model`` numbers.

    Per layer the cache keeps keys and values ``(h, n_tokens, d_head)`` each, and ``h · d_head = d_model``
    (models that share keys and values between heads keep fewer). Default: 2 bytes (float16/bfloat16).
    """
    for name, value in (
        ("n_tokens", n_tokens),
        ("num_layers", num_layers),
        ("d_model", d_model),
        ("bytes_per_number", bytes_per_number),
    ):
        check_positive_int(name, value)
    return 2 * num_layers * n_tokens * d_model * bytes_per_number


class LayerFlops(NamedTuple):
    """Floating-point operations of one layer on ``n`` tokens (a multiply-add counts 2)."""

    projections: int  # Q, K, V and the output projection: 4 · (n, d) @ (d, d)
    scores_and_values: int  # Q Kᵀ and A V: 2 · (n, d) @ (d, n)-sized products, over all heads
    mlp: int  # (n, d) @ (d, d_mlp) and back

    @property
    def attention_share(self) -> float:
        """The ``n²`` part's share of the whole layer."""
        return self.scores_and_values / (self.projections + self.scores_and_values + self.mlp)


def layer_flops(n_tokens: int, d_model: int, *, d_mlp: int | None = None) -> LayerFlops:
    """FLOPs of one transformer layer (``d_mlp`` defaults to ``4 · d_model``); softmax and norms left out.

    Projections ``8 n d²``, scores and weighted values ``4 n² d`` (the heads split ``d``, so ``h`` drops out),
    MLP ``4 n d d_mlp``: with ``d_mlp = 4d`` the ``n²`` part is the larger one once ``n > 6 d``.
    """
    d_mlp = 4 * d_model if d_mlp is None else d_mlp
    for name, value in (("n_tokens", n_tokens), ("d_model", d_model), ("d_mlp", d_mlp)):
        check_positive_int(name, value)
    n, d = n_tokens, d_model
    return LayerFlops(projections=8 * n * d * d, scores_and_values=4 * n * n * d, mlp=4 * n * d * d_mlp)


class TorchCalls(TorchFunctionMode):
    """While active, runs every torch function as usual and shows each call to two hooks a subclass overrides:
    :meth:`called` with the function before it runs (so a call that raises is seen too), :meth:`returned`
    with the tensors it returned (a tuple or list of results counted one by one).

    Through torch's public ``__torch_function__`` protocol (:class:`torch.overrides.TorchFunctionMode`).
    """

    def called(self, func: Callable[..., Any]) -> None:
        """Called before ``func`` runs."""

    def returned(self, tensors: list[torch.Tensor]) -> None:
        """Called with the tensors ``func`` returned, once it has."""

    def __torch_function__(
        self,
        func: Callable[..., Any],
        types: object,
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
    ) -> Any:
        self.called(func)
        result = func(*args, **(kwargs or {}))
        self.returned(
            [t for t in (result if isinstance(result, tuple | list) else (result,)) if isinstance(t, torch.Tensor)]
        )
        return result


class _Shapes(TorchCalls):
    """Records the shape and size of every tensor returned by a torch operation while active."""

    def __init__(self) -> None:
        super().__init__()
        self.largest: tuple[tuple[int, ...], int] = ((), 0)

    def returned(self, tensors: list[torch.Tensor]) -> None:
        for t in tensors:
            size = t.numel() * t.element_size()
            if size > self.largest[1]:
                self.largest = (tuple(t.shape), size)


def largest_intermediate(fn: Callable[..., object], *args: object, **kwargs: object) -> tuple[tuple[int, ...], int]:
    """Call ``fn(*args, **kwargs)`` and return ``(shape, bytes)`` of the largest tensor any torch operation
    returned during the call (views included: a view of a big tensor means the big tensor exists)."""
    mode = _Shapes()
    with mode:
        fn(*args, **kwargs)
    return mode.largest


def median_seconds(fn: Callable[[], object], *, repeats: int = 5) -> float:
    """Median wall time of ``repeats`` calls of ``fn()`` after one warm-up call, in seconds."""
    check_positive_int("repeats", repeats)
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)
