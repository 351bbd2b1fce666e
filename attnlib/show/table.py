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

The page format (:meth:`Tables.to_page`, read by ``static/table.js``)
----------------------------------------------------------------------
A JSON-able dict whose binary parts are ``bytes`` (anywidget and ipywidgets send bytes inside a ``Dict``
trait as binary buffers; the page gets ``DataView`` objects)::

    format 1, explorer (the class name), controls (every enumerable one), free (every typed one), tolerance,
    states (how many states the tables answer with every chunk loaded); prefetch (absent, or true: fetch every
    chunk once drawn, :func:`attnlib.show.page.page_tables`); explanations (absent, or ``{view: path}`` of each
    view's hover texts beside a page with no kernel, :func:`explanation_files`)
    parts  [part, ...]: the outputs in groups, each keyed by the controls it reads (one part unless the
           explorer declares ``table_parts()``: lesson 08 chunks its one part by seed, lesson 12 has six)

A part (:meth:`Table.to_page`; ``table.js`` also reads one part alone as the whole payload)::

    controls  the controls that key it, in the order of a key
    grid      per control, its distinct values (a key holds indices into these)
    free      the free controls (each row holds their values)
    outputs   [kind, name] (a view: 3 cells, look, marks, matrix) or [kind, name, field] (1 cell)
    pool      distinct JSON values: a view's look (its drawn traits but the matrix and outlines), its outlines,
              a text, a control's traits, a free control's value, the values a transition sets
    width     bytes per integer of ``keys`` and ``cells`` (1, 2 or 4, little-endian, unsigned)
    keys      rows × controls integers: row k's grid index of each control
    cells     rows × (cells of the outputs + one per free control): pool indices (a matrix: its index)
    matrices  the stored matrices, little-endian float64, one after the other
    offsets   n + 1 little-endian uint32: stored matrix i is elements offsets[i] … offsets[i+1]
    blocks    null, or 4 uint32 per matrix: (stored matrix, its columns, rows, columns): the matrix is that
              top-left block of a stored one (lesson 12's P[:n] and (P Pᵀ)[:n, :n] of the 64-position result)
    aliases   [control index, [grid index per control], pool index]: after that control changed, the values
              are those; Python's transition and clamping set the pool's values (a dict, control → value).
              A change not listed sets nothing (Python's transition is the identity there)
    chunk     absent, or {control, values}: the rows come in a chunk per value of that control, in
    chunks    {"<index>": part}: the chunks held (``to_page("current")``: the explorer's state's, ``"all"``:
              every one, for a page with no kernel to ask); a page with no kernel that holds only some has
              ``chunk["files"]``: per chunk, the path of its file beside the page (:func:`chunk_files`)

The rule, the same in :meth:`Tables.lookup`/:meth:`Tables.transition` and in ``table.js``'s ``lookup`` /
``transition``: **a part covers the page's values when every control that keys it is on a row's key and
every free control equals the value the row holds for it; the table covers them when every part does.**
A number within ``tolerance`` (relative) of a grid value counts as it (a log slider's value computed in the
page). Free values that JSON cannot hold (the pipeline's edited tensors) are compared by digest
(:func:`page_value`): the page's ``values`` carry the digest string for them. ``transition`` applies each
part's aliases, then sets each dependent control to the value a part holding its traits gives for the raw
values (so lesson 12's position is clamped by looking it up, not by computing ``min`` in the page).

Chunks and explanations the page lacks come from its source (``static/explorer.js``): the kernel answers
``{kind: "chunk"}`` with :func:`chunk_message` and a hover with the view's text; a page with no kernel loads the
files :func:`chunk_files` and :func:`explanation_files` wrote beside it (``chunk["files"]``, ``explanations``).
A table marked ``prefetch`` (:func:`attnlib.show.page.page_tables`) is fetched whole once the page has drawn.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import itertools
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property, partial
from typing import Any, Protocol, cast

import numpy as np

from .view import Frame, HeatmapView, explanation_texts

__all__ = [
    "CHUNK_FOLDER",
    "ExplorerShape",
    "Part",
    "Shown",
    "Table",
    "TableTooLarge",
    "Tables",
    "build_table",
    "build_tables",
    "chunk_files",
    "chunk_message",
    "comparable",
    "explanation_files",
    "page_bytes",
    "page_value",
]

#: the page format's version (``to_page()["format"]``)
FORMAT = 1
#: a number matches a grid value within this relative difference (:meth:`Table.find`, ``table.js``)
TOLERANCE = 1e-9


@dataclass(frozen=True)
class Shown:
    """What an explorer shows for one state: every view's frame, every text's HTML, every dependent control.

    ``controls`` maps a control's name to the traits its state sets (``CONTROL_TRAITS`` of
    :mod:`attnlib.show.explorer`), e.g. ``{"query": {"options": [("the", 0), ("cat", 1)], "value": 1}}``: the
    options and limits that follow from the other controls and the value clamped to them.
    """

    views: Mapping[str, Frame]
    texts: Mapping[str, str] = field(default_factory=dict)
    controls: Mapping[str, Mapping[str, object]] = field(default_factory=dict)


class ExplorerShape(Protocol):
    """What the tables and the page use of an explorer (:class:`attnlib.show.explorer.Explorer`, which imports
    this module: the tables know an explorer by its shape only)."""

    controls: dict[str, Any]
    views: dict[str, HeatmapView]

    def values_now(self) -> dict[str, object]: ...
    def control_values(self) -> dict[str, object]: ...
    def compute(self, values: Mapping[str, object]) -> Shown: ...
    def transition(self, values: Mapping[str, object], name: str) -> Mapping[str, object]: ...
    def control_grid(self) -> dict[str, list[object]]: ...
    def state(self, shown: Shown) -> dict[str, object]: ...
    def tree(self) -> dict[str, object]: ...
    def shown_now(self) -> dict[str, object]: ...
    def adopt(self, values: Mapping[str, object]) -> None: ...
    def adopt_drawn(self, values: Mapping[str, object]) -> None: ...
    def refresh(self, *, reraise: bool = False) -> None: ...
    def catch_up(self) -> None: ...
    def publish(self) -> None: ...


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


#: the parts of a view's entry a table stores apart: its look (every drawn trait but the matrix and the
#: outlines), its outlines and its matrix
VIEW_FIELDS = ("look", "marks", "matrix")


def _output(output: str) -> tuple[str, str, str | None]:
    """``"views/encoding:matrix"`` → ``("views", "encoding", "matrix")``; no field: the whole output."""
    kind, rest = output.split("/", 1)
    name, _, part = rest.partition(":")
    return kind, name, part or None


def _cells(output: str) -> list[str]:
    """What each cell an output takes in a row holds: ``"pool"`` (an index into the pool) or ``"matrix"``."""
    kind, _, part = _output(output)
    fields = (VIEW_FIELDS if part is None else (part,)) if kind == "views" else ("pool",)
    return ["matrix" if f == "matrix" else "pool" for f in fields]


def _blocks(matrices: Sequence[bytes], shapes: Sequence[tuple[int, ...]]) -> tuple[list[bytes], list[int]] | None:
    """Matrices that are top-left blocks of others, stored once: ``(sources, [source, its columns, rows,
    columns] per matrix)``, or ``None`` when no matrix is a block of another (then each is stored itself).

    Lesson 12 shows ``P[:n]`` and ``(P Pᵀ)[:n, :n]`` of the 64-position result: every ``n`` is a block of
    the one result, bit for bit (the page copies the block; it computes nothing).
    """
    arrays: list[np.ndarray[Any, Any]] = [
        np.frombuffer(m, dtype="<f8").reshape(tuple(s) if len(s) == 2 else (1, -1))
        for m, s in zip(matrices, shapes, strict=True)
    ]
    order = sorted(range(len(arrays)), key=lambda i: -arrays[i].size)
    sources: dict[int, int] = {}  # matrix index → source index
    by_corner: dict[bytes, list[int]] = {}
    block: dict[int, tuple[int, int, int]] = {}  # matrix index → (source matrix, rows, columns)
    for i in order:
        a = arrays[i]
        corner = a[:1, :1].tobytes()
        for s in by_corner.get(corner, []) if a.size else []:
            big = arrays[s]
            if big.shape[0] >= a.shape[0] and big.shape[1] >= a.shape[1]:
                if np.array_equal(big[: a.shape[0], : a.shape[1]].view("<u8"), a.view("<u8")):
                    block[i] = (s, a.shape[0], a.shape[1])
                    break
        else:
            sources[i] = len(sources)
            by_corner.setdefault(corner, []).append(i)
    if not block:
        return None
    stored = sorted(sources, key=sources.get)  # type: ignore[arg-type]
    refs: list[int] = []
    for i, a in enumerate(arrays):
        s, r, c = block.get(i, (i, a.shape[0], a.shape[1]))
        refs.extend((sources[s], arrays[s].shape[1], r, c))
    return [matrices[i] for i in stored], refs


@dataclass
class Table:
    """Every state of an explorer's enumerable controls and what it shows (see the module's docstring)."""

    controls: tuple[str, ...]  # the enumerable controls, in the order of a key
    outputs: tuple[str, ...]  # "views/<name>", "texts/<name>", "controls/<name>"
    keys: list[tuple[object, ...]] = field(default_factory=list)  # row k's values of the enumerable controls
    pool: list[str] = field(default_factory=list)  # distinct outputs as JSON (a view's entry without its matrix)
    matrices: list[bytes] = field(default_factory=list)  # distinct matrices, little-endian float64
    #: per row, per output: a pool index (a view: its look's, its marks', its matrix's)
    rows: list[list[int]] = field(default_factory=list)
    free: dict[str, object] = field(default_factory=dict)  # the typed controls' values in the first state
    values: list[dict[str, object]] = field(default_factory=list, repr=False)  # row k's values (not shipped)
    explorer: str = ""  # the explorer's class name
    frees: list[list[int]] = field(default_factory=list)  # per row, per free control: a pool index of its value
    #: (control changed, enumerable values after the change) → the values Python's transition and clamping set
    aliases: dict[tuple[str, tuple[object, ...]], dict[str, object]] = field(default_factory=dict)
    #: every change the build tried: (row, control, value) (not shipped)
    changes: list[tuple[int, str, object]] = field(default_factory=list, repr=False)
    shapes: list[tuple[int, ...]] = field(default_factory=list)  # each matrix's shape
    chunk: str | None = None  # the control whose values split the rows into chunks the page loads on demand

    @property
    def free_names(self) -> tuple[str, ...]:
        """The free (typed) controls, in the order of :attr:`frees`."""
        return tuple(self.free)

    def free_values(self, row: int) -> dict[str, object]:
        """The free controls' values row ``row`` holds (as the page holds them: :func:`page_value`)."""
        return {name: json.loads(self.pool[k]) for name, k in zip(self.free_names, self.frees[row], strict=True)}

    def page_values(self, row: int) -> dict[str, object]:
        """Row ``row``'s values as the page holds them: the enumerable controls' and the free ones'."""
        return {**dict(zip(self.controls, self.keys[row], strict=True)), **self.free_values(row)}

    def state(self, row: int) -> dict[str, dict[str, object]]:
        """Row ``row`` in the form of :meth:`Explorer.state` (after a JSON round trip: lists for tuples)."""
        out: dict[str, dict[str, Any]] = {"views": {}, "texts": {}, "controls": {}}
        cells = iter(self.rows[row])
        for output in self.outputs:
            kind, name, part = _output(output)
            if kind != "views":
                out[kind][name] = json.loads(self.pool[next(cells)])
                continue
            view = out["views"].setdefault(name, {})
            for f in VIEW_FIELDS if part is None else (part,):
                if f == "matrix":
                    view["buffer"] = self.matrices[next(cells)]
                else:
                    view.update(json.loads(self.pool[next(cells)]))
        return out

    # the rule the page applies too ------------------------------------------------------------------
    @cached_property
    def _numbers(self) -> dict[str, list[float]]:
        """Each enumerable control's distinct numbers (read once the table is built)."""
        out: dict[str, list[float]] = {}
        for c, name in enumerate(self.controls):
            column = (key[c] for key in self.keys)
            seen: set[float] = {v for v in column if isinstance(v, int | float) and not isinstance(v, bool)}
            out[name] = sorted(seen)
        return out

    @cached_property
    def _rows(self) -> dict[tuple[object, ...], int]:
        """Row of each key (as the page tells values apart)."""
        return {tuple(_ident(v) for v in key): k for k, key in reversed(list(enumerate(self.keys)))}

    def _snap(self, name: str, value: object) -> object:
        """``value`` as the grid of control ``name`` holds it (a number within :data:`TOLERANCE` of one)."""
        if isinstance(value, bool) or not isinstance(value, int | float) or name not in self._numbers:
            return value
        for v in self._numbers[name]:
            if v == value or abs(v - value) <= TOLERANCE * max(abs(v), abs(value)):
                return v
        return value

    def find(self, values: Mapping[str, object], *, free: bool = True) -> int | None:
        """The row that covers ``values`` (the page's: free controls by :func:`page_value`), or ``None``.

        ``free=False``: the row of the enumerable controls' values alone (a transition's clamping)."""
        try:
            k = self._rows.get(tuple(_ident(values[n]) for n in self.controls))
            if k is None:  # a number within the tolerance of the grid's
                k = self._rows.get(tuple(_ident(self._snap(n, values[n])) for n in self.controls))
        except KeyError:
            return None
        if k is None:
            return None
        held = self.free_values(k)
        if not free or all(n in values and _same(page_value(values[n]), held[n]) for n in self.free_names):
            return k
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
    def to_page(self, rows: Sequence[int] | None = None) -> dict[str, Any]:
        """The table as the page reads it (see the module's docstring): JSON-able, the binary parts bytes.

        ``rows``: only these rows (a chunk), with only the pool entries and matrices they use.
        """
        chosen = range(len(self.keys)) if rows is None else rows
        grid: list[list[object]] = [[] for _ in self.controls]
        where: list[dict[object, int]] = [{} for _ in self.controls]

        def grid_index(c: int, value: object) -> int:
            ident = _ident(value)
            if ident not in where[c]:
                where[c][ident] = len(grid[c])
                grid[c].append(value)
            return where[c][ident]

        keys = [grid_index(c, v) for k in chosen for c, v in enumerate(self.keys[k])]
        kinds = [k for o in self.outputs for k in _cells(o)]  # per cell of a row: "pool" or "matrix"
        pool: list[object] = []
        pooled: dict[str, int] = {}

        def pool_index(text: str) -> int:
            if text not in pooled:
                pooled[text] = len(pool)
                pool.append(json.loads(text))
            return pooled[text]

        used: dict[int, int] = {}  # matrix index → its index in this payload
        cells: list[int] = []
        for k in chosen:
            for kind, cell in zip(kinds, self.rows[k], strict=True):
                cells.append(used.setdefault(cell, len(used)) if kind == "matrix" else pool_index(self.pool[cell]))
            cells.extend(pool_index(self.pool[cell]) for cell in self.frees[k])
        chosen_keys = {tuple(_ident(v) for v in self.keys[k]) for k in chosen}
        aliases = [
            [self.controls.index(name), [grid_index(c, v) for c, v in enumerate(raw)], pool_index(_json(sets))]
            for (name, raw), sets in self.aliases.items()
            if rows is None or tuple(_ident(v) for v in raw) in chosen_keys
        ]
        matrices = list(used)
        blocks = _blocks([self.matrices[m] for m in matrices], [self.shapes[m] for m in matrices])
        stored = [self.matrices[m] for m in matrices] if blocks is None else blocks[0]
        biggest = max([0, *keys, *cells])
        width = 1 if biggest < 2**8 else 2 if biggest < 2**16 else 4
        dtype = {1: "<u1", 2: "<u2", 4: "<u4"}[width]
        offsets = np.cumsum([0, *(len(m) // 8 for m in stored)], dtype=np.uint32)
        return {
            "format": FORMAT,
            "explorer": self.explorer,
            "controls": list(self.controls),
            "grid": grid,
            "free": list(self.free_names),
            "outputs": [
                list(_output(o)[:2]) + ([] if _output(o)[2] is None else [_output(o)[2]]) for o in self.outputs
            ],
            "pool": pool,
            "width": width,
            "keys": np.asarray(keys, dtype=dtype).tobytes(),
            "cells": np.asarray(cells, dtype=dtype).tobytes(),
            "matrices": b"".join(stored),
            "offsets": offsets.astype("<u4").tobytes(),
            "blocks": None if blocks is None else np.asarray(blocks[1], dtype="<u4").tobytes(),
            "aliases": aliases,
            "tolerance": TOLERANCE,
        }

    def gzip_size(self) -> int:
        """Bytes of :meth:`to_page` as one file (:func:`page_bytes`) gzipped: what the page's table weighs."""
        return _gzip(page_bytes(self.to_page()))


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


def _settle(explorer: ExplorerShape, values: Mapping[str, object]) -> tuple[dict[str, object], Shown]:
    """``values`` with each dependent control at the value :meth:`Explorer.compute` clamps it to, and what it shows."""
    shown = explorer.compute(values)
    settled = dict(values)
    settled.update({name: traits["value"] for name, traits in shown.controls.items() if "value" in traits})
    return settled, shown


def build_table(explorer: ExplorerShape, *, limit: int = 5000) -> Table:
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
    settle = partial(_settle, explorer)

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
    digests: dict[int, tuple[object, object]] = {}  # id → (the value, kept alive; its page_value)

    def held(value: object) -> object:
        """:func:`page_value`, once per object (the pipeline's tensors are digested once, not per change)."""
        if isinstance(value, str | int | float | bool) or value is None:
            return value
        if id(value) not in digests:
            digests[id(value)] = (value, page_value(value))
        return digests[id(value)][1]

    def page(values: Mapping[str, object]) -> tuple[object, ...]:
        """``values`` as the page tells them apart."""
        return tuple(_ident(values[n]) for n in names) + tuple(_ident(held(values[n])) for n in free_names)

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
                if value["buffer"] not in matrices:
                    table.shapes.append(tuple(value["shape"]))
                row.append(matrices.setdefault(value["buffer"], len(matrices)))
            else:
                row.append(pool.setdefault(_json(value), len(pool)))
        table.keys.append(tuple(values[n] for n in names))
        table.values.append(dict(values))
        table.rows.append(row)
        table.frees.append([pool.setdefault(_json(held(values[n])), len(pool)) for n in free_names])

    seen = {tuple(_ident(start[n]) for n in names)}
    #: the settled values and what they show, and the settled values as the page tells them apart, per moved values
    settled: dict[tuple[object, ...], tuple[dict[str, object], Shown, tuple[object, ...]]] = {}
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
                moved_page = page(moved)
                if moved_page not in settled:
                    after, after_shown = settle(moved)
                    settled[moved_page] = after, after_shown, page(after)
                after, after_shown, after_page = settled[moved_page]
                if after_page != (moved_page if moved is changed else page(changed)):
                    sets = {n: after[n] for n in names if _ident(after[n]) != _ident(changed[n])}
                    sets.update({n: held(after[n]) for n in free_names if not _same(held(after[n]), held(changed[n]))})
                    raw = (name, tuple(changed[n] for n in names))
                    if raw in table.aliases and _json(table.aliases[raw]) != _json(sets):
                        raise ValueError(
                            f"{table.explorer}: changing {name!r} to {value!r} gives {table.aliases[raw]} from one "
                            f"state and {sets} from another: its transition reads a free control"
                        )
                    table.aliases[raw] = sets
                key = after_page[: len(names)]
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


@dataclass(frozen=True)
class Part:
    """Some outputs of an explorer that depend on some of its controls only: their table is keyed by those.

    ``outputs`` name an output (``"texts/caption"``, ``"controls/position"``, ``"views/encoding"``) or one field
    of a view (``"views/encoding:matrix"``, ``":look"``, ``":marks"``: see :data:`VIEW_FIELDS`). Rows are the
    product of the controls' grids with the other controls at ``context``; a row whose values
    :meth:`Explorer.compute` clamps is left out, unless the part holds a dependent control (then its rows
    are what the page's transition looks the clamped value up in). ``chunk``: the control whose values
    split the rows into chunks the page loads on demand (one per value).
    """

    controls: tuple[str, ...]
    outputs: tuple[str, ...]
    context: Mapping[str, object] = field(default_factory=dict)
    chunk: str | None = None


def _clamped(clamps: Sequence[Table], values: Mapping[str, object]) -> bool:
    """Whether a part that holds a dependent control's traits (built already) clamps ``values``."""
    for table in clamps:
        if not all(c in values for c in table.controls):
            continue
        row = table.find(values, free=False)
        if row is None:
            continue
        for control, traits in _control_traits(table, row):
            if "value" in traits and not _same(traits["value"], values[control]):
                return True
    return False


def _control_traits(table: Table, row: int) -> Iterator[tuple[str, dict[str, Any]]]:
    """The dependent controls' traits that row ``row`` of ``table`` holds, as ``(control, traits)``."""
    cells = iter(table.rows[row])
    for output in table.outputs:
        kind, control, _ = _output(output)
        held = [next(cells) for _ in _cells(output)]
        if kind == "controls":
            yield control, json.loads(table.pool[held[0]])


def build_part(explorer: ExplorerShape, part: Part, *, limit: int = 200_000, clamps: Sequence[Table] = ()) -> Table:
    """The table of ``part``: every product of its controls' grids, the other controls at ``part.context``.

    The outputs come from :meth:`Explorer.compute` (views drawn as :meth:`Explorer.state` draws them); the
    explorer's own :meth:`Explorer.transition` must not move another control (a part has no aliases: the
    page's transition only looks the dependent controls' clamped values up).
    """
    grid = explorer.control_grid()
    base = _settle(explorer, explorer.values_now())[0]
    base.update(part.context)
    free_names = tuple(k for k in base if k not in grid)
    table = Table(
        controls=part.controls,
        outputs=part.outputs,
        free={k: page_value(base[k]) for k in free_names},
        explorer=type(explorer).__name__,
        chunk=part.chunk,
    )
    raw = any(o.startswith("controls/") for o in part.outputs)
    pool: dict[str, int] = {}
    matrices: dict[bytes, int] = {}
    free_cells = [pool.setdefault(_json(page_value(base[n])), len(pool)) for n in free_names]
    combos = list(itertools.product(*(grid[c] for c in part.controls)))
    if len(combos) > limit:
        raise TableTooLarge(f"{table.explorer}: a part keyed by {part.controls} has {len(combos)} rows (> {limit})")
    for combo in combos:
        values = {**base, **dict(zip(part.controls, combo, strict=True))}
        if not raw and _clamped(clamps, values):
            continue  # not a state: compute clamps it (as a part built from compute already says)
        shown = explorer.compute(values)
        if not raw and any(
            "value" in shown.controls.get(c, {}) and _ident(shown.controls[c]["value"]) != _ident(values[c])
            for c in part.controls
        ):
            continue  # not a state: compute clamps it
        row: list[int] = []
        for output in part.outputs:
            kind, name, which = _output(output)
            if kind == "texts":
                row.append(pool.setdefault(_json(shown.texts[name]), len(pool)))
            elif kind == "controls":
                traits = {t: v for t, v in shown.controls[name].items()}
                row.append(pool.setdefault(_json(json.loads(_json(traits))), len(pool)))
            else:
                drawn = explorer.views[name].drawn(shown.views[name])
                for f in VIEW_FIELDS if which is None else (which,):
                    if f == "matrix":
                        if drawn["buffer"] not in matrices:
                            table.shapes.append(tuple(drawn["shape"]))  # type: ignore[arg-type]
                        row.append(matrices.setdefault(drawn["buffer"], len(matrices)))  # type: ignore[arg-type]
                    else:
                        chosen = {k: v for k, v in drawn.items() if k != "buffer" and (k in MARKS) == (f == "marks")}
                        row.append(pool.setdefault(_json(chosen), len(pool)))
        table.keys.append(combo)
        table.values.append(values)
        table.rows.append(row)
        table.frees.append(list(free_cells))
    table.pool = list(pool)
    table.matrices = list(matrices)
    return table


@dataclass
class Tables:
    """An explorer's table of states as parts (a part per group of outputs, keyed by the controls they read).

    An explorer with no :meth:`table_parts` has one part: :func:`build_table`'s table of every reachable state.
    :meth:`lookup` and :meth:`transition` are the page's rule (``table.js``) in Python.
    """

    explorer: str
    controls: tuple[str, ...]  # every enumerable control
    free: tuple[str, ...]  # every free control
    parts: list[Table]
    start: dict[str, object] = field(default_factory=dict)  # the explorer's state when the tables were built

    @cached_property
    def states(self) -> int:
        """How many states of the explorer the tables answer (with every chunk loaded).

        One part: its rows. Parts: every combination of the controls no part clamps, times, for each clamped
        control, how many of its values the part that holds its traits keeps (lesson 12: 1 097 712).
        """
        if len(self.parts) == 1:
            return len(self.parts[0].keys)
        grid_of: dict[str, dict[object, object]] = {c: {} for c in self.controls}  # each control's distinct values
        for part in self.parts:
            for key in part.keys:
                for c, value in zip(part.controls, key, strict=True):
                    grid_of[c].setdefault(_ident(value), value)
        kept: dict[str, tuple[tuple[str, ...], dict[tuple[object, ...], int]]] = {}
        for table in self.parts:
            for output in table.outputs:
                kind, control, _ = _output(output)
                if kind != "controls":
                    continue
                drivers = tuple(c for c in table.controls if c != control)
                counts: dict[tuple[object, ...], int] = {}
                for k, key in enumerate(table.keys):
                    values = dict(zip(table.controls, key, strict=True))
                    traits = cast(Mapping[str, object], table.state(k)["controls"][control])
                    if _same(traits.get("value", values[control]), values[control]):
                        driver_key = tuple(_ident(values[d]) for d in drivers)
                        counts[driver_key] = counts.get(driver_key, 0) + 1
                kept[control] = (drivers, counts)
        free = [c for c in self.controls if c not in kept]
        total = 0
        for combo in itertools.product(*(list(grid_of[c].values()) for c in free)):
            values = dict(zip(free, combo, strict=True))
            count = 1
            for drivers, counts in kept.values():
                count *= counts.get(tuple(_ident(values[d]) for d in drivers), 0)
            total += count
        return total

    def chunk_values(self, part: int) -> list[object]:
        """The values of part ``part``'s chunk control, in the order of its chunks (none: ``[]``)."""
        table = self.parts[part]
        if table.chunk is None:
            return []
        column = table.controls.index(table.chunk)
        seen: dict[object, object] = {}
        for key in table.keys:
            seen.setdefault(_ident(key[column]), key[column])
        return list(seen.values())

    def chunk_rows(self, part: int, index: int) -> list[int]:
        """The rows of chunk ``index`` of part ``part``."""
        table = self.parts[part]
        column = table.controls.index(cast(str, table.chunk))
        value = _ident(self.chunk_values(part)[index])
        return [k for k, key in enumerate(table.keys) if _ident(key[column]) == value]

    def chunk(self, part: int, index: int) -> dict[str, Any]:
        """Chunk ``index`` of part ``part`` as the page reads it (what the kernel answers a page's request with)."""
        return self.parts[part].to_page(self.chunk_rows(part, index))

    def to_page(self, chunks: str | Mapping[str, object] = "current") -> dict[str, Any]:
        """The tables as the page reads them: the parts; a chunked part holds the chunks ``chunks`` says.

        ``chunks``: ``"all"`` (a static page that has no kernel to ask), ``"none"``, ``"current"`` (the chunk of
        each part that holds the explorer's state when the tables were built) or the values to hold the chunks of.
        """
        parts: list[dict[str, Any]] = []
        for p, table in enumerate(self.parts):
            if table.chunk is None:
                parts.append(table.to_page())
                continue
            values = self.chunk_values(p)
            held: list[int]
            if chunks == "all":
                held = list(range(len(values)))
            elif chunks == "none":
                held = []
            else:
                first = cast(Mapping[str, object], self.start if chunks == "current" else chunks)
                held = [i for i, v in enumerate(values) if _ident(v) == _ident(first[table.chunk])]
            head = table.to_page([])
            head["chunk"] = {"control": table.chunk, "values": values}
            head["chunks"] = {str(i): self.chunk(p, i) for i in held}
            parts.append(head)
        return {
            "format": FORMAT,
            "explorer": self.explorer,
            "controls": list(self.controls),
            "free": list(self.free),
            "states": self.states,
            "parts": parts,
            "tolerance": TOLERANCE,
        }

    def sizes(self) -> dict[str, object]:
        """Bytes gzip inline (with the first state's chunks) and of each chunk, bytes raw (every chunk), rows."""
        inline = _gzip(page_bytes(self.to_page("current")))
        chunks = [
            _gzip(page_bytes(self.chunk(p, i)))
            for p, t in enumerate(self.parts)
            if t.chunk is not None
            for i in range(len(self.chunk_values(p)))
        ]
        raw = len(page_bytes(self.to_page("all")))
        return {"inline": inline, "chunks": chunks, "raw": raw, "rows": sum(len(t.keys) for t in self.parts)}

    # the page's rule, in Python --------------------------------------------------------------------
    def lookup(self, values: Mapping[str, object]) -> dict[str, dict[str, Any]] | None:
        """What the page shows for ``values`` (``table.js``'s ``lookup``), or ``None`` when not covered."""
        out: dict[str, dict[str, Any]] = {"views": {}, "texts": {}, "controls": {}}
        for table in self.parts:
            row = table.find(values)
            if row is None:
                return None
            for kind, outputs in table.state(row).items():
                for name, value in outputs.items():
                    if kind == "views":
                        out["views"].setdefault(name, {}).update(cast(Mapping[str, object], value))
                    else:
                        out[kind][name] = value
        return out

    def transition(self, values: Mapping[str, object], name: str) -> dict[str, object]:
        """The page's values after control ``name`` changed (``table.js``'s ``transition``)."""
        out = {n: page_value(v) for n, v in values.items()}
        for table in self.parts:
            out = table.transition(out, name)
        for table in self.parts:  # the dependent controls' clamped values, looked up with the raw ones
            row = table.find(out, free=False)
            if row is None:
                continue
            for control, traits in _control_traits(table, row):
                if "value" in traits:
                    out[control] = traits["value"]
        return out


def chunk_message(tables: Tables, part: int, index: int) -> tuple[dict[str, Any], list[bytes]]:
    """The kernel's answer to a page that asks for chunk ``index`` of part ``part`` (``Widget.send(content,
    buffers)``): ``{"type": "table-chunk", "part", "index", "payload"}``, each bytes of the payload replaced by
    ``{"$buffer": k}``, the k-th of ``buffers``. ``table.js``'s ``addChunkMessage`` reads it."""
    buffers: list[bytes] = []
    payload = _split_bytes(tables.chunk(part, index), lambda k, _: {"$buffer": k}, buffers)
    return {"type": "table-chunk", "part": part, "index": index, "payload": payload}, buffers


#: the folder beside a page with no kernel that holds its tables' chunk files (:func:`chunk_files`)
CHUNK_FOLDER = "attnlib-chunks"


def _script_file(folder: str, body: str, what: str) -> tuple[str, str]:
    """A file a page with no kernel loads beside it (:func:`chunk_files`, :func:`explanation_files`): a classic
    script that puts ``body`` (JSON) in ``globalThis.attnlibChunks`` under its name, the digest of ``body``, so
    that what two pages share is one file; ``(path, text)``. ``table.js``'s ``loadFile`` reads it."""
    key = hashlib.sha256(body.encode()).hexdigest()[:24]
    return f"{folder}/{key}.js", f'// attnlib: {what}\n(globalThis.attnlibChunks ??= {{}})["{key}"] = {body};\n'


def chunk_files(tables: Tables, page: Mapping[str, Any], folder: str = CHUNK_FOLDER) -> dict[str, str]:
    """The chunks of ``page`` (``tables.to_page(...)``) that it does not hold, as files a page with no kernel
    loads beside it: ``{path: text}``; each chunked part of ``page`` gets ``chunk["files"]``, the path of each
    chunk's file relative to the page (``""`` for a chunk the page holds).

    A file is a classic script (a browser runs one from ``file://`` as over http, where it refuses ``fetch``)
    that puts :func:`chunk_message`'s content and buffers (base64) in ``globalThis.attnlibChunks`` under its
    name: ``table.js``'s ``loadChunk`` adds it with ``addChunkMessage``, as it adds the kernel's answer. Its
    name is its content's digest, so a chunk two pages share is one file.
    """
    out: dict[str, str] = {}
    for p, part in enumerate(page["parts"]):
        if part.get("chunk") is None:
            continue
        files = []
        for index in range(len(part["chunk"]["values"])):
            if str(index) in part["chunks"]:
                files.append("")
                continue
            content, buffers = chunk_message(tables, p, index)
            body = _json({"content": content, "buffers": [base64.b64encode(b).decode("ascii") for b in buffers]})
            path, text = _script_file(folder, body, f"a chunk of {tables.explorer}'s table of states")
            out[path] = text
            files.append(path)
        part["chunk"]["files"] = files
    return out


def explanation_files(
    explorer: ExplorerShape, tables: Tables, page: dict[str, Any], folder: str = CHUNK_FOLDER
) -> dict[str, str]:
    """The views' explanations (what hovering a cell shows) for every row of ``tables``, as files a page with no
    kernel loads beside it, one per view: ``{path: text}``; ``page`` (``tables.to_page(...)``) gets
    ``explanations``: ``{view: path}`` for each view given some (none: ``page`` is left as it was).

    The texts are :meth:`Explorer.compute`'s, run for each row whose look says the view is explained (a part
    that does not hold the look computes every row). A file is a classic script, like a chunk's
    (:func:`chunk_files`), that puts ``{"explorer", "view", "part", "rows", "texts"}`` in
    ``globalThis.attnlibChunks`` under its name, the digest of its content: ``texts`` holds each distinct
    table of texts (a list per matrix row of one text per cell) once, and ``rows`` maps the part's rows to
    them, ``{"": [index per row]}`` for a part in one piece, ``{"<chunk>": [index per row of that chunk]}`` for a
    chunked one. ``table.js``'s ``explanation`` finds the row of the values drawn and reads its cell's text.
    The page's table stays as small as the kernel's (the texts are most of a table's bytes: lesson 01's
    pipeline, 46 kB gzip without them and 138 kB with), and a page loads them once it has drawn.
    """
    out: dict[str, str] = {}
    said: dict[str, str] = {}
    for p, table in enumerate(tables.parts):
        names = [
            name for kind, name, which in map(_output, table.outputs) if kind == "views" and which in (None, "matrix")
        ]
        texts: dict[str, list[str]] = {name: [] for name in names}
        for k, values in enumerate(table.values):
            state = table.state(k)["views"]
            wanted = [n for n in names if cast(Mapping[str, object], state[n]).get("explained", True)]
            shown = explorer.compute(values) if wanted else None
            for name in names:
                cells = (
                    explanation_texts(shown.views[name].explanations) if shown is not None and name in wanted else []
                )
                texts[name].append(_json(cells))
        pieces = [""] if table.chunk is None else [str(i) for i in range(len(tables.chunk_values(p)))]
        for name in names:
            if all(text == "[]" for text in texts[name]):
                continue
            pool: dict[str, int] = {}
            rows = {
                piece: [
                    pool.setdefault(texts[name][k], len(pool))
                    for k in (range(len(table.keys)) if piece == "" else tables.chunk_rows(p, int(piece)))
                ]
                for piece in pieces
            }
            body = _json(
                {
                    "explorer": tables.explorer,
                    "view": name,
                    "part": p,
                    "rows": rows,
                    "texts": [json.loads(text) for text in pool],
                }
            )
            path, text = _script_file(folder, body, f"the hover explanations of {tables.explorer}'s view {name}")
            out[path] = text
            said[name] = path
    if said:
        page["explanations"] = said
    return out


def _split_bytes(value: object, mark: Callable[[int, bytes], object], out: list[bytes]) -> object:
    """``value`` with each bytes in it moved to ``out`` and replaced by ``mark(its index in out, it)``."""
    if isinstance(value, bytes):
        out.append(value)
        return mark(len(out) - 1, value)
    if isinstance(value, Mapping):
        return {k: _split_bytes(v, mark, out) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_split_bytes(v, mark, out) for v in value]
    return value


def page_bytes(page: Mapping[str, Any]) -> bytes:
    """A page payload (:meth:`Tables.to_page`) as the bytes of one file (what a page's size is measured on): the
    JSON with each bytes replaced by its length, then the bytes."""
    binary: list[bytes] = []
    head = _json(_split_bytes(page, lambda _, b: {"$bytes": len(b)}, binary)).encode()
    return len(head).to_bytes(4, "little") + head + b"".join(binary)


def _gzip(data: bytes) -> int:
    return len(gzip.compress(data, compresslevel=9, mtime=0))


def build_tables(explorer: ExplorerShape, *, limit: int = 5000) -> Tables:
    """The explorer's tables: its :meth:`table_parts` if it declares some, else one :func:`build_table`.

    Raises:
        TableTooLarge: when an explorer with no parts has more than ``limit`` reachable states.
    """
    grid = explorer.control_grid()
    declared = getattr(explorer, "table_parts", None)
    if declared is None:
        parts = [build_table(explorer, limit=limit)]
    else:  # the parts that hold dependent controls first: they tell which values the others need not compute
        declared_parts: list[Part] = declared()
        holds = [any(o.startswith("controls/") for o in p.outputs) for p in declared_parts]
        built: dict[int, Table] = {}
        for i in sorted(range(len(declared_parts)), key=lambda i: not holds[i]):
            clamps = [t for j, t in built.items() if holds[j]]
            built[i] = build_part(explorer, declared_parts[i], clamps=clamps)
        parts = [built[i] for i in range(len(declared_parts))]
    start = _settle(explorer, explorer.values_now())[0]
    free = tuple(n for n in start if n not in grid)
    return Tables(explorer=type(explorer).__name__, controls=tuple(grid), free=free, parts=parts, start=start)
