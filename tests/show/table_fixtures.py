"""Write what tests/show/table.test.mjs checks the page's table reader against: for some of the lessons'
explorers, the table's page payload, Python's state for every row (lessons 08 and 12, whose tables come in
parts and chunks: for every state of 08 and sampled states of 12, straight from ``compute``) and Python's
transition for every change the build tried (08, 12: sampled changes). Lessons 05 and 07's fixtures hold their
views' explanation files (``explanation_files``: what a page with no kernel loads beside it) and, per row, the
texts ``compute`` gives; lesson 12's holds some of its chunk files (``chunk_files``).

    python tests/show/table_fixtures.py DIR      (table.test.mjs runs it when TABLE_FIXTURES is not set)

Bytes are written as ``{"$bytes": base64}``; the node test turns them into DataViews, as anywidget delivers them.
The expected transitions come from the explorer itself (``transition`` then the clamping ``compute`` gives),
not from the table.
"""

from __future__ import annotations

import base64
import json
import random
import sys
from pathlib import Path

from attnlib.lessons.l01_inputs import InputsExplorer
from attnlib.lessons.l05_softmax import SoftmaxExplorer
from attnlib.lessons.l07_summing import SummingExplorer
from attnlib.lessons.l08_scaling import ScalingExplorer
from attnlib.lessons.l11_multihead import MultiHeadExplorer
from attnlib.lessons.l12_positions import PositionsExplorer
from attnlib.lessons.l15_attention_at_scale import TiledExplorer
from attnlib.lessons.pipeline import PipelineExplorer
from attnlib.show.explorer import Explorer
from attnlib.show.table import (
    Tables,
    build_table,
    build_tables,
    chunk_files,
    chunk_message,
    comparable,
    explanation_files,
    page_value,
)
from attnlib.show.view import explanation_texts

#: the explorers whose tables the page's reader is checked against (lessons 01, 05, 07, 11, 15)
FIXTURES = {
    "05 softmax": SoftmaxExplorer,
    "11 multihead": MultiHeadExplorer,
    "01 inputs": InputsExplorer,
    "01 pipeline": PipelineExplorer,
    "07 summing": SummingExplorer,
    "15 tiled": TiledExplorer,
}
#: the fixtures whose tables hold their views' explanations, as a page with no kernel gets them
EXPLAINED = {"05 softmax", "07 summing"}
#: explorers whose tables come in parts and chunks (lookups checked against compute at these many states)
PARTED = {"08 scaling": (ScalingExplorer, 210), "12 positions": (PositionsExplorer, 300)}


def jsonable(value: object) -> object:
    """``value`` with bytes as ``{"$bytes": base64}`` (and tuples as lists)."""
    if isinstance(value, bytes | bytearray | memoryview):
        return {"$bytes": base64.b64encode(bytes(value)).decode()}
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    return value


def fixture(explorer: Explorer, *, explained: bool = False) -> dict[str, object]:
    """The payload, every row's page values and state, every change's values before and after (Python's);
    ``explained``: the views' explanation files, and per row each explained view's texts (``compute``'s)."""
    table = build_table(explorer)
    payload: dict[str, object] = table.to_page()
    files: dict[str, str] = {}
    if explained:
        tables = Tables(table.explorer, table.controls, table.free_names, [table], explorer.values_now())
        payload = tables.to_page()
        files = explanation_files(explorer, tables, payload)
    names = (*table.controls, *table.free_names)

    def page(values) -> dict[str, object]:
        return {n: page_value(values[n]) for n in names}

    settled: dict[str, dict[str, object]] = {}

    def settle(values) -> dict[str, object]:
        key = json.dumps(page(values), sort_keys=True)
        if key not in settled:
            after = dict(values)
            for name, traits in explorer.compute(values).controls.items():
                if "value" in traits:
                    after[name] = traits["value"]
            settled[key] = page(after)
        return settled[key]

    rows, transitions, texts = [], [], []
    for k, values in enumerate(table.values):
        rows.append([page(values), table.state(k)])
        if explained:
            shown, looks = explorer.compute(values).views, table.state(k)["views"]
            texts.append(
                {
                    name: explanation_texts(shown[name].explanations) if looks[name].get("explained", True) else []  # type: ignore[union-attr]
                    for name in payload.get("explanations", {})  # type: ignore[attr-defined]
                }
            )
    for k, name, value in table.changes:
        changed = {**table.values[k], name: value}
        transitions.append([page(changed), name, settle(explorer.transition(changed, name))])
    out = {"payload": payload, "rows": rows, "transitions": transitions}
    if explained:
        out |= {"files": files, "texts": texts}
    return jsonable(out)  # type: ignore[return-value]


def parted(explorer: Explorer, samples: int) -> dict[str, object]:
    """The payload with the first state's chunks, every chunk apart, and sampled states and changes."""
    tables = build_tables(explorer)
    grid = explorer.control_grid()
    names = (*tables.controls, *tables.free)
    start = explorer.values_now()
    rng = random.Random(12)

    def settle(values) -> dict[str, object]:
        after = dict(values)
        for name, traits in explorer.compute(values).controls.items():
            if "value" in traits:
                after[name] = traits["value"]
        return after

    everything = [dict(zip(grid, combo, strict=True)) for combo in _product(grid)] if samples >= _count(grid) else []
    states = []
    for k in range(samples):
        chosen = everything[k] if everything else {n: rng.choice(v) for n, v in grid.items()}
        states.append(settle({**start, **chosen}))
    rows = [[{n: page_value(v[n]) for n in names}, comparable(explorer.state(explorer.compute(v)))] for v in states]
    transitions = []
    for values in states[:100]:
        name = rng.choice(list(grid))
        changed = {**values, name: rng.choice(grid[name])}
        after = settle(explorer.transition(changed, name))
        transitions.append([{n: page_value(changed[n]) for n in names}, name, {n: page_value(after[n]) for n in names}])
    chunks = {
        str(p): {str(i): tables.chunk(p, i) for i in range(len(tables.chunk_values(p)))}
        for p, part in enumerate(tables.parts)
        if part.chunk is not None
    }
    content, buffers = chunk_message(tables, 0, len(tables.chunk_values(0)) - 1)  # as a kernel answers
    message = {"content": content, "buffers": buffers}
    page = tables.to_page("current")
    files = chunk_files(tables, page)
    named = [path for path in page["parts"][0]["chunk"]["files"] if path]
    kept = {path: files[path] for path in {named[0], named[len(named) // 2], named[-1]}}  # three: 270 kB each
    return jsonable(
        {
            "payload": page,
            "files": kept,
            "chunks": chunks,
            "message": message,
            "rows": rows,
            "transitions": transitions,
        }
    )  # type: ignore[return-value]


def _product(grid):
    import itertools

    return itertools.product(*grid.values())


def _count(grid) -> int:
    n = 1
    for values in grid.values():
        n *= len(values)
    return n


def main(folder: str) -> None:
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    for name, factory in FIXTURES.items():
        (out / f"{name.replace(' ', '_')}.json").write_text(json.dumps(fixture(factory(), explained=name in EXPLAINED)))
    for name, (factory, samples) in PARTED.items():
        (out / f"{name.replace(' ', '_')}.json").write_text(json.dumps(parted(factory(), samples)))


if __name__ == "__main__":
    main(sys.argv[1])
