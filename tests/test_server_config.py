"""etc/jupyter_server_config.py turns Nagle's algorithm off on the kernel websocket (live views' latency).

Timing it would be a timed test; bench/bench_websocket.py measures it. This checks the mechanism:
the config names a kernel websocket connection class of jupyter-server's, and connecting one sets
TCP_NODELAY on its websocket handler before the usual connection runs.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def test_the_config_sets_nodelay_before_connecting(monkeypatch: pytest.MonkeyPatch) -> None:
    channels = pytest.importorskip("jupyter_server.services.kernels.connection.channels")
    from traitlets.config import PyFileConfigLoader

    config = PyFileConfigLoader("jupyter_server_config.py", path=str(REPO / "etc")).load_config()
    cls = config.ServerApp.kernel_websocket_connection_class
    assert issubclass(cls, channels.ZMQChannelsWebsocketConnection)

    calls: list[object] = []

    async def base_connect(self) -> str:
        calls.append("connect")
        return "connected"

    monkeypatch.setattr(channels.ZMQChannelsWebsocketConnection, "connect", base_connect)

    class Handler:
        def set_nodelay(self, value: bool) -> None:
            calls.append(("nodelay", value))

    connection = cls.__new__(cls)  # no server around: only what connect() touches
    object.__setattr__(connection, "_trait_values", {"websocket_handler": Handler()})
    assert asyncio.run(cls.connect(connection)) == "connected"
    assert calls == [("nodelay", True), "connect"]
