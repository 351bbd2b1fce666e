"""Jupyter server settings for the lessons: `make lab`, `make learn`, the class hub and the browser tests load it.

Live views answer in milliseconds only if the kernel's websocket sends small messages at once.
jupyter-server leaves Nagle's algorithm on for that websocket, so when a widget update leaves the
server as several small messages (busy, the update, idle), the later ones wait for the browser's
delayed acknowledgement — about 40 ms on Linux. Measured here (bench/bench_websocket.py): one
execute round trip through the server 48 ms with the default, 5–6 ms with TCP_NODELAY.

Use: ``jupyter lab --config=etc/jupyter_server_config.py`` (a full path from elsewhere).
"""

from jupyter_server.services.kernels.connection.channels import ZMQChannelsWebsocketConnection


class NoDelayWebsocketConnection(ZMQChannelsWebsocketConnection):
    """The kernel websocket with TCP_NODELAY: each message is sent as soon as it is written."""

    async def connect(self):
        self.websocket_handler.set_nodelay(True)
        return await super().connect()


c = get_config()  # noqa: F821 — provided by the Jupyter server when it loads this file
c.ServerApp.kernel_websocket_connection_class = NoDelayWebsocketConnection
