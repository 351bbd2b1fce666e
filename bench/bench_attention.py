"""Benchmark: attnlib's two paths against ``torch.nn.functional.scaled_dot_product_attention``.

CPU, float32, batch 8, ``d = 64`` (queries, keys and values), ``n`` tokens attending over ``n``
tokens for ``n`` = 128 … 2048. Each configuration is warmed up, then the three functions are timed
alternately (so that load from other processes hits all alike); the table reports the medians and
the ratios to torch. The goal ≤ 1.25 at ``n = 1024`` belongs to the fast path,
:func:`attnlib.tiled_attention`; :func:`attnlib.attention` is the readable formula, step by step.

Run: ``.venv/bin/python -m bench.bench_attention [--repeats R] [--sizes 128 256 ...]``; writes
``bench/results/attention.json``.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import torch
import torch.nn.functional as F

import attnlib
from bench import results

BATCH, D = 8, 64
SIZES = (128, 256, 512, 1024, 2048)
GOAL_N, GOAL_RATIO = 1024, 1.25


def _time_once(fn: Callable[[], torch.Tensor]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def measure(n: int, repeats: int, warmup: int = 3, seed: int = 0) -> tuple[float, float, float]:
    """Median seconds of ``(attnlib.attention, attnlib.tiled_attention, torch SDPA)`` on ``(8, n, 64)`` inputs."""
    gen = torch.Generator().manual_seed(seed)
    queries, keys, values = (torch.randn(BATCH, n, D, generator=gen) for _ in range(3))
    functions = (
        lambda: attnlib.attention(queries, keys, values),
        lambda: attnlib.tiled_attention(queries, keys, values),
        lambda: F.scaled_dot_product_attention(queries, keys, values),
    )
    for f in functions[:2]:
        torch.testing.assert_close(f(), functions[2](), atol=1e-5, rtol=1e-5)
    with torch.inference_mode():
        for _ in range(warmup):
            for f in functions:
                f()
        times: list[list[float]] = [[], [], []]
        for _ in range(repeats):
            for k, f in enumerate(functions):
                times[k].append(_time_once(f))
    readable, tiled, torch_sdpa = (statistics.median(t) for t in times)
    return readable, tiled, torch_sdpa


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=21, help="timed calls per function and size")
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES), help="numbers of tokens n")
    args = parser.parse_args()

    print(
        f"attnlib.attention and tiled_attention vs torch SDPA — CPU, float32, batch {BATCH}, d={D}, "
        f"{torch.get_num_threads()} threads, torch {torch.__version__}, median of {args.repeats}"
    )
    print()
    print("| n | attention (ms) | tiled_attention (ms) | torch SDPA (ms) | attention / SDPA | tiled / SDPA |")
    print("|---:|---:|---:|---:|---:|---:|")
    ratios = {}
    rows = {}
    for n in args.sizes:
        readable, tiled, theirs = measure(n, args.repeats)
        ratios[n] = tiled / theirs
        rows[n] = {"attention_ms": readable * 1e3, "tiled_ms": tiled * 1e3, "sdpa_ms": theirs * 1e3}
        print(
            f"| {n} | {readable * 1e3:.2f} | {tiled * 1e3:.2f} | {theirs * 1e3:.2f} | {readable / theirs:.2f} | "
            f"{ratios[n]:.2f} |",
            flush=True,
        )
    if GOAL_N in ratios:
        verdict = "meets" if ratios[GOAL_N] <= GOAL_RATIO else "MISSES"
        print()
        print(f"n = {GOAL_N}: tiled_attention / SDPA = {ratios[GOAL_N]:.2f} {verdict} the goal ≤ {GOAL_RATIO}")
    info = {"batch": BATCH, "d": D, "threads": torch.get_num_threads(), "torch": torch.__version__}
    results.write(results.RESULTS / "attention.json", {**info, "repeats": args.repeats, "rows": rows})


if __name__ == "__main__":
    main()
