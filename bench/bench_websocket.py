"""Where a live view's round trip goes: the kernel websocket with and without Nagle's algorithm.

Starts a Jupyter server twice — with its default settings, then with etc/jupyter_server_config.py
(TCP_NODELAY on the kernel websocket) — and times 40 execute requests ("x += 1") over the kernel's
websocket, from sending the request to receiving both the reply and the kernel's "idle" status (what
a widget update waits for too). Also the same round trip straight to the kernel over ZMQ
(jupyter_client), without any server: the part no server setting can change.

Usage: python bench/bench_websocket.py
"""

from __future__ import annotations

import os
import secrets
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import requests
import websocket

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests" / "hub"))
from hubclient import execute  # noqa: E402 — the one home of "send an execute_request, wait for idle"

CONFIG = REPO / "etc" / "jupyter_server_config.py"
REPEATS = 40


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def through_server(extra: list[str]) -> list[float]:
    """Milliseconds per execute round trip over the kernel websocket of a Jupyter server."""
    port, token = _free_port(), secrets.token_hex(16)
    with tempfile.TemporaryDirectory() as root:
        jupyter = str(Path(sys.executable).with_name("jupyter"))
        args = [
            jupyter,
            "server",
            "--no-browser",
            "--ip=127.0.0.1",
            f"--port={port}",
            f"--IdentityProvider.token={token}",
            f"--ServerApp.root_dir={root}",
            *extra,
        ]
        if os.getuid() == 0:
            args.append("--allow-root")
        server = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            base, auth = f"http://127.0.0.1:{port}", {"Authorization": f"token {token}"}
            for _ in range(150):
                try:
                    requests.get(f"{base}/api/status", headers=auth, timeout=1)
                    break
                except requests.ConnectionError:
                    time.sleep(0.2)
            kernel = requests.post(f"{base}/api/kernels", headers=auth, json={"name": "python3"}, timeout=60).json()
            url = f"ws://127.0.0.1:{port}/api/kernels/{kernel['id']}/channels?token={token}"
            ws = websocket.create_connection(url)
            execute(ws, "x = 0")
            times = []
            for _ in range(REPEATS):
                start = time.perf_counter()
                execute(ws, "x += 1")
                times.append((time.perf_counter() - start) * 1000)
            ws.close()
            return times
        finally:
            server.terminate()
            server.wait(timeout=30)


def straight_to_kernel() -> list[float]:
    """Milliseconds per execute round trip to the kernel over ZMQ, no server in between."""
    from jupyter_client.manager import start_new_kernel

    manager, client = start_new_kernel(kernel_name="python3")
    try:
        client.execute_interactive("x = 0", timeout=30)
        times = []
        for _ in range(REPEATS):
            start = time.perf_counter()
            client.execute_interactive("x += 1", timeout=30)
            times.append((time.perf_counter() - start) * 1000)
        return times
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


def main() -> int:
    print(f"execute round trip ('x += 1' → reply and idle), median / p90 ms of {REPEATS}:")
    rows = [
        ("kernel over ZMQ, no server", straight_to_kernel()),
        ("through jupyter-server, default settings", through_server([])),
        ("through jupyter-server, etc/jupyter_server_config.py (TCP_NODELAY)", through_server([f"--config={CONFIG}"])),
    ]
    for name, times in rows:
        print(f"  {name:70} {statistics.median(times):6.1f} / {statistics.quantiles(times, n=10)[-1]:6.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
