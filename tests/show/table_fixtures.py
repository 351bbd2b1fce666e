"""Write what tests/show/table.test.mjs checks the page's table reader against: for some of the lessons'
explorers, the table's page payload, Python's state for every row and Python's transition for every change.

    python tests/show/table_fixtures.py DIR      (table.test.mjs runs it when TABLE_FIXTURES is not set)

Bytes are written as ``{"$bytes": base64}``; the node test turns them into DataViews, as anywidget delivers them.
The expected transitions come from the explorer itself (``transition`` then the clamping ``compute`` gives),
not from the table.
"""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path

from attnlib.lessons.l01_inputs import InputsExplorer
from attnlib.lessons.l05_softmax import SoftmaxExplorer
from attnlib.lessons.l07_summing import SummingExplorer
from attnlib.lessons.l11_multihead import MultiHeadExplorer
from attnlib.lessons.l15_attention_at_scale import TiledExplorer
from attnlib.lessons.pipeline import PipelineExplorer
from attnlib.show.explorer import Explorer
from attnlib.show.table import build_table, page_value

#: the explorers whose tables the page's reader is checked against (lessons 01, 05, 07, 11, 15)
FIXTURES = {
    "05 softmax": SoftmaxExplorer,
    "11 multihead": MultiHeadExplorer,
    "01 inputs": InputsExplorer,
    "01 pipeline": PipelineExplorer,
    "07 summing": SummingExplorer,
    "15 tiled": TiledExplorer,
}


def jsonable(value: object) -> object:
    """``value`` with bytes as ``{"$bytes": base64}`` (and tuples as lists)."""
    if isinstance(value, bytes | bytearray | memoryview):
        return {"$bytes": base64.b64encode(bytes(value)).decode()}
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    return value


def fixture(explorer: Explorer) -> dict[str, object]:
    """The payload, every row's page values and state, every change's values before and after (Python's)."""
    table = build_table(explorer)
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

    rows, transitions = [], []
    for k, values in enumerate(table.values):
        rows.append([page(values), table.state(k)])
    for k, name, value in table.changes:
        changed = {**table.values[k], name: value}
        transitions.append([page(changed), name, settle(explorer.transition(changed, name))])
    return jsonable({"payload": table.to_page(), "rows": rows, "transitions": transitions})  # type: ignore[return-value]


def main(folder: str) -> None:
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    for name, factory in FIXTURES.items():
        (out / f"{name.replace(' ', '_')}.json").write_text(json.dumps(fixture(factory())))


if __name__ == "__main__":
    main(sys.argv[1])
