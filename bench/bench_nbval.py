"""Benchmark: wall time of the whole nbval run over every lesson (what `make nbval` runs).

Runs ``pytest -n 2 --dist loadscope notebooks --nbval ...`` several times and prints each wall
time and the median (goal: ≤ 90 s for the whole series on a 2-core machine). A failing run is reported as such.

Run: ``.venv/bin/python -m bench.bench_nbval [--repeats 3] [--workers 2]``; writes ``bench/results/nbval.json``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

from bench import results

ROOT = results.REPO
GOAL_S = 90.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-n",
        str(args.workers),
        "--dist",
        "loadscope",
        "notebooks",
        "--nbval",
        "--nbval-current-env",
        "--nbval-sanitize-with",
        "tests/sanitize.cfg",
    ]
    notebooks = sorted(ROOT.glob("notebooks/[0-9][0-9]_*.ipynb"))
    print(f"nbval over {len(notebooks)} lessons, -n {args.workers} --dist loadscope, {args.repeats} runs")
    times = []
    for i in range(args.repeats):
        start = time.perf_counter()
        # as `make nbval`: one torch thread per test worker (the workers share the cores)
        env = {**os.environ, "OMP_NUM_THREADS": "1"}
        proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env=env)
        elapsed = time.perf_counter() - start
        last = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""
        print(f"run {i + 1}: {elapsed:.1f} s  ({'ok' if proc.returncode == 0 else 'FAILED'}: {last})")
        times.append(elapsed)
    median = statistics.median(times)
    verdict = "meets" if median <= GOAL_S else "misses"
    print(f"median wall time: {median:.1f} s — {verdict} the goal of ≤ {GOAL_S:.0f} s")
    figures = {"lessons": len(notebooks), "workers": args.workers, "runs_s": [round(t, 1) for t in times]}
    results.write(results.RESULTS / "nbval.json", {**figures, "median_s": round(median, 1), "goal_s": GOAL_S})
    return 0


if __name__ == "__main__":
    sys.exit(main())
