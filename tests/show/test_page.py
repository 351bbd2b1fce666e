"""attnlib.show.page: an explorer's one widget model, driven as the page drives it (its comm's public
``handle_msg``) and recorded as the page gets it (the fake comm of conftest.py): how many messages a change
costs, which values a reply is for, the layout the page draws, and the front end's one module (node)."""

from __future__ import annotations

import json
import shutil
import subprocess

import numpy as np
import pytest
from test_explorer import EXPLORERS, TinyExplorer

from attnlib.lessons.l05_softmax import SoftmaxExplorer
from attnlib.show import ExplorerWidget
from attnlib.show.explorer import choices
from attnlib.show.page import STATIC, bundle
from attnlib.show.table import FORMAT, page_value


def from_page(widget: ExplorerWidget, data: dict) -> None:
    """A message from the page, as the kernel's comm gets it."""
    widget.comm.handle_msg({"content": {"data": data}, "buffers": []})


def custom(widget: ExplorerWidget, **content: object) -> None:
    """A custom message from the page (the front end's ``model.send(content)``)."""
    from_page(widget, {"method": "custom", "content": content})


def change_in_page(widget: ExplorerWidget, **changes: object) -> None:
    from_page(widget, {"method": "update", "state": {"values": {**widget.values, **changes}}, "buffer_paths": []})


def updates(sent: list[tuple[str, dict]], widget: ExplorerWidget) -> list[dict]:
    return [msg for model, msg in sent if model == widget.model_id]


@pytest.fixture
def softmax(sent) -> tuple[SoftmaxExplorer, ExplorerWidget]:
    explorer = SoftmaxExplorer("001")
    explorer._repr_mimebundle_()  # displayed: its one model exists
    sent.clear()
    return explorer, explorer.page


def test_a_page_change_the_table_covers_sends_nothing_back(sent, softmax) -> None:
    explorer, widget = softmax
    hotter = choices(explorer.controls["temperature"])[30]
    change_in_page(widget, temperature=hotter, query=2)
    assert updates(sent, widget) == []  # no shown, no values, no echo
    assert explorer.controls["temperature"].value == hotter and explorer.controls["query"].value == 2
    assert explorer.displayed() == explorer.state(explorer.compute(explorer.values_now()))  # Python follows quietly


def test_a_page_change_the_table_does_not_cover_gets_one_shown_tagged_with_its_values(sent, softmax) -> None:
    explorer, widget = softmax
    typed = "1 0 0\n0 1 0\n0 0 5"
    change_in_page(widget, scores=typed)
    messages = updates(sent, widget)
    assert len(messages) == 1 and messages[0]["method"] == "update"
    state = messages[0]["state"]
    assert set(state) == {"shown"}  # the values are the page's own: not sent back
    assert state["shown"]["values"] == {**widget.values, "scores": typed} and state["shown"]["origin"] == "page"
    assert ["shown", "views", "heatmap", "buffer"] in messages[0]["buffer_paths"]  # the numbers stay binary
    assert explorer.views["heatmap"].values[2][2] == pytest.approx(np.exp(5) / (np.exp(5) + 2))


def test_a_reset_made_by_the_kernel_is_answered_with_the_values_it_gives(sent, softmax) -> None:
    """A page that did not apply the example's reset of the scores gets the reset values with the state."""
    explorer, widget = softmax
    change_in_page(widget, example="000")
    (message,) = updates(sent, widget)
    shown = message["state"]["shown"]
    assert message["state"]["values"]["scores"] == explorer.controls["scores"].value != widget.shown["asked"]["scores"]
    assert shown["asked"]["example"] == "000" and shown["values"]["scores"] == explorer.controls["scores"].value


def test_a_change_made_in_python_sends_values_and_shown_in_one_message(sent, softmax) -> None:
    explorer, widget = softmax
    explorer.controls["query"].value = 1
    (message,) = updates(sent, widget)
    assert {"values", "shown"} <= set(message["state"])
    assert message["state"]["values"]["query"] == 1 == message["state"]["shown"]["values"]["query"]
    assert message["state"]["shown"]["origin"] == "python"
    sent.clear()
    explorer.update()  # the same state again: nothing leaves
    explorer.publish()
    assert updates(sent, widget) == []


