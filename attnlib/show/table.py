"""Tables of states: what an explorer shows for every state of its clickable controls, computed by attnlib.

The table is built from :meth:`Explorer.compute` and :meth:`Explorer.transition` alone: no widget is read or
changed and no message leaves, so it is the numbers the kernel would send, for every state a learner can
reach by clicking or dragging from the explorer's current state. Controls a learner types into (a text, a
number, a cell) are not enumerable ("free"): each row holds the value they have in that state
(:meth:`Table.free_values`), and the row covers the page's values only when the free controls hold exactly
that.

What is stored is content-addressed: each distinct matrix once (float64, as the page gets it), each distinct
rest of a view's entry, text or control state once, and per row one index per output. A page that has the
table can set every output of a state by looking it up, computing nothing.

The page format (:meth:`Table.to_page`, read by ``static/table.js``)
------------------------------------------------------------------------
A JSON-able dict whose binary parts are ``bytes`` (anywidget and ipywidgets send bytes inside a ``Dict``
trait as binary buffers; the page gets ``DataView`` objects)::

    format    1
    explorer  the explorer's class name
    controls  the enumerable controls, in the order of a key
    grid      per enumerable control, its distinct values (a key holds indices into these)
    free      the free (typed) controls
    outputs   [kind, name] per output: kind "views" (3 cells: look, marks, matrix), "texts" or "controls" (1 cell)
    pool      distinct JSON values: a view's look (its drawn traits but the matrix and outlines), its outlines,
              a text, a control's traits, a free control's value, the values a transition sets
    width     bytes per integer of ``keys`` and ``cells`` (1, 2 or 4, little-endian, unsigned)
    keys      rows × controls integers: row k's grid index of each enumerable control
    cells     rows × (cells of the outputs + one per free control): pool indices (a view's matrix: its index
              in ``offsets``)
    matrices  every distinct matrix, little-endian float64, one after the other
    offsets   n + 1 little-endian uint32: matrix i is elements offsets[i] … offsets[i+1] of ``matrices``
    aliases   [control index, [grid index per control], pool index]: after that control changed, the
              enumerable values are those; Python's transition and clamping set the pool's values (a dict,
              control → value). A change not listed sets nothing (Python's transition is the identity there)
    tolerance a number matches a grid value within this relative difference (a log slider's value computed
              in the page may differ from Python's in the last bit); the grid's value is the one kept

The rule, the same in :meth:`Table.find`/:meth:`Table.transition` and in ``table.js``'s ``lookup`` /
``transition``: **a row covers the page's values when every enumerable control is on the row's key and
every free control equals the value the row holds for it.** Free values that JSON cannot hold (e.g. the
pipeline's edited tensors) are compared by digest (:func:`page_value`): the page's ``values`` carry the
digest string for them.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np

from .explorer import Explorer, Shown, choices

__all__ = ["Table", "TableTooLarge", "build_table", "choices", "comparable", "page_value"]

#: the page format's version (``to_page()["format"]``)
FORMAT = 1
#: a number matches a grid value within this relative difference (:meth:`Table.find`, ``table.js``)
TOLERANCE = 1e-9


class TableTooLarge(ValueError):
    """More states than the table's limit: the explorer needs a coarser grid or a table per output."""


#: a view's outlines, pooled apart from the rest of its entry
MARKS = frozenset({"highlight_rows", "highlight_cols", "highlight_cells"})


def _json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def _digest_bytes(value: object, out: Any) -> None:
    if isinstance(value, Mapping):
        out.update(b"{")
        for k in sorted(value, key=str):
            out.update(str(k).encode() + b":")
            _digest_bytes(value[k], out)
        out.update(b"}")
    elif isinstance(value, list | tuple):
        out.update(b"[")
        for v in value:
            _digest_bytes(v, out)
        out.update(b"]")
    elif hasattr(value, "detach") or isinstance(value, np.ndarray):
        array = np.asarray(value.detach().cpu().numpy() if hasattr(value, "detach") else value)
        out.update(f"{array.dtype}{array.shape}".encode() + np.ascontiguousarray(array).tobytes())
    else:
        out.update(repr(value).encode())


