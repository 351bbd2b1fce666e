"""Jupyter server settings for the lessons: `make lab`, `make learn`, the class hub and the browser tests load it.

Two settings make live views answer in milliseconds (figures in README, "Measured performance"):

1. **No Nagle on the kernel's websocket.** jupyter-server leaves Nagle's algorithm on for it, so
   when a widget update leaves the server as several small messages (busy, the update, idle), the
   later ones wait for the browser's delayed acknowledgement — about 40 ms on Linux. Measured here
   (bench/bench_websocket.py): one execute round trip through the server 48 ms with the default,
   5–6 ms with TCP_NODELAY.
2. **Widget messages leave the kernel's status alone.** The kernel reports ``busy`` and ``idle``
   around every request it handles, a widget's ``comm_msg`` too, and JupyterLab re-renders its
   kernel indicators at each status: twice per slider step, about 10 ms of the page's main thread
   before the updated view is painted (bench/trace_browser.py --tasks). jupyter-server's
   ``untracked_message_types`` names the requests that do not count as the kernel working; JupyterLab
   reads the same list (page config ``untracked_message_types``) and ignores the status messages of
   those requests. Adding ``comm_msg`` keeps the indicator idle while a learner drags a slider
   (the widget callbacks of attnlib take ≤ 3 ms), and still busy while a cell runs. Widget-only
   traffic then no longer refreshes the kernel's ``last_activity`` in jupyter-server; the class
   hub's idle culler still sees it, since the proxy counts the websocket's traffic as activity.

Use: ``jupyter lab --config=etc/jupyter_server_config.py`` (a full path from elsewhere).
"""

from jupyter_server.services.kernels.connection.channels import ZMQChannelsWebsocketConnection
from jupyter_server.services.kernels.kernelmanager import MappingKernelManager


class NoDelayWebsocketConnection(ZMQChannelsWebsocketConnection):
    """The kernel websocket with TCP_NODELAY: each message is sent as soon as it is written."""

    async def connect(self):
        self.websocket_handler.set_nodelay(True)
        return await super().connect()


c = get_config()  # noqa: F821 — provided by the Jupyter server when it loads this file
c.ServerApp.kernel_websocket_connection_class = NoDelayWebsocketConnection
# jupyter-server's own list, and widget messages
c.MappingKernelManager.untracked_message_types = [*MappingKernelManager.untracked_message_types.default(), "comm_msg"]
