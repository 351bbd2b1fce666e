"""ExplorerWidget: an explorer's one widget model, whose front end (``static/explorer.js``) draws all of it.

Synced traits:

- ``tree``: the layout (boxes; each control's kind, label, options and limits; each view's fixed look; the
  texts; the message), from :meth:`Explorer.tree`. (Not ``layout``: that name is ipywidgets' own trait of
  every DOM widget, a model of CSS the page would try to draw.)
- ``values``: control name → value, both ways.
- ``shown``: ``{"values", "views", "texts", "controls", "message", "tabled"}``, kernel → page: what is shown
  and the values it was computed for (``asked``: the page's values it answers, when a reset or a clamp moved
  them); ``tabled``: whether the table of states still holds for the state typed in cells.
- ``table``: the table of states (:mod:`attnlib.show.table`) the page looks changes up in; empty when the
  explorer has none (its table would be over budget): then every change goes through the kernel.
- ``kernel``: True when made in a kernel (the site and deck builds set it false in the saved state).

A change in the page that the table covers is drawn by the page, which then sends ``values``: adopted here
quietly (the views and texts in Python follow; nothing is sent back, not even ipywidgets' echo). One it does not
cover is computed here and answered with ``shown``. A change made in Python sends ``values`` and ``shown`` in one
message (``hold_sync``). Hover explanations and typed cells travel as custom messages (``send`` / ``on_msg``):
``{kind: "explain", view, row, col, id}`` → ``{kind: "explained", id, text}``; ``{kind: "edit", view, row, col,
text}``; ``{kind: "select", view, row, col}``.

The front end is one ES module: :func:`bundle` joins ``static/*.js`` (their local ``import`` lines dropped and
their ``export`` keywords removed) into one string at import time, so there is no build step.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anywidget
import traitlets

from .table import Table, TableTooLarge, build_table

if TYPE_CHECKING:
    from .explorer import Explorer

__all__ = ["MODULES", "TABLE_STATES", "ExplorerWidget", "bundle", "table_trait"]

STATIC = Path(__file__).parent / "static"
#: the front end's modules, in the order the bundle needs them (a module after those it uses)
MODULES = ("table_interim.js", "heatmap.js", "explorer.js")
#: at most this many states in a table built at display time (the product of the controls' grids; more: no table)
TABLE_STATES = 600


def bundle(modules: tuple[str, ...] = MODULES) -> str:
    """``static/<modules>`` as one ES module: local imports dropped, ``export`` keywords removed, the last
    module's ``export default`` kept."""
    parts = []
    for k, name in enumerate(modules):
        path = STATIC / name
        if not path.exists():
            continue
        text = path.read_text(encoding="utf-8")
        text = re.sub(r"^import\s[^;]*?from\s+\"\./[^\"]+\";\s*$", "", text, flags=re.M | re.S)
        if k < len(modules) - 1:
            text = re.sub(r"^export default .*$", "", text, flags=re.M)
        text = re.sub(r"^export (?=(async )?function|const|let|class)", "", text, flags=re.M)
        parts.append(f"// ---- {name}\n{text}")
    return "\n".join(parts)


def _free_value(value: object) -> object:
    from .table import _free_value as free  # the table's rule for a typed value: itself, or a digest of it

    return free(value)


def _same(a: object, b: object) -> bool:
    """Whether two values of an explorer's state are equal (tensors and arrays compared element by element)."""
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if hasattr(a, "shape") or hasattr(b, "shape"):
        try:
            return bool(a.shape == b.shape and (a == b).all())  # type: ignore[attr-defined]
        except (AttributeError, TypeError, RuntimeError):
            return False
    return a == b


def table_trait(table: Table | None, explorer: Explorer | None = None) -> dict[str, object]:
    """What the page needs of ``table``: its payload (JSON head + matrices, one binary buffer) and, per row,
    the values of the typed controls it holds for (a reset may change them: lesson 05's example resets the
    scores). ``{}`` for none."""
    if table is None:
        return {}
    controls = explorer.controls if explorer is not None else {}
    free = [name for name in table.free if name in controls]
    pools: dict[str, dict[str, int]] = {name: {} for name in free}
    rows = []
    for values in table.values:
        rows.append([pools[name].setdefault(_json_key(values[name]), len(pools[name])) for name in free])
    resets = []
    if explorer is not None and table.values:
        start = table.values[0]
        for name, grid in explorer.control_grid().items():
            others = [v for v in grid if v != start.get(name)]
            if others:
                moved = explorer.transition({**start, name: others[0]}, name)
                if any(_json_key(moved.get(k)) != _json_key(start.get(k)) for k in free):
                    resets.append(name)
    return {
        "payload": table.payload(),
        "free": {name: [_decode(key) for key in pool] for name, pool in pools.items()},
        "free_rows": rows,
        "resets": resets,
    }


