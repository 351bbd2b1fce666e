"""Benchmark: `make test` as CI runs it, on a fresh clone with nothing cached.

Clones the checkout's HEAD into a temporary folder and runs ``.ci/run`` there (README's ``make test``:
the environment installed from nothing, lint, every test, nbval on every lesson, the browser tests)
with an empty uv cache, and times it: in all, and pytest's own session. It also records where the time
went: the machine's reference time (bench/results.py) before and after the run (one machine's speed has moved
2-3 times within hours), its load before the run (``load``; another job on the machine makes it slower), how
busy the cores were during it (``cpu_busy``: from /proc/stat, user + system over all), and pytest's slowest
steps (its ``--durations`` report). A failing run is reported as such and its log kept. It tests what is
committed: uncommitted changes are not in the clone.
Goal (issue #35): ≤ 10 minutes in all, installs included (≤ 8 in issues #26 and #27, before lessons 13–17
trained every model they read).

Run: ``.venv/bin/python -m bench.bench_make_test``; writes ``bench/results/make_test.json``.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench import results

GOAL_S = 10 * 60
SLOWEST = re.compile(r"^([\d.]+)s (setup|call|teardown)\s+(\S+)$", re.MULTILINE)


def _cpu_ticks() -> tuple[int, int] | None:
    """(busy, all) jiffies of every core so far, from /proc/stat; None where there is none."""
    try:
        fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    except (OSError, ValueError):
        return None
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    return sum(fields) - idle, sum(fields)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, default=results.RESULTS / "make_test.json", help="where to write")
    args = parser.parse_args()
    head = ["git", "rev-parse", "--short", "HEAD"]
    commit = subprocess.run(head, cwd=results.REPO, capture_output=True, text=True, check=True).stdout.strip()
    scratch = Path(tempfile.mkdtemp(prefix="bench-make-test-"))
    scratch.chmod(0o755)  # as a checkout's folder: the hub tests' learner accounts must pass through it
    clone, log = scratch / "clone", scratch / "make-test.log"
    subprocess.run(["git", "clone", "-q", str(results.REPO), str(clone)], check=True)
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env["UV_CACHE_DIR"] = str(scratch / "uv-cache")  # nothing cached, as on a fresh machine
    print(f"make test on a fresh clone of {commit} (log: {log})", flush=True)
    load_before = f"{os.getloadavg()[0]:.1f}"
    reference = results.reference_seconds()  # before the run, as the load
    ticks = _cpu_ticks()
    start = time.perf_counter()
    with log.open("w") as out:
        done = subprocess.run(["bash", ".ci/run"], cwd=clone, env=env, stdout=out, stderr=subprocess.STDOUT)
    elapsed = time.perf_counter() - start
    after = _cpu_ticks()
    reference_after = results.reference_seconds()  # did the machine's speed change during the run?
    busy = round((after[0] - ticks[0]) / (after[1] - ticks[1]), 2) if ticks and after else None
    text = log.read_text(errors="replace")
    slowest = [f"{float(t):.1f} s {when} {test}" for t, when, test in SLOWEST.findall(text)][:12]
    session = re.findall(r"=+ (.*) in ([\d.]+)s", text)
    pytest_s = float(session[-1][1]) if session else None
    outcome = session[-1][0] if session else "no pytest summary"
    print(
        f"{'passed' if done.returncode == 0 else 'FAILED'}: {elapsed:.0f} s in all, pytest {pytest_s} s ({outcome});"
        f" load before {load_before}, cores busy {busy}, reference {reference:.2f} s before,"
        f" {reference_after:.2f} s after"
    )
    print("slowest:", *slowest, sep="\n  ")
    if done.returncode == 0:
        shutil.rmtree(scratch, ignore_errors=True)
    figures = {"commit": commit, "passed": done.returncode == 0, "outcome": outcome}
    timing = {"total_s": round(elapsed), "pytest_s": pytest_s, "goal_s": GOAL_S}
    # the load is the one before the run (the run's own would say nothing): was the machine quiet? The reference
    # time before and after it: how fast is the machine, and did that change during the run?
    quiet = {"load": load_before, "reference_s": reference, "reference_after_s": reference_after}
    results.write(args.json, {**figures, **timing, **quiet, "cpu_busy": busy, "slowest": slowest})
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