def test_a_bad_text_from_the_page_is_answered_with_the_message_and_the_last_good_views(sent, softmax) -> None:
    explorer, widget = softmax
    before = widget.shown["views"]
    change_in_page(widget, scores="1 2; 3 oops")
    (message,) = updates(sent, widget)
    assert "oops" in message["state"]["shown"]["message"]
    assert explorer.views["heatmap"].shown() == before["heatmap"]


def test_hover_explanations_and_typed_cells_travel_as_custom_messages(sent) -> None:
    explorer = TinyExplorer("1 2; 3 4")
    explorer.views["heatmap"].update(np.eye(2), explanations=[["a", "b"], ["c", "d"]])
    widget = explorer.page
    sent.clear()
    custom(widget, kind="explain", view="heatmap", row=1, col=0, id=7)
    (answer,) = updates(sent, widget)
    assert answer == {"method": "custom", "content": {"kind": "explained", "id": 7, "text": "c"}}
    sent.clear()
    custom(widget, kind="edit", view="heatmap", row=1, col=1, text="9")
    (message,) = updates(sent, widget)
    assert message["state"]["values"]["matrix"] == "1 2; 3 9" == explorer.controls["matrix"].value
    assert "shown" in message["state"]  # the values and what they show, together
    sent.clear()
    custom(widget, kind="explain", view="nope", row=0, col=0)
    assert updates(sent, widget) == []  # an unknown view: ignored


@pytest.mark.parametrize("name", list(EXPLORERS))
def test_the_layout_names_every_control_view_and_text(name: str) -> None:
    from test_explorer import built

    explorer = built(name)
    found: dict[str, set[str]] = {"control": set(), "view": set(), "text": set(), "message": set()}

    def walk(node: dict) -> None:
        for child in node.get("children", []):
            walk(child)
        if node["kind"] == "view":
            found["view"].add(node["name"])
        elif node["kind"] == "message":
            found["message"].add("message")
        elif node["kind"] == "html" and "name" in node:
            found["text"].add(node["name"])
        elif "name" in node:
            found["control"].add(node["name"])
            assert node["kind"] == explorer.controls[node["name"]].kind

    tree = explorer.tree()
    json.dumps(tree)  # the page gets it as JSON
    walk(tree)
    assert found["control"] == set(explorer.controls)
    assert found["view"] == set(explorer.views)
    assert found["text"] == set(explorer.texts) and found["message"] == {"message"}


def test_the_kernel_applies_the_tables_rule_of_coverage(softmax) -> None:
    explorer, widget = softmax
    assert widget.table["format"] == FORMAT and widget.table["explorer"] == "SoftmaxExplorer"
    assert widget.covers(explorer.values_now()) and not widget.covers({**explorer.values_now(), "scores": "1"})
    assert widget.shown["free"] == {}  # every typed state of lesson 05 is a control


def test_a_typed_cell_moves_the_state_out_of_the_table_and_the_page_is_told(sent) -> None:
    from attnlib.lessons.pipeline import PipelineExplorer

    explorer = PipelineExplorer("001")
    widget = explorer.page
    assert widget.covers(explorer.values_now())
    before = widget.shown["free"]
    assert before and all(str(v).startswith("digest:") for v in before.values())  # the matrices, as the page holds them
    sent.clear()
    custom(widget, kind="edit", view="inputs", row=0, col=0, text="7")
    (message,) = updates(sent, widget)
    free = message["state"]["shown"]["free"]
    assert free != before and free["inputs"] == page_value(explorer.values_now()["inputs"])
    assert not widget.covers(explorer.values_now())  # the page looks this state up no more: the kernel answers
    sent.clear()
    change_in_page(widget, query=1)
    assert len(updates(sent, widget)) == 1  # answered, with the typed cell's numbers


# --------------------------------------------------------------------------- the front end under node
LOAD = """
const module = await import(%s);
const table = module.default && typeof module.default.render;
process.stdout.write(JSON.stringify({keys: Object.keys(module), render: table}));
"""

LOOKUP = """
import { decodeTable, lookup, transition } from %s;
import { readFileSync } from "node:fs";
const revive = (v) => Array.isArray(v) ? v.map(revive) : v !== null && typeof v === "object"
  ? ("$bytes" in v ? new DataView(new Uint8Array(Buffer.from(v.$bytes, "base64")).buffer)
     : Object.fromEntries(Object.entries(v).map(([k, x]) => [k, revive(x)]))) : v;
const table = decodeTable(revive(JSON.parse(readFileSync(process.argv[2], "utf8"))));
const out = JSON.parse(readFileSync(process.argv[3], "utf8")).map(([values, name]) => {
  const moved = name ? transition(table, values, name) : values;
  const state = lookup(table, moved);
  if (!state) return null;
  for (const view of Object.values(state.views))
    view.buffer = Array.from(new Float64Array(view.buffer.buffer.slice(view.buffer.byteOffset,
      view.buffer.byteOffset + view.buffer.byteLength)));
  return {values: moved, state};
});
process.stdout.write(JSON.stringify(out));
"""