def _json_key(value: object) -> str:
    import json

    return json.dumps(_free_value(value), sort_keys=True)


def _decode(key: str) -> object:
    import json

    return json.loads(key)


def grid_size(explorer: Explorer) -> int:
    """The number of combinations of the explorer's enumerable controls (an upper bound of its table's rows)."""
    return math.prod(len(values) for values in explorer.control_grid().values())


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

    def __init__(self, explorer: Explorer, *, table: bool = True) -> None:
        self._explorer = explorer
        self._pushing = True
        self.table_seconds = 0.0
        self.table_of: Table | None = None
        from .explorer import Explorer

        computes = type(explorer).compute is not Explorer.compute  # the base's raises: no table
        if table and computes and grid_size(explorer) <= TABLE_STATES:
            start = time.perf_counter()
            try:
                self.table_of = build_table(explorer, limit=TABLE_STATES)
            except TableTooLarge:
                self.table_of = None
            self.table_seconds = time.perf_counter() - start
        values = explorer.control_values()
        super().__init__(
            tree=explorer.tree(),
            values=values,
            shown=self._tagged(explorer.shown_now()),
            table=table_trait(self.table_of, explorer),
            kernel=True,
            explorer=type(explorer).__name__,
        )
        self._pushing = False
        self.on_msg(self._on_message)

    # ------------------------------------------------------------------ kernel → page
    def _tagged(self, shown: Mapping[str, object], asked: Mapping[str, object] | None = None) -> dict[str, object]:
        out = {**shown, "tabled": self.holds(), "origin": "python" if asked is None else "page"}
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

    def holds(self) -> bool:
        """Whether the table holds for the explorer's typed state that is not a control (e.g. a typed cell)."""
        if self.table_of is None:
            return False
        now = self._explorer.values_now()
        first = self.table_of.values[0] if self.table_of.values else {}
        typed = [k for k in self.table_of.free if k not in self._explorer.controls]
        return all(_same(now.get(k), first.get(k)) for k in typed)

    def covers(self, values: Mapping[str, object]) -> bool:
        """Whether the table has the state of ``values`` (every value of the explorer, typed ones included)."""
        table = self.table_of
        if table is None:
            return False
        try:
            row = table.index(tuple(values[n] for n in table.controls))
        except (KeyError, ValueError):
            return False
        held = table.values[row]
        return all(_same(values.get(k), held.get(k)) for k in table.free)

    # ------------------------------------------------------------------ page → kernel
    @traitlets.observe("values")
    def _page_changed(self, change: Any) -> None:
        if self._pushing:
            return
        self._explorer_changed_in_page(dict(change["new"]))

    def _explorer_changed_in_page(self, asked: dict[str, object]) -> None:
        explorer = self._explorer
        before = explorer.control_values()
        changed = [n for n in explorer.controls if n in asked and asked[n] != before[n]]
        explorer.adopt({n: asked[n] for n in changed})
        after: Mapping[str, object] = explorer.values_now()
        for name in changed:  # the page applied the resets its table knows; here all of them (idempotent)
            after = explorer.transition(after, name)
        explorer.adopt(after)
        explorer._update_or_explain()
        if explorer.control_values() == asked and self.covers(explorer.values_now()) and self.shown.get("tabled"):
            return  # the page drew it from the table: nothing goes back
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
        view = self._explorer.views.get(str(content.get("view")))
        try:
            row, col = int(content["row"]), int(content["col"])
        except (KeyError, TypeError, ValueError):
            return
        if view is None:
            return
        if kind == "explain":
            self.send({"kind": "explained", "id": content.get("id"), "text": view.explain(row, col)})
        elif kind == "edit":
            view.edit(row, col, str(content.get("text", "")))
            self._explorer.publish()
        elif kind == "select":
            view.select(row, col)
            self._explorer.publish()
