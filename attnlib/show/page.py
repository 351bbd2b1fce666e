"""ExplorerWidget: an explorer's one widget model, whose front end (``static/explorer.js``) draws all of it.

Synced traits:

- ``tree``: the layout (boxes; each control's kind, label, options and limits; each view's fixed look; the
  texts; the message), from :meth:`Explorer.tree`. (Not ``layout``: that name is ipywidgets' own trait of
  every DOM widget, a model of CSS the page would try to draw.)
- ``values``: control name → value, both ways.
- ``shown``: ``{"values", "views", "texts", "controls", "message", "free", "origin", "seq"}``, kernel → page:
  what is shown and the values it was computed for (``asked``: the page's values it answers, when a reset or a
  clamp moved them; ``origin``: ``"python"`` for a change made in Python, ``"page"`` for an answer); ``free``:
  the typed state that is not a control (a typed cell: the pipeline's matrices), as the table's rule compares
  it (:func:`attnlib.show.table.page_value`); ``seq``: how many page changes the kernel adopted quietly, so
  that a state equal to the last one sent still reaches a page that has moved since (traitlets sends only a
  trait that changed), while the same state again with no page change in between sends nothing.
- ``table``: the tables of states (:meth:`attnlib.show.table.Tables.to_page`) the page looks changes up in;
  empty when the explorer has none (no ``table_parts``, and more than :data:`GRID_COMBINATIONS` combinations of
  its controls' grids or more than :data:`TABLE_STATES` states): then every change goes through the kernel. A
  table in chunks holds the chunks of the state shown first (at most 64 kB gzip); the page fetches the others
  it needs (:mod:`attnlib.show.table`), and all of them once drawn when together they weigh at most
  :data:`PREFETCH_CHUNKS` bytes gzip (``prefetch``: lesson 08's 21 seeds, not lesson 12's 594 kB).
- ``kernel``: True when made in a kernel (the site and deck builds set it false in the saved state).

A change in the page that the table covers is drawn by the page, which then sends ``values``: adopted here and
that state computed, at once or, for a lazy explorer, when the kernel is next idle (:meth:`Explorer.adopt_drawn`);
nothing is sent back, not even ipywidgets' echo. One it does not cover (or whose
values the kernel moves: a reset the page did not apply, a clamp) is computed here and answered with ``shown``.
A change made in Python sends ``values`` and ``shown`` in one message (``hold_sync``). Hover explanations and
typed cells travel as custom messages (``send`` / ``on_msg``): ``{kind: "explain", view, row, col, id}`` →
``{kind: "explained", id, text}``; ``{kind: "edit", view, row, col, text}``; ``{kind: "select", view, row, col}``.

The front end is one ES module: :func:`bundle` joins ``static/*.js`` (their local ``import`` lines dropped and
their ``export`` keywords removed) into one string at import time, so there is no build step.
"""

from __future__ import annotations

import gzip
import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anywidget
import traitlets

from .table import ExplorerShape, Tables, TableTooLarge, build_tables, chunk_message, page_bytes, page_value

__all__ = ["GRID_COMBINATIONS", "MODULES", "PREFETCH_CHUNKS", "TABLE_STATES", "ExplorerWidget", "bundle"]

STATIC = Path(__file__).parent / "static"
#: the front end's modules, in the order the bundle needs them (a module after those it uses)
MODULES = ("table.js", "heatmap.js", "explorer.js")
#: at most this many states in a table built at display time (more: no table, every change goes to the kernel)
TABLE_STATES = 600
#: the controls' grids are walked only when they have at most this many combinations (the states reachable from
#: the explorer's state are fewer: lesson 02's 1 536 combinations hold 514 states)
GRID_COMBINATIONS = 2048
#: a page fetches every chunk of a table once it has drawn when all of them take at most this many bytes gzip
#: (level 1) together
PREFETCH_CHUNKS = 150_000
#: ... and they are not even measured when their matrices take more than this many bytes raw (lesson 12: 40 MB)
PREFETCH_CHUNKS_RAW = 4_000_000


def bundle(modules: tuple[str, ...] = MODULES) -> str:
    """``static/<modules>`` as one ES module: local imports dropped, ``export`` keywords removed, the last
    module's ``export default`` kept."""
    parts = []
    for k, name in enumerate(modules):
        text = (STATIC / name).read_text(encoding="utf-8")
        text = re.sub(r"^import\s[^;]*?from\s+\"\./[^\"]+\";\s*$", "", text, flags=re.M | re.S)
        if k < len(modules) - 1:
            text = re.sub(r"^export default .*$", "", text, flags=re.M)
        text = re.sub(r"^export (?=(async )?function|const|let|class)", "", text, flags=re.M)
        parts.append(f"// ---- {name}\n{text}")
    return "\n".join(parts)


def grid_size(explorer: ExplorerShape) -> int:
    """The number of combinations of the explorer's enumerable controls (an upper bound of its table's rows)."""
    return math.prod(len(values) for values in explorer.control_grid().values())


def page_tables(tables: Tables) -> dict[str, Any]:
    """``tables`` as the page gets them: the chunks of the state shown first, and ``prefetch`` when every chunk
    together is small (:data:`PREFETCH_CHUNKS`)."""
    page = tables.to_page("current")
    chunked = [t for t in tables.parts if t.chunk is not None]
    if not chunked or sum(len(m) for t in chunked for m in t.matrices) > PREFETCH_CHUNKS_RAW:
        return page
    if len(gzip.compress(page_bytes(tables.to_page("all")), 1)) <= PREFETCH_CHUNKS:
        page["prefetch"] = True
    return page


