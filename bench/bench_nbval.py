"""Benchmark: wall time of the whole nbval run over every lesson (what `make nbval` runs), and of each lesson alone.

Runs ``pytest -n 2 --dist loadscope notebooks --nbval ...`` several times and prints each wall
time and the median (goal: ≤ 240 s for the whole series on a 2-core machine); then each lesson alone
under nbval, one process, one torch thread, torch's portable CPU kernels as `make test` runs them (goal:
≤ 60 s each, pytest's start included). A failing run is reported as such.

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
GOAL_S = 240.0  # the series (issue #35: the lessons now train their models)
ALONE_GOAL_S = 60.0  # one lesson alone


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
    alone = {}
    for notebook in notebooks:
        env = {**os.environ, "OMP_NUM_THREADS": "1", "ATEN_CPU_CAPABILITY": "default"}
        start = time.perf_counter()
        proc = subprocess.run([*cmd[:4], *cmd[9:], str(notebook)], cwd=ROOT, capture_output=True, text=True, env=env)
        alone[notebook.stem[:2]] = round(time.perf_counter() - start, 1)
        print(f"{notebook.name} alone: {alone[notebook.stem[:2]]:.1f} s ({'ok' if proc.returncode == 0 else 'FAILED'})")
    figures = {"lessons": len(notebooks), "workers": args.workers, "runs_s": [round(t, 1) for t in times]}
    results.write(
        results.RESULTS / "nbval.json",
        {**figures, "median_s": round(median, 1), "goal_s": GOAL_S, "alone_s": alone, "alone_goal_s": ALONE_GOAL_S},
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
