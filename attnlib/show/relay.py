"""Relay: one message to the browser per explorer change, instead of one per widget.

A change of an explorer updates several widgets — its views, its texts — and ipywidgets sends one
message per widget. Each message crosses the kernel, the server and the page on its own, and the
page handles them one after another (1–2 ms each in ipywidgets, measured in
``bench/trace_browser.py``). The relay carries all of one change's updates in one message:

1. :meth:`Explorer.batched <attnlib.show.explorer.Explorer.batched>` holds the widgets' updates
   (as ``hold_sync`` does) and hands them to :meth:`Relay.send_states` at the end of the change.
2. Widgets the browser's relay has confirmed travel together in one custom message
   ``{kind: "update", updates: [{id, state}, …]}`` (binary buffers, such as a view's matrix, as
   buffers of that message); every other widget sends its own message, as ipywidgets does.
3. ``static/relay.js`` applies each update to its widget's model in the page exactly as
   ipywidgets would (deserialise, ``set_state``, in order with the widget's own messages), so
   every view redraws in the same frame.

The Python side stays the source of truth: each widget's traits are set as usual, so a page that
reloads or a second page asks the kernel for every widget's state and gets the current one.

Handshake: the page's relay says ``hello`` when its model is created; the kernel answers with the
ids of the widgets to route; the page looks their models up and confirms (``routed``). Until then —
and always where no page runs the relay, e.g. when nbval executes a lesson — every widget sends its
own messages.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import ClassVar

import anywidget
from ipywidgets import Widget
from ipywidgets.widgets.widget import _remove_buffers

__all__ = ["Relay"]

STATIC = Path(__file__).parent / "static"


class Relay(anywidget.AnyWidget):
    """Sends the held updates of several widgets to the browser in one message.

    Args:
        widgets: returns the widgets to route (called when a page's relay says hello).
    """

    _esm = STATIC / "relay.js"

    #: ``False``: every widget sends its own messages, as without a page's relay (for comparisons,
    #: e.g. ``bench/bench_browser.py --no-relay``, or a front end the relay does not suit)
    enabled: ClassVar[bool] = True

    def __init__(self, widgets: Callable[[], Iterable[Widget]]) -> None:
        super().__init__()
        self._widgets = widgets
        self.routed: set[str] = set()  # model ids a page's relay has confirmed
        self.on_msg(self._handle_message)

    def send_states(self, pending: Iterable[tuple[Widget, Iterable[str]]]) -> None:
        """Send each ``(widget, trait names)`` update: the routed ones in one message, the rest alone."""
        updates: list[dict] = []
        unrouted: list[Widget] = []
        for widget, keys in pending:
            keys = sorted(keys)
            if not keys or widget.comm is None:  # nothing changed, or a closed widget: nothing to send
                continue
            if not self.enabled or widget.model_id not in self.routed:
                widget.send_state(keys)
                unrouted.append(widget)
                continue
            state = widget.get_state(key=keys)
            for name, value in state.items():  # as Widget.send_state: keep the echo lock current
                if name in widget._property_lock:
                    widget._property_lock[name] = value
            updates.append({"id": widget.model_id, "state": state})
        if updates:
            message, buffer_paths, buffers = _remove_buffers({"kind": "update", "updates": updates})
            message["buffer_paths"] = buffer_paths
            self.send(message, buffers)
        if unrouted and self.routed and self.enabled:  # a page's relay is there: route these next time too
            self._route(unrouted)

    def _route(self, widgets: Iterable[Widget]) -> None:
        ids = [w.model_id for w in widgets if w.comm is not None]
        if ids:
            self.send({"kind": "route", "ids": ids})

    def _handle_message(self, _widget: Widget, content: dict, _buffers: list) -> None:
        kind = content.get("kind")
        if kind == "hello":  # a page (new, or reloaded) runs the relay: it needs every id
            self._route(self._widgets())
        elif kind == "routed":
            self.routed.update(str(model_id) for model_id in content.get("ids", []))

    def __repr__(self) -> str:
        return f"<Relay routing {len(self.routed)} widgets>"
