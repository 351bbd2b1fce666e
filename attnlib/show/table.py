"""Tables of states: what an explorer shows for every state of its clickable controls, computed by attnlib.

The table is built from :meth:`Explorer.compute` and :meth:`Explorer.transition` alone: no widget is read or
changed and no message leaves, so it is the numbers the kernel would send, for every state a learner can
reach by clicking or dragging from the explorer's current state. Controls a learner types into (a text, a
number, a cell) are not enumerable: the table holds for their current values only (:attr:`Table.free`).

What is stored is content-addressed: each distinct matrix once (float64, as the page gets it), each distinct
rest of a view's entry, text or control state once, and per row one index per output. A page that has the
table can set every output of a state by looking it up, computing nothing.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from .explorer import Explorer, Shown, choices

__all__ = ["Table", "TableTooLarge", "build_table", "choices"]


class TableTooLarge(ValueError):
    """More states than the table's limit: the explorer needs a coarser grid or a table per output."""


#: a view's outlines, pooled apart from the rest of its entry
MARKS = frozenset({"highlight_rows", "highlight_cols", "highlight_cells"})


def _json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def _free_value(value: object) -> object:
    """A free control's value as the table keeps it: itself when JSON can hold it, else a digest of it."""
    try:
        json.dumps(value)
        return value
    except TypeError:
        return hashlib.sha256(repr(value).encode()).hexdigest()[:16]


@dataclass
class Table:
    """Every state of an explorer's enumerable controls and what it shows (see the module's docstring)."""

    controls: tuple[str, ...]  # the enumerable controls, in the order of a key
    outputs: tuple[str, ...]  # "views/<name>", "texts/<name>", "controls/<name>"
    keys: list[tuple] = field(default_factory=list)  # row k's values of the enumerable controls
    pool: list[str] = field(default_factory=list)  # distinct outputs as JSON (a view's entry without its matrix)
    matrices: list[bytes] = field(default_factory=list)  # distinct matrices, little-endian float64
    rows: list[list[int]] = field(
        default_factory=list
    )  # per row, per output: a pool index (views: look, marks, matrix)
    free: dict[str, object] = field(default_factory=dict)  # the typed controls' values the table holds for
    values: list[dict[str, object]] = field(default_factory=list, repr=False)  # row k's values (not shipped)

    def index(self, key: Sequence[object]) -> int:
        """The row of ``key`` (the enumerable controls' values, in :attr:`controls` order)."""
        return self.keys.index(tuple(key))

    def state(self, row: int) -> dict[str, dict[str, object]]:
        """Row ``row`` in the form of :meth:`Explorer.state` (after a JSON round trip: lists for tuples)."""
        out: dict[str, dict[str, object]] = {"views": {}, "texts": {}, "controls": {}}
        cells = iter(self.rows[row])
        for output in self.outputs:
            kind, name = output.split("/", 1)
            value = json.loads(self.pool[next(cells)])
            if kind == "views":
                value.update(json.loads(self.pool[next(cells)]))
                value["buffer"] = self.matrices[next(cells)]
            out[kind][name] = value
        return out

    def payload(self) -> bytes:
        """What a page would load: the JSON of everything but the matrices, then the matrices' bytes."""
        head = _json(
            {
                "controls": self.controls,
                "outputs": self.outputs,
                "keys": self.keys,
                "pool": self.pool,
                "rows": self.rows,
                "free": self.free,
                "matrices": [len(m) for m in self.matrices],
            }
        ).encode()
        return len(head).to_bytes(4, "little") + head + b"".join(self.matrices)

    def gzip_size(self) -> int:
        """Bytes of :meth:`payload` gzipped (level 9)."""
        return len(gzip.compress(self.payload(), compresslevel=9, mtime=0))