class ExplorerWidget(anywidget.AnyWidget):
    """The one widget model of an explorer (see the module's docstring)."""

    _esm = bundle()
    _css = (STATIC / "heatmap.css").read_text(encoding="utf-8")

    tree = traitlets.Dict().tag(sync=True)
    values = traitlets.Dict().tag(sync=True, echo_update=False)
    shown = traitlets.Dict().tag(sync=True, echo_update=False)
    table = traitlets.Dict().tag(sync=True)
    kernel = traitlets.Bool(True).tag(sync=True)
    explorer = traitlets.Unicode("").tag(sync=True)  # the explorer's class name (the page's data-explorer)

    def __init__(self, explorer: ExplorerShape, *, table: bool = True) -> None:
        self._explorer = explorer
        self._pushing = True
        self._adopted = 0  # page changes adopted quietly (shown's "seq")
        self.tables: Tables | None = None
        parted = hasattr(explorer, "table_parts")
        if table and (parted or grid_size(explorer) <= GRID_COMBINATIONS):
            try:
                self.tables = build_tables(explorer, limit=TABLE_STATES)
            except TableTooLarge:
                self.tables = None
        values = explorer.control_values()
        super().__init__(
            tree=explorer.tree(),
            values=values,
            shown=self._tagged(explorer.shown_now()),
            table=page_tables(self.tables) if self.tables is not None else {},
            kernel=True,
            explorer=type(explorer).__name__,
        )
        self._pushing = False
        self.on_msg(self._on_message)

    @property
    def owner(self) -> ExplorerShape:
        """The explorer this model draws (e.g. to find an explorer's views from the kernel)."""
        return self._explorer

    # ------------------------------------------------------------------ kernel → page
    def _tagged(self, shown: Mapping[str, object], asked: Mapping[str, object] | None = None) -> dict[str, object]:
        out = {**shown, "free": self.free(), "origin": "python" if asked is None else "page", "seq": self._adopted}
        if asked is not None and dict(asked) != shown["values"]:
            out["asked"] = dict(asked)
        return out

    def push(self, values: Mapping[str, object], shown: Mapping[str, object]) -> None:
        """A change made in Python: ``values`` and ``shown`` in one message (none when neither changed)."""
        with self.hold_sync():
            self._pushing = True
            try:
                self.values = dict(values)
                self.shown = self._tagged(shown)
            finally:
                self._pushing = False

    def free(self) -> dict[str, object]:
        """The typed state the table's rows hold that is not a control (as the page compares it)."""
        if self.tables is None:
            return {}
        now = self._explorer.values_now()
        return {n: page_value(now[n]) for n in self.tables.free if n not in self._explorer.controls}

    def covers(self, values: Mapping[str, object]) -> bool:
        """Whether the tables have the state of ``values`` (every value of the explorer, typed ones included)."""
        return self.tables is not None and self.tables.lookup(values) is not None

    # ------------------------------------------------------------------ page → kernel
    @traitlets.observe("values")
    def _page_changed(self, change: Any) -> None:
        if self._pushing:
            return
        self._explorer_changed_in_page(dict(change["new"]))

    def drew(self, values: Mapping[str, object], asked: Mapping[str, object]) -> bool:
        """Whether the page drew ``values`` from its table when it sent ``asked``: they are the page's values (it
        applied every reset), the tables hold their state, and there :meth:`Explorer.compute` moves no dependent
        control's value (a clamp, which the kernel answers). Read from the tables alone: nothing is computed."""
        if self.tables is None or {n: values[n] for n in self._explorer.controls} != dict(asked):
            return False
        state = self.tables.lookup(values)
        return state is not None and all(
            "value" not in traits or page_value(values[name]) == traits["value"]
            for name, traits in state["controls"].items()
        )

    def _explorer_changed_in_page(self, asked: dict[str, object]) -> None:
        explorer = self._explorer
        before = explorer.control_values()
        changed = [n for n in explorer.controls if n in asked and asked[n] != before[n]]
        after: Mapping[str, object] = {**explorer.values_now(), **{n: asked[n] for n in changed}}
        for name in changed:  # the page applied the resets its table knows; here all of them (idempotent)
            after = explorer.transition(after, name)
        if self.drew(after, asked):
            if changed:
                explorer.adopt_drawn(after)
            self._adopted += 1  # the page no longer shows the shown trait: the next push must reach it
            return  # the page drew it from the table: nothing goes back
        explorer.catch_up()  # the controls check the page's values against the options the page showed
        explorer.adopt(after)
        explorer.refresh()
        with self.hold_sync():
            self._pushing = True
            try:
                self.values = explorer.control_values()  # sent only when a reset or a clamp moved them
                self.shown = self._tagged(explorer.shown_now(), asked)
            finally:
                self._pushing = False

    def _on_message(self, _widget: object, content: Any, _buffers: object) -> None:
        if not isinstance(content, dict):
            return
        kind = content.get("kind")
        if kind == "chunk" and self.tables is not None:
            try:
                part, index = int(content["part"]), int(content["index"])
                message, buffers = chunk_message(self.tables, part, index)
            except (KeyError, TypeError, ValueError, IndexError):
                return
            self.send(message, buffers)
            return
        view = self._explorer.views.get(str(content.get("view")))
        try:
            row, col = int(content["row"]), int(content["col"])
        except (KeyError, TypeError, ValueError):
            return
        if view is None:
            return
        self._explorer.catch_up()  # a cell's explanation, an edit, a click: of the state the page shows
        if kind == "explain":
            self.send({"kind": "explained", "id": content.get("id"), "text": view.explain(row, col)})
        elif kind == "edit":
            view.edit(row, col, str(content.get("text", "")))
            self._explorer.publish()
        elif kind == "select":
            view.select(row, col)
            self._explorer.publish()
