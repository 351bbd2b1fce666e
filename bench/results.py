"""Where the benchmarks write their figures (``bench/results/*.json``) and how they summarise them."""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import time
from datetime import date
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / "results"
#: the row of a page's own reference in bench_static's table ("NN page alone"), not a control
PAGE_ALONE = "page alone"

#: the browser bench's reference row on each lesson's page ("05 Jupyter alone"): ipywidgets alone
JUPYTER_ALONE = "Jupyter alone"


def summary(times: list[float]) -> dict[str, float]:
    """``{"median", "p90", "n"}`` of timings in ms (one decimal)."""
    return {
        "median": round(statistics.median(times), 1),
        "p90": round(float(np.percentile(times, 90)), 1),
        "n": len(times),
    }


def stats(times: list[float]) -> str:
    """``median / p90`` in whole ms."""
    s = summary(times)
    return f"{s['median']:.0f} / {s['p90']:.0f}"


def write(path: Path, figures: dict) -> None:
    """Write ``figures`` to ``path`` (JSON) with what they were measured on: the date, the commit (``+``
    when the checkout had uncommitted changes), the machine and its load, and say where."""
    path.parent.mkdir(parents=True, exist_ok=True)
    figures = {"date": date.today().isoformat(), **provenance(reference="reference_s" not in figures), **figures}
    path.write_text(json.dumps(figures, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {path}")


def provenance(*, reference: bool = True) -> dict[str, str | float]:
    """``commit``, ``machine`` (architecture, CPU model, cores), ``load`` (the 1-minute load average,
    which says whether other work shared the machine) and, with ``reference``, ``reference_s``
    (:func:`reference_seconds`: how fast one core is) of a measurement taken now."""
    got: dict[str, str | float] = {
        "commit": _commit(),
        "machine": f"{platform.machine()}, {_cpu_model()}, {_cores()} cores",
        "load": f"{os.getloadavg()[0]:.1f}" if hasattr(os, "getloadavg") else "unknown",
    }
    if reference:
        got["reference_s"] = reference_seconds()
    return got


def reference_seconds(repeats: int = 3) -> float:
    """Seconds one core takes for a fixed piece of pure Python (a dict of 300,000 strings, sorted), the best of
    ``repeats``: what most of the suite's servers, kernels and pytest itself do. It says how fast a machine is
    where its CPU's name does not: the same fresh-clone ``make test`` took 507 s on one 2-core machine and
    1074 s on another (2026-12-02 and 12-03), and a result is read against its machine's reference."""

    def work() -> int:
        table = {str(i): i * i % 7 for i in range(300_000)}
        return sum(len(key) for key in sorted(table, key=table.__getitem__))

    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - start)
    return round(best, 3)


def measured_on(data: dict) -> str:
    """The line that closes a table: when, on which commit and machine (with its reference time, when recorded),
    under which load."""
    commit = f"commit `{data['commit']}`" if "commit" in data else "commit not recorded"
    reference = f" (reference {data['reference_s']:.2f} s)" if "reference_s" in data else ""
    load = f", load {data['load']}" if "load" in data else ""
    return f"{data['date']}, {commit}, {data['machine']}{reference}{load}"


def _commit() -> str:
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, check=False).stdout.strip()

    head = git("rev-parse", "--short", "HEAD") or "unknown"
    return head + ("+" if git("status", "--porcelain", "--untracked-files=no") else "")


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def _cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
