"""What the class-hub benchmarks share (bench_fairness, bench_restart): a fresh hub with approved learners,
each with a token, a running server and a kernel; and the result, printed and saved with its provenance."""

from __future__ import annotations

import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from datetime import date
from pathlib import Path

import websocket

from harness.hubclient import Hub, Learner

from .results import provenance


@contextmanager
def hub_with_learners(names: list[str]) -> Iterator[tuple[Hub, list[Learner]]]:
    """A fresh hub (as ``make hub`` starts it, as root) where each of ``names`` signed up, was approved by the
    teacher, logged in, holds a token and has a running server; the hub, its processes and accounts are
    removed at the end."""
    hub = Hub()
    try:
        hub.start()
        teacher = Learner(hub, "teacher", "a-Teacher-pass-4")
        teacher.sign_up()
        teacher.log_in()
        people = [Learner(hub, name, f"{name}-long-pass-7") for name in names]
        for person in people:
            person.sign_up()
            teacher.approve(person.name)
            person.log_in()
            person.request_token()
        with ThreadPoolExecutor(len(people)) as pool:
            list(pool.map(Learner.start_server, people))
        yield hub, people
    finally:
        hub.remove()


def new_kernel(person: Learner, timeout: float = 300) -> websocket.WebSocket:
    """The channels of a new kernel in ``person``'s server."""
    kid = person.api("POST", f"/user/{person.name}/api/kernels", json={"name": "python3"}).json()["id"]
    return person.kernel_channels(kid, timeout)


def report(result: dict, path: Path | None) -> None:
    """Print ``result`` with the date, commit, machine and load it was measured on; save it to ``path`` too."""
    text = json.dumps({**result, "date": date.today().isoformat(), **provenance()}, indent=1)
    print(text)
    if path:
        path.write_text(text + "\n")
