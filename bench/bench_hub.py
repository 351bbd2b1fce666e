"""How many learners one machine holds: JupyterHub (deploy/) with 5, 10 and 20 learners at once.

For each class size, a fresh hub on 127.0.0.1, started as `make hub` starts it (as root: each learner's
server and kernel run as their own OS account, created by the hub and removed afterwards): the
learners sign up, the teacher approves them, they
log in and start their servers at the same moment, then all run lesson 02 at the same moment through
their server's kernel API (a fresh kernel each: torch and attnlib imported, every cell executed).
Printed per class size: time until every server was ready, time until every learner's lesson had
finished, failures (errors, timeouts, outputs different from the stored ones), and memory — the peak
total PSS of the learners' processes (servers + kernels, sampled every 0.2 s during the run) divided by
the number of learners, plus the hub and proxy. PSS counts shared pages once across processes, so the
sum is what the machine really holds.

Usage: python -m bench.bench_hub [--sizes 5 10 20] [--lesson lessons/02_projections.ipynb] [--json PATH]
(the table in docs/teaching-guide.md is rendered from the JSON by ``python -m bench.report``)
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import statistics
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from bench import results
from harness.hubclient import Hub, Learner, comparable, stored_outputs

REPO = Path(__file__).resolve().parent.parent

GIB = 2**30


def pss(pid: int) -> int:
    """Proportional set size of one process in bytes (0 if it is gone)."""
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def pids_under(folder: Path) -> list[int]:
    """Processes whose working folder is inside ``folder`` (learners' servers and kernels)."""
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                if os.readlink(proc / "cwd").startswith(str(folder)):
                    found.append(int(proc.name))
            except OSError:
                pass
    return found


class Sampler(threading.Thread):
    """Samples the total PSS of the processes under a folder until stopped; keeps the peak."""

    def __init__(self, folder: Path) -> None:
        super().__init__(daemon=True)
        self.folder, self.peak, self.peak_count, self._halt = folder, 0, 0, threading.Event()

    def run(self) -> None:
        while not self._halt.is_set():
            pids = pids_under(self.folder)
            total = sum(pss(pid) for pid in pids)
            if total > self.peak:
                self.peak, self.peak_count = total, len(pids)
            time.sleep(0.2)

    def stop(self) -> None:
        self._halt.set()
        self.join()


def run_class(size: int, lesson: str) -> dict[str, object]:
    hub = Hub()  # as `make hub` starts it: one OS account per learner, removed afterwards
    try:
        hub.start()
        teacher = Learner(hub, "teacher", "a-Teacher-pass-4")
        teacher.sign_up()
        teacher.log_in()
        people = [Learner(hub, f"learner{i:02}", f"learner{i:02}-long-pass") for i in range(size)]
        for person in people:
            person.sign_up()
            teacher.approve(person.name)
            person.log_in()
            person.request_token()
        start = time.perf_counter()
        with ThreadPoolExecutor(size) as pool:
            started = list(pool.map(_try, [p.start_server for p in people]))
        ready = time.perf_counter() - start
        sampler = Sampler(hub.state / "homes")
        sampler.start()
        start = time.perf_counter()
        with ThreadPoolExecutor(size) as pool:
            results = list(pool.map(lambda p: _try(lambda: _run_and_compare(p, lesson)), people))
        finished = time.perf_counter() - start
        sampler.stop()
        hub_pss = pss(hub.process.pid) + pss(int((hub.private / "proxy.pid").read_text()))
        failures = [r for r in started + results if r is not True]
        kept = None
        if failures:  # the hub's log (its servers' too) outlives the hub, for the diagnosis
            kept = Path(tempfile.mkdtemp(prefix="bench-hub-")) / "hub.log"
            shutil.copy(hub.private / "hub.log", kept)
        return {"size": size, "ready": ready, "finished": finished, "failures": failures, "log": kept,
                "per_learner": sampler.peak / size, "hub": hub_pss, "processes": sampler.peak_count}  # fmt: skip
    finally:
        hub.remove()


def _try(fn) -> object:
    try:
        out = fn()
        return True if out is None or out is True else out
    except Exception as error:  # a benchmark reports failures instead of stopping at the first
        return f"{type(error).__name__}: {error}"


def _run_and_compare(person: Learner, lesson: str) -> bool | str:
    got = person.run_notebook(lesson, timeout=600)
    want = stored_outputs(person.contents(lesson).json()["content"])
    different = [i for i, (g, w) in enumerate(zip(got, want)) if w is not None and comparable(g) != comparable(w)]
    return True if not different else f"{person.name}: cells {different} differ"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[5, 10, 20])
    parser.add_argument("--lesson", default="lessons/02_projections.ipynb")
    parser.add_argument("--json", type=Path, default=results.RESULTS / "hub.json", help="where to write")
    args = parser.parse_args(argv)
    # stopped (timeout, kill): leave through the finally blocks, which stop the hub and remove the accounts
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    print(f"JupyterHub capacity: {os.cpu_count()} cores, {memory / GIB:.0f} GiB; every learner runs {args.lesson}")
    print("| learners | all servers ready (s) | all lessons finished (s) | failures "
          "| memory per learner (GiB, peak PSS) | hub + proxy (MiB) |")  # fmt: skip
    print("|---:|---:|---:|---:|---:|---:|")
    rows = []
    for size in args.sizes:
        row = run_class(size, args.lesson)
        rows.append(row)
        print(f"| {size} | {row['ready']:.1f} | {row['finished']:.1f} | {len(row['failures'])} | "
              f"{row['per_learner'] / GIB:.2f} | {row['hub'] / 2**20:.0f} |", flush=True)  # fmt: skip
        for failure in row["failures"]:
            print(f"    failure: {failure}")
        if row["log"]:
            print(f"    the hub's log, kept: {row['log']}")
    results.write(args.json, {"lesson": args.lesson, "memory_gib": round(memory / GIB), "rows": [
        {"size": r["size"], "ready_s": round(r["ready"], 1), "finished_s": round(r["finished"], 1),
         "failures": r["failures"], "per_learner_gib": round(r["per_learner"] / GIB, 2),
         "hub_mib": round(r["hub"] / 2**20)} for r in rows]})  # fmt: skip
    per_learner = statistics.median(r["per_learner"] for r in rows)
    print(f"memory: a {memory / GIB:.0f} GiB machine holds about {int(0.8 * memory / per_learner)} learners with a "
          f"kernel each (80 % of memory at {per_learner / GIB:.2f} GiB per learner); CPU, not memory, sets the pace "
          "on 2 cores")  # fmt: skip
    return 0 if all(not r["failures"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
