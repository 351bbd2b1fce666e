"""Jupyter server settings for the lessons: `make lab`, `make learn`, the class hub and the browser tests load it.

Two settings let a live view answer within a frame (docs/performance.md has the figures):

1. **No Nagle on the kernel's websocket.** A widget update leaves the server as several small
   messages (busy, the update, idle); with Nagle's algorithm on, the later ones wait for the
   browser's delayed acknowledgement.
2. **Widget messages leave the kernel's status alone.** The kernel reports ``busy`` and ``idle``
   around every request, a widget's ``comm_msg`` too, and JupyterLab re-renders its kernel
   indicators at each. jupyter-server's ``untracked_message_types`` names the requests that do not
   count as the kernel working, and JupyterLab reads the same list: with ``comm_msg`` in it the
   indicator stays idle while a learner drags a slider, and still turns busy while a cell runs.
   Widget-only traffic then no longer refreshes the kernel's ``last_activity``; the class hub's
   idle culler still sees it, since the proxy counts the websocket's traffic as activity.

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
