"""What attention costs: the score matrix on paper, the largest tensor a call really makes, its time (lesson 15).

- :func:`score_matrix_bytes` — ``n_q · n_k`` numbers of ``bytes_per_number`` each, per head per layer;
- :func:`kv_cache_bytes` — what a key/value cache holds: keys and values of every layer for every token;
- :func:`largest_intermediate` — runs a call and records the shape of every tensor a torch operation
  returns inside it: the largest is what the call held at least once (deterministic, unlike a
  process's peak memory, which ``bench/bench_scale.py`` measures in fresh processes);
- :func:`median_seconds` — the median wall time of repeated calls (it varies: plot it, never print it
  into a stored notebook output).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

import torch
from torch.overrides import TorchFunctionMode

from ._validate import check_positive_int

__all__ = ["GIB", "MIB", "kv_cache_bytes", "largest_intermediate", "median_seconds", "score_matrix_bytes"]

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


class _Shapes(TorchFunctionMode):
    """Records the shape and size of every tensor returned by a torch operation while active."""

    def __init__(self) -> None:
        super().__init__()
        self.largest: tuple[tuple[int, ...], int] = ((), 0)

    def __torch_function__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for t in out if isinstance(out, tuple | list) else (out,):
            if isinstance(t, torch.Tensor):
                size = t.numel() * t.element_size()
                if size > self.largest[1]:
                    self.largest = (tuple(t.shape), size)
        return out


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
