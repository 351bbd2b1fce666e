"""Restarting the class hub with its limits on (deploy/confine.py): how long Ctrl-C and `make hub` take,
and what is left of the learners in between.

A fresh hub (as `make hub` starts it, as root) with ``--learners`` learners, each with a server, a kernel
and a detached process of their own (``start_new_session``, as the class review's squatter). Then the
hub is stopped as Ctrl-C stops it and started again. Printed: seconds until the hub had exited, the
learners' processes still running then (should be 0), seconds until the restarted hub answered, and
seconds until every learner's server was ready again. Every process and account is removed at the end.

Usage: python -m bench.bench_restart [--learners 5] [--json PATH]
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from harness.hubclient import Learner, execute, learner_accounts

from .hub_learners import hub_with_learners, new_kernel, report

DETACH = "import subprocess\nsubprocess.Popen(['sleep', '900'], start_new_session=True)\n"


def running_as(prefix: str) -> int:
    uids = {e.pw_uid for e in learner_accounts(prefix) if not e.pw_name.endswith("_svc")}
    count = 0
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and proc.stat().st_uid in uids:
                count += 1
        except OSError:
            pass
    return count


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--learners", type=int, default=5)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    if os.geteuid() != 0:
        print("bench_restart: the class hub runs as root", file=sys.stderr)
        return 2
    with hub_with_learners([f"again{i:02}" for i in range(args.learners)]) as (hub, people):
        for person in people:
            ws = new_kernel(person, timeout=120)
            execute(ws, DETACH)
            ws.close()
        before = running_as(hub.prefix)
        start = time.perf_counter()
        os.killpg(hub.process.pid, signal.SIGINT)  # Ctrl-C on `make hub`
        hub.process.wait(timeout=120)
        stopped = time.perf_counter() - start
        hub.process = None
        left = running_as(hub.prefix)
        start = time.perf_counter()
        hub.start()
        answered = time.perf_counter() - start
        for person in people:
            person.log_in()
            person.request_token()
        start = time.perf_counter()
        with ThreadPoolExecutor(len(people)) as pool:
            list(pool.map(Learner.start_server, people))
        ready = time.perf_counter() - start
    result = {
        "learners": args.learners,
        "processes_before": before,
        "stop_s": round(stopped, 1),
        "left_after_stop": left,
        "start_s": round(answered, 1),
        "servers_ready_s": round(ready, 1),
    }
    report(result, args.json)
    return 0 if left == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
