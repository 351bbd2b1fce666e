"""Where the benchmarks write their figures (``bench/results/*.json``) and how they summarise them."""

from __future__ import annotations

import json
import platform
import statistics
from datetime import date
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / "results"

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
    """Write ``figures`` with the machine and the date to ``path`` (JSON) and say where."""
    path.parent.mkdir(parents=True, exist_ok=True)
    figures = {"date": date.today().isoformat(), "machine": f"{platform.machine()}, {_cores()} cores", **figures}
    path.write_text(json.dumps(figures, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {path}")


def _cores() -> int:
    import os

    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