def node() -> str:
    found = shutil.which("node")
    assert found, "node is needed to run the page's modules (make lint installs it with the npm packages)"
    return found


def test_the_front_end_is_one_module_that_exports_render(tmp_path) -> None:
    script = tmp_path / "bundle.mjs"
    script.write_text(bundle())
    runner = tmp_path / "load.mjs"
    runner.write_text(LOAD % json.dumps(script.as_uri()))
    out = json.loads(subprocess.run([node(), str(runner)], capture_output=True, text=True, check=True).stdout)
    assert out == {"keys": ["default"], "render": "function"}
    assert ExplorerWidget._esm == bundle() and "import " not in bundle().split("\n", 5)[0]


def test_the_page_looks_up_what_python_computes(tmp_path, softmax) -> None:
    """The page's table lookup (with the example's reset) gives, bit for bit, Python's compute of those values."""
    import base64

    explorer, widget = softmax

    def encode(value: object) -> object:  # bytes as the page gets them (DataViews), through JSON
        if isinstance(value, bytes):
            return {"$bytes": base64.b64encode(value).decode()}
        if isinstance(value, dict):
            return {k: encode(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [encode(v) for v in value]
        return value

    (tmp_path / "table.json").write_text(json.dumps(encode(widget.table)))
    temperatures = choices(explorer.controls["temperature"])
    start = explorer.control_values()
    cases = [
        [start, None],
        [{**start, "temperature": temperatures[3], "query": 2}, None],
        [{**start, "example": "000"}, "example"],  # the reset: the scores of 000
        [{**start, "scores": "1 2; 3 4"}, None],  # typed: not in the table
    ]
    (tmp_path / "cases.json").write_text(json.dumps(cases))
    runner = tmp_path / "lookup.mjs"
    runner.write_text(LOOKUP % json.dumps((STATIC / "table.js").as_uri()))
    args = [node(), str(runner), str(tmp_path / "table.json"), str(tmp_path / "cases.json")]
    out = json.loads(subprocess.run(args, capture_output=True, text=True, check=True).stdout)
    assert out[3] is None
    for got in out[:3]:
        assert got is not None
        expected = explorer.state(explorer.compute(got["values"]))
        for name, drawn in expected["views"].items():
            assert got["state"]["views"][name]["buffer"] == np.frombuffer(drawn["buffer"], "<f8").tolist()
            rest = {k: v for k, v in drawn.items() if k != "buffer"}
            assert {k: got["state"]["views"][name][k] for k in rest} == json.loads(json.dumps(rest))
        assert got["state"]["texts"] == expected["texts"]
    assert out[2]["values"]["scores"] == explorer.transition({**start, "example": "000"}, "example")["scores"]


def test_a_chunk_the_page_asks_for_is_one_custom_message_and_its_state_sends_nothing_back(sent) -> None:
    """Lesson 08's table is chunked by seed: the page holds the first seed's chunk, asks for another's."""
    from attnlib.lessons.l08_scaling import ScalingExplorer

    explorer = ScalingExplorer()
    widget = explorer.page
    tables = widget.tables
    assert tables is not None and widget.table["parts"][0]["chunk"]["control"] == "seed"
    seeds = tables.chunk_values(0)
    other = next(i for i, seed in enumerate(seeds) if seed != explorer.controls["seed"].value)
    sent.clear()
    custom(widget, kind="chunk", part=0, index=other)
    (message,) = updates(sent, widget)
    assert message["method"] == "custom" and message["content"]["type"] == "table-chunk"
    assert message["content"]["index"] == other and "$buffer" in json.dumps(message["content"]["payload"])
    sent.clear()
    change_in_page(widget, seed=seeds[other])
    assert updates(sent, widget) == []  # the kernel's tables cover it: the page draws it from the chunk
    assert explorer.controls["seed"].value == seeds[other]


PAGE_CHANGE = """
import { pageChange } from %s;
import { decodeTable } from %s;
import { readFileSync } from "node:fs";
const revive = (v) => Array.isArray(v) ? v.map(revive) : v !== null && typeof v === "object"
  ? ("$bytes" in v ? new DataView(new Uint8Array(Buffer.from(v.$bytes, "base64")).buffer)
     : Object.fromEntries(Object.entries(v).map(([k, x]) => [k, revive(x)]))) : v;
const [payload, current, free, name, value] = revive(JSON.parse(readFileSync(process.argv[2], "utf8")));
const out = pageChange(decodeTable(payload), current, free, name, value);
process.stdout.write(JSON.stringify({values: out.values, free: out.free, drawn: out.state !== null}));
"""


def _bytes_as_json(value: object) -> object:
    import base64

    if isinstance(value, bytes):
        return {"$bytes": base64.b64encode(value).decode()}
    if isinstance(value, dict):
        return {k: _bytes_as_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_bytes_as_json(v) for v in value]
    return value


def test_a_reset_of_the_typed_state_is_drawn_from_the_table_as_the_kernel_adopts_it(tmp_path, sent) -> None:
    """Lesson 07's pipeline: a new example resets the inputs (not a control); the page draws it from the table
    with the new inputs, and the kernel, whose tables cover it, sends nothing back (else the page drew nothing)."""
    from attnlib.lessons.pipeline import PipelineExplorer

    explorer = PipelineExplorer("001", scaled=False)
    widget = explorer.page
    other = next(o for o in choices(explorer.controls["example"]) if o != explorer.controls["example"].value)
    case = [widget.table, widget.values, widget.shown["free"], "example", other]
    (tmp_path / "case.json").write_text(json.dumps(_bytes_as_json(case)))
    runner = tmp_path / "change.mjs"
    runner.write_text(
        PAGE_CHANGE % (json.dumps((STATIC / "explorer.js").as_uri()), json.dumps((STATIC / "table.js").as_uri()))
    )
    out = json.loads(
        subprocess.run(
            [node(), str(runner), str(tmp_path / "case.json")], capture_output=True, text=True, check=True
        ).stdout
    )
    assert out["drawn"], "the page has no state for the new example: it would draw nothing"
    assert out["free"] != widget.shown["free"]  # the example's inputs, not the old ones
    sent.clear()
    change_in_page(widget, **out["values"])
    assert updates(sent, widget) == []  # covered: the kernel stays quiet, so the page must draw it itself
    assert widget.free() == out["free"]


def test_python_back_to_the_state_it_last_sent_reaches_a_page_that_moved(sent, softmax) -> None:
    """The page moves (drawn from its table: nothing goes back); Python sets the explorer back to the state it
    last sent: the shown goes with the values (traitlets would drop a shown equal to the trait's)."""
    explorer, widget = softmax
    before = explorer.control_values()
    change_in_page(widget, query=2)
    assert updates(sent, widget) == []
    explorer.controls["query"].value = before["query"]
    (message,) = updates(sent, widget)
    assert message["state"]["shown"]["values"] == before == message["state"]["values"]
    sent.clear()
    explorer.update()  # the same state again, the page has not moved: nothing leaves
    explorer.publish()
    assert updates(sent, widget) == []


def test_a_table_in_small_chunks_ships_every_chunk_and_a_large_one_the_first(sent) -> None:
    """Lesson 08's chunks (by seed) are small: the page holds them all, so a saved page with no kernel draws every
    seed; lesson 12's are not: the page holds the first state's chunks and asks for the others."""
    import gzip

    from attnlib.lessons.l08_scaling import ScalingExplorer
    from attnlib.lessons.l12_positions import PositionsExplorer
    from attnlib.show.page import INLINE_CHUNKS
    from attnlib.show.table import page_bytes

    small = ScalingExplorer().page
    assert small.tables is not None
    (part,) = [p for p in small.table["parts"] if "chunk" in p]
    assert len(part["chunks"]) == len(small.tables.chunk_values(0)) > 1
    assert len(gzip.compress(page_bytes(small.table), 1)) <= INLINE_CHUNKS
    large = PositionsExplorer(n_tokens=24, d_model=16, position=5, frequency=0).page
    assert large.tables is not None
    held = [(p, len(large.tables.chunk_values(k))) for k, p in enumerate(large.table["parts"]) if "chunk" in p]
    assert held and all(len(p["chunks"]) == 1 < n for p, n in held)
    assert len(gzip.compress(page_bytes(large.tables.to_page("all")), 1)) > INLINE_CHUNKS