def comparable(state: Mapping[str, Mapping[str, object]]) -> dict[str, dict[str, object]]:
    """An :meth:`Explorer.state` after the JSON round trip a table makes (matrices kept as bytes)."""
    out: dict[str, dict[str, object]] = {}
    for kind, outputs in state.items():
        out[kind] = {}
        for name, value in outputs.items():
            if kind == "views":
                rest = {k: v for k, v in value.items() if k != "buffer"}  # type: ignore[union-attr]
                out[kind][name] = {**json.loads(_json(rest)), "buffer": value["buffer"]}  # type: ignore[index]
            else:
                out[kind][name] = json.loads(_json(value))
    return out


def build_table(explorer: Explorer, *, limit: int = 5000) -> Table:
    """Every state reachable from the explorer's current one by its enumerable controls, and what each shows.

    The grid of each control is :meth:`Explorer.control_grid` (by default the widget's own steps); dependent menus and
    sliders take the options and limits :meth:`Explorer.compute` gives them in each state, a control
    ``compute`` disables is not moved, and :meth:`Explorer.transition` applies the resets a change makes.

    Raises:
        TableTooLarge: when more than ``limit`` states are reachable.
    """
    grid = explorer.control_grid()
    names = tuple(grid)

    def settle(values: Mapping[str, object]) -> tuple[dict[str, object], Shown]:
        shown = explorer.compute(values)
        settled = dict(values)
        for name, traits in shown.controls.items():
            if "value" in traits:
                settled[name] = traits["value"]
        return settled, shown

    def moves(values: Mapping[str, object], shown: Shown, name: str) -> list[object]:
        traits = shown.controls.get(name, {})
        if traits.get("disabled", explorer.controls[name].disabled):
            return []
        if "options" in traits:
            return [o[1] if isinstance(o, tuple | list) else o for o in traits["options"]]  # type: ignore[union-attr]
        if "max" in traits:
            control = explorer.controls[name]
            return list(range(int(traits.get("min", control.min)), int(traits["max"]) + 1, control.step))  # type: ignore[call-overload]
        return list(grid[name])

    start, shown = settle(explorer.values_now())
    free = {k: _free_value(v) for k, v in start.items() if k not in names}
    outputs = tuple(
        [f"views/{n}" for n in shown.views]
        + [f"texts/{n}" for n in shown.texts]
        + [f"controls/{n}" for n in shown.controls]
    )
    table = Table(controls=names, outputs=outputs, free=free)
    pool: dict[str, int] = {}
    matrices: dict[bytes, int] = {}

    def add(values: Mapping[str, object], shown: Shown) -> None:
        state = explorer.state(shown)
        row: list[int] = []
        for output in outputs:
            kind, name = output.split("/", 1)
            value = state[kind][name]
            if kind == "views":  # the outlines apart: they move with the choices, the rest with the numbers
                look = {k: v for k, v in value.items() if k != "buffer" and k not in MARKS}
                marks = {k: v for k, v in value.items() if k in MARKS}
                row.append(pool.setdefault(_json(look), len(pool)))
                row.append(pool.setdefault(_json(marks), len(pool)))
                row.append(matrices.setdefault(value["buffer"], len(matrices)))
            else:
                row.append(pool.setdefault(_json(value), len(pool)))
        table.keys.append(tuple(values[n] for n in names))
        table.values.append(dict(values))
        table.rows.append(row)

    seen = {tuple(start[n] for n in names)}
    tried = set(seen)
    queue = [(start, shown)]
    add(start, shown)
    while queue:
        values, shown = queue.pop()
        for name in names:
            for value in moves(values, shown, name):
                if value == values[name]:
                    continue
                moved = explorer.transition({**values, name: value}, name)
                raw = tuple(moved[n] for n in names)
                if raw in seen or raw in tried:
                    continue  # a state already in the table, or the same values before clamping as one
                tried.add(raw)
                after, after_shown = settle(moved)
                key = tuple(after[n] for n in names)
                if key in seen:
                    continue
                if len(seen) >= limit:
                    raise TableTooLarge(
                        f"{type(explorer).__name__}: more than {limit} states; "
                        "give Explorer.control_grid() a coarser grid"
                    )
                seen.add(key)
                add(after, after_shown)
                queue.append((after, after_shown))
    table.pool = list(pool)
    table.matrices = list(matrices)
    return table