def page_value(value: object) -> object:
    """A free control's value as the page holds it: itself when JSON holds it, else a digest string of it.

    The digest reads a tensor's or an array's dtype, shape and bytes (never a printed summary), so two
    different matrices never share one.
    """
    try:
        json.dumps(value)
        return value
    except TypeError:
        out = hashlib.sha256()
        _digest_bytes(value, out)
        return "digest:" + out.hexdigest()[:24]


_free_value = page_value  # (the name used before the page format)


def _ident(value: object) -> object:
    """A value as the page tells it apart: booleans apart from numbers, 1 and 1.0 the same, tuples as lists."""
    if isinstance(value, bool):
        return ("b", value)
    if isinstance(value, int | float):
        return ("n", float(value))
    if isinstance(value, list | tuple):
        return ("l", tuple(_ident(v) for v in value))
    if isinstance(value, Mapping):
        return ("d", tuple(sorted((str(k), _ident(v)) for k, v in value.items())))
    return ("s", value) if isinstance(value, str) else ("o", _json(value))


def _same(a: object, b: object) -> bool:
    """Equal as the page compares them (``table.js``'s ``same``)."""
    return _ident(a) == _ident(b)


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
    free: dict[str, object] = field(default_factory=dict)  # the typed controls' values in the first state
    values: list[dict[str, object]] = field(default_factory=list, repr=False)  # row k's values (not shipped)
    explorer: str = ""  # the explorer's class name
    frees: list[list[int]] = field(default_factory=list)  # per row, per free control: a pool index of its value
    #: (control changed, enumerable values after the change) → the values Python's transition and clamping set
    aliases: dict[tuple[str, tuple], dict[str, object]] = field(default_factory=dict)
    #: every change the build tried: (row, control, value) (not shipped)
    changes: list[tuple[int, str, object]] = field(default_factory=list, repr=False)

    @property
    def free_names(self) -> tuple[str, ...]:
        """The free (typed) controls, in the order of :attr:`frees`."""
        return tuple(self.free)

    def index(self, key: Sequence[object]) -> int:
        """The row of ``key`` (the enumerable controls' values, in :attr:`controls` order)."""
        return self.keys.index(tuple(key))

    def free_values(self, row: int) -> dict[str, object]:
        """The free controls' values row ``row`` holds (as the page holds them: :func:`page_value`)."""
        return {name: json.loads(self.pool[k]) for name, k in zip(self.free_names, self.frees[row], strict=True)}

    def page_values(self, row: int) -> dict[str, object]:
        """Row ``row``'s values as the page holds them: the enumerable controls' and the free ones'."""
        return {**dict(zip(self.controls, self.keys[row], strict=True)), **self.free_values(row)}

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

    # the rule the page applies too ------------------------------------------------------------------
    def _snap(self, name: str, value: object) -> object:
        """``value`` as the grid of control ``name`` holds it (a number within :data:`TOLERANCE` of one)."""
        if isinstance(value, bool) or not isinstance(value, int | float):
            return value
        column = self.controls.index(name)
        best = value
        for key in self.keys:
            v = key[column]
            if isinstance(v, bool) or not isinstance(v, int | float):
                continue
            if v == value:
                return v
            if abs(v - value) <= TOLERANCE * max(abs(v), abs(value)):
                best = v
        return best

    def find(self, values: Mapping[str, object]) -> int | None:
        """The row that covers ``values`` (the page's: free controls by :func:`page_value`), or ``None``."""
        try:
            key = tuple(self._snap(n, values[n]) for n in self.controls)
        except KeyError:
            return None
        for k, row_key in enumerate(self.keys):
            if all(_ident(a) == _ident(b) for a, b in zip(key, row_key, strict=True)):
                held = self.free_values(k)
                if all(n in values and _same(page_value(values[n]), held[n]) for n in self.free_names):
                    return k
                return None
        return None

    def transition(self, values: Mapping[str, object], name: str) -> dict[str, object]:
        """The page's values after control ``name`` changed to ``values[name]``: what ``table.js`` gives."""
        out = {n: page_value(v) for n, v in values.items()}
        if name in self.controls:
            out[name] = self._snap(name, out[name])
        key = tuple(_ident(self._snap(n, out.get(n))) for n in self.controls)
        for (changed, raw), sets in self.aliases.items():
            if changed == name and tuple(_ident(v) for v in raw) == key:
                out.update(sets)
                break
        return out

    # the page's form -----------------------------------------------------------------------------
    def to_page(self) -> dict[str, object]:
        """The table as the page reads it (see the module's docstring): JSON-able, the binary parts bytes."""
        grid: list[list[object]] = [[] for _ in self.controls]
        where: list[dict[object, int]] = [{} for _ in self.controls]

        def grid_index(c: int, value: object) -> int:
            ident = _ident(value)
            if ident not in where[c]:
                where[c][ident] = len(grid[c])
                grid[c].append(value)
            return where[c][ident]

        keys = [grid_index(c, v) for key in self.keys for c, v in enumerate(key)]
        pool = [json.loads(p) for p in self.pool]
        pooled = {p: k for k, p in enumerate(self.pool)}
        aliases = []
        for (name, raw), sets in self.aliases.items():
            text = _json(sets)
            if text not in pooled:
                pooled[text] = len(pool)
                pool.append(sets)
            aliases.append([self.controls.index(name), [grid_index(c, v) for c, v in enumerate(raw)], pooled[text]])
        cells = [k for row, free in zip(self.rows, self.frees, strict=True) for k in (*row, *free)]
        biggest = max([0, *keys, *cells])
        width = 1 if biggest < 2**8 else 2 if biggest < 2**16 else 4
        dtype = {1: "<u1", 2: "<u2", 4: "<u4"}[width]
        offsets = np.cumsum([0, *(len(m) // 8 for m in self.matrices)], dtype=np.uint32)
        return {
            "format": FORMAT,
            "explorer": self.explorer,
            "controls": list(self.controls),
            "grid": grid,
            "free": list(self.free_names),
            "outputs": [o.split("/", 1) for o in self.outputs],
            "pool": pool,
            "width": width,
            "keys": np.asarray(keys, dtype=dtype).tobytes(),
            "cells": np.asarray(cells, dtype=dtype).tobytes(),
            "matrices": b"".join(self.matrices),
            "offsets": offsets.astype("<u4").tobytes(),
            "aliases": aliases,
            "tolerance": TOLERANCE,
        }

    def payload(self) -> bytes:
        """:meth:`to_page` as one file would hold it: the JSON of everything but the bytes, then the bytes."""
        page = self.to_page()
        binary = {k: v for k, v in page.items() if isinstance(v, bytes)}
        head = _json(
            {**{k: v for k, v in page.items() if k not in binary}, "bytes": {k: len(v) for k, v in binary.items()}}
        )
        return len(head.encode()).to_bytes(4, "little") + head.encode() + b"".join(binary.values())

    def gzip_size(self) -> int:
        """Bytes of :meth:`payload` gzipped (level 9): what the page's table weighs on the wire."""
        return len(gzip.compress(self.payload(), compresslevel=9, mtime=0))


def comparable(state: Mapping[str, Mapping[str, object]]) -> dict[str, dict[str, object]]:
    """An :meth:`Explorer.state` after the JSON round trip a table makes (matrices kept as bytes)."""
    out: dict[str, dict[str, object]] = {}
    for kind, outputs in state.items():
        out[kind] = {}
        for name, value in outputs.items():
            if kind == "views":
                entry = cast(Mapping[str, object], value)
                rest = {k: v for k, v in entry.items() if k != "buffer"}
                out[kind][name] = {**json.loads(_json(rest)), "buffer": entry["buffer"]}
            else:
                out[kind][name] = json.loads(_json(value))
    return out


def build_table(explorer: Explorer, *, limit: int = 5000) -> Table:
    """Every state reachable from the explorer's current one by its enumerable controls, and what each shows.

    The grid of each control is :meth:`Explorer.control_grid` (by default the widget's own steps); dependent menus and
    sliders take the options and limits :meth:`Explorer.compute` gives them in each state, a control
    ``compute`` disables is not moved, and :meth:`Explorer.transition` applies the resets a change makes. Every
    change tried is recorded where Python's transition or clamping moved more than the control changed
    (:attr:`Table.aliases`), so the page applies the same transitions by looking them up.

    Raises:
        TableTooLarge: when more than ``limit`` states are reachable.
        ValueError: when one change gives different values from two states (a transition that reads a free
            control's value, which the page cannot look up).
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
            options = cast(Sequence[object], traits["options"])
            return [o[1] if isinstance(o, tuple | list) else o for o in options]
        if "max" in traits:
            control = explorer.controls[name]
            low = int(traits.get("min", control.min))  # type: ignore[call-overload]
            return list(range(low, int(traits["max"]) + 1, control.step))  # type: ignore[call-overload]
        return list(grid[name])

    start, shown = settle(explorer.values_now())
    free_names = tuple(k for k in start if k not in names)
    outputs = tuple(
        [f"views/{n}" for n in shown.views]
        + [f"texts/{n}" for n in shown.texts]
        + [f"controls/{n}" for n in shown.controls]
    )
    table = Table(
        controls=names,
        outputs=outputs,
        free={k: page_value(start[k]) for k in free_names},
        explorer=type(explorer).__name__,
    )
    pool: dict[str, int] = {}
    matrices: dict[bytes, int] = {}

    def page(values: Mapping[str, object]) -> tuple:
        """``values`` as the page tells them apart."""
        return tuple(_ident(values[n]) for n in names) + tuple(_ident(page_value(values[n])) for n in free_names)

    def add(values: Mapping[str, object], shown: Shown) -> None:
        state = cast(dict[str, dict[str, Any]], explorer.state(shown))
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
        table.frees.append([pool.setdefault(_json(page_value(values[n])), len(pool)) for n in free_names])

    seen = {tuple(_ident(start[n]) for n in names)}
    settled: dict[tuple, tuple[dict[str, object], Shown]] = {}
    queue = [(0, start, shown)]
    add(start, shown)
    while queue:
        row, values, shown = queue.pop()
        for name in names:
            for value in moves(values, shown, name):
                if _ident(value) == _ident(values[name]):
                    continue
                table.changes.append((row, name, value))
                changed = {**values, name: value}
                moved = explorer.transition(changed, name)
                if page(moved) not in settled:
                    settled[page(moved)] = settle(moved)
                after, after_shown = settled[page(moved)]
                if page(after) != page(changed):
                    sets = {n: after[n] for n in names if _ident(after[n]) != _ident(changed[n])}
                    sets.update(
                        {
                            n: page_value(after[n])
                            for n in free_names
                            if not _same(page_value(after[n]), page_value(changed[n]))
                        }
                    )
                    raw = (name, tuple(changed[n] for n in names))
                    if raw in table.aliases and _json(table.aliases[raw]) != _json(sets):
                        raise ValueError(
                            f"{table.explorer}: changing {name!r} to {value!r} gives {table.aliases[raw]} from one "
                            f"state and {sets} from another: its transition reads a free control"
                        )
                    table.aliases[raw] = sets
                key = tuple(_ident(after[n]) for n in names)
                if key in seen:
                    continue
                if len(seen) >= limit:
                    raise TableTooLarge(
                        f"{table.explorer}: more than {limit} states; give Explorer.control_grid() a coarser grid"
                    )
                seen.add(key)
                queue.append((len(table.keys), after, after_shown))
                add(after, after_shown)
    table.pool = list(pool)
    table.matrices = list(matrices)
    return table
