"""etc/jupyter_server_config.py: the two settings behind live views' latency.

Timing them would be timed tests; bench/bench_browser.py measures what the learner sees.
These check the mechanisms: the config names a kernel websocket connection class of jupyter-server's,
and connecting one sets TCP_NODELAY on its websocket handler before the usual connection runs; and
widget messages (``comm_msg``) join jupyter-server's own untracked message types, none dropped.
What JupyterLab does with that list (its kernel status stays idle while a widget changes, and turns
busy while code runs) is checked in a real JupyterLab by tests/browser/test_lab.py.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def _config():
    from traitlets.config import PyFileConfigLoader

    return PyFileConfigLoader("jupyter_server_config.py", path=str(REPO / "etc")).load_config()


def test_the_config_sets_nodelay_before_connecting(monkeypatch: pytest.MonkeyPatch) -> None:
    channels = pytest.importorskip("jupyter_server.services.kernels.connection.channels")
    config = _config()
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


def test_widget_messages_join_the_untracked_message_types() -> None:
    kernelmanager = pytest.importorskip("jupyter_server.services.kernels.kernelmanager")
    default = kernelmanager.MappingKernelManager.untracked_message_types.default()
    config = _config()
    assert "comm_msg" not in default  # else this setting is jupyter-server's default and can go
    assert config.MappingKernelManager.untracked_message_types == [*default, "comm_msg"]
    # the server built with it: widget requests are not the kernel working, code still is
    manager = kernelmanager.MappingKernelManager(config=config)
    assert not manager.track_message_type("comm_msg")
    assert manager.track_message_type("execute_request")
