"""CPU fairness between learners on the class hub (deploy/confine.py): does one learner's busy loops slow
another learner's cell?

A fresh hub (as `make hub` starts it, as root, with its default limits) and two learners. Learner B runs a
reference cell (torch attention, one thread) ``--repeats`` times on a quiet hub, then again while learner A
runs ``--loops`` busy loops (each a process of A's, as the review's attack: shared notes,
class-review-2026-11-28, table 3, 12 loops slowed B's cell from 0.19 s to 8.5 s). Printed: B's median
time quiet, under load, and the ratio (the issue's bar: <= 2.5). The loops stop after ``--seconds`` at
the latest, and every process and account is removed at the end.

Usage: python -m bench.bench_fairness [--loops 12] [--repeats 7] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

from harness.hubclient import Hub, Learner, execute

REPO = Path(__file__).resolve().parent.parent

REFERENCE = (
    "import time, torch\n"
    "torch.manual_seed(0)\n"
    "q, k, v = (torch.randn(8, 128, 64) for _ in range(3))\n"
    "start = time.perf_counter()\n"
    "for _ in range(40):\n"
    "    out = torch.softmax(q @ k.transpose(1, 2) / 8.0, dim=-1) @ v\n"
    "print(time.perf_counter() - start)\n"
)

LOOPS = (
    "import subprocess, sys\n"
    "busy = [subprocess.Popen([sys.executable, '-c', 'import time\\nend = time.monotonic() + {seconds}\\n"
    "while time.monotonic() < end: pass']) for _ in range({loops})]\n"
    "print(len(busy))\n"
)


def timed(ws, repeats: int) -> list[float]:
    execute(ws, REFERENCE)  # warm up: torch imported, the first matmul done
    times = []
    for _ in range(repeats):
        text = "".join(o.get("text", "") for o in execute(ws, REFERENCE) if o["output_type"] == "stream")
        times.append(float(text.strip().splitlines()[-1]))
    return times


def kernel(person: Learner):
    import websocket

    kid = person.api("POST", f"/user/{person.name}/api/kernels", json={"name": "python3"}).json()["id"]
    url = f"ws://127.0.0.1:{person.hub.port}/user/{person.name}/api/kernels/{kid}/channels"
    return kid, websocket.create_connection(url, header=[f"Authorization: token {person.token}"], timeout=300)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--loops", type=int, default=12)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--seconds", type=int, default=120, help="the busy loops end after this at the latest")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    if os.geteuid() != 0:
        print("bench_fairness: the class hub runs as root", file=sys.stderr)
        return 2
    hub = Hub()
    try:
        hub.start()
        teacher = Learner(hub, "teacher", "a-Teacher-pass-4")
        teacher.sign_up()
        teacher.log_in()
        people = {}
        for name in ("fair-a", "fair-b"):
            person = Learner(hub, name, f"{name}-long-pass-7")
            person.sign_up()
            teacher.approve(name)
            person.log_in()
            person.request_token()
            person.start_server()
            people[name] = person
        _, ws_b = kernel(people["fair-b"])
        _, ws_a = kernel(people["fair-a"])
        quiet = timed(ws_b, args.repeats)
        execute(ws_a, LOOPS.format(loops=args.loops, seconds=args.seconds))
        time.sleep(2)  # the loops are running
        loaded = timed(ws_b, args.repeats)
        execute(ws_a, "for p in busy: p.kill()\nfor p in busy: p.wait()\n")
        ws_a.close()
        ws_b.close()
    finally:
        hub.remove()
    result = {
        "loops": args.loops,
        "repeats": args.repeats,
        "quiet_s": round(statistics.median(quiet), 4),
        "loaded_s": round(statistics.median(loaded), 4),
        "ratio": round(statistics.median(loaded) / statistics.median(quiet), 2),
        "quiet_all": [round(t, 4) for t in quiet],
        "loaded_all": [round(t, 4) for t in loaded],
        "commit": subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True
        ).stdout.strip(),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        "date": time.strftime("%Y-%m-%d"),
    }
    print(json.dumps(result, indent=1))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
