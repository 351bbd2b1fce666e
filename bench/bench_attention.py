"""Benchmark: :func:`attnlib.attention` against ``torch.nn.functional.scaled_dot_product_attention``.

CPU, float32, batch 8, ``d = 64`` (queries, keys and values), ``n`` tokens attending over ``n``
tokens for ``n`` = 128 … 2048. Each configuration is warmed up, then the two functions are timed
alternately (so that load from other processes hits both alike); the table reports the median
of the repeats and the ratio ``attnlib / torch`` (goal: ≤ 1.25 at ``n = 1024``).

Run: ``.venv/bin/python bench/bench_attention.py [--repeats R] [--sizes 128 256 ...]``.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import torch
import torch.nn.functional as F

import attnlib

BATCH, D = 8, 64
SIZES = (128, 256, 512, 1024, 2048)
GOAL_N, GOAL_RATIO = 1024, 1.25


def _time_once(fn: Callable[[], torch.Tensor]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def measure(n: int, repeats: int, warmup: int = 3, seed: int = 0) -> tuple[float, float]:
    """Median seconds of ``(attnlib.attention, torch SDPA)`` on ``(8, n, 64)`` queries, keys, values."""
    gen = torch.Generator().manual_seed(seed)
    queries, keys, values = (torch.randn(BATCH, n, D, generator=gen) for _ in range(3))
    ours = lambda: attnlib.attention(queries, keys, values)  # noqa: E731
    theirs = lambda: F.scaled_dot_product_attention(queries, keys, values)  # noqa: E731
    torch.testing.assert_close(ours(), theirs(), atol=1e-5, rtol=1e-5)
    with torch.inference_mode():
        for _ in range(warmup):
            ours()
            theirs()
        t_ours, t_theirs = [], []
        for _ in range(repeats):
            t_ours.append(_time_once(ours))
            t_theirs.append(_time_once(theirs))
    return statistics.median(t_ours), statistics.median(t_theirs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=21, help="timed calls per function and size")
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES), help="numbers of tokens n")
    args = parser.parse_args()

    print(
        f"attnlib.attention vs torch SDPA — CPU, float32, batch {BATCH}, d={D}, "
        f"{torch.get_num_threads()} threads, torch {torch.__version__}, median of {args.repeats}"
    )
    print()
    print("| n | attnlib (ms) | torch SDPA (ms) | ratio |")
    print("|---:|---:|---:|---:|")
    ratios = {}
    for n in args.sizes:
        ours, theirs = measure(n, args.repeats)
        ratios[n] = ours / theirs
        print(f"| {n} | {ours * 1e3:.2f} | {theirs * 1e3:.2f} | {ratios[n]:.2f} |", flush=True)
    if GOAL_N in ratios:
        verdict = "meets" if ratios[GOAL_N] <= GOAL_RATIO else "MISSES"
        print()
        print(f"n = {GOAL_N}: ratio {ratios[GOAL_N]:.2f} {verdict} the goal ≤ {GOAL_RATIO}")


if __name__ == "__main__":
    main()
